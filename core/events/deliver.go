package events

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/ports"
)

// Schedule is the wait before each retry of a delivery that failed: the
// first attempt runs at once, then nine retries over about three days
// (75 h 35 min in all, each ±10 % of jitter so a recovered endpoint is not
// met by every backlog at once). After the last, the event is FAILED and
// waits for a redelivery.
var Schedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// Delivery settings.
const (
	// AttemptTimeout bounds one POST (the Sender enforces it).
	AttemptTimeout = 10 * time.Second
	// Lease is the delivery jobs' lease (the runner's WithLease): a run
	// of Handle or HandleBatch starts no attempt after SendWithin, so its
	// last attempt ends by SendWithin + AttemptTimeout and the run has
	// the rest of its lease to record what it sent. A run still going at
	// the end of its lease is cancelled: its attempts are not recorded,
	// and their events go again.
	Lease      = 2 * AttemptTimeout
	SendWithin = AttemptTimeout / 2
	// OrderWait is how long an event waits when an earlier event about
	// the same resource could not be delivered first (deliveries about
	// one resource go in order).
	OrderWait = 2 * time.Second
	// chainMax bounds the earlier pending events of a resource one
	// delivery sends first.
	chainMax = 20
	// BusyWait is how long an event waits when its platform already has
	// its share of deliveries in flight on this instance.
	BusyWait = 200 * time.Millisecond
	// PerPlatform bounds one platform's deliveries in flight on one
	// instance while its endpoint answers well (all of the delivery
	// runner's 64 handlers: a busy platform is not throttled). An attempt
	// that failed, timed out or took over SlowAttempt marks the platform
	// slow: its bound drops to SlowPerPlatform, so a slow or dead endpoint
	// holds at most that many handlers and other platforms' deliveries go
	// on. Each time as many attempts as the bound answer well in a row,
	// it grows by one, back to PerPlatform, where the mark ends (a single
	// slow answer no longer throttles a platform for long); a mark with no
	// attempt ends SlowFor after the slow one.
	PerPlatform     = 64
	SlowPerPlatform = 2
	SlowAttempt     = time.Second
	SlowFor         = time.Minute
)

// Answer is what an endpoint answered one POST.
type Answer struct {
	StatusCode int // 0 when no answer came
	Body       []byte
}

// Sender POSTs a signed webhook body, within AttemptTimeout. An error is
// no answer (refused, reset, timed out).
type Sender interface {
	Send(ctx context.Context, url string, body []byte, signature string) (Answer, error)
}

// Signer signs a webhook body (the X-Service-Signature value).
type Signer interface {
	Sign(body []byte) (string, error)
}

// Renderer renders an event's data: its resource as the API returns it
// (nil for TEST), as compact JSON (Body puts it in the envelope as it is).
type Renderer interface {
	Render(ctx context.Context, e ports.Event) (json.RawMessage, error)
}

// Endpoints are the platforms' webhook endpoints: "" when a platform has
// none (its events wait); Disable removes one that answered 410 Gone.
type Endpoints interface {
	WebhookEndpoint(ctx context.Context, platformID string) (string, error)
	DisableWebhookEndpoint(ctx context.Context, platformID, url string) error
}

// TypeIncomingPending is the event whose answer may decide a payment.
const TypeIncomingPending = "INCOMING_PAYMENT.PENDING"

// ApprovalReplies takes the endpoint's answer to an INCOMING_PAYMENT.PENDING
// event (core/approvals): decided is true when the event's payment awaited
// (or awaited) the platform's approval, so the answer was its decision and
// the event is not retried (DELIVERED when an answer came, FAILED when
// none did). Otherwise the event is an acknowledgement like any other.
// Reply must be idempotent: a delivery job that dies after it runs again.
type ApprovalReplies interface {
	Reply(ctx context.Context, e ports.Event, a Answer) (decided bool, err error)
}

// Deliverer delivers events: its Handle is the EventDeliveryJob handler
// of a job runner that claims only those jobs.
type Deliverer struct {
	replies   ApprovalReplies
	store     ports.Store
	clock     ports.Clock
	sender    Sender
	signer    Signer
	render    Renderer
	endpoints Endpoints
	log       *slog.Logger
	jitter    func() float64 // in [0, 1)

	mu       sync.Mutex
	inFlight map[string]int        // by platform
	slow     map[string]*slowState // by platform
	// resources serialises this instance's deliveries about one resource.
	resources map[string]*resourceLock
	// sent holds the events this instance delivered (2xx) lately: those a
	// batch has not recorded yet (still PENDING in the store, but already
	// sent, so a later event of their resource may go: see
	// sendAfterEarlier), and those recorded in the last recentlySent
	// (oldest first in sentOrder). A delivery reads its events before it
	// waits for their resource's lock, so another delivery of this
	// instance may send one of them in between: each checks sent under
	// the lock (sentSince), and no event is sent twice by one instance.
	sent      map[string]sentState
	sentOrder []sentMark
	// failed holds this instance's failed attempts of the last
	// recentlySent (oldest first in failedOrder): a delivery that read an
	// earlier event of its resource before such an attempt was recorded
	// counts it (fresh), rather than try that event again before the wait
	// the attempt earned.
	failed      map[string]failedAttempt
	failedOrder []sentMark
}

// failedAttempt is a failed attempt in Deliverer.failed: the event's
// attempts with it, and when it was made.
type failedAttempt struct {
	attempts int
	at       time.Time
}

// slowState is a platform marked slow: until when, its bound on
// deliveries in flight, and the attempts answered well since the bound
// last changed.
type slowState struct {
	until time.Time
	limit int
	good  int
}

// sentState is a delivery in Deliverer.sent: the event's attempts with
// it (an event read with fewer was read before it), and when its attempt
// was recorded (zero: not yet).
type sentState struct {
	attempts int
	recorded time.Time
}

