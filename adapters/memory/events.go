package memory

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/corridorpay/corridor/ports"
)

// ---- events (the outbox) and their delivery attempts ----

type storeEvents struct{ tx *storeTx }

// Append records e pending and, when its platform has a webhook endpoint,
// queues its delivery job in the same unit.
func (r storeEvents) Append(ctx context.Context, e ports.Event) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	if _, ok := storeLookup(r.tx, pickEvents, e.ID); ok {
		done()
		return storeConflict("events_pkey")
	}
	e.Status, e.Attempts, e.LastAttemptAt, e.DeliveredAt = ports.EventPending, 0, nil, nil
	e.Seq = r.tx.s.eventSeq.Add(1)
	r.tx.w.state.kyc.events[e.ID] = storeCopyEvent(e)
	p, _ := storeLookup(r.tx, pickPlatforms, e.PlatformID)
	done()
	if p.WebhookEndpoint == "" {
		return nil
	}
	return r.tx.Jobs().Enqueue(ctx, ports.EventDeliveryJobFor(e))
}

func (r storeEvents) Get(_ context.Context, platformID, id string) (ports.Event, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Event{}, err
	}
	defer done()
	e, ok := storeLookup(r.tx, pickEvents, id)
	if !ok || e.PlatformID != platformID {
		return ports.Event{}, ports.ErrNotFound
	}
	return storeCopyEvent(e), nil
}

func (r storeEvents) GetMany(_ context.Context, ids []string) ([]ports.Event, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]ports.Event, 0, len(ids))
	for _, id := range ids {
		if e, ok := storeLookup(r.tx, pickEvents, id); ok {
			out = append(out, storeCopyEvent(e))
		}
	}
	return out, nil
}

func (r storeEvents) List(_ context.Context, f ports.EventFilter, page ports.Page) ([]ports.Event, int, error) {
	keep := func(e ports.Event) bool {
		switch {
		case e.PlatformID != f.PlatformID,
			f.ResourceID != "" && e.ResourceID != f.ResourceID,
			f.Type != "" && e.Type != f.Type,
			f.Status != "" && e.Status != f.Status:
			return false
		}
		return true
	}
	if f.ResourceID == "" {
		return storeListCopies(r.tx, pickEvents, keep, eventListKey, storeCopyEvent, page)
	}
	done, err := r.tx.begin(false)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	rows, total := storePage(slices.DeleteFunc(storeResourceEvents(r.tx, f.PlatformID, f.ResourceID),
		func(e ports.Event) bool { return !keep(e) }), eventListKey, page)
	for i := range rows {
		rows[i] = storeCopyEvent(rows[i])
	}
	return rows, total, nil
}

// RecordAttempts applies rs in order, all or none (an unknown event is
// ErrNotFound and records nothing).
func (r storeEvents) RecordAttempts(_ context.Context, rs []ports.AttemptRecord) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	for _, rec := range rs {
		if e, ok := storeLookup(r.tx, pickEvents, rec.Attempt.EventID); !ok || e.PlatformID != rec.PlatformID {
			return ports.ErrNotFound
		}
	}
	for _, rec := range rs {
		a := rec.Attempt
		e, _ := storeLookup(r.tx, pickEvents, a.EventID)
		at := ports.Stored(a.At)
		e.Status, e.Attempts, e.LastAttemptAt = rec.Status, e.Attempts+1, &at
		if rec.Status == ports.EventDelivered {
			e.DeliveredAt = &at
		}
		r.tx.w.state.kyc.events[e.ID] = storeCopyEvent(e)
		a.At = at
		prev, _ := storeLookup(r.tx, pickAttempts, e.ID)
		r.tx.w.state.kyc.attempts[e.ID] = append(slices.Clone(prev), a)
	}
	return nil
}

// EndDeliveries is RecordAttempts, Enqueue and CompleteAll in the unit of
// work, or in one of its own outside one.
func (r storeEvents) EndDeliveries(ctx context.Context, rs []ports.AttemptRecord, next []ports.Job, done []string) error {
	if r.tx.w == nil {
		return r.tx.s.InTx(ctx, func(tx ports.Tx) error { return tx.Events().EndDeliveries(ctx, rs, next, done) })
	}
	if len(rs) > 0 {
		if err := r.RecordAttempts(ctx, rs); err != nil {
			return err
		}
	}
	jobs := storeJobs(r)
	for _, j := range next {
		if err := jobs.Enqueue(ctx, j); err != nil {
			return err
		}
	}
	return jobs.CompleteAll(ctx, done)
}

