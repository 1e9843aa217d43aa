package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

var t0 = time.Date(2025, 10, 13, 9, 0, 0, 0, time.UTC)

type fixture struct {
	clock *testkit.FakeClock
	store ports.Store
	queue ports.JobQueue
	logs  *testkit.SyncBuffer
	log   *slog.Logger
}

// backends are the job queues the runner is tested on: the memory store,
// and PostgreSQL (FOR UPDATE SKIP LOCKED; fails when PostgreSQL is down).
var backends = map[string]func(t *testing.T, clock ports.Clock) ports.Store{
	"memory": func(_ *testing.T, clock ports.Clock) ports.Store {
		return memory.NewStore(memory.NewLedger(clock))
	},
	"postgres": func(t *testing.T, _ ports.Clock) ports.Store { return postgres.NewStore(pgtest.NewDB(t)) },
}

// eachBackend runs test on a fresh fixture per backend.
func eachBackend(t *testing.T, test func(t *testing.T, f *fixture)) {
	for name, open := range backends {
		t.Run(name, func(t *testing.T) { test(t, newFixture(t, open)) })
	}
}

func newFixture(t *testing.T, open func(t *testing.T, clock ports.Clock) ports.Store) *fixture {
	clock := testkit.NewFakeClock(t0)
	store := open(t, clock)
	logs := &testkit.SyncBuffer{}
	return &fixture{
		clock: clock, store: store, queue: store.Read().Jobs(), logs: logs,
		log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

func (f *fixture) runner(opts ...jobs.Option) *jobs.Runner {
	return jobs.NewRunner(f.queue, f.clock, f.log, opts...)
}

func (f *fixture) enqueue(t *testing.T, kind, key string, runAt time.Time) {
	t.Helper()
	require.NoError(t, f.queue.Enqueue(context.Background(), ports.Job{Kind: kind, Key: key, RunAt: runAt}))
}

func runDue(t *testing.T, r *jobs.Runner) int {
	t.Helper()
	n, err := r.RunDue(context.Background())
	require.NoError(t, err)
	return n
}

func TestRunDueRunsDueJobsOnceAndCompletesThem(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner()
		var got []string
		r.Handle("note", func(_ context.Context, j ports.Job) error {
			got = append(got, j.Key)
			return nil
		})
		f.enqueue(t, "note", "b", t0)
		f.enqueue(t, "note", "a", t0.Add(-time.Second)) // older: runs first
		f.enqueue(t, "note", "later", t0.Add(time.Minute))

		assert.Equal(t, 2, runDue(t, r))
		assert.Equal(t, []string{"a", "b"}, got, "oldest RunAt first")
		assert.Equal(t, 0, runDue(t, r), "completed jobs are gone; the later one is not due")

		f.clock.Advance(time.Minute - time.Nanosecond)
		assert.Equal(t, 0, runDue(t, r))
		f.clock.Advance(time.Nanosecond)
		assert.Equal(t, 1, runDue(t, r))
		assert.Equal(t, []string{"a", "b", "later"}, got)

		f.clock.Advance(24 * time.Hour)
		assert.Equal(t, 0, runDue(t, r), "nothing runs twice")
	})
}

func TestFailedJobRetriesAtTheBackoffTimeNotBefore(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner(jobs.WithBackoff(time.Second, time.Minute))
		var attempts []int
		var lastErrors []string
		r.Handle("flaky", func(_ context.Context, j ports.Job) error {
			attempts = append(attempts, j.Attempts)
			lastErrors = append(lastErrors, j.LastError)
			if len(attempts) < 4 {
				return fmt.Errorf("rail unreachable (try %d)", len(attempts))
			}
			return nil
		})
		f.enqueue(t, "flaky", "k", t0)

		// Attempt 1 fails at t0: next at t0+1s; attempt 2 at +1s fails: next
		// 2s later; attempt 3 fails: next 4s later; attempt 4 succeeds.
		require.Equal(t, 1, runDue(t, r))
		for i, delay := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			f.clock.Advance(delay - time.Millisecond)
			assert.Equal(t, 0, runDue(t, r), "retry %d ran before its backoff", i+1)
			f.clock.Advance(time.Millisecond)
			assert.Equal(t, 1, runDue(t, r), "retry %d did not run at its backoff", i+1)
		}
		assert.Equal(t, []int{1, 2, 3, 4}, attempts)
		assert.Equal(t, []string{"", "rail unreachable (try 1)", "rail unreachable (try 2)", "rail unreachable (try 3)"}, lastErrors)
		f.clock.Advance(time.Hour)
		assert.Equal(t, 0, runDue(t, r), "done after the successful attempt")
		assert.Contains(t, f.logs.String(), "level=WARN")
		assert.NotContains(t, f.logs.String(), "level=ERROR", "below the cap a failure is a warning")
	})
}