// sentMark is a recorded delivery in Deliverer.sentOrder.
type sentMark struct {
	id string
	at time.Time
}

// recentlySent is how long a recorded delivery stays in Deliverer.sent:
// longer than a delivery takes from reading its events to taking their
// resource's lock.
const recentlySent = 30 * time.Second

type resourceLock struct {
	mu    sync.Mutex
	users int
}

// NewDeliverer returns a deliverer.
func NewDeliverer(store ports.Store, clock ports.Clock, sender Sender, signer Signer, render Renderer, endpoints Endpoints,
	log *slog.Logger) *Deliverer {
	if log == nil {
		log = slog.Default()
	}
	return &Deliverer{store: store, clock: clock, sender: sender, signer: signer, render: render, endpoints: endpoints,
		log: log, jitter: rand.Float64, inFlight: map[string]int{}, slow: map[string]*slowState{}, resources: map[string]*resourceLock{},
		sent: map[string]sentState{}, failed: map[string]failedAttempt{}}
}

// SetApprovals passes the answers to INCOMING_PAYMENT.PENDING events to r
// (call before delivering).
func (d *Deliverer) SetApprovals(r ApprovalReplies) { d.replies = r }

// Envelope is the body of a webhook (the reference's): timestamp is the
// send time; data is absent for TEST.
type Envelope struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data,omitempty"`
}

var errWaiting = errors.New("webhook: waiting")

// run is a delivery run's state, in the context it works in: when it
// starts its last attempt at the latest (SendWithin), and the context it
// was started under, whose end (a shutdown) stops it from starting more.
type run struct {
	sendBy time.Time
	stop   context.Context
}

type runKey struct{}

// startRun begins a run of the delivery job (Handle or HandleBatch) under
// ctx, and returns the context it works in: a shutdown (ctx cancelled)
// does not end it, so that the POSTs in flight get their answers and what
// was answered is recorded (an attempt left unrecorded goes again after
// the restart, and one cut short may have reached the endpoint); the
// lease (ctx's deadline) still bounds it. A run within a run (Handle for
// a slot of HandleBatch) is its batch's.
func (d *Deliverer) startRun(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Value(runKey{}).(run); ok {
		return ctx, func() {}
	}
	work := context.WithValue(context.WithoutCancel(ctx), runKey{}, run{sendBy: d.clock.Now().Add(SendWithin), stop: ctx})
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(work, dl)
	}
	return work, func() {}
}

// ended is why the run of ctx has ended (its lease, or a shutdown), nil
// while it goes on.
func ended(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if r, ok := ctx.Value(runKey{}).(run); ok && r.stop.Err() != nil {
		return context.Cause(r.stop)
	}
	return nil
}

// late is nil while the run of ctx may start an attempt at now, and else
// the retry, at once, of an event it does not start: the run has ended,
// or SendWithin has passed (slow attempts, one after another, would
// outlast its lease).
func late(ctx context.Context, now time.Time) error {
	if err := ended(ctx); err != nil {
		return jobs.RetryAt(now, fmt.Errorf("%w: the delivery run ended: %w", errWaiting, err))
	}
	if r, ok := ctx.Value(runKey{}).(run); ok && now.After(r.sendBy) {
		return jobs.RetryAt(now, fmt.Errorf("%w: the delivery run's time to send is up", errWaiting))
	}
	return nil
}

// cutShort is nil unless attempt a got no answer as the run of ctx ended:
// it may say nothing of the endpoint, so it is not recorded, and the
// result is the retry of its event (and of those after it) at once.
func cutShort(ctx context.Context, a ports.EventAttempt, now time.Time) error {
	if a.Error == "" || a.StatusCode != 0 {
		return nil
	}
	if err := ended(ctx); err != nil {
		return jobs.RetryAt(now, fmt.Errorf("%w: webhook %s cut short: %w", errWaiting, a.EventID, err))
	}
	return nil
}

// busy is the retry, after BusyWait, of an event whose platform had all
// its delivery slots on this instance in flight at now (acquire).
func busy(platformID string, now time.Time) error {
	return jobs.RetryAt(now.Add(BusyWait), fmt.Errorf("%w: %s has its share of deliveries in flight", errWaiting, platformID))
}

// mayDecide reports that e's answer may decide a payment (an
// INCOMING_PAYMENT.PENDING event, with approvals wired).
func (d *Deliverer) mayDecide(e ports.Event) bool {
	return d.replies != nil && e.Type == TypeIncomingPending
}

// Handle delivers the event of job j once: delivered (2xx), retried on
// the Schedule, FAILED after it, or left pending when its platform has no
// endpoint (a 410 removes the endpoint). Events of one resource go in
// order; a platform holds at most PerPlatform deliveries at once here.
//
// A job of several events (ports.EventsDeliveryJob: a statement's events,
// a backlog queued again) is split: its events go on as jobs of their own,
// due now.
func (d *Deliverer) Handle(ctx context.Context, j ports.Job) error {
	ctx, cancel := d.startRun(ctx)
	defer cancel()
	platformID, ids, err := ports.EventDeliveryRefs(j)
	if err != nil {
		return err
	}
	if len(ids) > 1 {
		now := d.clock.Now()
		return d.store.InTx(ctx, func(tx ports.Tx) error {
			for _, id := range ids {
				if err := tx.Jobs().Enqueue(ctx, ports.EventDeliveryJobAt(platformID, id, now)); err != nil {
					return fmt.Errorf("webhook job %s: %w", j.ID, err)
				}
			}
			return nil
		})
	}
	return d.handleEvent(ctx, platformID, ids[0], j.ID)
}

