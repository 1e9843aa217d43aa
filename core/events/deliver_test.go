package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/coretest"
)

// receiver is a fake endpoint: it answers from a script (then 200), and
// keeps what it got.
type receiver struct {
	mu     sync.Mutex
	script []int // status codes to answer, in order; 0: no answer
	// failing answers 500 to so many more attempts of an event (by id),
	// before the script.
	failing map[string]int
	got     []Envelope
	codes   []int
	sigs    []string
	answers int
}

func (r *receiver) Send(_ context.Context, url string, body []byte, sig string) (Answer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var env Envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return Answer{}, err
	}
	code := 200
	switch {
	case r.failing[env.ID] > 0:
		r.failing[env.ID]--
		code = 500
	case len(r.script) > 0:
		code, r.script = r.script[0], r.script[1:]
	}
	r.answers++
	if code == 0 {
		return Answer{}, errors.New("connection refused")
	}
	r.got, r.sigs, r.codes = append(r.got, env), append(r.sigs, sig), append(r.codes, code)
	return Answer{StatusCode: code, Body: []byte(`{"ok":true}`)}, nil
}

func (r *receiver) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.got {
		out = append(out, e.Type)
	}
	return out
}

type signer struct{}

func (signer) Sign(body []byte) (string, error) { return "sig:" + string(rune(len(body))), nil }

type renderer struct{}

func (renderer) Render(_ context.Context, e ports.Event) (json.RawMessage, error) {
	return e.Resource, nil
}

type env struct {
	t      *testing.T
	b      coretest.Backend
	recv   *receiver
	ends   PlatformEndpoints
	svc    *Service
	runner *jobs.Runner
	pid    string
	batch  bool
}

// newEnv delivers with Handle, job by job, or with HandleBatch (batch),
// as the service does.
func newEnv(t *testing.T, b coretest.Backend, batch bool) *env {
	e := &env{t: t, b: b, recv: &receiver{}, ends: PlatformEndpoints{Store: b.Store}, pid: "Platform:p1", batch: batch}
	now := b.Clock.Now()
	require.NoError(t, b.Store.InTx(context.Background(), func(tx ports.Tx) error {
		return tx.Platforms().Create(context.Background(), ports.Platform{ID: e.pid, Name: "p", Currencies: []string{"USD"},
			CreatedAt: now, UpdatedAt: now})
	}))
	d := NewDeliverer(b.Store, b.Clock, e.recv, signer{}, renderer{}, e.ends, coretest.QuietLog())
	d.jitter = func() float64 { return 0.5 } // no jitter: the schedule exactly
	e.svc = NewService(b.Store, b.Clock, system.IDs{}, d)
	e.runner = jobs.NewRunner(b.Store.Read().Jobs(), b.Clock, coretest.QuietLog(),
		jobs.WithKinds(ports.JobKinds{Only: []string{ports.EventDeliveryJob}}))
	if batch {
		e.runner.HandleBatch(ports.EventDeliveryJob, d.HandleBatch)
	} else {
		e.runner.Handle(ports.EventDeliveryJob, d.Handle)
	}
	e.setEndpoint("https://hooks.example/in")
	return e
}

// setEndpoint stores the platform's webhook endpoint ("" removes it).
func (e *env) setEndpoint(url string) {
	e.t.Helper()
	e.storeEndpoint(url, false)
}

// storeEndpoint stores the platform's webhook endpoint, and when tell is
// set tells the service in the same unit of work, as PATCH /config does.
func (e *env) storeEndpoint(url string, tell bool) {
	e.t.Helper()
	ctx := context.Background()
	require.NoError(e.t, e.b.Store.InTx(ctx, func(tx ports.Tx) error {
		p, err := tx.Platforms().GetForUpdate(ctx, e.pid)
		if err != nil {
			return err
		}
		p.WebhookEndpoint = url
		if err := tx.Platforms().Update(ctx, p); err != nil || !tell {
			return err
		}
		return e.svc.WebhookEndpointChanged(ctx, tx, e.pid, url)
	}))
}

func (e *env) record(typ, resourceID string) ports.Event {
	e.t.Helper()
	var ev ports.Event
	require.NoError(e.t, e.b.Store.InTx(context.Background(), func(tx ports.Tx) error {
		var err error
		ev, err = e.svc.record(context.Background(), tx, e.pid, typ, resourceID, map[string]string{"id": resourceID})
		return err
	}))
	return ev
}

// resume queues the platform's backlog again, as a new endpoint's job
// does, and says how many events.
func (e *env) resume() int {
	e.t.Helper()
	n := 0
	require.NoError(e.t, e.b.Store.InTx(context.Background(), func(tx ports.Tx) error {
		var err error
		n, err = e.svc.resume(context.Background(), tx, e.pid)
		return err
	}))
	return n
}

// failNext has the receiver answer 500 to the next n attempts of event
// id.
func (e *env) failNext(id string, n int) {
	e.recv.mu.Lock()
	defer e.recv.mu.Unlock()
	e.recv.failing = map[string]int{id: n}
}

// assertDelivered checks that each of the events is DELIVERED.
func (e *env) assertDelivered(ids ...string) {
	e.t.Helper()
	for _, id := range ids {
		got, _ := e.event(id)
		assert.Equal(e.t, ports.EventDelivered, got.Status, id)
	}
}

func (e *env) run() {
	e.t.Helper()
	_, err := e.runner.RunAll(context.Background(), 100)
	require.NoError(e.t, err)
}

func (e *env) advance(d time.Duration) {
	e.t.Helper()
	e.b.Clock.Advance(d)
	e.run()
}

func (e *env) event(id string) (ports.Event, []ports.EventAttempt) {
	e.t.Helper()
	ev, attempts, err := e.svc.Get(context.Background(), e.pid, id)
	require.NoError(e.t, err)
	return ev, attempts
}

// recordTwoOfOneResource records two events of one resource, the second
// a millisecond later.
func (e *env) recordTwoOfOneResource() (first, second ports.Event) {
	first = e.record("INTERNAL_ACCOUNT.BALANCE_UPDATED", "InternalAccount:1")
	e.b.Clock.Advance(time.Millisecond)
	return first, e.record("INTERNAL_ACCOUNT.BALANCE_UPDATED", "InternalAccount:1")
}

// backlogOfOneResource records n events of one resource, a millisecond
// apart, without queueing their jobs (no endpoint meanwhile).
func (e *env) backlogOfOneResource(n int) []ports.Event {
	e.setEndpoint("")
	var evs []ports.Event
	for range n {
		evs = append(evs, e.record("INTERNAL_ACCOUNT.BALANCE_UPDATED", "InternalAccount:busy"))
		e.b.Clock.Advance(time.Millisecond)
	}
	e.setEndpoint("https://hooks.example/in")
	return evs
}

