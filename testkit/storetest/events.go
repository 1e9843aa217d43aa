package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// testEvents holds the outbox: an appended event is pending with its
// delivery job queued in the same unit of work (none after a rollback),
// lists by (CreatedAt, ID) with filters, records attempts, tells whether
// an earlier event of the resource is pending, and requeues.
func testEvents(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	// p has a webhook endpoint (its events get delivery jobs), q none.
	p := platformWithEndpoint(t, s)
	q := createPlatform(t, s, at(0))
	var evs []ports.Event
	for i := range 5 {
		evs = append(evs, ports.Event{
			ID: newID("Webhook"), PlatformID: p.ID, Type: fmt.Sprintf("CUSTOMER.KYC_%d", i%2),
			ResourceID: fmt.Sprintf("Customer:%d", i%3), Resource: json.RawMessage(fmt.Sprintf(`{"n": %d}`, i)),
			CreatedAt: at(1 + i/2),
		})
	}
	evs[4].Resource = nil
	appendEvents(t, s, evs)
	// A rolled-back unit of work leaves no event and no job.
	rollback := errors.New("roll back")
	gone := ports.Event{ID: newID("Webhook"), PlatformID: p.ID, Type: "X", CreatedAt: at(2)}
	err := s.InTx(ctx, func(tx ports.Tx) error {
		require.NoError(t, tx.Events().Append(ctx, gone))
		return rollback
	})
	require.ErrorIs(t, err, rollback)

	rows, total, err := s.Read().Events().List(ctx, ports.EventFilter{PlatformID: p.ID}, ports.Page{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, 5, total)
	want := sortedIDs(evs, func(e ports.Event) ports.Position { return ports.Position{CreatedAt: e.CreatedAt, ID: e.ID} })
	assert.Equal(t, want, ids(rows, func(e ports.Event) string { return e.ID }))
	for _, r := range rows {
		for _, e := range evs {
			if e.ID != r.ID {
				continue
			}
			if e.Resource != nil {
				assert.JSONEq(t, string(e.Resource), string(r.Resource))
			} else {
				assert.Empty(t, r.Resource)
			}
			e.Resource, r.Resource = nil, nil
			e.CreatedAt, e.Status = norm(e.CreatedAt), ports.EventPending
			assert.Positive(t, r.Seq, "the store numbers what it records")
			e.Seq = r.Seq
			assert.Equal(t, e, r)
		}
	}
	// An event of q (no endpoint) is kept, with no delivery job.
	held := ports.Event{ID: newID("Webhook"), PlatformID: q.ID, Type: "CUSTOMER.KYC_APPROVED", ResourceID: "Customer:q", CreatedAt: at(3)}
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Events().Append(ctx, held) })
	for _, f := range []struct {
		filter ports.EventFilter
		want   int
	}{
		{ports.EventFilter{PlatformID: p.ID, ResourceID: "Customer:0"}, 2},
		{ports.EventFilter{PlatformID: p.ID, Type: "CUSTOMER.KYC_1"}, 2},
		{ports.EventFilter{PlatformID: p.ID, Status: ports.EventPending}, 5},
		{ports.EventFilter{PlatformID: p.ID, Status: ports.EventDelivered}, 0},
		{ports.EventFilter{PlatformID: q.ID}, 1},
	} {
		_, total, err = s.Read().Events().List(ctx, f.filter, ports.Page{Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, f.want, total, "%+v", f.filter)
	}
	seen := walk(t, 2, 5, func(pg ports.Page) ([]ports.Event, int, error) {
		return s.Read().Events().List(ctx, ports.EventFilter{PlatformID: p.ID}, pg)
	}, func(e ports.Event) ports.Position { return ports.Position{CreatedAt: e.CreatedAt, ID: e.ID} })
	assert.Equal(t, want, seen)

	// Each event's delivery job was queued with it, and only those.
	jobs, err := s.Read().Jobs().Claim(ctx, at(100), 100, time.Minute, ports.JobKinds{Only: []string{ports.EventDeliveryJob}})
	require.NoError(t, err)
	var keys []string
	for _, j := range jobs {
		keys = append(keys, j.Key)
		assert.Equal(t, p.ID+"\n"+j.Key, string(j.Payload))
	}
	assert.ElementsMatch(t, ids(evs, func(e ports.Event) string { return e.ID }), keys)

	_, err = s.Read().Events().Get(ctx, q.ID, evs[0].ID)
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform's event")

	// The delivery worker's batch read: any platform's events, unknown ids
	// left out.
	many, err := s.Read().Events().GetMany(ctx, []string{evs[1].ID, held.ID, "Webhook:unknown", evs[0].ID})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{evs[0].ID, evs[1].ID, held.ID}, ids(many, func(e ports.Event) string { return e.ID }))
	for _, e := range many {
		if e.ID == held.ID {
			assert.Equal(t, q.ID, e.PlatformID)
			assert.Equal(t, ports.EventPending, e.Status)
		}
	}

	// evs[0] and evs[3] are about Customer:0, evs[0] first: evs[3] has an
	// earlier pending event, the others none.
	stored := map[string]ports.Event{}
	for _, e := range many {
		stored[e.ID] = e
	}
	ev3, err := s.Read().Events().Get(ctx, p.ID, evs[3].ID)
	require.NoError(t, err)
	before, err := pendingBefore(ctx, s, []ports.Event{ev3, stored[evs[0].ID], stored[evs[1].ID]})
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{evs[3].ID: true}, before)

	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.Events().RecordAttempts(ctx, []ports.AttemptRecord{{PlatformID: p.ID, Attempt: ports.EventAttempt{EventID: evs[0].ID,
			At: at(10), StatusCode: 500, Latency: 1500 * time.Microsecond, Error: "server error"}, Status: ports.EventPending}})
	})
	// Two events' attempts in one step (the worker's batch).
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.Events().RecordAttempts(ctx, []ports.AttemptRecord{
			{PlatformID: p.ID, Attempt: ports.EventAttempt{EventID: evs[0].ID, At: at(11), StatusCode: 204, Latency: 2 * time.Millisecond},
				Status: ports.EventDelivered},
			{PlatformID: p.ID, Attempt: ports.EventAttempt{EventID: evs[1].ID, At: at(11), StatusCode: 503, Error: "busy"},
				Status: ports.EventPending},
		})
	})
	got1, err := s.Read().Events().Get(ctx, p.ID, evs[1].ID)
	require.NoError(t, err)
	assert.Equal(t, ports.EventPending, got1.Status)
	assert.Equal(t, 1, got1.Attempts)
	assert.Nil(t, got1.DeliveredAt)
	got, err := s.Read().Events().Get(ctx, p.ID, evs[0].ID)
	require.NoError(t, err)
	assert.Equal(t, ports.EventDelivered, got.Status)
	assert.Equal(t, 2, got.Attempts)
	require.NotNil(t, got.DeliveredAt)
	assert.Equal(t, norm(at(11)), *got.DeliveredAt)
	attempts, err := s.Read().Events().Attempts(ctx, p.ID, evs[0].ID)
	require.NoError(t, err)
	require.Len(t, attempts, 2)
	assert.Equal(t, ports.EventAttempt{EventID: evs[0].ID, At: norm(at(10)), StatusCode: 500, Latency: 1500 * time.Microsecond,
		Error: "server error"}, attempts[0])
	assert.Equal(t, 204, attempts[1].StatusCode)
	before, err = pendingBefore(ctx, s, []ports.Event{ev3})
	require.NoError(t, err)
	assert.Empty(t, before, "the earlier event was delivered")
	// Redelivered, it is pending again: ev3 waits for it once more.
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Events().Requeue(ctx, p.ID, evs[0].ID, at(11)) })
	before, err = pendingBefore(ctx, s, []ports.Event{ev3})
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{evs[3].ID: true}, before, "a redelivered earlier event")
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.Events().RecordAttempts(ctx, []ports.AttemptRecord{{PlatformID: p.ID, Attempt: ports.EventAttempt{EventID: evs[0].ID,
			At: at(11), StatusCode: 204}, Status: ports.EventDelivered}})
	})
	before, err = pendingBefore(ctx, s, []ports.Event{ev3})
	require.NoError(t, err)
	assert.Empty(t, before)
	err = s.InTx(ctx, func(tx ports.Tx) error {
		return tx.Events().RecordAttempts(ctx, []ports.AttemptRecord{
			{PlatformID: p.ID, Attempt: ports.EventAttempt{EventID: evs[2].ID, At: at(12)}, Status: ports.EventFailed},
			{PlatformID: q.ID, Attempt: ports.EventAttempt{EventID: evs[0].ID, At: at(12)}, Status: ports.EventFailed},
		})
	})
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform's event")
	got2, err := s.Read().Events().Get(ctx, p.ID, evs[2].ID)
	require.NoError(t, err)
	assert.Equal(t, ports.EventPending, got2.Status, "a refused batch records none of its attempts")
	assert.Zero(t, got2.Attempts)

	// Redelivery: pending again, with a new delivery job.
	for _, j := range jobs {
		require.NoError(t, s.Read().Jobs().Complete(ctx, j.ID))
	}
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Events().Requeue(ctx, p.ID, evs[0].ID, at(20)) })
	got, err = s.Read().Events().Get(ctx, p.ID, evs[0].ID)
	require.NoError(t, err)
	assert.Equal(t, ports.EventPending, got.Status)
	assert.Nil(t, got.DeliveredAt)
	assert.Equal(t, got.Attempts, got.AttemptsBefore, "the retry schedule starts over after the attempts so far")
	assert.NotZero(t, got.AttemptsBefore)
	jobs, err = s.Read().Jobs().Claim(ctx, at(100), 100, time.Minute, ports.JobKinds{Only: []string{ports.EventDeliveryJob}})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.Equal(t, evs[0].ID, jobs[0].Key)
	assert.Equal(t, norm(at(20)), jobs[0].RunAt)

	// Redelivered while its retry waits: the retry is brought forward.
	require.NoError(t, s.Read().Jobs().Retry(ctx, jobs[0].ID, at(500), "refused"))
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.Events().Requeue(ctx, p.ID, evs[0].ID, at(200))
	})
	jobs, err = s.Read().Jobs().Claim(ctx, at(200), 100, 100*time.Hour, ports.JobKinds{Only: []string{ports.EventDeliveryJob}})
	require.NoError(t, err)
	require.Len(t, jobs, 1, "the waiting retry is due at the redelivery")
	assert.Equal(t, norm(at(200)), jobs[0].RunAt)
}