func TestBackoffIsExponentialAndCapped(t *testing.T) {
	r := jobs.NewRunner(nil, testkit.NewFakeClock(t0), nil, jobs.WithBackoff(time.Second, 10*time.Second))
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, d := range want {
		assert.Equal(t, d, r.Backoff(i+1), "attempt %d", i+1)
	}
	assert.Equal(t, 10*time.Second, r.Backoff(1_000_000), "no overflow")

	def := jobs.NewRunner(nil, testkit.NewFakeClock(t0), nil)
	assert.Equal(t, jobs.DefaultBackoffBase, def.Backoff(1))
	assert.Equal(t, jobs.DefaultBackoffCap, def.Backoff(64))
}

func TestAJobThatKeepsFailingIsNeverDropped(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner(jobs.WithBackoff(time.Second, 8*time.Second))
		var runs atomic.Int32
		r.Handle("stuck", func(context.Context, ports.Job) error {
			runs.Add(1)
			return errors.New("ledger unavailable")
		})
		f.enqueue(t, "stuck", "k", t0)
		for i := range 30 {
			require.Equal(t, 1, runDue(t, r), "attempt %d", i+1)
			f.clock.Advance(r.Backoff(i + 1))
		}
		assert.EqualValues(t, 30, runs.Load())
		logs := f.logs.String()
		assert.Contains(t, logs, "level=ERROR", "at the cap every failure is an error")
		assert.Contains(t, logs, "ledger unavailable")

		// Once it works, it completes.
		r.Handle("stuck", func(context.Context, ports.Job) error { return nil })
		f.clock.Advance(time.Minute)
		require.Equal(t, 1, runDue(t, r))
		f.clock.Advance(time.Hour)
		assert.Equal(t, 0, runDue(t, r))
	})
}

func TestUnknownKindIsRetriedLaterAndLoggedAsError(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner(jobs.WithBackoff(time.Second, time.Minute))
		f.enqueue(t, "from.a.newer.version", "k", t0)
		require.Equal(t, 1, runDue(t, r))
		assert.Contains(t, f.logs.String(), "level=ERROR")
		assert.Contains(t, f.logs.String(), `no handler for job kind`)
		assert.Equal(t, 0, runDue(t, r), "not retried at once")

		// A runner that knows the kind picks it up at the retry time.
		var ran bool
		r.Handle("from.a.newer.version", func(context.Context, ports.Job) error { ran = true; return nil })
		f.clock.Advance(time.Second)
		require.Equal(t, 1, runDue(t, r))
		assert.True(t, ran)
	})
}

func TestPanickingHandlerIsRetried(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner(jobs.WithBackoff(time.Second, time.Minute))
		calls := 0
		r.Handle("boom", func(context.Context, ports.Job) error {
			calls++
			if calls == 1 {
				panic("nil map")
			}
			return nil
		})
		f.enqueue(t, "boom", "k", t0)
		require.Equal(t, 1, runDue(t, r))
		assert.Contains(t, f.logs.String(), "handler panicked: nil map")
		f.clock.Advance(time.Second)
		require.Equal(t, 1, runDue(t, r))
		assert.Equal(t, 2, calls)
	})
}

func TestRunDueClaimsOneBatchAndRunAllDrains(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner(jobs.WithBatch(2))
		var ran atomic.Int32
		r.Handle("n", func(context.Context, ports.Job) error { ran.Add(1); return nil })
		for i := range 5 {
			f.enqueue(t, "n", fmt.Sprint(i), t0)
		}
		assert.Equal(t, 2, runDue(t, r))
		n, err := r.RunAll(context.Background(), 100)
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		assert.EqualValues(t, 5, ran.Load())
	})
}

