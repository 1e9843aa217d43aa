// Package jobs runs durable background work from a ports.JobQueue: a rail
// outcome to check later, a submission to retry, an expiry. Jobs run at
// least once: every handler must be idempotent (derive ledger entry ids from
// the business object, check state transitions under a row lock), because a
// job whose runner died mid-way runs again when its lease ends.
//
// A failing job is never dropped: it is retried with an exponential,
// deterministic backoff (no jitter, so tests with a fake clock know exactly
// when it runs again) up to a cap, and then keeps retrying at the cap,
// logged at error level on every attempt, until it succeeds or an operator
// intervenes.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corridorpay/corridor/ports"
)

// Handler runs one job. An error means "not done, try again later".
type Handler func(ctx context.Context, j ports.Job) error

// Defaults of a Runner.
const (
	DefaultBatch       = 32
	DefaultLease       = time.Minute
	DefaultBackoffBase = time.Second
	DefaultBackoffCap  = 10 * time.Minute
)

// Runner claims due jobs and runs their handlers. Several runners (in one
// process or many) may share a queue: the queue's leases keep a job on one
// runner at a time.
type Runner struct {
	queue ports.JobQueue
	clock ports.Clock
	log   *slog.Logger

	batch       int
	maxBatch    int          // see WithBatchGrowth; batch when it does not grow
	claim       atomic.Int64 // the next claim's size, batch to maxBatch
	lease       time.Duration
	kinds       ports.JobKinds
	concurrency atomic.Int64 // see WithConcurrency, SetConcurrency
	base, cap   time.Duration

	mu       sync.RWMutex
	handlers map[string]Handler
	batches  map[string]BatchHandler
}

// Option tunes a Runner.
type Option func(*Runner)

// WithBatch sets how many jobs one RunDue claims (default DefaultBatch).
func WithBatch(n int) Option { return func(r *Runner) { r.batch = max(n, 1) } }

// WithBatchGrowth lets a claim grow while there is a backlog: a claim
// that comes back full makes the next one twice its size, up to maxBatch
// jobs, and one that comes back short makes the next one the base size
// again (WithBatch). A runner whose handler pays a fixed cost per batch
// (a read, a write) then spends less per job when work piles up, and
// keeps small batches, each job waiting less for the others of its batch,
// when it does not.
func WithBatchGrowth(maxBatch int) Option { return func(r *Runner) { r.maxBatch = maxBatch } }

// WithKinds sets the kinds of job the runner claims (default: all).
func WithKinds(k ports.JobKinds) Option { return func(r *Runner) { r.kinds = k } }

// WithLease sets how long a claimed job stays invisible to other runners
// (default DefaultLease). A handler should finish well within it.
func WithLease(d time.Duration) Option { return func(r *Runner) { r.lease = d } }

// WithConcurrency runs up to n handlers of a batch at once (default 1:
// one after the other, in claim order).
func WithConcurrency(n int) Option { return func(r *Runner) { r.SetConcurrency(n) } }

// SetConcurrency is WithConcurrency on a runner already built (the
// process's job loop raises it so handlers waiting on a group commit
// share it); batches claimed after the call use it.
func (r *Runner) SetConcurrency(n int) { r.concurrency.Store(int64(max(n, 1))) }

// WithBackoff sets the first retry delay and the cap (defaults
// DefaultBackoffBase and DefaultBackoffCap).
func WithBackoff(base, maxDelay time.Duration) Option {
	return func(r *Runner) { r.base, r.cap = base, maxDelay }
}

// NewRunner returns a runner on queue (Store.Read().Jobs()), telling time
// by clock. A nil log logs to slog.Default().
func NewRunner(queue ports.JobQueue, clock ports.Clock, log *slog.Logger, opts ...Option) *Runner {
	if log == nil {
		log = slog.Default()
	}
	r := &Runner{
		queue: queue, clock: clock, log: log,
		batch: DefaultBatch, lease: DefaultLease,
		base: DefaultBackoffBase, cap: DefaultBackoffCap,
		handlers: map[string]Handler{}, batches: map[string]BatchHandler{},
	}
	r.concurrency.Store(1)
	for _, o := range opts {
		o(r)
	}
	r.maxBatch = max(r.maxBatch, r.batch)
	r.claim.Store(int64(r.batch))
	return r
}

// nextClaim is the size of the claim after one of size asked that came
// back with got jobs (see WithBatchGrowth).
func (r *Runner) nextClaim(asked, got int) int {
	if got < asked {
		return r.batch
	}
	return min(asked*2, r.maxBatch)
}