// handleEvent is Handle for one event: jobID is its own job, which ends
// with its attempt's record when nothing follows ("" for an event of a
// job of several, which its batch ends).
func (d *Deliverer) handleEvent(ctx context.Context, platformID, eventID, jobID string) error {
	e, err := d.store.Read().Events().Get(ctx, platformID, eventID)
	if errors.Is(err, ports.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("webhook %s: %w", eventID, err)
	}
	if e.Status != ports.EventPending {
		return nil
	}
	url, err := d.endpoints.WebhookEndpoint(ctx, platformID)
	if err != nil {
		return fmt.Errorf("webhook %s: endpoint of %s: %w", eventID, platformID, err)
	}
	if url == "" {
		// Kept: setting an endpoint queues the platform's pending events
		// again (its webhook.endpoint_set job).
		return nil
	}
	now := d.clock.Now()
	if err := late(ctx, now); err != nil {
		return err
	}
	// An event that may decide a payment has its approval window to be
	// answered in: it may take one slot beyond its platform's bound, so
	// that a slow platform's other events do not time its payment out.
	extra := 0
	if d.mayDecide(e) {
		extra = 1
	}
	if !d.acquire(platformID, extra) {
		return busy(platformID, now)
	}
	defer d.release(platformID)
	unlock := d.lockResource(ports.ResourceKey(platformID, e.ResourceID))
	defer unlock()
	if d.sentSince(e) {
		// Another delivery of this instance sent it while this one
		// waited for the resource: it records the attempt.
		return nil
	}
	if err := d.triedSince(e); err != nil {
		return err
	}
	// Events of the resource still pending before e go first, in order
	// (a later event never overtakes an earlier one); their own jobs then
	// find them delivered.
	wait, ok, err := d.deliverEarlier(ctx, e, url)
	if err != nil {
		return err
	}
	if !ok {
		return jobs.RetryAt(later(now.Add(OrderWait), wait), fmt.Errorf("%w: an earlier event of %s is not delivered", errWaiting, e.ResourceID))
	}
	if err := late(ctx, d.clock.Now()); err != nil {
		return err
	}
	a, ans, err := d.attempt(ctx, e, url)
	if err != nil {
		return err
	}
	if err := cutShort(ctx, a, d.clock.Now()); err != nil {
		return err
	}
	return d.finish(ctx, e, url, a, ans, jobID)
}

// batchParallel bounds the resources one batch sends to at once.
const batchParallel = 32

// batchItem is an event of a batch and its slot (deliveryBatch), or
// noSlot for an earlier event of a resource sent with the batch's events
// of it (sendAfterEarlier): its attempt is recorded with the batch's, and
// its own job, not in the batch, finds it delivered or retries it.
type batchItem struct {
	e    ports.Event
	slot int
}

const noSlot = -1

// setResult sets the result of slot (none for noSlot).
func setResult(res []jobs.BatchResult, slot int, err error) {
	if slot != noSlot {
		res[slot].Err = err
	}
}

// setResults sets the results of g's slots to err.
func setResults(res []jobs.BatchResult, g []batchItem, err error) {
	for _, it := range g {
		setResult(res, it.slot, err)
	}
}

// deliveryBatch is a claimed batch of delivery jobs and their events, one
// slot per event: a slot's result is its job's when the job has that one
// event. A job of several events (ports.EventsDeliveryJob) ends when the
// batch is done; those of its events that need another attempt later (a
// retry, a wait for an earlier event) go on as jobs of their own, queued
// in the unit of work that ends it. Its events that go Handle's way are
// handled in the batch, without a job of their own.
type deliveryBatch struct {
	js       []ports.Job
	out      []jobs.BatchResult // by slot
	job      []int              // by slot: the index of its job
	platform []string           // by slot
	id       []string           // by slot: the event id
	events   []int              // by job: its number of events
}

func newDeliveryBatch(js []ports.Job) (*deliveryBatch, []jobs.BatchResult) {
	b := &deliveryBatch{js: js, events: make([]int, len(js))}
	res := make([]jobs.BatchResult, len(js))
	for i, j := range js {
		platformID, ids, err := ports.EventDeliveryRefs(j)
		if err != nil {
			res[i].Err = err
			continue
		}
		b.events[i] = len(ids)
		for _, id := range ids {
			b.job, b.platform, b.id = append(b.job, i), append(b.platform, platformID), append(b.id, id)
		}
	}
	b.out = make([]jobs.BatchResult, len(b.id))
	return b, res
}

// alone reports whether slot's job delivers that one event.
func (b *deliveryBatch) alone(slot int) bool { return b.events[b.job[slot]] == 1 }

// batchSent is an attempt of a batch, recorded with the others.
type batchSent struct {
	batchItem
	a      ports.EventAttempt
	status string
	next   time.Time
}