// claimDelivery claims the next delivery job, which must be there.
func (e *env) claimDelivery() ports.Job {
	e.t.Helper()
	js, err := e.b.Store.Read().Jobs().Claim(context.Background(), e.b.Clock.Now(), 1, time.Minute,
		ports.JobKinds{Only: []string{ports.EventDeliveryJob}})
	require.NoError(e.t, err)
	require.Len(e.t, js, 1)
	return js[0]
}

// sentOnceInOrder checks that the endpoint got es, in that order, each
// once, and that each is DELIVERED with one attempt.
func (e *env) sentOnceInOrder(es ...ports.Event) {
	e.t.Helper()
	var want, got []string
	for _, ev := range es {
		want = append(want, ev.ID)
	}
	e.recv.mu.Lock()
	for _, env := range e.recv.got {
		got = append(got, env.ID)
	}
	e.recv.mu.Unlock()
	assert.Equal(e.t, want, got, "in order, each once")
	for _, id := range want {
		stored, attempts := e.event(id)
		assert.Equal(e.t, ports.EventDelivered, stored.Status)
		assert.Len(e.t, attempts, 1)
	}
}

// onBoth runs f on memory and PostgreSQL, delivering job by job and in
// batches.
func onBoth(t *testing.T, f func(t *testing.T, e *env)) {
	for _, batch := range []bool{false, true} {
		onStores(t, map[bool]string{false: "one", true: "batch"}[batch], batch, f)
	}
}

// onStores runs f on memory and PostgreSQL as subtests "memory/"+name
// and "postgres/"+name (name "" for none), batch as newEnv's.
func onStores(t *testing.T, name string, batch bool, f func(t *testing.T, e *env)) {
	t.Run(path.Join("memory", name), func(t *testing.T) { f(t, newEnv(t, coretest.Memory(), batch)) })
	t.Run(path.Join("postgres", name), func(t *testing.T) { f(t, newEnv(t, coretest.Postgres(t), batch)) })
}

func TestDeliveredOnce(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ev := e.record("CUSTOMER.KYC_APPROVED", "Customer:1")
		e.run()
		require.Len(t, e.recv.got, 1)
		got := e.recv.got[0]
		assert.Equal(t, ev.ID, got.ID)
		assert.Equal(t, "CUSTOMER.KYC_APPROVED", got.Type)
		assert.JSONEq(t, `{"id":"Customer:1"}`, string(got.Data))
		assert.Equal(t, e.b.Clock.Now().UTC(), got.Timestamp.UTC())
		stored, attempts := e.event(ev.ID)
		assert.Equal(t, ports.EventDelivered, stored.Status)
		require.Len(t, attempts, 1)
		assert.Equal(t, 200, attempts[0].StatusCode)
		e.advance(48 * time.Hour)
		assert.Len(t, e.recv.got, 1, "delivered once")
	})
}

// A job of several events (the PostgreSQL store's, one per statement and
// platform) delivers them all at once, in order per resource; an event it
// does not deliver goes on as a job of its own, on its own schedule, and
// the job ends.
func TestJobOfSeveralEvents(t *testing.T) {
	onStores(t, "", true, func(t *testing.T, e *env) {
		ctx := context.Background()
		a1, b1 := e.record("CUSTOMER.KYC_APPROVED", "Customer:a"), e.record("CUSTOMER.KYC_APPROVED", "Customer:b")
		a2, b2 := e.record("CUSTOMER.KYC_REJECTED", "Customer:a"), e.record("CUSTOMER.KYC_REJECTED", "Customer:b")
		ids := []string{a1.ID, b1.ID, a2.ID, b2.ID}
		require.NoError(t, e.b.Store.InTx(ctx, func(tx ports.Tx) error {
			own := make([]string, len(ids))
			for i, id := range ids {
				own[i] = ports.EventDeliveryJobAt("", id, time.Time{}).ID
			}
			if err := tx.Jobs().CompleteAll(ctx, own); err != nil {
				return err
			}
			return tx.Jobs().Enqueue(ctx, ports.EventsDeliveryJob("Job:several", e.pid, ids, e.b.Clock.Now()))
		}))
		e.recv.failing = map[string]int{b1.ID: 1}
		sent := func() []string {
			e.recv.mu.Lock()
			defer e.recv.mu.Unlock()
			var out []string
			for i, env := range e.recv.got {
				out = append(out, fmt.Sprintf("%s %d", env.ID, e.recv.codes[i]))
			}
			return out
		}
		status := func(id string) string { ev, _ := e.event(id); return ev.Status }

		e.run()
		got := sent()
		assert.ElementsMatch(t, []string{a1.ID + " 200", a2.ID + " 200", b1.ID + " 500"}, got, "b2 waits for b1")
		assert.Less(t, slices.Index(got, a1.ID+" 200"), slices.Index(got, a2.ID+" 200"), "in order")
		assert.Equal(t, ports.EventDelivered, status(a2.ID))
		assert.Equal(t, ports.EventPending, status(b1.ID))
		err := e.b.Store.Read().Jobs().Retry(ctx, "Job:several", e.b.Clock.Now(), "")
		require.ErrorIs(t, err, ports.ErrNotFound, "the job of several ended; b1 and b2 go on alone")

		// b2's wait for b1 ends first, but b1 is waiting out its failure:
		// b2 does not send it before its time, and waits with it.
		e.advance(OrderWait)
		assert.Len(t, sent(), 3, "b1 is not retried early for b2's sake")
		// b1's retry: b1 goes first, then b2.
		e.advance(Schedule[0])
		got = sent()
		require.Len(t, got, 5)
		assert.Equal(t, []string{b1.ID + " 200", b2.ID + " 200"}, got[3:])
		e.advance(Schedule[0])
		assert.Len(t, sent(), 5, "each sent once")
		for _, id := range ids {
			assert.Equal(t, ports.EventDelivered, status(id), id)
		}
	})
}

// An event named both by its own job and by a job of several in one batch
// is sent once, and its own job carries its retry: the job of several
// ends without queuing another.
func TestEventInItsOwnJobAndAJobOfSeveral(t *testing.T) {
	onStores(t, "", true, func(t *testing.T, e *env) {
		ctx := context.Background()
		a, b := e.record("CUSTOMER.KYC_APPROVED", "Customer:a"), e.record("CUSTOMER.KYC_APPROVED", "Customer:b")
		require.NoError(t, e.b.Store.InTx(ctx, func(tx ports.Tx) error {
			if err := tx.Jobs().Complete(ctx, ports.EventDeliveryJobFor(b).ID); err != nil {
				return err
			}
			return tx.Jobs().Enqueue(ctx, ports.EventsDeliveryJob("Job:several", e.pid, []string{a.ID, b.ID}, e.b.Clock.Now()))
		}))
		e.recv.failing = map[string]int{a.ID: 1}
		e.run()
		assert.Equal(t, []int{200, 500}, sortedCodes(e.recv), "a sent once (and failed), b delivered")
		require.ErrorIs(t, e.b.Store.Read().Jobs().Retry(ctx, "Job:several", e.b.Clock.Now(), ""), ports.ErrNotFound)
		e.advance(Schedule[0])
		ev, attempts := e.event(a.ID)
		assert.Equal(t, ports.EventDelivered, ev.Status, "its own job retried it")
		assert.Len(t, attempts, 2)
	})
}

