package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// An event's delivery state lives in event_deliveries (migration 0041):
// every path that records events gives each its PENDING delivery row, and
// an attempt changes that row only, never the event's own (its xmin, the
// transaction that wrote it, stays the recording one).
func TestEventDeliveryStateLeavesTheEventRowAlone(t *testing.T) {
	db := pgtest.NewDB(t)
	s := postgres.NewStore(db)
	ctx := context.Background()
	pgtest.Exec(t, db, `INSERT INTO platforms (id, created_at, updated_at, webhook_endpoint) VALUES ('Platform:p', now(), now(), '')`)
	// A transaction's trigger records two events in one statement; a unit
	// of work appends a third.
	pgtest.Exec(t, db, `INSERT INTO transactions (id, platform_id, customer_id, type, status, created_at, updated_at) VALUES
		('Transaction:1', 'Platform:p', 'Customer:a', 'OUTGOING', 'PENDING', now(), now()),
		('Transaction:2', 'Platform:p', 'Customer:a', 'OUTGOING', 'PENDING', now(), now())`)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error {
		return tx.Events().Append(ctx, ports.Event{ID: "Webhook:kyc", PlatformID: "Platform:p", Type: "CUSTOMER.KYC_APPROVED",
			ResourceID: "Customer:a", Resource: []byte(`{"id":"Customer:a"}`), CreatedAt: now})
	}))

	type state struct {
		ID       string `bun:"id"`
		Status   string `bun:"status"`
		Resource string `bun:"resource_id"`
		Same     bool   `bun:"same"`
		XMin     string `bun:"xmin"`
	}
	read := func() map[string]state {
		t.Helper()
		var rows []state
		require.NoError(t, db.NewRaw(`SELECT e.id, d.status, d.resource_id,
				d.platform_id = e.platform_id AND d.resource_id = e.resource_id AND d.seq = e.seq AS same, e.xmin::text AS xmin
			FROM events AS e LEFT JOIN event_deliveries AS d ON d.event_id = e.id`).Scan(ctx, &rows))
		out := map[string]state{}
		for _, r := range rows {
			out[r.Resource+" "+r.ID] = r
		}
		return out
	}
	before := read()
	require.Len(t, before, 3)
	var ids []string
	for _, st := range before {
		assert.Equal(t, ports.EventPending, st.Status, st.ID)
		assert.True(t, st.Same, "%s: the delivery row copies the event's platform, resource and seq", st.ID)
		ids = append(ids, st.ID)
	}

	es, err := s.Read().Events().GetMany(ctx, ids)
	require.NoError(t, err)
	require.Len(t, es, 3)
	byResource := map[string]ports.Event{}
	for _, e := range es {
		byResource[e.ResourceID] = e
	}
	kyc, txn := byResource["Customer:a"], byResource["Transaction:1"]
	at := now.Add(time.Minute)
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error {
		return tx.Events().RecordAttempts(ctx, []ports.AttemptRecord{
			{PlatformID: "Platform:p", Status: ports.EventDelivered, Attempt: ports.EventAttempt{EventID: kyc.ID, At: at, StatusCode: 200}},
			{PlatformID: "Platform:p", Status: ports.EventPending, Attempt: ports.EventAttempt{EventID: txn.ID, At: at, StatusCode: 500}},
		})
	}))
	// Another platform's event is not found, and nothing is recorded.
	err = s.InTx(ctx, func(tx ports.Tx) error {
		return tx.Events().RecordAttempts(ctx, []ports.AttemptRecord{
			{PlatformID: "Platform:other", Status: ports.EventDelivered, Attempt: ports.EventAttempt{EventID: txn.ID, At: at}}})
	})
	require.ErrorIs(t, err, ports.ErrNotFound)

	after := read()
	for k, st := range before {
		assert.Equal(t, st.XMin, after[k].XMin, "%s: the event row is written once", k)
	}
	got, err := s.Read().Events().Get(ctx, "Platform:p", kyc.ID)
	require.NoError(t, err)
	assert.Equal(t, ports.EventDelivered, got.Status)
	assert.Equal(t, 1, got.Attempts)
	require.NotNil(t, got.DeliveredAt)
	assert.True(t, got.DeliveredAt.Equal(at))
	got, err = s.Read().Events().Get(ctx, "Platform:p", txn.ID)
	require.NoError(t, err)
	assert.Equal(t, ports.EventPending, got.Status)
	assert.Equal(t, 1, got.Attempts)
	assert.Nil(t, got.DeliveredAt)
	require.NotNil(t, got.LastAttemptAt)

	// Lists filter and count by the delivery state.
	list := func(status string) []string {
		t.Helper()
		rows, total, err := s.Read().Events().List(ctx, ports.EventFilter{PlatformID: "Platform:p", Status: status}, ports.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, rows, total)
		out := []string{}
		for _, e := range rows {
			out = append(out, e.ID)
		}
		return out
	}
	assert.Equal(t, []string{kyc.ID}, list(ports.EventDelivered))
	assert.ElementsMatch(t, []string{txn.ID, byResource["Transaction:2"].ID}, list(ports.EventPending))
	assert.Len(t, list(""), 3)
	failed := byResource["Transaction:2"].ID
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error {
		return tx.Events().RecordAttempts(ctx, []ports.AttemptRecord{
			{PlatformID: "Platform:p", Status: ports.EventFailed, Attempt: ports.EventAttempt{EventID: failed, At: at, StatusCode: 500}}})
	}))
	assert.Equal(t, []string{failed}, list(ports.EventFailed))
	assert.Equal(t, []string{txn.ID}, list(ports.EventPending))
	assert.Equal(t, []string{kyc.ID}, list(ports.EventDelivered))

	// Redelivery sets the delivered event pending again, its row alone.
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error {
		return tx.Events().Requeue(ctx, "Platform:p", kyc.ID, at)
	}))
	got, err = s.Read().Events().Get(ctx, "Platform:p", kyc.ID)
	require.NoError(t, err)
	assert.Equal(t, ports.EventPending, got.Status)
	assert.Nil(t, got.DeliveredAt)
	assert.Equal(t, before["Customer:a "+kyc.ID].XMin, read()["Customer:a "+kyc.ID].XMin)
}