// HandleBatch delivers the events of a claimed batch of EventDeliveryJob
// jobs (the delivery runner's batch handler): one read of the events, one
// of their resources' earlier pending events, one endpoint read per
// platform, the POSTs about different resources at once and those about
// one resource in order, and one unit of work that records every attempt
// and ends every job it finished. The earlier pending events of a
// resource, in jobs outside the batch, go first with the batch's
// (sendAfterEarlier). An event that may decide a payment, and a group
// that cannot go that way, go Handle's way, one by one.
func (d *Deliverer) HandleBatch(ctx context.Context, js []ports.Job) []jobs.BatchResult {
	ctx, cancel := d.startRun(ctx)
	defer cancel()
	b, res := newDeliveryBatch(js)
	// An event named by two jobs of the batch (its own, and a job of
	// several whose end failed and ran again) is sent once, for its own
	// job when it has one, so that job carries its retries; the other
	// slot is done.
	slotOf := make(map[string]int, len(b.id))
	for slot, id := range b.id {
		if prev, ok := slotOf[id]; ok && (b.alone(prev) || !b.alone(slot)) {
			continue
		}
		slotOf[id] = slot
	}
	evs, err := d.store.Read().Events().GetMany(ctx, b.id)
	if err != nil {
		for slot := range b.out {
			b.out[slot].Err = fmt.Errorf("webhook batch: %w", err)
		}
		return d.endBatch(ctx, b, nil, res)
	}
	urls := map[string]string{}
	groups := map[string][]batchItem{}
	var one []int // slots that go Handle's way
	for _, e := range evs {
		i := slotOf[e.ID]
		if e.PlatformID != b.platform[i] || e.Status != ports.EventPending {
			continue // nothing to send: done
		}
		url, ok := urls[e.PlatformID]
		if !ok {
			if url, err = d.endpoints.WebhookEndpoint(ctx, e.PlatformID); err != nil {
				b.out[i].Err = fmt.Errorf("webhook %s: endpoint of %s: %w", e.ID, e.PlatformID, err)
				continue
			}
			urls[e.PlatformID] = url
		}
		switch {
		case url == "":
			// Kept: setting an endpoint queues the platform's pending
			// events again (its webhook.endpoint_set job).
		case d.mayDecide(e):
			one = append(one, i)
		default:
			key := ports.ResourceKey(e.PlatformID, e.ResourceID)
			groups[key] = append(groups[key], batchItem{e: e, slot: i})
		}
	}
	// A group goes at once as far as it is what comes next for its
	// resource: its first events pending, in order, without a gap (an
	// event of the resource in another job, not claimed here, stops it).
	firsts, longest := make([]ports.Event, 0, len(groups)), 0
	for _, g := range groups {
		slices.SortFunc(g, func(x, y batchItem) int { return cmp.Compare(x.e.Seq, y.e.Seq) })
		firsts, longest = append(firsts, g[0].e), max(longest, len(g))
	}
	heads, err := d.store.Read().Events().PendingHeads(ctx, firsts, longest+chainMax)
	behind := map[string][]batchItem{} // groups with an earlier event pending outside the batch
	for key, g := range groups {
		if err != nil {
			// Handle checks again, one by one, what could not be read here.
			for _, it := range g {
				one = append(one, it.slot)
			}
			delete(groups, key)
			continue
		}
		switch k := d.nextOf(g, heads[key]); {
		case k == 0:
			behind[key] = g
			delete(groups, key)
		case k < len(g):
			groups[key] = g[:k]
			waitInOrder(g[k:], b.out, d.clock.Now())
		}
	}

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		sent []batchSent
		sem  = make(chan struct{}, batchParallel)
	)
	spawn := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f()
		}()
	}
	// handle runs slot i's event alone (Handle's way); collect keeps
	// attempts to record.
	handle := func(i int) {
		if !b.alone(i) {
			b.out[i].Err = d.handleEvent(ctx, b.platform[i], b.id[i], "")
			return
		}
		tracked, removed := jobs.Tracked(ctx)
		err := d.Handle(tracked, js[b.job[i]])
		b.out[i] = jobs.BatchResult{Err: err, Removed: removed()}
	}
	collect := func(out []batchSent) {
		mu.Lock()
		sent = append(sent, out...)
		mu.Unlock()
	}
	for _, i := range one {
		spawn(func() { handle(i) })
	}
	for _, g := range groups {
		spawn(func() { collect(d.sendInOrder(ctx, g, urls[g[0].e.PlatformID], b.out)) })
	}
	for _, g := range behind {
		spawn(func() {
			out, ok := d.sendAfterEarlier(ctx, g, urls[g[0].e.PlatformID], b.out)
			if !ok {
				// The earlier events cannot go with the batch:
				// Handle sends what comes first, one by one.
				for _, it := range g {
					handle(it.slot)
				}
				return
			}
			collect(out)
		})
	}
	wg.Wait()
	return d.endBatch(ctx, b, sent, res)
}

// endBatch records a batch's attempts (sent) and ends its jobs in one step
// (EndDeliveries: one statement on a database), and turns the slots'
// results into the jobs' (res). A job of one event answers as its event,
// and ends there when its event needs no retry. A job of several ends;
// those of its events that are not done go on as jobs of their own,
// queued with it, at the time their result asks for (a failure without
// one: after the first retry's wait).
func (d *Deliverer) endBatch(ctx context.Context, b *deliveryBatch, sent []batchSent, res []jobs.BatchResult) []jobs.BatchResult {
	recs := make([]ports.AttemptRecord, len(sent))
	var done []string
	for k, s := range sent {
		recs[k] = ports.AttemptRecord{PlatformID: s.e.PlatformID, Attempt: s.a, Status: s.status}
		if s.slot == noSlot {
			continue
		}
		b.out[s.slot] = jobs.BatchResult{Err: retryOf(s.e, s.a, s.next), Removed: s.next.IsZero() && b.alone(s.slot)}
		if b.out[s.slot].Removed {
			done = append(done, b.js[b.job[s.slot]].ID)
		}
	}
	var (
		next   []ports.Job
		shared []int // the jobs of several, each once
	)
	now := d.clock.Now()
	for slot, r := range b.out {
		i := b.job[slot]
		if b.alone(slot) {
			res[i] = r
			continue
		}
		if len(shared) == 0 || shared[len(shared)-1] != i {
			shared = append(shared, i)
			done = append(done, b.js[i].ID)
		}
		if r.Err == nil {
			continue
		}
		at, ok := jobs.IsRetryAt(r.Err)
		if !ok {
			at = now.Add(Schedule[0])
		}
		j := ports.EventDeliveryJobAt(b.platform[slot], b.id[slot], at)
		j.LastError = r.Err.Error()
		next = append(next, j)
	}
	if len(sent) == 0 && len(shared) == 0 {
		return res
	}
	err := d.store.Read().Events().EndDeliveries(ctx, recs, next, done)
	delivered := make([]ports.Event, 0, len(sent))
	for _, s := range sent {
		if s.status == ports.EventDelivered {
			delivered = append(delivered, s.e)
		}
	}
	if err != nil {
		// Still PENDING in the store: their jobs send them again.
		d.forgetSent(delivered)
		for _, s := range sent {
			if s.slot != noSlot && b.alone(s.slot) {
				res[b.job[s.slot]] = jobs.BatchResult{Err: fmt.Errorf("webhook %s: record attempt: %w", s.e.ID, err)}
			}
		}
		for _, i := range shared {
			res[i] = jobs.BatchResult{Err: fmt.Errorf("webhook batch: end job %s: %w", b.js[i].ID, err)}
		}
		return res
	}
	d.markRecorded(delivered...)
	for _, s := range sent {
		d.logAttempt(s.e, s.a, s.status, s.next)
	}
	for _, i := range shared {
		res[i].Removed = true
	}
	return res
}

