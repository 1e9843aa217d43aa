package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// The events and list counters of transactions are kept per statement
// (migrations 0039, 0040): one INSERT or UPDATE of several transactions
// records each one's events, in order per transaction (seq), queues their
// delivery only for a platform with an endpoint, and moves each counter by
// the statement's net change.
func TestTransactionTriggersPerStatement(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	pgtest.Exec(t, db, `INSERT INTO platforms (id, created_at, updated_at, webhook_endpoint) VALUES
		('Platform:hooked', now(), now(), 'https://example.com/hook'), ('Platform:quiet', now(), now(), '')`)
	pgtest.Exec(t, db, `INSERT INTO transactions (id, platform_id, customer_id, type, status, created_at, updated_at) VALUES
		('Transaction:1', 'Platform:hooked', 'Customer:a', 'OUTGOING', 'PENDING', now(), now()),
		('Transaction:2', 'Platform:quiet', 'Customer:b', 'INCOMING', 'CREATED', now(), now()),
		('Transaction:3', 'Platform:hooked', 'Customer:a', 'INCOMING', 'PENDING', now(), now()),
		('Transaction:4', 'Platform:quiet', 'Customer:b', 'OUTGOING', 'PENDING', now(), now())`)
	pgtest.Exec(t, db, `UPDATE transactions SET status = 'PROCESSING' WHERE id IN ('Transaction:1', 'Transaction:2', 'Transaction:4')`)
	pgtest.Exec(t, db, `UPDATE transactions SET status = CASE id WHEN 'Transaction:1' THEN 'REFUNDED' ELSE 'FAILED' END,
		details = CASE id WHEN 'Transaction:1' THEN '{"refund": {"status": "COMPLETED"}}'::jsonb ELSE '{"refund": {"status": "PENDING"}}'::jsonb END
		WHERE id IN ('Transaction:1', 'Transaction:3')`)
	pgtest.Exec(t, db, `UPDATE transactions SET description = 'no status change'`)

	type event struct {
		Resource string `bun:"resource_id"`
		Type     string `bun:"type"`
		Status   string `bun:"status"`
		AfterUS  int64  `bun:"after_us"`
		Queued   bool   `bun:"queued"`
	}
	var got []event
	require.NoError(t, db.NewRaw(`SELECT e.resource_id, e.type, e.data ->> 'status' AS status,
			(extract(epoch FROM e.created_at - (e.data ->> 'updated_at')::timestamptz) * 1000000)::bigint AS after_us,
			EXISTS (SELECT 1 FROM jobs AS j WHERE j.kind = 'webhook.deliver'
				AND e.id = ANY (string_to_array(convert_from(j.payload, 'UTF8'), chr(10)))) AS queued
		FROM events AS e ORDER BY e.resource_id, e.seq`).Scan(ctx, &got))
	require.Equal(t, []event{
		{"Transaction:1", "OUTGOING_PAYMENT.PENDING", "PENDING", 0, true},
		{"Transaction:1", "OUTGOING_PAYMENT.PROCESSING", "PROCESSING", 0, true},
		// A REFUNDED transaction whose refund COMPLETED records one event.
		{"Transaction:1", "OUTGOING_PAYMENT.REFUND_COMPLETED", "REFUNDED", 0, true},
		{"Transaction:3", "INCOMING_PAYMENT.PENDING", "PENDING", 0, true},
		// A refund's own event follows its status's, a microsecond later.
		{"Transaction:3", "INCOMING_PAYMENT.FAILED", "FAILED", 0, true},
		{"Transaction:3", "INCOMING_PAYMENT.REFUND_PENDING", "FAILED", 1, true},
		{"Transaction:4", "OUTGOING_PAYMENT.PENDING", "PENDING", 0, false},
		{"Transaction:4", "OUTGOING_PAYMENT.PROCESSING", "PROCESSING", 0, false},
	}, got)

	// One delivery job per statement and platform with an endpoint, its
	// events in the order they were recorded (seq): the insert's two, the
	// first update's one, the second update's three.
	var jobs []string
	require.NoError(t, db.NewRaw(`SELECT string_agg(e.type, ' ' ORDER BY e.type) || ', in order: ' ||
			(array_agg(e.id ORDER BY p.ord) = array_agg(e.id ORDER BY e.seq))::text
		FROM jobs AS j
		CROSS JOIN LATERAL unnest((string_to_array(convert_from(j.payload, 'UTF8'), chr(10)))[2:]) WITH ORDINALITY AS p(id, ord)
		JOIN events AS e ON e.id = p.id
		WHERE j.kind = 'webhook.deliver' AND split_part(convert_from(j.payload, 'UTF8'), chr(10), 1) = 'Platform:hooked'
		GROUP BY j.id ORDER BY min(e.seq)`).Scan(ctx, &jobs))
	require.Equal(t, []string{
		"INCOMING_PAYMENT.PENDING OUTGOING_PAYMENT.PENDING, in order: true",
		"OUTGOING_PAYMENT.PROCESSING, in order: true",
		"INCOMING_PAYMENT.FAILED INCOMING_PAYMENT.REFUND_PENDING OUTGOING_PAYMENT.REFUND_COMPLETED, in order: true",
	}, jobs)

	// A job carries at most ports.EventsPerDeliveryJob events: a statement
	// with more makes more jobs, each in order.
	_, err := db.ExecContext(ctx, `INSERT INTO transactions (id, platform_id, customer_id, type, status, created_at, updated_at)
		SELECT 'Transaction:many-' || g, 'Platform:hooked', 'Customer:c', 'OUTGOING', 'PENDING', now(), now()
		FROM generate_series(1, 2 * ?::int + 3) AS g`, ports.EventsPerDeliveryJob)
	require.NoError(t, err)
	var sizes []int
	require.NoError(t, db.NewRaw(`SELECT count(*) FROM jobs AS j
		CROSS JOIN LATERAL unnest((string_to_array(convert_from(j.payload, 'UTF8'), chr(10)))[2:]) AS p(id)
		JOIN events AS e ON e.id = p.id
		WHERE j.kind = 'webhook.deliver' AND e.resource_id LIKE 'Transaction:many-%'
		GROUP BY j.id ORDER BY 1 DESC`).Scan(ctx, &sizes))
	require.Equal(t, []int{ports.EventsPerDeliveryJob, ports.EventsPerDeliveryJob, 3}, sizes)

	var wrong []string
	require.NoError(t, db.NewRaw(`SELECT k.platform_id || ' ' || k.customer_id || ' ' || k.type || ' ' || k.status || ': ' || k.n || ' counted, ' || coalesce(a.n, 0) || ' there'
		FROM (SELECT platform_id, customer_id, type, status, sum(n) AS n FROM transaction_counts GROUP BY 1, 2, 3, 4) AS k
		FULL JOIN (
			SELECT platform_id, customer_id, type, status, count(*) AS n FROM transactions GROUP BY 1, 2, 3, 4
			UNION ALL
			SELECT platform_id, '*', type, status, count(*) FROM transactions GROUP BY 1, 3, 4
		) AS a USING (platform_id, customer_id, type, status)
		WHERE coalesce(k.n, 0) <> coalesce(a.n, 0)`).Scan(ctx, &wrong))
	require.Empty(t, wrong)
}