// Handle registers the handler of a job kind, replacing any earlier one.
// Register handlers before the runner loop starts.
func (r *Runner) Handle(kind string, h Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[kind] = h
}

// BatchResult is one job's outcome in a batch: Err as a Handler's error
// (nil: done), Removed when the handler removed the job with its work (as
// Completed does for a Handler).
type BatchResult struct {
	Err     error
	Removed bool
}

// BatchHandler runs the jobs of one kind that a claim took, together (so
// it can read and record them in one step each); its results are in the
// jobs' order.
type BatchHandler func(ctx context.Context, js []ports.Job) []BatchResult

// HandleBatch registers the batch handler of a job kind: the jobs of the
// kind that one claim takes run in one call of h. Done jobs that h did not
// remove are completed in one step.
func (r *Runner) HandleBatch(kind string, h BatchHandler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches[kind] = h
}

func (r *Runner) batchHandler(kind string) (BatchHandler, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	h, ok := r.batches[kind]
	return h, ok
}

func (r *Runner) handler(kind string) (Handler, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	h, ok := r.handlers[kind]
	return h, ok
}

// Backoff is the delay before the next try of a job that failed its
// attempt-th attempt (1-based): base·2^(attempt-1), at most the cap.
func (r *Runner) Backoff(attempt int) time.Duration {
	d := r.base
	for i := 1; i < attempt; i++ {
		if d >= r.cap/2 {
			return r.cap
		}
		d *= 2
	}
	return min(d, r.cap)
}