// sendInOrder sends the events of one resource (g, in order) until one is
// not taken; the events after it wait for it (res). It returns the
// attempts to record.
func (d *Deliverer) sendInOrder(ctx context.Context, g []batchItem, url string, res []jobs.BatchResult) []batchSent {
	unlock := d.lockResource(ports.ResourceKey(g[0].e.PlatformID, g[0].e.ResourceID))
	defer unlock()
	return d.sendLocked(ctx, g, url, res)
}

// sendAfterEarlier sends a group whose resource has earlier events pending
// outside the batch, in order, after them: those this instance has
// delivered and is recording (another batch of this instance sent them:
// waiting for the resource waited for that sending) are left out, and the
// others (earlierToSend) are sent first, in this batch, as far as the
// group then comes next (nextOf; the rest waits). ok is false, and
// nothing is sent, when the earlier events cannot go this way: the group
// then goes Handle's way. One read of the resource's pending events for
// the group (and one of the earlier events when there are some), instead
// of several statements and a unit of work for each of its events.
func (d *Deliverer) sendAfterEarlier(ctx context.Context, g []batchItem, url string, res []jobs.BatchResult) (out []batchSent, ok bool) {
	first := g[0].e
	key := ports.ResourceKey(first.PlatformID, first.ResourceID)
	unlock := d.lockResource(key)
	defer unlock()
	heads, err := d.store.Read().Events().PendingHeads(ctx, []ports.Event{first}, len(g)+chainMax)
	if err != nil {
		return nil, false
	}
	ids := heads[key]
	k := d.nextOf(g, ids)
	var earlier []batchItem
	if k == 0 {
		if earlier, ids, ok = d.earlierToSend(ctx, first, ids); !ok {
			return nil, false
		}
		if k = d.nextOf(g, ids); k == 0 {
			return nil, false // first is being recorded by another batch: Handle's way knows it
		}
	}
	waitInOrder(g[k:], res, d.clock.Now())
	return d.sendLocked(ctx, append(earlier, g[:k]...), url, res), true
}

// earlierToSend reads the pending events before first in ids (its
// resource's first pending events, in order), to be sent before it in
// its batch: items of no slot (noSlot), whose own jobs then find them
// delivered, as after Handle's deliverEarlier (sendLocked skips those
// another delivery of this instance sent since). rest is ids from first
// on. ok is false when first is not among ids (more than chainMax may
// come before it), or when an earlier event may decide a payment
// (TypeIncomingPending) or is not due again yet (dueAt): Handle's way.
func (d *Deliverer) earlierToSend(ctx context.Context, first ports.Event, ids []string) (earlier []batchItem, rest []string, ok bool) {
	i := slices.Index(ids, first.ID)
	if i < 0 || i > chainMax {
		return nil, nil, false
	}
	rows, err := d.pendingBefore(ctx, first, ids[:i])
	if err != nil {
		return nil, nil, false
	}
	now := d.clock.Now()
	for _, e := range rows {
		if d.mayDecide(e) || now.Before(dueAt(d.fresh(e))) {
			// Handle's way: it decides the payment, or it waits out a
			// failure, and the group with it (deliverEarlier).
			return nil, nil, false
		}
		earlier = append(earlier, batchItem{e: e, slot: noSlot})
	}
	return earlier, ids[i:], true
}

// nextOf is how many of group g (one resource's events, in Seq order)
// come next for their resource: g's events while they follow heads (the
// resource's first pending events) one for one, leaving out the events
// this instance has delivered and is recording. A gap (an event of the
// resource that is not in g) ends it; so does the end of heads.
func (d *Deliverer) nextOf(g []batchItem, heads []string) int {
	k := 0
	for _, id := range heads {
		if k == len(g) {
			break
		}
		if d.unrecordedHere(id) {
			continue
		}
		if id != g[k].e.ID {
			break
		}
		k++
	}
	return k
}

// waitInOrder answers the events of g that wait for an earlier event of
// their resource: a retry after OrderWait (a job of several hands them on
// as jobs of their own).
func waitInOrder(g []batchItem, out []jobs.BatchResult, now time.Time) {
	for _, it := range g {
		setResult(out, it.slot, jobs.RetryAt(now.Add(OrderWait),
			fmt.Errorf("%w: an earlier event of %s is not delivered", errWaiting, it.e.ResourceID)))
	}
}

// unrecordedHere reports whether this instance delivered event id and
// its batch has not recorded the attempt yet.
func (d *Deliverer) unrecordedHere(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, ok := d.sent[id]
	return ok && st.recorded.IsZero()
}

// sentSince reports whether this instance delivered e after e was read
// (with more attempts than e has): lately, and not by a redelivery
// requested since, which reads it with that delivery's attempt.
func (d *Deliverer) sentSince(e ports.Event) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, ok := d.sent[e.ID]
	return ok && st.attempts > e.Attempts
}

// markSent notes e (as read before its attempt) delivered, its attempt
// not recorded yet.
func (d *Deliverer) markSent(e ports.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sent[e.ID] = sentState{attempts: e.Attempts + 1}
}

