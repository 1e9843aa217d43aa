package postgres

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The writer's prepared statements name some parameters twice (?N): each
// repeat must be the id array of the rows it restricts, the first array of
// the unnest those rows are joined to.
func TestWriterStatementsRepeatTheRightParameters(t *testing.T) {
	for _, c := range []struct{ name, stmt, unnest, repeat string }{
		{"resolved holds", journalStatement, "FROM unnest($31::text[], $32::text[]", "hp.id = ANY($31::text[]) AND hp.id = u.id"},
		{"account deltas", journalStatement, "FROM unnest($35::text[], $36::bigint[]", "a.id = ANY($35::text[]) AND a.id = d.id"},
		{"balance events", journalStatement, "FROM unnest($48::text[], $49::bigint[]", "ia.id = ANY($48::text[])"},
		{"status changes", statusStatement, "FROM unnest($1::text[], $2::text[]", "t.id = ANY($2::text[]) AND t.platform_id = u.platform_id"},
		{"quotes", quotesStatement, "FROM unnest($1::text[], $2::text[]", "q.id = ANY($1::text[]) AND q.id = u.id"},
	} {
		assert.True(t, strings.Contains(c.stmt, c.unnest), "%s: %q not in the statement", c.name, c.unnest)
		assert.True(t, strings.Contains(c.stmt, c.repeat), "%s: %q not in the statement", c.name, c.repeat)
	}
	// And the journal's last two parameters are the counts.
	assert.Contains(t, journalStatement, "$51::bigint AS n, $52::bigint AS m")
}