// RunDue claims one batch of due jobs and runs them; ran counts the jobs
// whose handler was invoked (succeeded or not). err reports a failed claim
// or failed bookkeeping (Complete/Retry): a job whose bookkeeping failed is
// run again after its lease. Call it until it runs nothing to drain what
// is due.
func (r *Runner) RunDue(ctx context.Context) (ran int, err error) {
	now := r.clock.Now()
	size := int(r.claim.Load())
	claimed, err := r.queue.Claim(ctx, now, size, r.lease, r.kinds)
	if err != nil {
		return 0, fmt.Errorf("jobs: claim: %w", err)
	}
	r.claim.Store(int64(r.nextClaim(size, len(claimed))))
	if len(claimed) == 0 {
		return 0, nil
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, r.concurrency.Load())
	)
	var single []ports.Job
	batched := map[string][]ports.Job{}
	for _, j := range claimed {
		if _, ok := r.batchHandler(j.Kind); ok {
			batched[j.Kind] = append(batched[j.Kind], j)
		} else {
			single = append(single, j)
		}
	}
	for kind, js := range batched {
		h, _ := r.batchHandler(kind)
		ran += len(js)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.runBatch(ctx, h, js); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	for _, j := range single {
		sem <- struct{}{}
		// Jobs not started when ctx ends stay leased and run after the
		// lease, on this instance or another.
		if ctx.Err() != nil {
			<-sem
			break
		}
		ran++
		wg.Add(1)
		go func(j ports.Job) {
			defer func() { <-sem; wg.Done() }()
			if err := r.run(ctx, j); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(j)
	}
	wg.Wait()
	return ran, errors.Join(errs...)
}

// RunAll calls RunDue until nothing is due (at most maxRounds times, a
// bound against handlers that keep scheduling work due at once) and
// returns how many jobs ran. Tests drive the queue with it after moving the
// fake clock.
func (r *Runner) RunAll(ctx context.Context, maxRounds int) (int, error) {
	total := 0
	for range maxRounds {
		n, err := r.RunDue(ctx)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
	return total, nil
}

// retryAt is a handler's "not done: try again at".
type retryAt struct {
	at  time.Time
	err error
}

func (e *retryAt) Error() string { return e.err.Error() }
func (e *retryAt) Unwrap() error { return e.err }

// RetryAt is the error a handler returns to have its job run again at at,
// instead of at the runner's backoff (a handler with its own schedule).
func RetryAt(at time.Time, err error) error { return &retryAt{at: at, err: err} }

// IsRetryAt reports whether err asks for a run at a given time (RetryAt),
// and when.
func IsRetryAt(err error) (time.Time, bool) {
	var r *retryAt
	if errors.As(err, &r) {
		return r.at, true
	}
	return time.Time{}, false
}

// completedKey carries the flag Completed sets in a handler's context.
type completedKey struct{}

// Completed tells the runner that the running handler removed its own job,
// atomically with its work (ports.Records.CompletedJobs in the ledger post
// that finishes it), so the runner does not Complete it again when the
// handler returns nil. It saves the queue a write per job; a handler that
// calls it and then returns an error still gets its job retried (a retry
// of a job already removed only logs). Outside a runner it does nothing.
func Completed(ctx context.Context) {
	if f, ok := ctx.Value(completedKey{}).(*atomic.Bool); ok {
		f.Store(true)
	}
}

// Tracked is ctx carrying the flag Completed sets, and its reader: the
// runner runs each Handler with it, and a batch handler that runs a
// Handler for one of its jobs does the same (its BatchResult.Removed).
func Tracked(ctx context.Context) (context.Context, func() bool) {
	var removed atomic.Bool
	return context.WithValue(ctx, completedKey{}, &removed), removed.Load
}

// run runs one claimed job and records its outcome in the queue.
func (r *Runner) run(ctx context.Context, j ports.Job) error {
	h, ok := r.handler(j.Kind)
	var herr error
	tracked, removed := Tracked(ctx)
	if !ok {
		herr = fmt.Errorf("no handler for job kind %q", j.Kind)
	} else {
		herr = r.call(tracked, func(ctx context.Context) error { return h(ctx, j) })
	}
	if herr == nil && removed() {
		return nil
	}
	return r.record(ctx, j, herr, ok)
}

// runBatch runs a batch handler and records its jobs' outcomes: the done
// ones it did not remove completed in one step, the others one by one.
func (r *Runner) runBatch(ctx context.Context, h BatchHandler, js []ports.Job) error {
	var res []BatchResult
	herr := r.call(ctx, func(ctx context.Context) error {
		res = h(ctx, js)
		if len(res) != len(js) {
			return fmt.Errorf("batch handler of %s gave %d results for %d jobs", js[0].Kind, len(res), len(js))
		}
		return nil
	})
	if herr != nil {
		res = make([]BatchResult, len(js))
		for i := range res {
			res[i].Err = herr
		}
	}
	var done []string
	var errs []error
	for i, j := range js {
		switch {
		case res[i].Err == nil && !res[i].Removed:
			done = append(done, j.ID)
		case res[i].Err != nil:
			if err := r.record(ctx, j, res[i].Err, true); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(done) > 0 {
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := r.queue.CompleteAll(bctx, done); err != nil {
			r.log.Warn("jobs ran but could not be completed; they will run again", "kind", js[0].Kind, "count", len(done), "err", err)
			errs = append(errs, fmt.Errorf("jobs: complete %d %s jobs: %w", len(done), js[0].Kind, err))
		}
	}
	return errors.Join(errs...)
}

// record records the outcome herr of job j in the queue: done (nil) or
// to retry; known is false when no handler took its kind.
func (r *Runner) record(ctx context.Context, j ports.Job, herr error, known bool) error {
	log := r.log.With("job", j.ID, "kind", j.Kind, "attempt", j.Attempts)
	// Bookkeeping outlives a shutdown that cancelled the handler, so the
	// job's state is recorded rather than left to its lease.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if herr == nil {
		if err := r.queue.Complete(bctx, j.ID); err != nil {
			log.Warn("job ran but could not be completed; it will run again", "err", err)
			return fmt.Errorf("jobs: complete %s: %w", j.ID, err)
		}
		log.Debug("job done")
		return nil
	}
	attempt := max(j.Attempts, 1)
	delay := r.Backoff(attempt)
	runAt := r.clock.Now().Add(delay)
	lvl := slog.LevelWarn
	if !known || delay >= r.cap {
		lvl = slog.LevelError
	}
	var later *retryAt
	if errors.As(herr, &later) {
		// The handler keeps its own schedule (webhook deliveries).
		runAt, delay, lvl = later.at, later.at.Sub(r.clock.Now()), slog.LevelDebug
	}
	log.Log(ctx, lvl, "job failed; retrying", "err", herr, "retry_at", runAt, "delay", delay.String())
	if err := r.queue.Retry(bctx, j.ID, runAt, herr.Error()); err != nil {
		log.Error("job failed and could not be rescheduled; it will run again after its lease", "err", err)
		return fmt.Errorf("jobs: retry %s: %w", j.ID, err)
	}
	return nil
}

// call runs h, turning a panic into an error so one bad job cannot stop
// the loop, and bounding it by the lease (a handler still running when its
// lease ends could run twice at once).
func (r *Runner) call(ctx context.Context, h func(context.Context) error) (err error) {
	ctx, cancel := context.WithTimeout(ctx, r.lease)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return h(ctx)
}