// sortedCodes are the status codes r answered, sorted.
func sortedCodes(r *receiver) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.codes))
}

// Failures are retried on the Schedule; after the last retry the event
// is FAILED, and a redelivery sends it again, on the Schedule from its
// start: a failure right after it is retried 5 s later, not failed for
// good.
func TestRetryScheduleThenFailedThenRedeliver(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		e.recv.script = []int{500, 0, 409, 503, 500, 500, 500, 500, 500, 500}
		ev := e.record("VERIFICATION.APPROVED", "Verification:1")
		e.run()
		assert.Equal(t, 1, e.recv.answers)
		for i, wait := range Schedule {
			e.advance(wait - time.Second)
			assert.Equal(t, i+1, e.recv.answers, "not before its time (retry %d)", i+1)
			e.advance(time.Second)
			assert.Equal(t, i+2, e.recv.answers, "retry %d after %s", i+1, wait)
		}
		stored, attempts := e.event(ev.ID)
		assert.Equal(t, ports.EventFailed, stored.Status)
		assert.Equal(t, 10, stored.Attempts)
		require.Len(t, attempts, 10)
		assert.Equal(t, 0, attempts[1].StatusCode)
		assert.Contains(t, attempts[1].Error, "connection refused")
		assert.Equal(t, 409, attempts[2].StatusCode)
		e.advance(100 * time.Hour)
		assert.Equal(t, 10, e.recv.answers, "a FAILED event is not retried")

		e.failNext(ev.ID, 1)
		_, err := e.svc.Redeliver(context.Background(), e.pid, ev.ID)
		require.NoError(t, err)
		e.run()
		assert.Equal(t, 11, e.recv.answers)
		stored, _ = e.event(ev.ID)
		assert.Equal(t, ports.EventPending, stored.Status, "the redelivery's first failure is retried")
		e.advance(Schedule[0] - time.Second)
		assert.Equal(t, 11, e.recv.answers, "not before the Schedule's first wait")
		e.advance(time.Second)
		assert.Equal(t, 12, e.recv.answers, "retried after the Schedule's first wait")
		stored, _ = e.event(ev.ID)
		assert.Equal(t, ports.EventDelivered, stored.Status)
		assert.Equal(t, 12, stored.Attempts)

		// Redelivering a delivered event starts the Schedule over too.
		e.failNext(ev.ID, 2)
		_, err = e.svc.Redeliver(context.Background(), e.pid, ev.ID)
		require.NoError(t, err)
		e.run()
		e.advance(Schedule[0])
		assert.Equal(t, 14, e.recv.answers)
		e.advance(Schedule[1] - time.Second)
		assert.Equal(t, 14, e.recv.answers, "the second retry waits the Schedule's second wait")
		e.advance(time.Second)
		stored, _ = e.event(ev.ID)
		assert.Equal(t, ports.EventDelivered, stored.Status)
		assert.Equal(t, 15, stored.Attempts)
	})
}

// A burst of events about one resource while its first event waits out a
// failure: the later events wait with it, and do not spend its retries
// by sending it early (each used to send it again, and ten events in a
// few seconds failed it for good). When its retry is due it goes, then
// the rest, in order.
func TestBurstWaitsOutAnEarlierFailure(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		first := e.record("VERIFICATION.APPROVED", "Verification:burst")
		e.failNext(first.ID, 1)
		e.run()
		later := make([]ports.Event, 6)
		for i := range later {
			e.advance(300 * time.Millisecond)
			later[i] = e.record("VERIFICATION.APPROVED", "Verification:burst")
			e.run()
		}
		e.advance(OrderWait)
		assert.Equal(t, 1, e.recv.answers, "nothing sent while the first event waits out its failure")
		ev, _ := e.event(first.ID)
		assert.Equal(t, ports.EventPending, ev.Status)
		assert.Equal(t, 1, ev.Attempts)

		e.advance(Schedule[0])
		e.advance(OrderWait)
		ev, _ = e.event(first.ID)
		assert.Equal(t, ports.EventDelivered, ev.Status)
		assert.Equal(t, 2, ev.Attempts)
		e.recv.mu.Lock()
		var order []string
		for _, env := range e.recv.got {
			order = append(order, env.ID)
		}
		e.recv.mu.Unlock()
		want := []string{first.ID, first.ID}
		for _, l := range later {
			want = append(want, l.ID)
			got, _ := e.event(l.ID)
			assert.Equal(t, ports.EventDelivered, got.Status, l.ID)
		}
		assert.Equal(t, want, order, "the first twice (its failure, its retry), then the rest in order, each once")
	})
}

// Redelivering an event whose failures hold up its resource's later
// events sends those too, at once, not at the retry they were given.
func TestRedeliverWakesTheResourcesLaterEvents(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		first := e.record("VERIFICATION.APPROVED", "Verification:wake")
		e.failNext(first.ID, 2)
		e.run()
		e.advance(300 * time.Millisecond)
		later := e.record("VERIFICATION.APPROVED", "Verification:wake")
		e.run()
		e.advance(Schedule[0])
		e.advance(OrderWait)
		ev, _ := e.event(first.ID)
		require.Equal(t, ports.EventPending, ev.Status)
		require.Equal(t, 2, ev.Attempts, "two failures: it now waits %s", Schedule[1])
		got, _ := e.event(later.ID)
		require.Equal(t, ports.EventPending, got.Status)
		require.Equal(t, 0, got.Attempts, "waiting behind it")

		_, err := e.svc.Redeliver(context.Background(), e.pid, first.ID)
		require.NoError(t, err)
		e.run()
		e.assertDelivered(first.ID, later.ID)
	})
}

// A delivery that read an earlier event of its resource before this
// instance's failed attempt at it was recorded (a later event's delivery,
// waiting for the resource's lock meanwhile) counts that attempt: the
// event is not due again before the wait the attempt earned, where the
// stale read alone would send it again at once.
func TestFreshCountsThisInstancesFailedAttempts(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ev := e.record("VERIFICATION.APPROVED", "Verification:stale")
		stale, _ := e.event(ev.ID)
		e.failNext(ev.ID, 1)
		e.run()
		e.b.Clock.Advance(time.Second)
		now := e.b.Clock.Now()
		assert.False(t, now.Before(dueAt(stale)), "read before the attempt, the event looks due")
		got := e.svc.deliver.fresh(stale)
		assert.Equal(t, 1, got.Attempts)
		assert.True(t, now.Before(dueAt(got)), "with the attempt counted it waits its Schedule")
		recorded, _ := e.event(ev.ID)
		assert.Equal(t, dueAt(recorded), dueAt(got), "as the recorded attempt says")
	})
}