// markRecorded notes delivered events (as read before their attempts)
// recorded now, and forgets those recorded more than recentlySent ago.
func (d *Deliverer) markRecorded(es ...ports.Event) {
	now := d.clock.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range es {
		d.sent[e.ID] = sentState{attempts: e.Attempts + 1, recorded: now}
		d.sentOrder = append(d.sentOrder, sentMark{id: e.ID, at: now})
	}
	d.sentOrder = expire(d.sentOrder, now, func(m sentMark) {
		if st, ok := d.sent[m.id]; ok && st.recorded.Equal(m.at) {
			delete(d.sent, m.id)
		}
	})
}

// expire drops from order (oldest first) the marks made more than
// recentlySent before now, passing each to drop.
func expire(order []sentMark, now time.Time, drop func(sentMark)) []sentMark {
	k := 0
	for ; k < len(order) && now.Sub(order[k].at) > recentlySent; k++ {
		drop(order[k])
	}
	return slices.Delete(order, 0, k)
}

// markFailed notes a failed attempt at e (as read before it) made at at,
// and forgets those made more than recentlySent ago.
func (d *Deliverer) markFailed(e ports.Event, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failed[e.ID] = failedAttempt{attempts: e.Attempts + 1, at: at}
	d.failedOrder = append(d.failedOrder, sentMark{id: e.ID, at: at})
	d.failedOrder = expire(d.failedOrder, at, func(m sentMark) {
		if f, ok := d.failed[m.id]; ok && f.at.Equal(m.at) {
			delete(d.failed, m.id)
		}
	})
}

// fresh is e with this instance's failed attempt at it made after e was
// read, if there is one: what dueAt must count.
func (d *Deliverer) fresh(e ports.Event) ports.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.failed[e.ID]; ok && f.attempts > e.Attempts {
		e.Attempts, e.LastAttemptAt = f.attempts, &f.at
	}
	return e
}

// triedSince is a retry at the event's due time when e, about to go by
// its own job, was tried and failed since that job was scheduled (a later
// event's delivery sent it first): it then waits the retry that attempt
// earned rather than spend another. Nil when e is due.
func (d *Deliverer) triedSince(e ports.Event) error {
	if due := dueAt(d.fresh(e)); d.clock.Now().Before(due) {
		return jobs.RetryAt(due, fmt.Errorf("%w: %s failed again since its retry was scheduled", errWaiting, e.ID))
	}
	return nil
}

// forgetSent forgets deliveries whose recording failed.
func (d *Deliverer) forgetSent(es []ports.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range es {
		if st, ok := d.sent[e.ID]; ok && st.recorded.IsZero() {
			delete(d.sent, e.ID)
		}
	}
}

// sendLocked sends a group of one resource in order; the caller holds the
// resource's lock. Each event delivered is unrecorded until endBatch.
func (d *Deliverer) sendLocked(ctx context.Context, g []batchItem, url string, res []jobs.BatchResult) []batchSent {
	platformID := g[0].e.PlatformID
	var out []batchSent
	for k, it := range g {
		now := d.clock.Now()
		if d.sentSince(it.e) {
			continue // another delivery of this instance sent it since it was read
		}
		if it.slot != noSlot {
			if err := d.triedSince(it.e); err != nil {
				setResult(res, it.slot, err)
				waitInOrder(g[k+1:], res, now)
				return out
			}
		}
		if err := late(ctx, now); err != nil {
			setResults(res, g[k:], err)
			return out
		}
		if !d.acquire(platformID, 0) {
			setResults(res, g[k:], busy(platformID, now))
			return out
		}
		a, _, err := d.attempt(ctx, it.e, url)
		d.release(platformID)
		var status string
		var next time.Time
		if err == nil {
			if cut := cutShort(ctx, a, now); cut != nil {
				setResults(res, g[k:], cut)
				return out
			}
			status, next, err = d.outcome(ctx, it.e, url, a)
		}
		if err != nil {
			setResult(res, it.slot, err)
		} else {
			out = append(out, batchSent{batchItem: it, a: a, status: status, next: next})
			if status == ports.EventDelivered {
				d.markSent(it.e)
			}
		}
		if err != nil || a.Error != "" {
			waitInOrder(g[k+1:], res, now)
			return out
		}
	}
	return out
}

// finish hands an incoming payment's answer to the approvals (which may
// decide the payment with it: then the event is not retried), and settles
// the attempt otherwise.
func (d *Deliverer) finish(ctx context.Context, e ports.Event, url string, a ports.EventAttempt, ans Answer, jobID string) error {
	if d.mayDecide(e) {
		if a.Error != "" && a.StatusCode == 0 {
			ans = Answer{} // no answer: whatever came with the error is not one
		}
		decided, err := d.replies.Reply(ctx, e, ans)
		if err != nil {
			return fmt.Errorf("webhook %s: approval: %w", e.ID, err)
		}
		if decided {
			return d.record(ctx, e, a)
		}
	}
	return d.settle(ctx, e, url, a, jobID)
}

// deliverEarlier delivers, in order, the pending events of e's resource
// recorded before e, up to chainMax of them. ok is false when one of them
// was not taken (it keeps its own schedule, and e waits for it), or when
// more may wait than were sent (e waits for them too).
func (d *Deliverer) deliverEarlier(ctx context.Context, e ports.Event, url string) (wait time.Time, ok bool, err error) {
	rows, more, err := d.earlierPending(ctx, e)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("webhook %s: earlier events: %w", e.ID, err)
	}
	for _, prev := range rows {
		if d.sentSince(prev) {
			continue // delivered by a batch of this instance, being recorded
		}
		now := d.clock.Now()
		if due := dueAt(d.fresh(prev)); now.Before(due) {
			// Waiting out a failure: e waits with it, and is not the
			// reason it is tried again before its time.
			return due, false, nil
		}
		if late(ctx, now) != nil {
			return time.Time{}, false, nil // e waits for the rest
		}
		a, ans, err := d.attempt(ctx, prev, url)
		if err != nil {
			return time.Time{}, false, err
		}
		if err := cutShort(ctx, a, d.clock.Now()); err != nil {
			return time.Time{}, false, err
		}
		if err := d.finish(ctx, prev, url, a, ans, ""); err != nil {
			if _, retry := jobs.IsRetryAt(err); !retry {
				return time.Time{}, false, err
			}
		}
		if a.Error != "" {
			return time.Time{}, false, nil
		}
	}
	return time.Time{}, !more, nil
}