func TestClaimGrowsWithTheBacklogAndShrinksWhenItIsGone(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner(jobs.WithBatch(2), jobs.WithBatchGrowth(8))
		r.Handle("n", func(context.Context, ports.Job) error { return nil })
		for i := range 30 {
			f.enqueue(t, "n", fmt.Sprint(i), t0)
		}
		// Full claims double the next one, up to the cap; a short one
		// (the backlog gone) brings it back to the base size.
		var sizes []int
		for range 6 {
			sizes = append(sizes, runDue(t, r))
		}
		assert.Equal(t, []int{2, 4, 8, 8, 8, 0}, sizes)
		for i := range 3 {
			f.enqueue(t, "n", fmt.Sprint("again-", i), t0)
		}
		assert.Equal(t, 2, runDue(t, r), "the claim after a short one is the base size")
		assert.Equal(t, 1, runDue(t, r))
	})
}

func TestClaimDoesNotGrowWithoutBatchGrowth(t *testing.T) {
	f := newFixture(t, backends["memory"])
	r := f.runner(jobs.WithBatch(2))
	r.Handle("n", func(context.Context, ports.Job) error { return nil })
	for i := range 6 {
		f.enqueue(t, "n", fmt.Sprint(i), t0)
	}
	assert.Equal(t, 2, runDue(t, r))
	assert.Equal(t, 2, runDue(t, r))
	assert.Equal(t, 2, runDue(t, r))
}

func TestRunAllRunsFollowUpsDueAtOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner()
		var steps []string
		// A submit handler schedules the outcome check due now (an instant
		// rail); RunAll runs both without the clock moving.
		jobs.HandleJSON(r, "submit", func(ctx context.Context, j ports.Job, p struct{ Tx string }) error {
			steps = append(steps, "submit "+p.Tx)
			return jobs.Enqueue(ctx, f.queue, "check", "check:"+p.Tx, f.clock.Now(), p)
		})
		jobs.HandleJSON(r, "check", func(_ context.Context, _ ports.Job, p struct{ Tx string }) error {
			steps = append(steps, "check "+p.Tx)
			return nil
		})
		require.NoError(t, jobs.Enqueue(context.Background(), f.queue, "submit", "submit:T1", t0, struct{ Tx string }{"T1"}))
		n, err := r.RunAll(context.Background(), 10)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		assert.Equal(t, []string{"submit T1", "check T1"}, steps)
	})
}

func TestRunAllIsBounded(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner(jobs.WithBatch(1))
		i := 0
		r.Handle("forever", func(ctx context.Context, j ports.Job) error {
			i++
			return f.queue.Enqueue(ctx, ports.Job{Kind: "forever", Key: fmt.Sprint("k", i), RunAt: f.clock.Now()})
		})
		f.enqueue(t, "forever", "k0", t0)
		n, err := r.RunAll(context.Background(), 7)
		require.NoError(t, err)
		assert.Equal(t, 7, n)
	})
}

func TestTypedPayloads(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner(jobs.WithBackoff(time.Second, time.Minute))
		type submit struct {
			TransactionID string
			Amount        int64
		}
		var got []submit
		jobs.HandleJSON(r, "transfer.submit", func(_ context.Context, _ ports.Job, p submit) error {
			got = append(got, p)
			return nil
		})
		ctx := context.Background()
		p := submit{"Transaction:1", 12550}
		require.NoError(t, jobs.Enqueue(ctx, f.queue, "transfer.submit", "Transaction:1", t0, p))
		require.NoError(t, jobs.Enqueue(ctx, f.queue, "transfer.submit", "Transaction:1", t0, p), "a pending key is a no-op")
		require.Equal(t, 1, runDue(t, r))
		assert.Equal(t, []submit{p}, got)

		// Enqueued in a unit of work: only a commit makes it visible.
		require.Error(t, f.store.InTx(ctx, func(tx ports.Tx) error {
			require.NoError(t, jobs.Enqueue(ctx, tx.Jobs(), "transfer.submit", "Transaction:2", t0, submit{"Transaction:2", 1}))
			return errors.New("rolled back")
		}))
		assert.Equal(t, 0, runDue(t, r))
		require.NoError(t, f.store.InTx(ctx, func(tx ports.Tx) error {
			return jobs.Enqueue(ctx, tx.Jobs(), "transfer.submit", "Transaction:3", t0, submit{"Transaction:3", 3})
		}))
		require.Equal(t, 1, runDue(t, r))
		assert.Equal(t, "Transaction:3", got[1].TransactionID)

		// A payload that does not decode is retried, not dropped.
		require.NoError(t, f.queue.Enqueue(ctx, ports.Job{Kind: "transfer.submit", Key: "bad", Payload: []byte("{"), RunAt: t0}))
		require.Equal(t, 1, runDue(t, r))
		assert.Contains(t, f.logs.String(), "decode transfer.submit payload")
		f.clock.Advance(time.Second)
		require.Equal(t, 1, runDue(t, r), "still queued")
	})
}