// Events about one resource are delivered in order: a later one is never
// taken before an earlier one is (it sends the earlier first, or waits
// while the earlier fails); another resource's does not wait.
func TestOrderPerResource(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		e.recv.script = []int{500, 500, 500}
		first := e.record("OUTGOING_PAYMENT.PENDING", "Transaction:1")
		e.b.Clock.Advance(time.Millisecond)
		second := e.record("OUTGOING_PAYMENT.COMPLETED", "Transaction:1")
		e.record("CUSTOMER.KYC_APPROVED", "Customer:9")
		e.run()
		// The three failures may all be the first event's: each of its
		// retries waits its Schedule (jitter included), and the second
		// event waits with it.
		for _, wait := range Schedule[:3] {
			e.advance(wait + wait/5)
		}
		e.advance(OrderWait)
		firstOK, secondOK := -1, -1
		for i, env := range e.recv.got {
			if e.recv.codes[i] != 200 {
				continue
			}
			if env.ID == first.ID && firstOK < 0 {
				firstOK = i
			}
			if env.ID == second.ID && secondOK < 0 {
				secondOK = i
			}
			assert.False(t, env.ID == second.ID && firstOK < 0, "COMPLETED taken before PENDING was")
		}
		require.GreaterOrEqual(t, firstOK, 0, "%v", e.recv.types())
		require.Greater(t, secondOK, firstOK, "%v", e.recv.types())
		assert.Contains(t, e.recv.types()[:3], "CUSTOMER.KYC_APPROVED", "another resource did not wait")
		for _, id := range []string{first.ID, second.ID} {
			stored, _ := e.event(id)
			assert.Equal(t, ports.EventDelivered, stored.Status)
		}
	})
}

// More earlier events of a resource than one delivery sends first
// (chainMax): the later event waits until all of them have gone, and the
// resource's events arrive in the order they were recorded.
func TestLongBacklogOfOneResourceInOrder(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		evs := e.backlogOfOneResource(chainMax + 5)
		// Only the last event's job is queued.
		last := evs[len(evs)-1]
		require.NoError(t, e.b.Store.InTx(ctx, func(tx ports.Tx) error {
			return tx.Jobs().Enqueue(ctx, ports.EventDeliveryJobFor(last))
		}))
		for range 3 {
			e.advance(OrderWait)
		}
		var got []string
		for _, env := range e.recv.got {
			got = append(got, env.ID)
		}
		var want []string
		for _, ev := range evs {
			want = append(want, ev.ID)
		}
		assert.Equal(t, want, got, "every event once, in the order of recording")
	})
}

// A job of several whose events of one resource have a gap (events of
// the resource in other jobs, not due yet): the events before the gap go
// at once, those after it wait for the missing ones, and the resource's
// events arrive in the order they were recorded.
func TestGapInAJobOfSeveralWaits(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.setEndpoint("") // no jobs of their own
		var evs []ports.Event
		for range 6 {
			evs = append(evs, e.record("INTERNAL_ACCOUNT.BALANCE_UPDATED", "InternalAccount:gap"))
			e.b.Clock.Advance(time.Millisecond)
		}
		e.setEndpoint("https://hooks.example/in")
		now := e.b.Clock.Now()
		require.NoError(t, e.b.Store.InTx(ctx, func(tx ports.Tx) error {
			if err := tx.Jobs().Enqueue(ctx, ports.EventsDeliveryJob("Job:gap", e.pid,
				[]string{evs[0].ID, evs[1].ID, evs[4].ID, evs[5].ID}, now)); err != nil {
				return err
			}
			for _, ev := range evs[2:4] {
				j := ports.EventDeliveryJobFor(ev)
				j.RunAt = now.Add(time.Hour)
				if err := tx.Jobs().Enqueue(ctx, j); err != nil {
					return err
				}
			}
			return nil
		}))
		ids := func() []string {
			var out []string
			for _, env := range e.recv.got {
				out = append(out, env.ID)
			}
			return out
		}
		var want []string
		for _, ev := range evs {
			want = append(want, ev.ID)
		}
		e.run()
		// In a batch the events after the gap wait; one by one, each
		// sends the earlier ones first. Either way, in order so far.
		got := ids()
		require.GreaterOrEqual(t, len(got), 2)
		assert.Equal(t, want[:len(got)], got, "in the order of recording so far")
		e.advance(OrderWait)
		e.advance(time.Hour)
		assert.Equal(t, want, ids(), "every event once, in the order of recording")
	})
}

// Two changes of one resource in one microsecond: the one recorded first
// goes first, whatever their ids (the store's Seq, not the time or id).
func TestOrderWhenTimesTie(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		now := e.b.Clock.Now()
		first, err := ports.NewEvent("Webhook:z-first", e.pid, "OUTGOING_PAYMENT.PENDING", "Transaction:tie", map[string]string{"n": "1"}, now)
		require.NoError(t, err)
		second, err := ports.NewEvent("Webhook:a-second", e.pid, "OUTGOING_PAYMENT.PROCESSING", "Transaction:tie", map[string]string{"n": "2"}, now)
		require.NoError(t, err)
		require.NoError(t, e.b.Store.InTx(ctx, func(tx ports.Tx) error {
			if err := tx.Events().Append(ctx, first); err != nil {
				return err
			}
			return tx.Events().Append(ctx, second)
		}))
		e.recv.script = []int{500}
		e.run()
		e.advance(Schedule[0])
		e.advance(OrderWait)
		var order []string
		for i, env := range e.recv.got {
			if e.recv.codes[i] == 200 {
				order = append(order, env.ID)
			}
		}
		assert.Equal(t, []string{first.ID, second.ID}, order, "%v", e.recv.types())
		assert.Equal(t, first.ID, e.recv.got[0].ID, "the first recorded is sent first")
	})
}

// A batch of several resources' events: each delivered once, in order
// per resource, in one run.
func TestBatchOfResources(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		var want []ports.Event
		for i := range 9 {
			want = append(want, e.record("OUTGOING_PAYMENT.PENDING", fmt.Sprintf("Transaction:%d", i%3)))
			e.b.Clock.Advance(time.Millisecond)
		}
		e.run()
		require.Len(t, e.recv.got, 9)
		pos := map[string]int{}
		for i, env := range e.recv.got {
			_, dup := pos[env.ID]
			require.False(t, dup, "sent once: %s", env.ID)
			pos[env.ID] = i
		}
		for i := 3; i < 9; i++ {
			assert.Less(t, pos[want[i-3].ID], pos[want[i].ID], "order of %s", want[i].ResourceID)
		}
		for _, ev := range want {
			stored, attempts := e.event(ev.ID)
			assert.Equal(t, ports.EventDelivered, stored.Status)
			assert.Len(t, attempts, 1)
		}
		e.advance(time.Hour)
		assert.Len(t, e.recv.got, 9, "nothing left to send")
	})
}

