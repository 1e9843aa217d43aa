package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/loadtest"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

const (
	benchTxnPlatform  = "Platform:bench"
	benchTxnCustomers = 1_000
	benchTxnPageLimit = 20 // the API's default page size
)

// BenchmarkTransactionList measures one GET /transactions page as the store
// serves it (the rows and the total) on 100,000 and 1,000,000 transactions
// of one platform spread over 1,000 customers: the first page and a deep
// page (a cursor 90% of the way through), newest first (the API's
// default), unfiltered, by one customer, by status, by customer and status
// (totals from transaction_counts), and two filters whose total is an exact
// COUNT(*): a customer's last quarter (StartDate) and an account identifier
// (GIN). Each line reports p50_ms and p99_ms of one List call at
// concurrency 1. Run it with
//
//	go test -run '^$' -bench BenchmarkTransactionList -benchtime 500x -timeout 30m ./adapters/postgres/
func BenchmarkTransactionList(b *testing.B) {
	ctx := context.Background()
	for _, rows := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			dsn := pgtest.NewDatabase(b)
			benchLoadTransactions(b, dsn, rows)
			db, err := postgres.Open(ctx, dsn)
			require.NoError(b, err)
			b.Cleanup(func() { _ = db.Close() })
			s := postgres.NewStore(db)
			customer := fmt.Sprintf("Customer:bench-%04d", 421)
			// The last quarter of the data.
			since := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rows*3/4) * 30 * time.Second)
			cases := []struct {
				name string
				f    ports.TransactionFilter
			}{
				{"unfiltered", ports.TransactionFilter{}},
				{"customer", ports.TransactionFilter{CustomerID: customer}},
				{"status", ports.TransactionFilter{Status: "FAILED"}},
				{"customer+status", ports.TransactionFilter{CustomerID: customer, Status: "FAILED"}},
				// Exact COUNT(*) totals:
				{"customer+since", ports.TransactionFilter{CustomerID: customer, StartDate: &since}},
				{"account", ports.TransactionFilter{AccountIdentifier: "acct-00000421"}},
			}
			for _, tc := range cases {
				f := tc.f
				f.PlatformID, f.Desc = benchTxnPlatform, true
				all, total, err := s.Read().Transactions().List(ctx, f, ports.Page{Limit: 1})
				require.NoError(b, err)
				require.NotEmpty(b, all)
				deep := benchTxnPosition(b, s, f, total*9/10)
				for _, pg := range []struct {
					name  string
					after *ports.Position
				}{{"first", nil}, {"deep", &deep}} {
					b.Run(fmt.Sprintf("filter=%s/page=%s", tc.name, pg.name), func(b *testing.B) {
						r := loadtest.Run(b.N, 1, func(int) error {
							got, n, err := s.Read().Transactions().List(ctx, f, ports.Page{Limit: benchTxnPageLimit, After: pg.after})
							if err != nil {
								return err
							}
							if n != total || len(got) == 0 {
								return fmt.Errorf("got %d rows, total %d (want %d)", len(got), n, total)
							}
							return nil
						})
						loadtest.Report(b, r)
						if r.Errors > 0 {
							b.Fatalf("%d of %d lists failed", r.Errors, r.Ops)
						}
					})
				}
			}
		})
	}
}

// benchTxnPosition is the position of the offset-th row of f's order.
func benchTxnPosition(b *testing.B, s *postgres.Store, f ports.TransactionFilter, offset int) ports.Position {
	b.Helper()
	ctx := context.Background()
	var pos *ports.Position
	for offset > 0 {
		step := min(offset, 10_000)
		rows, _, err := s.Read().Transactions().List(ctx, f, ports.Page{Limit: step - 1, After: pos})
		require.NoError(b, err)
		require.Len(b, rows, step)
		last := rows[len(rows)-1]
		pos = &ports.Position{CreatedAt: last.CreatedAt, ID: last.ID}
		offset -= step
	}
	require.NotNil(b, pos)
	return *pos
}

// benchLoadTransactions bulk-loads n transactions with INSERT ... SELECT
// generate_series in chunks of 100,000 (the secondary indexes dropped
// first and built after, the way a bulk load is done), then vacuums and
// analyzes. About 1% are the platform's own; the rest cycle over 1,000
// customers; one every 30 s. It uses its own connection without the
// service's 10 s statement read timeout.
func benchLoadTransactions(b *testing.B, dsn string, n int) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	db := bun.NewDB(sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn), pgdriver.WithTimeout(30*time.Minute))), pgdialect.New())
	defer db.Close()
	conn, err := db.Conn(ctx)
	require.NoError(b, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SET maintenance_work_mem = '256MB'")
	require.NoError(b, err)
	var defs []string
	require.NoError(b, conn.NewRaw(`SELECT indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename = 'transactions' AND indexname <> 'transactions_pkey'`).Scan(ctx, &defs))
	var names []string
	require.NoError(b, conn.NewRaw(`SELECT indexname FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename = 'transactions' AND indexname <> 'transactions_pkey'`).Scan(ctx, &names))
	for _, name := range names {
		_, err := conn.ExecContext(ctx, "DROP INDEX "+name)
		require.NoError(b, err)
	}
	const chunk = 100_000
	for lo := 1; lo <= n; lo += chunk {
		_, err = conn.ExecContext(ctx, `
			INSERT INTO transactions (id, platform_id, customer_id, platform_customer_id, type, status,
				source_account_id, source_currency, destination_account_id, destination_currency, payment_rail,
				sender_identifiers, receiver_identifiers, sent_amount, received_amount, reference, created_at, updated_at)
			SELECT 'Transaction:' || md5(i::text)::uuid, ?,
				CASE WHEN i % 97 = 0 THEN '' ELSE 'Customer:bench-' || lpad((i % ?)::text, 4, '0') END,
				CASE WHEN i % 97 = 0 THEN '' ELSE 'pc-' || (i % ?) END,
				CASE WHEN (i / 1000) % 2 = 0 THEN 'OUTGOING' ELSE 'INCOMING' END,
				(ARRAY['COMPLETED', 'COMPLETED', 'COMPLETED', 'FAILED', 'PENDING'])[1 + (i / 7) % 5],
				'InternalAccount:bench-' || (i % ?), 'USD', 'ExternalAccount:bench-' || (i % 5000), 'USD', 'ACH',
				ARRAY['InternalAccount:bench-' || (i % ?)],
				ARRAY['ExternalAccount:bench-' || (i % 5000), 'acct-' || lpad((i % 5000)::text, 8, '0')],
				100 + i % 10000, 100 + i % 10000, 'REF-' || i,
				timestamptz '2025-01-01 00:00:00+00' + i * interval '30 seconds',
				timestamptz '2025-01-01 00:00:00+00' + i * interval '30 seconds'
			FROM generate_series(?::int, ?::int) AS i`,
			benchTxnPlatform, benchTxnCustomers, benchTxnCustomers, benchTxnCustomers, benchTxnCustomers, lo, min(lo+chunk-1, n))
		require.NoError(b, err)
	}
	loaded := time.Since(start)
	for _, def := range defs {
		_, err := conn.ExecContext(ctx, def)
		require.NoError(b, err)
	}
	_, err = conn.ExecContext(ctx, "VACUUM ANALYZE transactions")
	require.NoError(b, err)
	_, err = conn.ExecContext(ctx, "VACUUM ANALYZE transaction_counts")
	require.NoError(b, err)
	b.Logf("loaded %d transactions in %s (rows), %s (with %d indexes, vacuum, analyze)",
		n, loaded.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), len(defs))
}