func TestEnqueueRefusesAnUnencodablePayload(t *testing.T) {
	f := newFixture(t, backends["memory"])
	err := jobs.Enqueue(context.Background(), f.queue, "x", "", t0, func() {})
	assert.ErrorContains(t, err, "encode x payload")
}

// Two runners on one queue: each job runs exactly once and never on both at
// the same time (the memory queue's claim leases arbitrate).
func TestTwoRunnersNeverRunAJobTwice(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		const n = 300
		var (
			mu       sync.Mutex
			inFlight = map[string]int{}
			runs     = map[string]int{}
			overlap  atomic.Bool
		)
		handler := func(_ context.Context, j ports.Job) error {
			mu.Lock()
			inFlight[j.ID]++
			runs[j.ID]++
			if inFlight[j.ID] > 1 {
				overlap.Store(true)
			}
			mu.Unlock()
			time.Sleep(50 * time.Microsecond) // widen the window for an overlap
			mu.Lock()
			inFlight[j.ID]--
			mu.Unlock()
			return nil
		}
		a := f.runner(jobs.WithBatch(7), jobs.WithConcurrency(4))
		b := f.runner(jobs.WithBatch(5), jobs.WithConcurrency(4))
		a.Handle("work", handler)
		b.Handle("work", handler)
		for i := range n {
			f.enqueue(t, "work", fmt.Sprint("job-", i), t0)
		}
		var wg sync.WaitGroup
		var ranA, ranB int
		for _, rr := range []struct {
			r   *jobs.Runner
			ran *int
		}{{a, &ranA}, {b, &ranB}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					k, err := rr.r.RunDue(context.Background())
					assert.NoError(t, err)
					*rr.ran += k
					if k == 0 {
						return
					}
				}
			}()
		}
		wg.Wait()
		assert.False(t, overlap.Load(), "a job ran on two runners at once")
		assert.Len(t, runs, n)
		for id, c := range runs {
			assert.Equal(t, 1, c, id)
		}
		assert.Equal(t, n, ranA+ranB)
		assert.Positive(t, ranA)
		assert.Positive(t, ranB)
	})
}

// A runner that dies holding a job (its claim taken, never completed) only
// delays the job by the lease: another runner runs it then.
func TestACrashedRunnersJobRunsAfterItsLease(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		lease := 30 * time.Second
		f.enqueue(t, "work", "k", t0)
		claimed, err := f.queue.Claim(context.Background(), t0, 10, lease, ports.JobKinds{}) // the runner that crashed
		require.NoError(t, err)
		require.Len(t, claimed, 1)

		r := f.runner(jobs.WithLease(lease))
		var attempts []int
		r.Handle("work", func(_ context.Context, j ports.Job) error { attempts = append(attempts, j.Attempts); return nil })
		assert.Equal(t, 0, runDue(t, r), "still leased")
		f.clock.Advance(lease - time.Millisecond)
		assert.Equal(t, 0, runDue(t, r), "still leased")
		f.clock.Advance(time.Millisecond)
		assert.Equal(t, 1, runDue(t, r))
		assert.Equal(t, []int{2}, attempts, "the lost attempt counts")
	})
}

func TestCancelledRunLeavesUnstartedJobsLeased(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner(jobs.WithLease(time.Minute))
		ctx, cancel := context.WithCancel(context.Background())
		var ran []string
		r.Handle("work", func(_ context.Context, j ports.Job) error {
			ran = append(ran, j.Key)
			cancel() // shutdown arrives while the first job runs
			return nil
		})
		f.enqueue(t, "work", "a", t0)
		f.enqueue(t, "work", "b", t0.Add(time.Millisecond))
		f.clock.Advance(time.Second)
		n, err := r.RunDue(ctx)
		require.NoError(t, err, "the running job's bookkeeping completes despite the cancel")
		assert.Equal(t, 1, n)
		assert.Equal(t, []string{"a"}, ran)

		r2 := f.runner()
		r2.Handle("work", func(_ context.Context, j ports.Job) error { ran = append(ran, j.Key); return nil })
		assert.Equal(t, 0, runDue(t, r2), "b is leased by the stopped runner")
		f.clock.Advance(time.Minute)
		assert.Equal(t, 1, runDue(t, r2))
		assert.Equal(t, []string{"a", "b"}, ran)
	})
}