// No endpoint: events wait (nothing dropped); setting one and resuming
// sends the backlog. A 410 removes the endpoint.
func TestNoEndpointThenResumeAnd410(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		e.setEndpoint("")
		a := e.record("CUSTOMER.KYC_APPROVED", "Customer:1")
		b := e.record("CUSTOMER.KYB_APPROVED", "Customer:2")
		e.advance(time.Hour)
		assert.Zero(t, e.recv.answers)
		stored, _ := e.event(a.ID)
		assert.Equal(t, ports.EventPending, stored.Status)

		e.setEndpoint("https://hooks.example/new")
		// One by one, the 410 removes the endpoint before the next event
		// is sent; in a batch both were in flight and both are answered
		// 410. Either way neither is delivered and both wait.
		sent := map[bool]int{false: 1, true: 2}[e.batch]
		e.recv.script = slices.Repeat([]int{410}, sent)
		n := e.resume()
		assert.Equal(t, 2, n)
		e.run()
		assert.Equal(t, sent, e.recv.answers, "the 410 removed the endpoint: the next waits")
		for _, id := range []string{a.ID, b.ID} {
			stored, _ := e.event(id)
			assert.Equal(t, ports.EventPending, stored.Status)
		}
		url, _ := e.ends.WebhookEndpoint(context.Background(), e.pid)
		assert.Empty(t, url)
		e.setEndpoint("https://hooks.example/newer")
		e.resume()
		e.run()
		e.assertDelivered(a.ID, b.ID)
	})
}

func TestSandboxTestWebhook(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		e.recv.script = []int{418}
		res, err := e.svc.Test(context.Background(), e.pid)
		require.NoError(t, err)
		assert.Equal(t, TestResult{URL: "https://hooks.example/in", StatusCode: 418, Body: `{"ok":true}`}, res)
		require.Len(t, e.recv.got, 1)
		assert.Equal(t, TypeTest, e.recv.got[0].Type)
		assert.Empty(t, e.recv.got[0].Data, "a TEST event has no data")
		e.advance(Schedule[0])
		assert.Len(t, e.recv.got, 2, "a test not taken is retried like any event")

		e.setEndpoint("")
		_, err = e.svc.Test(context.Background(), e.pid)
		var fe *fault.Error
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, fault.KindInvalid, fe.Kind)
		assert.Equal(t, CodeEndpointNotSet, fe.Code, "the reference's code")

		// No answer at all: the reference's delivery error.
		e.setEndpoint("https://hooks.example/in")
		e.recv.mu.Lock()
		e.recv.script = []int{0}
		e.recv.mu.Unlock()
		_, err = e.svc.Test(context.Background(), e.pid)
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, fault.KindInvalid, fe.Kind)
		assert.Equal(t, CodeDeliveryError, fe.Code)
	})
}

func TestListFiltersAndUnknownValues(t *testing.T) {
	e := newEnv(t, coretest.Memory(), false)
	e.record("CUSTOMER.KYC_APPROVED", "Customer:1")
	e.record("VERIFICATION.APPROVED", "Verification:1")
	page, err := e.svc.List(context.Background(), ports.EventFilter{PlatformID: e.pid, Type: "VERIFICATION.APPROVED"}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, page.Total)
	assert.Equal(t, "Verification:1", page.Rows[0].ResourceID)
	page, err = e.svc.List(context.Background(), ports.EventFilter{PlatformID: e.pid}, ports.Page{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, 2, page.Total)
	require.Len(t, page.Rows, 1)
	require.NotNil(t, page.Next)
	_, err = e.svc.List(context.Background(), ports.EventFilter{PlatformID: e.pid, Type: "NOPE"}, ports.Page{})
	require.Error(t, err)
	// The spec's name of the invitation type filters as the reference's.
	e.record("INVITATION.CLAIMED", "Invitation:1")
	for _, typ := range []string{"INVITATION_CLAIMED", "INVITATION.CLAIMED"} {
		page, err := e.svc.List(context.Background(), ports.EventFilter{PlatformID: e.pid, Type: typ}, ports.Page{Limit: 10})
		require.NoError(t, err, typ)
		require.Equal(t, 1, page.Total, typ)
		assert.Equal(t, "Invitation:1", page.Rows[0].ResourceID)
	}
	_, err = e.svc.List(context.Background(), ports.EventFilter{PlatformID: e.pid, Status: "DONE"}, ports.Page{})
	require.Error(t, err)
	_, err = e.svc.List(context.Background(), ports.EventFilter{PlatformID: e.pid}, ports.Page{Limit: 101})
	require.Error(t, err)
	_, _, err = e.svc.Get(context.Background(), "Platform:other", page.Rows[0].ID)
	var fe *fault.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, fault.KindNotFound, fe.Kind)
}

func TestPerPlatformCap(t *testing.T) {
	clock := coretest.Memory().Clock
	d := NewDeliverer(nil, clock, nil, nil, nil, nil, nil)
	for range PerPlatform {
		require.True(t, d.acquire("p", 0))
	}
	assert.False(t, d.acquire("p", 0), "a platform holds at most PerPlatform deliveries")
	assert.True(t, d.acquire("q", 0), "another platform is not held up")
	d.release("p")
	assert.True(t, d.acquire("p", 0))

	// A slow endpoint: its platform gets SlowPerPlatform handlers for SlowFor.
	d.observe("s", ports.EventAttempt{At: clock.Now(), Latency: AttemptTimeout, Error: "timeout"})
	for range SlowPerPlatform {
		require.True(t, d.acquire("s", 0))
	}
	assert.False(t, d.acquire("s", 0), "a slow platform holds at most SlowPerPlatform deliveries")
	clock.Advance(SlowFor + AttemptTimeout)
	assert.True(t, d.acquire("s", 0), "fast again after SlowFor")
}

// A slow platform's bound grows by one each time as many attempts as the
// bound answer well, back to PerPlatform; a slow answer drops it again.
func TestSlowPlatformsBoundGrowsBack(t *testing.T) {
	clock := coretest.Memory().Clock
	d := NewDeliverer(nil, clock, nil, nil, nil, nil, nil)
	slow := ports.EventAttempt{At: clock.Now(), Latency: 1500 * time.Millisecond}
	fast := ports.EventAttempt{At: clock.Now(), Latency: 3 * time.Millisecond}
	bound := func() int {
		n := 0
		for d.acquire("s", 0) {
			n++
		}
		for range n {
			d.release("s")
		}
		return n
	}
	d.observe("s", slow)
	require.Equal(t, SlowPerPlatform, bound())
	d.observe("s", fast)
	assert.Equal(t, SlowPerPlatform, bound(), "one good answer of two")
	d.observe("s", fast)
	assert.Equal(t, SlowPerPlatform+1, bound())
	d.observe("s", ports.EventAttempt{At: clock.Now(), Error: "connection refused"})
	assert.Equal(t, SlowPerPlatform, bound(), "a failure drops it again")

	good := 0
	for limit := SlowPerPlatform; limit < PerPlatform; limit++ {
		for range limit {
			d.observe("s", fast)
			good++
		}
	}
	assert.Equal(t, PerPlatform, bound(), "back to PerPlatform after %d good answers", good)
	assert.NotContains(t, d.slow, "s", "no longer marked")
}