// dueAt is the earliest a pending event may be attempted again: at once
// when it has not failed since it was last queued, else after its last
// attempt and the retry wait that attempt earned (Schedule, less the
// most its jitter takes off: its own job holds the jittered time). A later
// event of its resource waits until then rather than send it earlier, so
// a burst of events about one resource does not spend an event's retries
// in seconds.
func dueAt(e ports.Event) time.Time {
	n := failedSinceQueued(e)
	if n <= 0 || e.LastAttemptAt == nil {
		return time.Time{}
	}
	wait := Schedule[min(n, len(Schedule))-1]
	return e.LastAttemptAt.Add(wait - wait/10)
}

// failedSinceQueued is how many attempts of pending event e have failed
// since it was last queued (a redelivery, or an endpoint set again): its
// place in the Schedule.
func failedSinceQueued(e ports.Event) int { return e.Attempts - e.AttemptsBefore }

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// earlierPending is the pending events of e's resource recorded before e,
// in that order, at most chainMax: the resource's first pending events
// (PendingHeads) up to e, read. more reports that others may come before
// e (chainMax of them were read without reaching e).
func (d *Deliverer) earlierPending(ctx context.Context, e ports.Event) (rows []ports.Event, more bool, err error) {
	heads, err := d.store.Read().Events().PendingHeads(ctx, []ports.Event{e}, chainMax)
	if err != nil {
		return nil, false, err
	}
	ids := heads[ports.ResourceKey(e.PlatformID, e.ResourceID)]
	if i := slices.Index(ids, e.ID); i >= 0 {
		ids = ids[:i]
	}
	rows, err = d.pendingBefore(ctx, e, ids)
	return rows, len(ids) >= chainMax, err
}