func (r storeEvents) Attempts(_ context.Context, platformID, eventID string) ([]ports.EventAttempt, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return nil, err
	}
	defer done()
	e, ok := storeLookup(r.tx, pickEvents, eventID)
	if !ok || e.PlatformID != platformID {
		return nil, ports.ErrNotFound
	}
	prev, _ := storeLookup(r.tx, pickAttempts, eventID)
	return slices.Clone(prev), nil
}

func (r storeEvents) PendingHeads(_ context.Context, es []ports.Event, n int) (map[string][]string, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return nil, err
	}
	defer done()
	out := map[string][]string{}
	for _, e := range es {
		key := ports.ResourceKey(e.PlatformID, e.ResourceID)
		if _, ok := out[key]; ok {
			continue
		}
		pending := storePendingOf(r.tx, e.PlatformID, e.ResourceID)
		ids := []string{}
		for _, o := range pending[:min(n, len(pending))] {
			ids = append(ids, o.ID)
		}
		out[key] = ids
	}
	return out, nil
}

// storePendingOf is the PENDING events of one resource as tx sees them, in
// the order they were recorded: the resource's committed pending events
// (the index, not its every event) as tx may have changed them, and the
// events tx recorded or changed.
func storePendingOf(tx *storeTx, platformID, resourceID string) []ports.Event {
	var out []ports.Event
	for id := range tx.s.state.kyc.pending[eventResourceKey(platformID, resourceID)] {
		if _, changed := storeOverlay(tx, pickEvents)[id]; changed {
			continue // below, as tx has it
		}
		if o, ok := storeLookup(tx, pickEvents, id); ok {
			out = append(out, o)
		}
	}
	for _, o := range storeOverlay(tx, pickEvents) {
		if o.PlatformID == platformID && o.ResourceID == resourceID && o.Status == ports.EventPending {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b ports.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

func eventResourceKey(platformID, resourceID string) string { return platformID + "\x00" + resourceID }

// storeResourceEvents are the events of one resource visible to tx: the
// committed ones through the index (as tx's unit of work may have changed
// them), then those the unit recorded.
func storeResourceEvents(tx *storeTx, platformID, resourceID string) []ports.Event {
	ids := tx.s.state.kyc.byResource[eventResourceKey(platformID, resourceID)]
	out := make([]ports.Event, 0, len(ids))
	for _, id := range ids {
		if e, ok := storeLookup(tx, pickEvents, id); ok {
			out = append(out, e)
		}
	}
	for id, e := range storeOverlay(tx, pickEvents) {
		if _, committed := tx.s.state.kyc.events[id]; !committed && e.PlatformID == platformID && e.ResourceID == resourceID {
			out = append(out, e)
		}
	}
	return out
}

func (r storeEvents) Requeue(ctx context.Context, platformID, id string, runAt time.Time) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	e, ok := storeLookup(r.tx, pickEvents, id)
	if !ok || e.PlatformID != platformID {
		done()
		return ports.ErrNotFound
	}
	e.Status, e.DeliveredAt, e.AttemptsBefore = ports.EventPending, nil, e.Attempts
	r.tx.w.state.kyc.events[id] = storeCopyEvent(e)
	done()
	j := ports.EventDeliveryJobAt(platformID, id, runAt)
	if err := r.tx.Jobs().Enqueue(ctx, j); err != nil {
		return err
	}
	// A retry already queued is brought forward.
	return storeJobs(r).advance(j.ID, runAt)
}

// RequeuePending requeues the platform's pending events one by one, in
// the order a list gives them. They are found in one pass over the events
// (a page at a time, each page a scan and sort of every event, took 1.6 s
// for 20,000 pending events and grew with their square).
func (r storeEvents) RequeuePending(ctx context.Context, platformID string, runAt time.Time) (int, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return 0, err
	}
	pending := storeAll(r.tx, pickEvents, func(e ports.Event) bool {
		return e.PlatformID == platformID && e.Status == ports.EventPending
	})
	done()
	pending, _ = storePage(pending, eventListKey, ports.Page{}) // sorted, all of them
	for i, e := range pending {
		if err := r.Requeue(ctx, platformID, e.ID, runAt); err != nil {
			return i, err
		}
	}
	return len(pending), nil
}

// eventListKey is the order events are listed in: by time, then id.
func eventListKey(e ports.Event) (time.Time, string) { return e.CreatedAt, e.ID }

func storeCopyEvent(e ports.Event) ports.Event {
	e.Resource = bytes.Clone(e.Resource)
	e.CreatedAt = ports.Stored(e.CreatedAt)
	e.LastAttemptAt, e.DeliveredAt = ports.StoredPtr(e.LastAttemptAt), ports.StoredPtr(e.DeliveredAt)
	return e
}
