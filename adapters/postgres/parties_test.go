package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// The parties statements run one generic plan per connection, made
// whenever the connection first runs them, possibly on empty tables: that
// plan must read each table by its primary key and nothing else.
func TestPartiesGenericPlanUsesPrimaryKeysOnly(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	one, many := postgres.PartiesQueries(db)
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan")
	require.NoError(t, err)
	for name, q := range map[string]string{"one": one, "many": many} {
		args := "('a', 'b')"
		if name == "many" {
			args = `('{"a"}', '{"b"}')`
		}
		stmt := "parties_" + name
		_, err := conn.ExecContext(ctx, "PREPARE "+stmt+" AS "+q)
		require.NoError(t, err)
		rows, err := conn.QueryContext(ctx, "EXPLAIN EXECUTE "+stmt+args)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			plan = append(plan, line)
		}
		require.NoError(t, rows.Err())
		text := strings.Join(plan, "\n")
		for _, table := range []string{"internal_accounts", "external_accounts", "customers"} {
			assert.Contains(t, text, "using "+table+"_pkey on "+table, "%s: %s read by its primary key\n%s", name, table, text)
		}
		assert.NotContains(t, text, "Seq Scan on", "%s\n%s", name, text)
		assert.Equal(t, 3, strings.Count(text, "Index Scan")+strings.Count(text, "Index Only Scan"), "%s: three lookups\n%s", name, text)
	}
}

// Any id reaches the statement intact as an array element: quotes,
// backslashes, braces and commas read as absent rows, not errors.
func TestPartiesAwkwardIDs(t *testing.T) {
	s := postgres.NewStore(pgtest.NewDB(t))
	ctx := context.Background()
	for _, id := range []string{`"`, `\`, `a,b`, `{x}`, `NULL`, ``, `ünï`} {
		got, err := s.Read().Parties().Get(ctx, "Platform:x", "InternalAccount:"+id, id)
		require.NoError(t, err, "id %q", id)
		assert.Zero(t, got, "id %q", id)
	}
	assert.Equal(t, `{"\"","\\","a,b",""}`, postgres.TextArray([]string{`"`, `\`, "a,b", ""}))
	assert.Equal(t, "{}", postgres.TextArray(nil))
}