// slowSender is an endpoint that takes latency of the fake clock to answer.
type slowSender struct {
	*receiver
	clock   *testkit.FakeClock
	latency time.Duration
}

func (s slowSender) Send(ctx context.Context, url string, body []byte, sig string) (Answer, error) {
	s.clock.Advance(s.latency)
	return s.receiver.Send(ctx, url, body, sig)
}

// A run of the delivery job starts no attempt after SendWithin: behind a
// slow endpoint, a resource's long line of pending events would otherwise
// outlast the run's lease, and what it sent would go again. The line is
// delivered over several runs, in order, each event once.
func TestARunStopsSendingWithinItsLease(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(map[bool]string{false: "one", true: "batch"}[batch], func(t *testing.T) {
			b := coretest.Memory()
			e := newEnv(t, b, batch)
			latency := 1200 * time.Millisecond
			e.svc.deliver.sender = slowSender{receiver: e.recv, clock: b.Clock, latency: latency}
			evs := e.backlogOfOneResource(chainMax - 1)
			evs = append(evs, e.record("INTERNAL_ACCOUNT.BALANCE_UPDATED", "InternalAccount:busy"))
			_, err := e.runner.RunDue(context.Background())
			require.NoError(t, err)
			starts := int(SendWithin/latency) + 1
			assert.Len(t, e.recv.types(), starts, "attempts start within SendWithin of the run's start")
			assert.LessOrEqual(t, SendWithin+AttemptTimeout, Lease-AttemptTimeout/2, "the last attempt ends well within the lease")
			for range 30 {
				e.advance(OrderWait)
			}
			e.sentOnceInOrder(evs...)
		})
	}
}

// stoppingSender answers like its receiver; its stop-th POST comes as the
// process shuts down: it cancels the run, and then gets its answer, or
// none when cut.
type stoppingSender struct {
	*receiver
	mu      sync.Mutex
	n, stop int
	cut     bool
	cancel  context.CancelFunc
}

func (c *stoppingSender) Send(ctx context.Context, url string, body []byte, sig string) (Answer, error) {
	c.mu.Lock()
	c.n++
	n := c.n
	c.mu.Unlock()
	if n == c.stop {
		c.cancel()
		if c.cut {
			return Answer{}, errors.New("context canceled")
		}
	}
	return c.receiver.Send(ctx, url, body, sig)
}

// A shutdown in the middle of a run starts no attempt, lets the one in
// flight have its answer, and records what was answered (those events do
// not go again after the restart). An attempt that got no answer as the
// run ended may say nothing of the endpoint: it is not recorded, and its
// event goes again at once, with no failed attempt counted.
func TestAShutdownRecordsWhatWasAnswered(t *testing.T) {
	for _, cut := range []bool{false, true} {
		t.Run(map[bool]string{false: "answered", true: "cut"}[cut], func(t *testing.T) {
			onBoth(t, func(t *testing.T, e *env) {
				evs := e.backlogOfOneResource(3)
				evs = append(evs, e.record("INTERNAL_ACCOUNT.BALANCE_UPDATED", "InternalAccount:busy"))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				e.svc.deliver.sender = &stoppingSender{receiver: e.recv, stop: 3, cut: cut, cancel: cancel}
				_, _ = e.runner.RunDue(ctx)
				answered := 3
				if cut {
					answered = 2
				}
				for i, ev := range evs {
					stored, attempts := e.event(ev.ID)
					if i < answered {
						assert.Equal(t, ports.EventDelivered, stored.Status, "answered: recorded")
						continue
					}
					assert.Equal(t, ports.EventPending, stored.Status)
					assert.Empty(t, attempts, "no attempt recorded for the cut or unsent")
				}
				assert.Len(t, e.recv.types(), answered, "no attempt starts after the shutdown")
				e.svc.deliver.sender = e.recv // after the restart
				for range 5 {
					e.advance(OrderWait)
				}
				e.sentOnceInOrder(evs...)
			})
		})
	}
}

// replies is a fake approval use case: the payments it decides, by
// resource id, and the answers it got.
type replies struct {
	decides map[string]bool
	got     []Answer
}

func (r *replies) Reply(_ context.Context, e ports.Event, a Answer) (bool, error) {
	r.got = append(r.got, a)
	return r.decides[e.ResourceID], nil
}

// An INCOMING_PAYMENT.PENDING answer goes to the approval port; when it
// decided a payment the event is not retried (FAILED when no answer came),
// otherwise it is acknowledged like any event.
func TestApprovalAnswersGoToThePort(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(map[bool]string{false: "one", true: "batch"}[batch], func(t *testing.T) { testApprovalAnswers(t, batch) })
	}
}

func testApprovalAnswers(t *testing.T, batch bool) {
	e := newEnv(t, coretest.Memory(), batch)
	r := &replies{decides: map[string]bool{"Transaction:held": true, "Transaction:gone": true}}
	// The deliverer of newEnv, reached through its service.
	e.svc.deliver.SetApprovals(r)
	e.recv.script = []int{403, 0, 500}
	rejected := e.record(TypeIncomingPending, "Transaction:held")
	e.run()
	unanswered := e.record(TypeIncomingPending, "Transaction:gone")
	e.run()
	bank := e.record(TypeIncomingPending, "Transaction:pull")
	e.run()
	require.Len(t, r.got, 3)
	assert.Equal(t, 403, r.got[0].StatusCode)
	assert.Equal(t, 0, r.got[1].StatusCode)
	stored, _ := e.event(rejected.ID)
	assert.Equal(t, ports.EventDelivered, stored.Status, "the 403 decided the payment")
	stored, _ = e.event(unanswered.ID)
	assert.Equal(t, ports.EventFailed, stored.Status, "no answer failed the payment: nothing to retry")
	stored, _ = e.event(bank.ID)
	assert.Equal(t, ports.EventPending, stored.Status, "a payment without approval: a 500 is retried")
	e.advance(Schedule[0])
	stored, _ = e.event(bank.ID)
	assert.Equal(t, ports.EventDelivered, stored.Status)
	assert.Len(t, r.got, 4)
}