// platformWithEndpoint creates a platform with a webhook endpoint: its
// events get delivery jobs.
func platformWithEndpoint(t *testing.T, s ports.Store) ports.Platform {
	t.Helper()
	p := createPlatform(t, s, at(0))
	p.WebhookEndpoint = "https://hooks.example/in"
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Platforms().Update(ctx, p) })
	return p
}

// appendEvents records evs in one unit of work.
func appendEvents(t *testing.T, s ports.Store, evs []ports.Event) {
	t.Helper()
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, e := range evs {
			if err := tx.Events().Append(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// pendingBefore is which of es, pending events, have an earlier pending
// event of their resource: those that are not their resource's first
// (PendingHeads), what delivery asks before sending one.
func pendingBefore(ctx context.Context, s ports.Store, es []ports.Event) (map[string]bool, error) {
	heads, err := s.Read().Events().PendingHeads(ctx, es, 1)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, e := range es {
		if first := heads[ports.ResourceKey(e.PlatformID, e.ResourceID)]; len(first) > 0 && first[0] != e.ID {
			out[e.ID] = true
		}
	}
	return out, nil
}

// testEventBacklog: a platform that sets an endpoint has its pending
// events queued again in one step, each with its schedule from the start;
// its delivered and failed events, and another platform's, are left alone.
func testEventBacklog(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p, q := createPlatform(t, s, at(0)), createPlatform(t, s, at(0))
	var evs []ports.Event
	for i := range 20 {
		evs = append(evs, ports.Event{ID: newID("Webhook"), PlatformID: p.ID, Type: "CUSTOMER.KYC_APPROVED",
			ResourceID: fmt.Sprintf("Customer:%d", i%4), CreatedAt: at(1)})
	}
	other := ports.Event{ID: newID("Webhook"), PlatformID: q.ID, Type: "CUSTOMER.KYC_APPROVED", ResourceID: "Customer:q", CreatedAt: at(1)}
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, e := range append(slices.Clone(evs), other) {
			if err := tx.Events().Append(ctx, e); err != nil {
				return err
			}
		}
		// One delivered, one failed, one tried and waiting.
		return tx.Events().RecordAttempts(ctx, []ports.AttemptRecord{
			{PlatformID: p.ID, Status: ports.EventDelivered, Attempt: ports.EventAttempt{EventID: evs[0].ID, At: at(2), StatusCode: 200}},
			{PlatformID: p.ID, Status: ports.EventFailed, Attempt: ports.EventAttempt{EventID: evs[1].ID, At: at(2), StatusCode: 500}},
			{PlatformID: p.ID, Status: ports.EventPending, Attempt: ports.EventAttempt{EventID: evs[2].ID, At: at(2), StatusCode: 503}},
		})
	})
	p.WebhookEndpoint = "https://hooks.example/backlog"
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Platforms().Update(ctx, p) })

	var n int
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		var err error
		n, err = tx.Events().RequeuePending(ctx, p.ID, at(3))
		return err
	})
	assert.Equal(t, 18, n, "the pending ones")
	jobs, err := s.Read().Jobs().Claim(ctx, at(3), 1000, time.Minute, ports.JobKinds{Only: []string{ports.EventDeliveryJob}})
	require.NoError(t, err)
	queued := map[string]int{}
	for _, j := range jobs {
		assert.Equal(t, norm(at(3)), j.RunAt)
		platformID, ids, err := ports.EventDeliveryRefs(j)
		require.NoError(t, err)
		assert.Equal(t, p.ID, platformID)
		assert.LessOrEqual(t, len(ids), ports.EventsPerDeliveryJob)
		for _, id := range ids {
			queued[id]++
		}
	}
	want := map[string]int{}
	for _, e := range evs[2:] {
		want[e.ID] = 1
	}
	assert.Equal(t, want, queued, "every pending event of the platform, once")
	tried, err := s.Read().Events().Get(ctx, p.ID, evs[2].ID)
	require.NoError(t, err)
	assert.Equal(t, 1, tried.Attempts)
	assert.Equal(t, 1, tried.AttemptsBefore, "its schedule starts over")
	for id, status := range map[string]string{evs[0].ID: ports.EventDelivered, evs[1].ID: ports.EventFailed} {
		e, err := s.Read().Events().Get(ctx, p.ID, id)
		require.NoError(t, err)
		assert.Equal(t, status, e.Status)
	}

	// Another platform's backlog is its own; an unknown platform has none.
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		var err error
		n, err = tx.Events().RequeuePending(ctx, q.ID, at(3))
		return err
	})
	assert.Equal(t, 1, n)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		var err error
		n, err = tx.Events().RequeuePending(ctx, newID("Platform"), at(3))
		return err
	})
	assert.Zero(t, n)
}