// The events statements of a transaction change keep one generic plan
// and event_delivery_jobs stays inlinable (migrations 0042, 0044): planned
// per call, they cost a single-row statement more than twice its own work.
// The trigger function's statements read only the transition tables, so
// they take no parameters and plpgsql keeps one generic plan of each; the
// function called with arrays of rows, which needed a plan_cache_mode
// setting for that, is gone. A later CREATE OR REPLACE of
// event_delivery_jobs drops its volatility unless it restates it; this
// test says so.
func TestTransactionEventsArePlannedOnce(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	var gone int
	require.NoError(t, db.NewRaw(`SELECT count(*) FROM pg_proc WHERE proname = 'transactions_record_events_of'`).Scan(ctx, &gone))
	require.Zero(t, gone, "the events are recorded by the trigger's own statements")
	var config []string
	require.NoError(t, db.NewRaw(`SELECT coalesce(proconfig, '{}') FROM pg_proc WHERE proname = 'transactions_record_events'`).
		Scan(ctx, pgdialect.Array(&config)))
	require.Empty(t, config, "no setting saved and restored per firing")
	var volatility, language string
	require.NoError(t, db.NewRaw(`SELECT p.provolatile::text, l.lanname FROM pg_proc AS p JOIN pg_language AS l ON l.oid = p.prolang
		WHERE p.proname = 'event_delivery_jobs'`).Scan(ctx, &volatility, &language))
	require.Equal(t, []string{"s", "sql"}, []string{volatility, language}, "a STABLE SQL function, inlined where it is called")

	// Inlined, it still gives every job its own id.
	pgtest.Exec(t, db, `INSERT INTO platforms (id, created_at, updated_at, webhook_endpoint) VALUES
		('Platform:a', now(), now(), 'https://example.com/a'), ('Platform:b', now(), now(), 'https://example.com/b')`)
	var ids []string
	require.NoError(t, db.NewRaw(`SELECT array_agg(j.id) FROM event_delivery_jobs(
		ARRAY(SELECT 'Webhook:' || i FROM generate_series(1, 20) AS i),
		ARRAY(SELECT CASE WHEN i % 2 = 0 THEN 'Platform:a' ELSE 'Platform:b' END FROM generate_series(1, 20) AS i),
		ARRAY(SELECT now() FROM generate_series(1, 20))) AS j`).Scan(ctx, pgdialect.Array(&ids)))
	require.Len(t, ids, 4, "10 events of each platform, 8 a job")
	require.Len(t, slices.Compact(slices.Sorted(slices.Values(ids))), 4, "distinct ids")
}