// A payment's INCOMING_PAYMENT.PENDING event takes one slot beyond its
// platform's bound: a slow platform's other events, holding its slots,
// do not let its approval window pass; they wait.
func TestApprovalEventsGetASlotOfTheirOwn(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(map[bool]string{false: "one", true: "batch"}[batch], func(t *testing.T) {
			e := newEnv(t, coretest.Memory(), batch)
			r := &replies{decides: map[string]bool{"Transaction:held": true}}
			d := e.svc.deliver
			d.SetApprovals(r)
			d.observe(e.pid, ports.EventAttempt{At: e.b.Clock.Now(), Latency: 2 * time.Second})
			for range SlowPerPlatform {
				require.True(t, d.acquire(e.pid, 0)) // the platform's other deliveries, in flight
			}
			other := e.record("INTERNAL_ACCOUNT.BALANCE_UPDATED", "InternalAccount:1")
			approval := e.record(TypeIncomingPending, "Transaction:held")
			e.run()
			require.Len(t, r.got, 1, "the approval's event was sent")
			stored, _ := e.event(approval.ID)
			assert.Equal(t, ports.EventDelivered, stored.Status)
			stored, _ = e.event(other.ID)
			assert.Equal(t, ports.EventPending, stored.Status, "the others wait for a slot")
			assert.False(t, d.acquire(e.pid, 0), "the others still wait for the bound")
			assert.True(t, d.acquire(e.pid, 1), "the approval gave its extra slot back")
		})
	}
}

// gatedSender holds the POST of one event until its gate opens (a
// second POST of it goes through, for the test to see).
type gatedSender struct {
	*receiver
	holdID  string
	once    sync.Once
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedSender) Send(ctx context.Context, url string, body []byte, sig string) (Answer, error) {
	var env Envelope
	if err := json.Unmarshal(body, &env); err == nil && env.ID == g.holdID {
		g.once.Do(func() { close(g.entered) })
		<-g.gate
	}
	return g.receiver.Send(ctx, url, body, sig)
}

// Two batches of one instance with events of one resource: the later
// batch waits for the earlier one's sending and then sends its own event
// after it, once, without sending the earlier event again (it is
// delivered, its attempt being recorded by the other batch).
func TestBatchBehindAnotherBatchOfTheResource(t *testing.T) {
	onStores(t, "", true, func(t *testing.T, e *env) {
		ctx := context.Background()
		first, second := e.recordTwoOfOneResource()
		gs := &gatedSender{receiver: e.recv, holdID: first.ID, entered: make(chan struct{}), gate: make(chan struct{})}
		d := NewDeliverer(e.b.Store, e.b.Clock, gs, signer{}, renderer{}, e.ends, coretest.QuietLog())

		j1, j2 := e.claimDelivery(), e.claimDelivery()
		done := make(chan []jobs.BatchResult, 2)
		go func() { done <- d.HandleBatch(ctx, []ports.Job{j1}) }()
		<-gs.entered // the first batch is sending the first event
		go func() { done <- d.HandleBatch(ctx, []ports.Job{j2}) }()
		require.Eventually(t, func() bool { // the second batch waits for the first's sending
			d.mu.Lock()
			defer d.mu.Unlock()
			l := d.resources[first.PlatformID+"\n"+first.ResourceID]
			return l != nil && l.users == 2
		}, 5*time.Second, time.Millisecond)
		close(gs.gate)
		for range 2 {
			for _, r := range <-done {
				assert.NoError(t, r.Err)
			}
		}
		e.sentOnceInOrder(first, second)
	})
}

// Two deliveries of one instance that read one event while it was
// pending (its own job, and a job of several naming it): the second
// waits for the resource while the first sends, then finds the event
// sent by this instance and does not send it again, whichever way each
// delivers (Handle or HandleBatch). Before the deliveries checked this
// under the resource's lock, the second sent it again.
func TestEventReadByTwoDeliveriesIsSentOnce(t *testing.T) {
	for _, ways := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		name := fmt.Sprintf("first-batch=%v/second-batch=%v", ways[0], ways[1])
		onStores(t, name, true, func(t *testing.T, e *env) {
			ctx := context.Background()
			ev := e.record("INTERNAL_ACCOUNT.BALANCE_UPDATED", "InternalAccount:1")
			require.NoError(t, e.b.Store.InTx(ctx, func(tx ports.Tx) error {
				return tx.Jobs().Enqueue(ctx, ports.EventsDeliveryJob("Job:several", e.pid, []string{ev.ID}, e.b.Clock.Now()))
			}))
			gs := &gatedSender{receiver: e.recv, holdID: ev.ID, entered: make(chan struct{}), gate: make(chan struct{})}
			d := NewDeliverer(e.b.Store, e.b.Clock, gs, signer{}, renderer{}, e.ends, coretest.QuietLog())
			kinds := ports.JobKinds{Only: []string{ports.EventDeliveryJob}}
			js, err := e.b.Store.Read().Jobs().Claim(ctx, e.b.Clock.Now(), 2, time.Minute, kinds)
			require.NoError(t, err)
			require.Len(t, js, 2)
			deliver := func(batch bool, j ports.Job) error {
				if !batch {
					return d.Handle(ctx, j)
				}
				return errors.Join(func() (errs []error) {
					for _, r := range d.HandleBatch(ctx, []ports.Job{j}) {
						errs = append(errs, r.Err)
					}
					return errs
				}()...)
			}
			done := make(chan error, 2)
			go func() { done <- deliver(ways[0], js[0]) }()
			<-gs.entered // the first delivery is sending the event
			go func() { done <- deliver(ways[1], js[1]) }()
			require.Eventually(t, func() bool { // the second waits for the resource
				d.mu.Lock()
				defer d.mu.Unlock()
				l := d.resources[ports.ResourceKey(ev.PlatformID, ev.ResourceID)]
				return l != nil && l.users == 2
			}, 5*time.Second, time.Millisecond)
			close(gs.gate)
			for range 2 {
				assert.NoError(t, <-done)
			}
			e.recv.mu.Lock()
			got := len(e.recv.got)
			e.recv.mu.Unlock()
			assert.Equal(t, 1, got, "sent once")
			stored, attempts := e.event(ev.ID)
			assert.Equal(t, ports.EventDelivered, stored.Status)
			assert.Len(t, attempts, 1)
		})
	}
}

// A delivery's mark lasts while its batch records it and recentlySent
// after; a failed recording forgets it (its job sends it again). An
// event read after the delivery (a redelivery's) is not "sent since".
func TestSentMarksAreForgotten(t *testing.T) {
	b := coretest.Memory()
	d := NewDeliverer(b.Store, b.Clock, &receiver{}, signer{}, renderer{}, PlatformEndpoints{Store: b.Store}, coretest.QuietLog())
	ev := func(id string, attempts int) ports.Event { return ports.Event{ID: id, Attempts: attempts} }
	d.markSent(ev("a", 0))
	d.markSent(ev("b", 0))
	assert.True(t, d.sentSince(ev("a", 0)))
	assert.True(t, d.unrecordedHere("a"))
	d.forgetSent([]ports.Event{ev("b", 0)})
	assert.False(t, d.sentSince(ev("b", 0)), "its recording failed")
	d.markRecorded(ev("a", 0))
	d.forgetSent([]ports.Event{ev("a", 0)})
	assert.True(t, d.sentSince(ev("a", 0)), "recorded: only a failed recording forgets")
	assert.False(t, d.unrecordedHere("a"))
	assert.False(t, d.sentSince(ev("a", 1)), "read after the delivery: a redelivery sends it")
	b.Clock.Advance(recentlySent)
	d.markRecorded(ev("c", 0))
	assert.True(t, d.sentSince(ev("a", 0)), "not older than recentlySent yet")
	b.Clock.Advance(time.Second)
	d.markRecorded(ev("d", 2))
	assert.False(t, d.sentSince(ev("a", 0)))
	assert.True(t, d.sentSince(ev("c", 0)))
	assert.True(t, d.sentSince(ev("d", 2)))
	assert.Len(t, d.sentOrder, 2)
}

