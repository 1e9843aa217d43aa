package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A part is in a variant when every part it sits in is; markers nest and
// must name a declared part and be closed.
func TestShapedStatementParts(t *testing.T) {
	s := newShapedStatement("t", "a $1::int {{x}}b{{y}}c{{end}}d{{end}}{{y}}e{{end}}", "x", "y")
	for sh, want := range map[stmtShape]string{0: "a $1::int ", 1: "a $1::int bd", 2: "a $1::int e", 3: "a $1::int bcde"} {
		assert.Equal(t, want, s.text(sh), "shape %d", sh)
	}
	assert.Equal(t, "t_3", s.stmtName(3))
	assert.Equal(t, stmtShape(2), s.shapeOf(false, true))
	assert.Panics(t, func() { s.shapeOf(true) }, "a flag per part")
	assert.Equal(t, "(int)", s.types)
	assert.Panics(t, func() { newShapedStatement("t", "{{z}}a{{end}}", "x") }, "an undeclared part")
	assert.Panics(t, func() { newShapedStatement("t", "{{x}}a", "x") }, "a part left open")
	assert.Panics(t, func() { newShapedStatement("t", "a{{end}}", "x") }, "an end without a part")
	assert.Panics(t, func() { newShapedStatement("t", "$1::int, $2", "x") }, "a parameter without a cast")
}

// Every variant of the ledger writer's load and journal statements is
// numbered ($n, no bun ? left), opens no transaction of its own, leaves
// out exactly its missing parts' tables, and prepares and runs on
// PostgreSQL (on empty arrays, in a transaction rolled back).
func TestShapedStatementsPrepareAndRunInEveryVariant(t *testing.T) {
	db := scratchDB(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer discardConn(conn)
	l := &Ledger{db: db, prepared: map[string]bool{}}
	for _, c := range []struct {
		s      *shapedStatement
		params int
		parts  []string // for each part, a text only its variants hold
	}{
		{loadStmt, 8, []string{"FROM quotes", "FROM transactions", "FROM ledger_pending", "reverses = ANY"}},
		{journalStmt, 52, []string{"INSERT INTO ledger_pending", "UPDATE ledger_pending", "INSERT INTO events"}},
	} {
		require.Len(t, c.parts, len(c.s.parts))
		types := strings.Split(strings.Trim(c.s.types, "()"), ", ")
		require.Len(t, types, c.params, c.s.name)
		args := make([]string, len(types))
		for i, ty := range types {
			switch {
			case strings.HasSuffix(ty, "[]"):
				args[i] = "'{}'"
			case ty == "timestamptz":
				args[i] = "now()"
			default:
				args[i] = "0"
			}
		}
		for sh := stmtShape(0); sh < 1<<len(c.s.parts); sh++ {
			text := c.s.text(sh)
			assert.NotContains(t, text, "?", "%s: a bun placeholder", c.s.stmtName(sh))
			assert.NotContains(t, text, "{{", "%s: a marker", c.s.stmtName(sh))
			assert.NotContains(t, text, "BEGIN", "%s opens a transaction", c.s.stmtName(sh))
			for i, marker := range c.parts {
				assert.Equal(t, sh&(1<<i) != 0, strings.Contains(text, marker), "%s: %q", c.s.stmtName(sh), marker)
			}
			require.NoError(t, l.prepare(ctx, conn, c.s, sh), c.s.stmtName(sh))
			require.NoError(t, l.prepare(ctx, conn, c.s, sh), "a variant is prepared once (a second PREPARE would fail)")
			name := c.s.stmtName(sh)
			_, err = conn.ExecContext(ctx, "BEGIN; EXECUTE "+name+"("+strings.Join(args, ", ")+"); ROLLBACK")
			require.NoError(t, err, name)
		}
	}
}