// pendingBefore reads the events of ids (pending events of e's resource,
// as PendingHeads read them) that are still pending and recorded before
// e, in that order: one read, none when ids is empty (e comes first: the
// usual case). An event pending when its id was read may be delivered by
// now: recorded by a batch of this instance after it released the
// resource (its mark no longer tells: the event is read with the recorded
// attempt) or by another instance.
func (d *Deliverer) pendingBefore(ctx context.Context, e ports.Event, ids []string) ([]ports.Event, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := d.store.Read().Events().GetMany(ctx, ids)
	if err != nil {
		return nil, err
	}
	rows = slices.DeleteFunc(rows, func(r ports.Event) bool { return r.Seq >= e.Seq || r.Status != ports.EventPending })
	slices.SortFunc(rows, func(a, b ports.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	return rows, nil
}

func (d *Deliverer) lockResource(key string) (unlock func()) {
	d.mu.Lock()
	l := d.resources[key]
	if l == nil {
		l = &resourceLock{}
		d.resources[key] = l
	}
	l.users++
	d.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		d.mu.Lock()
		if l.users--; l.users == 0 {
			delete(d.resources, key)
		}
		d.mu.Unlock()
	}
}

// record records the attempt a of an event whose answer decided a payment:
// no retry (the decision is made), DELIVERED when an answer came.
func (d *Deliverer) record(ctx context.Context, e ports.Event, a ports.EventAttempt) error {
	status := ports.EventDelivered
	if a.StatusCode == 0 {
		status = ports.EventFailed
	}
	err := d.store.InTx(ctx, func(tx ports.Tx) error {
		return recordAttempt(ctx, tx, e.PlatformID, a, status)
	})
	if err != nil {
		return fmt.Errorf("webhook %s: record attempt: %w", e.ID, err)
	}
	if status == ports.EventDelivered {
		d.markRecorded(e)
	}
	d.log.Debug("webhook answer decided an incoming payment", "event", e.ID, "transaction", e.ResourceID,
		"status_code", a.StatusCode)
	return nil
}

// attempt builds, signs and sends e's envelope to url now: the attempt
// (its Error set when the endpoint did not take it) and the answer; err
// is a failure before sending.
func (d *Deliverer) attempt(ctx context.Context, e ports.Event, url string) (ports.EventAttempt, Answer, error) {
	body, err := d.Body(ctx, e)
	if err != nil {
		return ports.EventAttempt{}, Answer{}, err
	}
	sig, err := d.signer.Sign(body)
	if err != nil {
		return ports.EventAttempt{}, Answer{}, fmt.Errorf("webhook %s: sign: %w", e.ID, err)
	}
	start := d.clock.Now()
	ans, err := d.sender.Send(ctx, url, body, sig)
	a := ports.EventAttempt{EventID: e.ID, At: start, StatusCode: ans.StatusCode, Latency: d.clock.Now().Sub(start)}
	switch {
	case err != nil:
		a.Error = err.Error()
	case ans.StatusCode < 200 || ans.StatusCode > 299:
		a.Error = fmt.Sprintf("the endpoint answered %d", ans.StatusCode)
	}
	if a.Error != "" {
		d.markFailed(e, start)
	}
	return a, ans, nil
}

// Body is e's envelope as sent now: the encoding of Envelope, with the
// rendered data (compact JSON, the Renderer's contract) put in as it is
// rather than through the encoder, which would scan it again to check and
// compact it (a fifth of the body's CPU for a transaction's event).
func (d *Deliverer) Body(ctx context.Context, e ports.Event) ([]byte, error) {
	env := Envelope{ID: e.ID, Type: e.Type, Timestamp: d.clock.Now().UTC()}
	var data json.RawMessage
	if e.Type != TypeTest {
		var err error
		if data, err = d.render.Render(ctx, e); err != nil {
			return nil, fmt.Errorf("webhook %s: render %s: %w", e.ID, e.ResourceID, err)
		}
	}
	var b bytes.Buffer
	b.Grow(len(data) + 160)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, fmt.Errorf("webhook %s: %w", e.ID, err)
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if len(data) == 0 {
		return out, nil
	}
	out = append(out[:len(out)-1], `,"data":`...) // the closing brace
	out = append(out, data...)
	return append(out, '}'), nil
}

// settle records attempt a of e and decides what comes next. A handler's
// own job (jobID) ends in the same unit of work when nothing follows.
func (d *Deliverer) settle(ctx context.Context, e ports.Event, url string, a ports.EventAttempt, jobID string) error {
	status, next, err := d.outcome(ctx, e, url, a)
	if err != nil {
		return err
	}
	done := jobID != "" && next.IsZero()
	err = d.store.InTx(ctx, func(tx ports.Tx) error {
		if err := recordAttempt(ctx, tx, e.PlatformID, a, status); err != nil {
			return err
		}
		if done {
			if err := tx.Jobs().Complete(ctx, jobID); err != nil && !errors.Is(err, ports.ErrNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("webhook %s: record attempt: %w", e.ID, err)
	}
	if status == ports.EventDelivered {
		d.markRecorded(e)
	}
	if done {
		jobs.Completed(ctx)
	}
	d.logAttempt(e, a, status, next)
	return retryOf(e, a, next)
}

// recordAttempt records one attempt, moving its event to status.
func recordAttempt(ctx context.Context, tx ports.Tx, platformID string, a ports.EventAttempt, status string) error {
	return tx.Events().RecordAttempts(ctx, []ports.AttemptRecord{{PlatformID: platformID, Attempt: a, Status: status}})
}

// outcome is where attempt a of e leads: the event's status and, when it
// is retried, when (a 410 removes the endpoint first).
func (d *Deliverer) outcome(ctx context.Context, e ports.Event, url string, a ports.EventAttempt) (status string, next time.Time, err error) {
	d.observe(e.PlatformID, a)
	status = ports.EventPending
	switch {
	case a.Error == "":
		status = ports.EventDelivered
	case a.StatusCode == 410:
		// Gone: the endpoint is removed and the event waits for the next.
		if err := d.endpoints.DisableWebhookEndpoint(ctx, e.PlatformID, url); err != nil {
			return "", time.Time{}, fmt.Errorf("webhook %s: disable endpoint: %w", e.ID, err)
		}
		d.log.Warn("webhook endpoint answered 410 Gone: removed; the platform's events wait for a new one",
			"platform", e.PlatformID, "event", e.ID)
	case failedSinceQueued(e) >= len(Schedule):
		status = ports.EventFailed
	default:
		wait := Schedule[failedSinceQueued(e)]
		wait += time.Duration((d.jitter()*0.2 - 0.1) * float64(wait))
		next = a.At.Add(wait)
	}
	return status, next, nil
}

// logAttempt logs the recorded attempt a of e.
func (d *Deliverer) logAttempt(e ports.Event, a ports.EventAttempt, status string, next time.Time) {
	log := d.log.With("event", e.ID, "type", e.Type, "platform", e.PlatformID, "attempt", e.Attempts+1,
		"status_code", a.StatusCode, "latency_ms", a.Latency.Milliseconds())
	switch {
	case status == ports.EventDelivered:
		log.Debug("webhook delivered")
	case status == ports.EventFailed:
		log.Error("webhook failed for good after its retries; redeliver it when the endpoint works", "err", a.Error)
	case !next.IsZero():
		log.Warn("webhook not delivered; will retry", "err", a.Error, "retry_at", next)
	}
}

// retryOf is what the job of attempt a of e answers the runner: a retry
// at next, or nil when none follows.
func retryOf(e ports.Event, a ports.EventAttempt, next time.Time) error {
	if next.IsZero() {
		return nil
	}
	return jobs.RetryAt(next, fmt.Errorf("webhook %s: %s", e.ID, a.Error))
}

// acquire takes one of platformID's delivery slots on this instance: at
// most its bound (PerPlatform, or less while slow) plus extra in flight.
func (d *Deliverer) acquire(platformID string, extra int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	limit := PerPlatform
	if s, ok := d.slow[platformID]; ok {
		if d.clock.Now().Before(s.until) {
			limit = s.limit
		} else {
			delete(d.slow, platformID)
		}
	}
	if d.inFlight[platformID] >= limit+extra {
		return false
	}
	d.inFlight[platformID]++
	return true
}

// observe marks the platform slow after a failed or slow attempt, and
// widens a slow platform's bound as its attempts answer well (see
// PerPlatform).
func (d *Deliverer) observe(platformID string, a ports.EventAttempt) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.slow[platformID]
	if a.Error == "" && a.Latency < SlowAttempt {
		if !ok {
			return
		}
		if s.good++; s.good >= s.limit {
			s.limit, s.good = s.limit+1, 0
		}
		if s.limit >= PerPlatform {
			delete(d.slow, platformID)
		}
		return
	}
	if !ok {
		s = &slowState{}
		d.slow[platformID] = s
	}
	s.until = a.At.Add(a.Latency).Add(SlowFor)
	s.limit, s.good = SlowPerPlatform, 0
}

func (d *Deliverer) release(platformID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight[platformID]--; d.inFlight[platformID] <= 0 {
		delete(d.inFlight, platformID)
	}
}