// testEventOrder: the store numbers events as it records them (Seq), and
// an event's earlier pending events are those recorded before it, also
// when their times tie and their ids sort the other way (two changes of
// one resource in one microsecond).
func testEventOrder(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	first := ports.Event{ID: "Webhook:z-" + newID("x"), PlatformID: p.ID, Type: "OUTGOING_PAYMENT.PENDING",
		ResourceID: "Transaction:tie", CreatedAt: at(5)}
	second := ports.Event{ID: "Webhook:a-" + newID("x"), PlatformID: p.ID, Type: "OUTGOING_PAYMENT.PROCESSING",
		ResourceID: "Transaction:tie", CreatedAt: at(5)}
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Events().Append(ctx, first); err != nil {
			return err
		}
		return tx.Events().Append(ctx, second)
	})
	third := ports.Event{ID: newID("Webhook"), PlatformID: p.ID, Type: "OUTGOING_PAYMENT.COMPLETED", ResourceID: "Transaction:tie",
		CreatedAt: at(4)} // a clock that stepped back
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Events().Append(ctx, third) })
	got, err := s.Read().Events().GetMany(ctx, []string{first.ID, second.ID, third.ID})
	require.NoError(t, err)
	seq := map[string]int64{}
	for _, e := range got {
		seq[e.ID] = e.Seq
	}
	require.Len(t, seq, 3)
	assert.Less(t, seq[first.ID], seq[second.ID])
	assert.Less(t, seq[second.ID], seq[third.ID])
	one, err := s.Read().Events().Get(ctx, p.ID, second.ID)
	require.NoError(t, err)
	assert.Equal(t, seq[second.ID], one.Seq)
	before, err := pendingBefore(ctx, s, got)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{second.ID: true, third.ID: true}, before, "recording order, not time or id")

	// A resource's first pending events, in recording order, at most n
	// (what must go before an event); delivered ones drop out.
	tie := ports.ResourceKey(p.ID, "Transaction:tie")
	headsOf := func(n int) []string {
		t.Helper()
		heads, err := s.Read().Events().PendingHeads(ctx, []ports.Event{third}, n)
		require.NoError(t, err)
		return heads[tie]
	}
	assert.Equal(t, []string{first.ID, second.ID, third.ID}, headsOf(10))
	assert.Equal(t, []string{first.ID}, headsOf(1))
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.Events().RecordAttempts(ctx, []ports.AttemptRecord{{PlatformID: p.ID, Status: ports.EventDelivered,
			Attempt: ports.EventAttempt{EventID: first.ID, At: at(6), StatusCode: 200}}})
	})
	assert.Equal(t, []string{second.ID, third.ID}, headsOf(10))

	// What comes next for each resource: its first pending events.
	other := ports.Event{PlatformID: p.ID, ResourceID: "Transaction:none"}
	heads, err := s.Read().Events().PendingHeads(ctx, []ports.Event{third, second, other}, 10)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{
		tie: {second.ID, third.ID},
		ports.ResourceKey(p.ID, "Transaction:none"): {},
	}, heads)
	assert.Equal(t, []string{second.ID}, headsOf(1))
}