func TestClaimErrorIsReported(t *testing.T) {
	f := newFixture(t, backends["memory"])
	r := f.runner()
	ctx := context.Background()
	// A queue bound to a finished unit of work refuses to claim.
	var done ports.JobQueue
	require.NoError(t, f.store.InTx(ctx, func(tx ports.Tx) error { done = tx.Jobs(); return nil }))
	_, err := jobs.NewRunner(done, f.clock, f.log).RunDue(ctx)
	assert.ErrorContains(t, err, "jobs: claim")
	assert.Equal(t, 0, runDue(t, r), "the store's own queue still works")
}

// A handler that removed its own job (with its work) and says so is not
// completed again: a second Complete would fail with ErrNotFound and
// RunDue would report it. One that says so and then fails is retried.
func TestHandlerCompletesItsOwnJob(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		r := f.runner()
		var ran atomic.Int32
		r.Handle("self", func(ctx context.Context, j ports.Job) error {
			ran.Add(1)
			if err := f.queue.Complete(ctx, j.ID); err != nil {
				return err
			}
			jobs.Completed(ctx)
			return nil
		})
		failing := 0
		r.Handle("self-then-fail", func(ctx context.Context, _ ports.Job) error {
			failing++
			if failing == 1 {
				jobs.Completed(ctx)
				return errors.New("not done")
			}
			return nil // the runner completes it
		})
		f.enqueue(t, "self", "self:1", t0)
		f.enqueue(t, "self-then-fail", "fail:1", t0)
		assert.Equal(t, 2, runDue(t, r))
		assert.Equal(t, int32(1), ran.Load())
		assert.Equal(t, 0, runDue(t, r), "nothing due: the first is gone, the second waits for its retry")
		f.clock.Advance(r.Backoff(1))
		assert.Equal(t, 1, runDue(t, r), "the failed one runs again")
		assert.Equal(t, 2, failing)
		f.clock.Advance(time.Hour)
		assert.Equal(t, 0, runDue(t, r), "both are gone")
		jobs.Completed(ctx) // outside a runner: nothing happens
	})
}

// A batch handler takes all of a claim's jobs of its kind in one call: its
// done jobs are completed in one step (unless it removed them itself),
// the failed ones retried one by one; other kinds still run one by one,
// and a panicking batch handler retries its whole batch.
func TestHandleBatch(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		r := f.runner()
		for _, k := range []string{"a", "b", "c", "d"} {
			f.enqueue(t, "batch", k, t0)
		}
		f.enqueue(t, "single", "s", t0)
		var calls [][]string
		r.HandleBatch("batch", func(ctx context.Context, js []ports.Job) []jobs.BatchResult {
			var keys []string
			res := make([]jobs.BatchResult, len(js))
			for i, j := range js {
				keys = append(keys, j.Key)
				switch j.Key {
				case "b": // removed with the handler's work
					require.NoError(t, f.queue.Complete(ctx, j.ID))
					res[i].Removed = true
				case "c":
					if j.Attempts > 1 {
						break
					}
					res[i].Err = jobs.RetryAt(f.clock.Now().Add(time.Hour), errors.New("later"))
				}
			}
			calls = append(calls, keys)
			return res
		})
		var singles int
		r.Handle("single", func(context.Context, ports.Job) error { singles++; return nil })
		assert.Equal(t, 5, runDue(t, r))
		require.Len(t, calls, 1, "one call for the batch")
		assert.ElementsMatch(t, []string{"a", "b", "c", "d"}, calls[0])
		assert.Equal(t, 1, singles)
		assert.Zero(t, runDue(t, r), "a, b, d are done; c waits for its time")
		f.clock.Advance(time.Hour)
		assert.Equal(t, 1, runDue(t, r))
		assert.Equal(t, []string{"c"}, calls[1])

		f.enqueue(t, "batch", "p", f.clock.Now())
		r.HandleBatch("batch", func(context.Context, []ports.Job) []jobs.BatchResult { panic("boom") })
		assert.Equal(t, 1, runDue(t, r))
		f.clock.Advance(time.Hour)
		r.HandleBatch("batch", func(_ context.Context, js []ports.Job) []jobs.BatchResult {
			return make([]jobs.BatchResult, len(js))
		})
		assert.Equal(t, 1, runDue(t, r), "the panicked batch runs again")
		assert.Zero(t, runDue(t, r))
	})
}