// hookedStore runs hooks in the reads of Read().Events(): afterHeads once
// after the next PendingHeads, beforeEnd before each EndDeliveries.
type hookedStore struct {
	ports.Store
	mu         sync.Mutex
	afterHeads func()
	beforeEnd  func()
	units      int // InTx calls
}

func (s *hookedStore) Read() ports.Tx { return hookedTx{Tx: s.Store.Read(), s: s} }

// InTx counts the units of work.
func (s *hookedStore) InTx(ctx context.Context, fn func(tx ports.Tx) error) error {
	s.mu.Lock()
	s.units++
	s.mu.Unlock()
	return s.Store.InTx(ctx, fn)
}

type hookedTx struct {
	ports.Tx
	s *hookedStore
}

func (t hookedTx) Events() ports.EventRepo { return hookedEvents{EventRepo: t.Tx.Events(), s: t.s} }

type hookedEvents struct {
	ports.EventRepo
	s *hookedStore
}

func (r hookedEvents) PendingHeads(ctx context.Context, es []ports.Event, n int) (map[string][]string, error) {
	out, err := r.EventRepo.PendingHeads(ctx, es, n)
	r.s.mu.Lock()
	f := r.s.afterHeads
	r.s.afterHeads = nil
	r.s.mu.Unlock()
	if f != nil {
		f()
	}
	return out, err
}

func (r hookedEvents) EndDeliveries(ctx context.Context, rs []ports.AttemptRecord, next []ports.Job, done []string) error {
	r.s.mu.Lock()
	f := r.s.beforeEnd
	r.s.mu.Unlock()
	if f != nil {
		f()
	}
	return r.EventRepo.EndDeliveries(ctx, rs, next, done)
}

// A delivery that sends a resource's earlier events first (Handle's way)
// finds one of them pending, sent by a batch of this instance that has
// released the resource but not recorded it yet; the batch records it
// before the delivery reads the event. The delivery must not send it
// again: it reads it DELIVERED, with the attempt the batch recorded, so
// the batch's mark (one attempt more than it read) no longer says "sent
// since". Before earlier events were checked for their status too, it
// sent it twice (seen on the in-memory store under load).
func TestEarlierEventRecordedWhileReadIsNotSentAgain(t *testing.T) {
	onStores(t, "", true, func(t *testing.T, e *env) {
		ctx := context.Background()
		first, second := e.recordTwoOfOneResource()
		hs := &hookedStore{Store: e.b.Store}
		d := NewDeliverer(hs, e.b.Clock, e.recv, signer{}, renderer{}, e.ends, coretest.QuietLog())
		j1, j2 := e.claimDelivery(), e.claimDelivery()

		ending, proceed := make(chan struct{}), make(chan struct{})
		hs.beforeEnd = func() { close(ending); <-proceed }
		batchDone := make(chan []jobs.BatchResult, 1)
		go func() { batchDone <- d.HandleBatch(ctx, []ports.Job{j1}) }()
		<-ending // the batch sent the first event, released its resource, and records
		hs.mu.Lock()
		hs.beforeEnd = nil
		var res []jobs.BatchResult
		hs.afterHeads = func() { close(proceed); res = <-batchDone } // recorded before the event is read
		hs.mu.Unlock()
		require.NoError(t, d.Handle(ctx, j2))
		for _, r := range res {
			assert.NoError(t, r.Err)
		}
		e.sentOnceInOrder(first, second)
	})
}

// A delivery that finds chainMax earlier events pending, some of which
// another instance records as delivered before they are read, sends the
// rest of them and waits: more earlier events may follow those it read,
// and the event must not overtake them.
func TestEarlierEventsDeliveredElsewhereStillBoundTheChain(t *testing.T) {
	onStores(t, "", false, func(t *testing.T, e *env) {
		ctx := context.Background()
		evs := e.backlogOfOneResource(chainMax + 5)
		hs := &hookedStore{Store: e.b.Store}
		hs.afterHeads = func() { // another instance delivers the first three
			require.NoError(t, e.b.Store.InTx(ctx, func(tx ports.Tx) error {
				for _, ev := range evs[:3] {
					a := ports.EventAttempt{EventID: ev.ID, At: e.b.Clock.Now(), StatusCode: 200}
					if err := recordAttempt(ctx, tx, ev.PlatformID, a, ports.EventDelivered); err != nil {
						return err
					}
				}
				return nil
			}))
		}
		d := NewDeliverer(hs, e.b.Clock, e.recv, signer{}, renderer{}, e.ends, coretest.QuietLog())
		err := d.Handle(ctx, ports.EventDeliveryJobFor(evs[len(evs)-1]))
		_, retry := jobs.IsRetryAt(err)
		assert.True(t, retry, "the event waits for the earlier ones not read yet: %v", err)
		e.sentOnceInOrder(evs[3:chainMax]...)
	})
}

// A batch whose event has an earlier one of its resource pending in a job
// outside the batch sends that one first, in the batch, and records both
// attempts with the batch's, without a unit of work per event; the
// earlier event's own job then finds it delivered. An earlier event that
// may decide a payment (the batch's own event does not) goes Handle's way
// instead.
func TestBatchSendsTheEarlierEventsOfItsResourceFirst(t *testing.T) {
	for _, approvals := range []bool{false, true} {
		onStores(t, fmt.Sprintf("approvals=%v", approvals), true, func(t *testing.T, e *env) {
			ctx := context.Background()
			typ := "INCOMING_PAYMENT.COMPLETED"
			if approvals {
				typ = TypeIncomingPending
			}
			first := e.record(typ, "Transaction:1")
			e.b.Clock.Advance(time.Millisecond)
			second := e.record("INCOMING_PAYMENT.COMPLETED", "Transaction:1")
			hs := &hookedStore{Store: e.b.Store}
			d := NewDeliverer(hs, e.b.Clock, e.recv, signer{}, renderer{}, e.ends, coretest.QuietLog())
			if approvals {
				d.SetApprovals(&replies{})
			}
			j1, j2 := e.claimDelivery(), e.claimDelivery()
			for _, r := range d.HandleBatch(ctx, []ports.Job{j2}) {
				require.NoError(t, r.Err)
			}
			if approvals {
				assert.Positive(t, hs.units, "Handle's way: a unit of work an event")
			} else {
				assert.Zero(t, hs.units, "recorded with the batch")
			}
			require.NoError(t, d.Handle(ctx, j1))
			e.sentOnceInOrder(first, second)
		})
	}
}
