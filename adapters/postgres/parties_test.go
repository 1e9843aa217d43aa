package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// The grouped reads, the single parties read and the delivery batch's
// statements run one generic plan per
// connection, made whenever the connection first runs them, possibly on
// empty tables: that plan must read each table by its primary key and
// nothing else (the parties' wallet sessions by their account's index,
// the platform, for its currency settings, by its primary key).
func TestGroupedReadGenericPlansUsePrimaryKeysOnly(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	one, many := postgres.PartiesQueries(db)
	quoteOne, quoteMany := postgres.QuotePartiesQueries(db)
	parties := []string{"internal_accounts", "external_accounts", "customers", "platforms"}
	quoteParties := append([]string{"quotes"}, parties...)
	cases := []struct {
		name, query, args string
		tables            []string
		indexes           []string
	}{
		{"parties_one", one, "('a', 'b', '2026-01-01T00:00:00Z')", parties, []string{"wallet_sessions_active on wallet_sessions"}},
		{"parties_many", many, `('{"a"}', '{"b"}', '{"2026-01-01T00:00:00Z"}')`, parties, []string{"wallet_sessions_active on wallet_sessions"}},
		{"quote_parties_one", quoteOne, "('a', '2026-01-01T00:00:00Z')", quoteParties, []string{"wallet_sessions_active on wallet_sessions"}},
		{"quote_parties_many", quoteMany, `('{"a"}', '{"2026-01-01T00:00:00Z"}')`, quoteParties, []string{"wallet_sessions_active on wallet_sessions"}},
		{"transactions_many", postgres.TxnGroupQuery(db), `('{"a"}')`, []string{"transactions"}, nil},
		// A delivery batch's statements find events and jobs by key too.
		{"events_by_id", postgres.DeliveryStatements.Events, `('{"a"}')`, []string{"events", "event_deliveries"}, nil},
		{"pending_heads", postgres.DeliveryStatements.PendingHeads, `('{"p"}', '{"r"}', 20)`, nil,
			[]string{"event_deliveries_undelivered"}},
	}
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan")
	require.NoError(t, err)
	for _, c := range cases {
		text := explainGeneric(t, conn, c.name, c.query, c.args)
		for _, table := range c.tables {
			assert.Contains(t, text, "using "+table+"_pkey on "+table, "%s: %s read by its primary key\n%s", c.name, table, text)
		}
		for _, index := range c.indexes {
			assert.Contains(t, text, "using "+index, "%s: read by %s\n%s", c.name, index, text)
		}
		assert.NotContains(t, text, "Seq Scan on", "%s\n%s", c.name, text)
		assert.Equal(t, len(c.tables)+len(c.indexes), strings.Count(text, "Index Scan")+strings.Count(text, "Index Only Scan"),
			"%s: one lookup per table\n%s", c.name, text)
	}
	// Ending a batch's jobs deletes them through the primary key (a bitmap
	// of its lookups), never by a scan.
	plan := explainGeneric(t, conn, "complete_jobs", postgres.DeliveryStatements.CompleteJobs, `('{"a"}')`)
	assert.Contains(t, plan, "Index Scan on jobs_pkey", plan)
	assert.NotContains(t, plan, "Seq Scan on", plan)
	// Ending a delivery batch in one statement (EndDeliveries) finds its
	// delivery rows and deletes its jobs through their primary keys.
	plan = explainGeneric(t, conn, "end_deliveries", postgres.DeliveryStatements.End,
		`('{"a"}', '{"p"}', '{"DELIVERED"}', '{"2026-01-01T00:00:00Z"}', '{"204"}', '{"10"}', '{""}', '{}', '{}', '{}', '{}', '{}', '{}', '{"j"}')`)
	assert.Contains(t, plan, "Index Scan on event_deliveries_pkey", plan)
	assert.Contains(t, plan, "Index Scan on jobs_pkey", plan)
	assert.NotContains(t, plan, "Seq Scan on", plan)
	// A claim walks its own lane's due index, oldest first, and updates
	// what it locked by ctid.
	for name, c := range map[string]struct {
		kinds ports.JobKinds
		index string
	}{
		"claim_deliveries": {ports.JobKinds{Only: []string{ports.EventDeliveryJob}}, "jobs_due_deliveries"},
		"claim_work":       {ports.JobKinds{Except: []string{ports.EventDeliveryJob}}, "jobs_due_work"},
	} {
		plan := explainGeneric(t, conn, name, postgres.ClaimStatement(db, c.kinds), `('2026-01-01 00:00:00+00', 8, '2026-01-01 00:01:00+00')`)
		assert.Contains(t, plan, "using "+c.index+" on jobs", "%s\n%s", name, plan)
		assert.Contains(t, plan, "Tid Scan on jobs", "%s: the claimed rows updated by ctid\n%s", name, plan)
		assert.NotContains(t, plan, "Seq Scan on", plan)
	}
}

// explainGeneric prepares query as name on conn (whose plan_cache_mode is
// force_generic_plan) and returns the plan of its execution with args.
func explainGeneric(t *testing.T, conn bun.Conn, name, query, args string) string {
	t.Helper()
	ctx := context.Background()
	_, err := conn.ExecContext(ctx, "PREPARE "+name+" AS "+query)
	require.NoError(t, err)
	rows, err := conn.QueryContext(ctx, "EXPLAIN EXECUTE "+name+args)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		plan = append(plan, line)
	}
	require.NoError(t, rows.Err())
	return strings.Join(plan, "\n")
}

// Any id reaches the statement intact as an array element: quotes,
// backslashes, braces and commas read as absent rows, not errors.
func TestPartiesAwkwardIDs(t *testing.T) {
	s := postgres.NewStore(pgtest.NewDB(t))
	ctx := context.Background()
	for _, id := range []string{`"`, `\`, `a,b`, `{x}`, `NULL`, ``, `ünï`} {
		got, err := s.Read().Parties().Get(ctx, "Platform:x", "InternalAccount:"+id, id, time.Now())
		require.NoError(t, err, "id %q", id)
		assert.Zero(t, got, "id %q", id)
	}
	assert.Equal(t, `{"\"","\\","a,b",""}`, postgres.TextArray([]string{`"`, `\`, "a,b", ""}))
	assert.Equal(t, "{}", postgres.TextArray(nil))
}