// testTransactionEvents: the store records a transaction's event when it
// is created in, or moves to, a status with a webhook type
// (ports.TransactionEventType), whatever path writes it, with the
// transaction as it then was; none for CREATED or an update that keeps
// the status.
func testTransactionEvents(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := customer(p.ID, at(0))
	createCustomers(t, s, c)
	out := fullTransaction(p.ID, c.ID, at(1))
	out.Status, out.SettledAt, out.UpdatedAt = "PENDING", nil, at(1)
	in := transaction(p.ID, c.ID, "INCOMING", at(1))
	in.Status = "CREATED"
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Transactions().Create(ctx, out); err != nil {
			return err
		}
		return tx.Transactions().Create(ctx, in)
	})
	move := func(tr *ports.Transaction, status string, when time.Time) {
		t.Helper()
		tr.Status, tr.UpdatedAt = status, when
		inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Transactions().Update(ctx, *tr) })
	}
	move(&out, "PROCESSING", at(2))
	processing := out
	out.Description = "rent, paid"
	move(&out, "PROCESSING", at(3)) // same status: no event
	move(&out, "COMPLETED", at(4))
	move(&in, "PENDING", at(2))
	move(&in, "PROCESSING", at(3)) // no incoming type for it
	move(&in, "REJECTED", at(4))

	events := func(id string) []ports.Event {
		rows, _, err := s.Read().Events().List(ctx, ports.EventFilter{PlatformID: p.ID, ResourceID: id}, ports.Page{Limit: 10})
		require.NoError(t, err)
		return rows
	}
	got := events(out.ID)
	require.Len(t, got, 3)
	var types []string
	for _, e := range got {
		types = append(types, e.Type)
	}
	assert.Equal(t, []string{"OUTGOING_PAYMENT.PENDING", "OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.COMPLETED"}, types)
	snap, err := ports.SnapshotOf[ports.Transaction](got[1])
	require.NoError(t, err)
	assert.Equal(t, normTxn(processing), normTxn(snap), "the transaction as it was when it became PROCESSING")
	assert.Equal(t, norm(at(2)), got[1].CreatedAt)
	assert.Regexp(t, `^Webhook:[0-9a-f-]{36}$`, got[1].ID)

	got = events(in.ID)
	types = nil
	for _, e := range got {
		types = append(types, e.Type)
	}
	assert.Equal(t, []string{"INCOMING_PAYMENT.PENDING", "INCOMING_PAYMENT.FAILED"}, types)

	// A rolled-back change records nothing.
	rollback := errors.New("roll back")
	err = s.InTx(ctx, func(tx ports.Tx) error {
		out.Status, out.UpdatedAt = "FAILED", at(5)
		require.NoError(t, tx.Transactions().Update(ctx, out))
		return rollback
	})
	require.ErrorIs(t, err, rollback)
	assert.Len(t, events(out.ID), 3)

	// A refund's status records its own type, after the status's, in
	// the same change or alone (ports.TransactionEventTypes); a REFUNDED
	// transaction whose refund completed records one REFUND_COMPLETED.
	typesOf := func(id string) []string {
		var out []string
		for _, e := range events(id) {
			out = append(out, e.Type)
		}
		return out
	}
	failed := fullTransaction(p.ID, c.ID, at(7))
	failed.Status, failed.SettledAt, failed.UpdatedAt = "PROCESSING", nil, at(7)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Transactions().Create(ctx, failed) })
	failed.Details.Refund = &ports.Refund{Reference: "R-1", InitiatedAt: at(8), Status: "PENDING", Reason: "TRANSACTION_FAILED"}
	move(&failed, "FAILED", at(8))
	refunded := *failed.Details.Refund
	refunded.Status, refunded.SettledAt = "COMPLETED", ptrTime(at(9))
	failed.Details.Refund = &refunded
	move(&failed, "FAILED", at(9))
	assert.Equal(t, []string{"OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.FAILED", "OUTGOING_PAYMENT.REFUND_PENDING",
		"OUTGOING_PAYMENT.REFUND_COMPLETED"}, typesOf(failed.ID))
	evs := events(failed.ID)
	assert.Equal(t, norm(at(8)).Add(time.Microsecond), evs[2].CreatedAt, "the refund's event a microsecond after the status's")
	snap2, err := ports.SnapshotOf[ports.Transaction](evs[3])
	require.NoError(t, err)
	require.NotNil(t, snap2.Details.Refund)
	assert.Equal(t, "COMPLETED", snap2.Details.Refund.Status, "the transaction as it was, refund included")
	cancelled := transaction(p.ID, c.ID, "OUTGOING", at(10))
	cancelled.Status = "PROCESSING"
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Transactions().Create(ctx, cancelled) })
	cancelled.Details.Refund = &ports.Refund{Reference: "R-2", InitiatedAt: at(11), SettledAt: ptrTime(at(11)), Status: "COMPLETED"}
	move(&cancelled, "REFUNDED", at(11))
	unreturned := transaction(p.ID, c.ID, "OUTGOING", at(12))
	unreturned.Status = "PROCESSING"
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Transactions().Create(ctx, unreturned) })
	unreturned.Details.Refund = &ports.Refund{Reference: "R-3", InitiatedAt: at(13), Status: "FAILED"}
	move(&unreturned, "FAILED", at(13))
	assert.Equal(t, []string{"OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.REFUND_COMPLETED"}, typesOf(cancelled.ID))
	assert.Equal(t, []string{"OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.FAILED", "OUTGOING_PAYMENT.REFUND_FAILED"},
		typesOf(unreturned.ID))
	for _, st := range []string{"PENDING", "COMPLETED", "FAILED"} {
		for _, typ := range []string{"INCOMING", "OUTGOING"} {
			tr := transaction(p.ID, c.ID, typ, at(14))
			tr.Status = "CREATED"
			tr.Details.Refund = &ports.Refund{Reference: "R", InitiatedAt: at(14), Status: st}
			inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Transactions().Create(ctx, tr) })
			assert.Equal(t, []string{ports.TransactionRefundEventType(typ, st)}, typesOf(tr.ID), "%s refund %s", typ, st)
		}
	}

	// Every status's type, as the store records it, is the ports table's.
	for _, typ := range []string{"INCOMING", "OUTGOING"} {
		for _, st := range []string{"PENDING", "PENDING_AUTHORIZATION", "PROCESSING", "COMPLETED", "REJECTED", "FAILED", "REFUNDED", "EXPIRED"} {
			tr := transaction(p.ID, c.ID, typ, at(6))
			tr.Status = st
			inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Transactions().Create(ctx, tr) })
			var gotType string
			if evs := events(tr.ID); len(evs) == 1 {
				gotType = evs[0].Type
			} else {
				require.Empty(t, evs)
			}
			assert.Equal(t, ports.TransactionEventType(typ, st), gotType, "%s %s", typ, st)
		}
	}
}

