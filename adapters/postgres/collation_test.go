package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/testkit/pgtest"
)

// Every text column of the schema compares in byte order (migration
// 0043): the order Go and the memory stores use, and a comparison without
// strcoll on every index insert and lookup. A column added later without
// COLLATE "C" takes the database's default collation, which on most
// machines is a locale; this test names it.
func TestEveryTextColumnComparesInByteOrder(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	var columns []string
	require.NoError(t, db.NewRaw(`SELECT c.relname || '.' || a.attname || ' (' || coalesce(co.collname, '?') || ')'
		FROM pg_class AS c
		JOIN pg_namespace AS n ON n.oid = c.relnamespace
		JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		LEFT JOIN pg_collation AS co ON co.oid = a.attcollation
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
			AND a.attcollation <> 0 AND a.attcollation <> 'pg_catalog."C"'::regcollation
		ORDER BY 1`).Scan(ctx, &columns))
	require.Empty(t, columns, "text columns without COLLATE \"C\"")
	// An index may name a collation of its own; none names another.
	var indexes []string
	require.NoError(t, db.NewRaw(`SELECT DISTINCT i.indexrelid::regclass::text
		FROM pg_index AS i
		JOIN pg_class AS c ON c.oid = i.indrelid
		JOIN pg_namespace AS n ON n.oid = c.relnamespace
		CROSS JOIN LATERAL unnest(i.indcollation::oid[]) AS k(coll)
		WHERE n.nspname = current_schema() AND k.coll <> 0 AND k.coll <> 'pg_catalog."C"'::regcollation
		ORDER BY 1`).Scan(ctx, &indexes))
	require.Empty(t, indexes, "indexes over text in another collation than \"C\"")

	// So an index over a column 0043 changed (jobs.key had the database's
	// default) orders as Go does: upper case before "_" before lower case,
	// "é" after "z". (A database whose default is C or C.UTF-8, as here,
	// orders these alike anyway; a locale such as en_US.UTF-8 would not.)
	pgtest.Exec(t, db, `INSERT INTO jobs (id, kind, key, run_at) SELECT 'Job:' || k, 'test', k, now()
		FROM unnest(ARRAY['b', 'B', '_', 'a', 'é', 'z']) AS k`)
	var ordered []string
	require.NoError(t, db.NewRaw(`SELECT key FROM jobs WHERE kind = 'test' ORDER BY key`).Scan(ctx, &ordered))
	require.Equal(t, []string{"B", "_", "a", "b", "z", "é"}, ordered)
}