// testEndDeliveries: a delivery batch ends in one step, outside a unit of
// work as in one: its attempts recorded, its follow-up jobs queued, its
// jobs removed; an attempt of another platform's event refuses all of it.
func testEndDeliveries(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := platformWithEndpoint(t, s)
	q := createPlatform(t, s, at(0))
	var evs []ports.Event
	for i := range 3 {
		evs = append(evs, ports.Event{ID: newID("Webhook"), PlatformID: p.ID, Type: "CUSTOMER.KYC_APPROVED",
			ResourceID: fmt.Sprintf("Customer:end-%d", i), Resource: json.RawMessage(`{"n":1}`), CreatedAt: at(1)})
	}
	appendEvents(t, s, evs)
	kinds := ports.JobKinds{Only: []string{ports.EventDeliveryJob}}
	claimed, err := s.Read().Jobs().Claim(ctx, at(2), 100, 100000*time.Hour, kinds) // leased for the test's time
	require.NoError(t, err)
	require.Len(t, claimed, 3)
	done := []string{claimed[0].ID, claimed[1].ID, claimed[2].ID}

	// Refused: evs[2] is not q's; nothing of the step is written.
	retry := ports.EventDeliveryJobAt(p.ID, evs[1].ID, at(7))
	retry.ID, retry.Key, retry.LastError = "Job:end-retry", "end-retry", "the endpoint answered 503"
	err = s.Read().Events().EndDeliveries(ctx, []ports.AttemptRecord{
		{PlatformID: p.ID, Attempt: ports.EventAttempt{EventID: evs[0].ID, At: at(3), StatusCode: 204}, Status: ports.EventDelivered},
		{PlatformID: q.ID, Attempt: ports.EventAttempt{EventID: evs[2].ID, At: at(3), StatusCode: 204}, Status: ports.EventDelivered},
	}, []ports.Job{retry}, done)
	require.ErrorIs(t, err, ports.ErrNotFound)
	got, err := s.Read().Events().Get(ctx, p.ID, evs[0].ID)
	require.NoError(t, err)
	assert.Equal(t, ports.EventPending, got.Status, "a refused step records no attempt")
	assert.Zero(t, got.Attempts)
	backlog, err := s.Read().Jobs().Claim(ctx, at(100), 100, time.Minute, kinds)
	require.NoError(t, err)
	assert.Empty(t, backlog, "nor queues a job (the claimed ones stay leased)")

	// Outside a unit of work: delivered, retried later, and the batch's jobs gone.
	err = s.Read().Events().EndDeliveries(ctx, []ports.AttemptRecord{
		{PlatformID: p.ID, Attempt: ports.EventAttempt{EventID: evs[0].ID, At: at(3), StatusCode: 204, Latency: 3 * time.Millisecond},
			Status: ports.EventDelivered},
		{PlatformID: p.ID, Attempt: ports.EventAttempt{EventID: evs[1].ID, At: at(3), StatusCode: 503, Error: "the endpoint answered 503"},
			Status: ports.EventPending},
	}, []ports.Job{retry}, done[:2])
	require.NoError(t, err)
	got, err = s.Read().Events().Get(ctx, p.ID, evs[0].ID)
	require.NoError(t, err)
	assert.Equal(t, ports.EventDelivered, got.Status)
	assert.Equal(t, 1, got.Attempts)
	require.NotNil(t, got.DeliveredAt)
	assert.Equal(t, norm(at(3)), *got.DeliveredAt)
	attempts, err := s.Read().Events().Attempts(ctx, p.ID, evs[1].ID)
	require.NoError(t, err)
	assert.Equal(t, []ports.EventAttempt{{EventID: evs[1].ID, At: norm(at(3)), StatusCode: 503, Error: "the endpoint answered 503"}}, attempts)
	due, err := s.Read().Jobs().Claim(ctx, at(100), 100, time.Minute, kinds)
	require.NoError(t, err)
	require.Len(t, due, 1, "the retry (the third event's job is still leased)")
	assert.Equal(t, retry.ID, due[0].ID)
	assert.Equal(t, norm(at(7)), due[0].RunAt)
	assert.Equal(t, retry.Payload, due[0].Payload)
	assert.Equal(t, retry.LastError, due[0].LastError)

	// In a unit of work, with the rest of it; a job queued again is skipped.
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.Events().EndDeliveries(ctx, []ports.AttemptRecord{
			{PlatformID: p.ID, Attempt: ports.EventAttempt{EventID: evs[2].ID, At: at(101), StatusCode: 200}, Status: ports.EventDelivered},
		}, []ports.Job{retry}, []string{done[2]})
	})
	got, err = s.Read().Events().Get(ctx, p.ID, evs[2].ID)
	require.NoError(t, err)
	assert.Equal(t, ports.EventDelivered, got.Status)
	due, err = s.Read().Jobs().Claim(ctx, at(1000), 100, time.Minute, kinds)
	require.NoError(t, err)
	require.Len(t, due, 1, "the retry, once")
	assert.Equal(t, retry.ID, due[0].ID)
	require.NoError(t, s.Read().Events().EndDeliveries(ctx, nil, nil, []string{retry.ID}))
	due, err = s.Read().Jobs().Claim(ctx, at(10000), 100, time.Minute, kinds)
	require.NoError(t, err)
	assert.Empty(t, due)
}
