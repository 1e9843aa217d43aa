// Package jobtest is the contract suite for ports.JobQueue as the stores
// give it: Tx.Jobs() enqueues in the unit of work, Store.Read().Jobs()
// claims, completes and retries outside one. Run it against every Store.
package jobtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// NewStore makes a fresh, empty store for one test.
type NewStore func(t *testing.T) ports.Store

// Run runs the suite; each subtest gets its own store and runs in parallel
// with the others.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s ports.Store)
	}{
		{"EnqueueVisibleAfterCommit", testEnqueueVisibleAfterCommit},
		{"EnqueueRollsBack", testEnqueueRollsBack},
		{"RoundTrip", testRoundTrip},
		{"DeduplicateByKey", testDeduplicateByKey},
		{"ClaimOrder", testClaimOrder},
		{"ClaimOrderAcrossKinds", testClaimOrderAcrossKinds},
		{"LeaseHidesClaimedJob", testLeaseHidesClaimedJob},
		{"Retry", testRetry},
		{"Complete", testComplete},
		{"CompleteAll", testCompleteAll},
		{"CompleteAndRetryInTx", testCompleteAndRetryInTx},
		{"ConcurrentClaimers", testConcurrentClaimers},
		{"Backlog", testBacklog},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

// t0 has nanoseconds and a non-UTC zone on purpose: stores keep times in
// UTC to the microsecond.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("UTC+2", 2*3600))

func norm(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

var errBoom = errors.New("boom")

const lease = 30 * time.Second

// job is a due-at-runAt job with a unique key.
func job(kind string, runAt time.Time) ports.Job {
	return ports.Job{ID: "Job:" + uuid.NewString(), Kind: kind, Key: kind + ":" + uuid.NewString(), Payload: []byte(`{"n":1}`), RunAt: runAt}
}

func enqueue(t *testing.T, s ports.Store, jobs ...ports.Job) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error {
		for _, j := range jobs {
			if err := tx.Jobs().Enqueue(ctx, j); err != nil {
				return fmt.Errorf("enqueue %s: %w", j.ID, err)
			}
		}
		return nil
	}))
}

func claim(t *testing.T, s ports.Store, now time.Time, n int) []ports.Job {
	t.Helper()
	got, err := s.Read().Jobs().Claim(context.Background(), now, n, lease, ports.JobKinds{})
	require.NoError(t, err)
	return got
}

func jobIDs(js []ports.Job) []string {
	out := make([]string, 0, len(js))
	for _, j := range js {
		out = append(out, j.ID)
	}
	return out
}

func testEnqueueVisibleAfterCommit(t *testing.T, s ports.Store) {
	ctx := context.Background()
	j := job("transfer.submit", t0)
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Jobs().Enqueue(ctx, j); err != nil {
			return err
		}
		assert.Empty(t, claim(t, s, t0.Add(time.Hour), 10), "an uncommitted job is not claimable")
		return nil
	}))
	got := claim(t, s, t0.Add(time.Hour), 10)
	require.Len(t, got, 1)
	assert.Equal(t, j.ID, got[0].ID)
}

func testEnqueueRollsBack(t *testing.T, s ports.Store) {
	ctx := context.Background()
	j := job("transfer.submit", t0)
	err := s.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Jobs().Enqueue(ctx, j); err != nil {
			return err
		}
		return errBoom
	})
	require.ErrorIs(t, err, errBoom)
	assert.Empty(t, claim(t, s, t0.Add(time.Hour), 10))
	// The key is free again.
	enqueue(t, s, j)
	assert.Len(t, claim(t, s, t0.Add(time.Hour), 10), 1)
}

func testRoundTrip(t *testing.T, s ports.Store) {
	ctx := context.Background()
	j := job("webhook.deliver", t0)
	j.Payload = []byte{0, 1, 2, 255}
	j.Attempts = 3
	j.LastError = "earlier failure"
	noID := ports.Job{Kind: "quote.expire", RunAt: t0.Add(time.Second)}
	enqueue(t, s, j, noID)
	// Enqueue through Read() commits on its own.
	viaRead := ports.Job{Kind: "reap", RunAt: t0.Add(2 * time.Second)}
	require.NoError(t, s.Read().Jobs().Enqueue(ctx, viaRead))

	got := claim(t, s, t0.Add(time.Minute), 10)
	require.Len(t, got, 3)
	want := j
	want.RunAt = norm(j.RunAt)
	want.Attempts = 4 // claiming counts an attempt
	assert.Equal(t, want, got[0])
	assert.Equal(t, "quote.expire", got[1].Kind)
	assert.NotEmpty(t, got[1].ID, "the queue assigns an id")
	assert.Equal(t, norm(noID.RunAt), got[1].RunAt)
	assert.Equal(t, 1, got[1].Attempts)
	assert.Empty(t, got[1].Payload)
	assert.Equal(t, "reap", got[2].Kind)
	assert.NotEqual(t, got[1].ID, got[2].ID)

	// The payload handed back is a copy.
	got[0].Payload[0] = 9
	require.NoError(t, s.Read().Jobs().Retry(ctx, j.ID, t0, ""))
	again := claim(t, s, t0.Add(time.Minute), 1)
	require.Len(t, again, 1)
	assert.Equal(t, []byte{0, 1, 2, 255}, again[0].Payload)
}

func testDeduplicateByKey(t *testing.T, s ports.Store) {
	ctx := context.Background()
	a := job("transfer.submit", t0)
	dup := job("transfer.submit", t0.Add(-time.Hour)) // same key, other id and time
	dup.Key = a.Key
	enqueue(t, s, a)
	enqueue(t, s, dup)                                    // in another unit of work
	require.NoError(t, s.Read().Jobs().Enqueue(ctx, dup)) // and outside one
	inTwice := job("transfer.submit", t0)
	inTwice2 := job("transfer.submit", t0)
	inTwice2.Key = inTwice.Key
	enqueue(t, s, inTwice, inTwice2) // twice in one unit of work
	noKey1, noKey2 := job("poll", t0), job("poll", t0)
	noKey1.Key, noKey2.Key = "", ""
	enqueue(t, s, noKey1, noKey2) // empty keys never collide
	// Re-enqueuing the same id is a no-op too.
	enqueue(t, s, noKey1)

	got := claim(t, s, t0.Add(time.Hour), 100)
	assert.ElementsMatch(t, []string{a.ID, inTwice.ID, noKey1.ID, noKey2.ID}, jobIDs(got))

	// A claimed job still holds its key until it completes.
	enqueue(t, s, dup)
	// (claims within the lease of the first claim)
	assert.Empty(t, claim(t, s, t0.Add(time.Hour+time.Second), 100), "the key of a claimed job is taken")
	require.NoError(t, s.Read().Jobs().Complete(ctx, a.ID))
	enqueue(t, s, dup)
	got = claim(t, s, t0.Add(time.Hour+2*time.Second), 100)
	require.Len(t, got, 1, "once completed, the key is free")
	assert.Equal(t, dup.ID, got[0].ID)
}

func testClaimOrder(t *testing.T, s ports.Store) {
	j3, j1, j2 := job("k", t0.Add(3*time.Second)), job("k", t0.Add(time.Second)), job("k", t0.Add(2*time.Second))
	tie := []ports.Job{job("k", t0.Add(4*time.Second)), job("k", t0.Add(4*time.Second))}
	future := job("k", t0.Add(20*time.Second)) // due while the others are still leased
	enqueue(t, s, j3, future, tie[1], j1, tie[0], j2)
	slices.SortFunc(tie, func(a, b ports.Job) int { return cmp.Compare(a.ID, b.ID) })

	now := t0.Add(4 * time.Second)
	assert.Empty(t, claim(t, s, t0, 10), "nothing is due yet")
	assert.Empty(t, claim(t, s, now, 0), "n = 0 claims nothing")
	got := claim(t, s, now, 2)
	assert.Equal(t, []string{j1.ID, j2.ID}, jobIDs(got), "oldest run_at first, at most n")
	got = claim(t, s, now, 10)
	assert.Equal(t, []string{j3.ID, tie[0].ID, tie[1].ID}, jobIDs(got), "due at or before now; ties by id")
	assert.Empty(t, claim(t, s, now, 10))
	got = claim(t, s, t0.Add(20*time.Second), 10)
	assert.Equal(t, []string{future.ID}, jobIDs(got), "due exactly at now")
}

// Jobs of several kinds are claimed in one RunAt order; a kinds filter
// takes only its own, in that order, and leaves the rest due.
func testClaimOrderAcrossKinds(t *testing.T, s ports.Store) {
	a1, b1, a2, b2, c1 := job("a", t0.Add(time.Second)), job("b", t0.Add(2*time.Second)), job("a", t0.Add(3*time.Second)),
		job("b", t0.Add(4*time.Second)), job("c", t0.Add(5*time.Second))
	enqueue(t, s, c1, b2, a2, b1, a1)
	now := t0.Add(10 * time.Second)
	kinds := func(k ports.JobKinds, n int) []string {
		t.Helper()
		got, err := s.Read().Jobs().Claim(context.Background(), now, n, lease, k)
		require.NoError(t, err)
		return jobIDs(got)
	}
	assert.Equal(t, []string{b1.ID, b2.ID}, kinds(ports.JobKinds{Only: []string{"b"}}, 10))
	assert.Equal(t, []string{a1.ID, a2.ID}, kinds(ports.JobKinds{Except: []string{"c"}}, 10), "b's are leased")
	assert.Equal(t, []string{c1.ID}, kinds(ports.JobKinds{}, 10))

	// With the leases run out, every kind in one order, n at a time.
	now = now.Add(lease)
	assert.Equal(t, []string{a1.ID, b1.ID, a2.ID}, kinds(ports.JobKinds{}, 3))
	assert.Equal(t, []string{b2.ID, c1.ID}, kinds(ports.JobKinds{Only: []string{"a", "b", "c"}}, 3))
}

func testLeaseHidesClaimedJob(t *testing.T, s ports.Store) {
	j := job("k", t0)
	enqueue(t, s, j)
	got := claim(t, s, t0, 10)
	require.Len(t, got, 1)
	assert.Equal(t, 1, got[0].Attempts)
	assert.Empty(t, claim(t, s, t0.Add(lease-time.Millisecond), 10), "leased")
	got = claim(t, s, t0.Add(lease), 10)
	require.Len(t, got, 1, "the lease ran out: another worker takes the job over")
	assert.Equal(t, j.ID, got[0].ID)
	assert.Equal(t, 2, got[0].Attempts)
	assert.Empty(t, claim(t, s, t0.Add(lease+time.Second), 10), "leased again")
}

func testRetry(t *testing.T, s ports.Store) {
	ctx := context.Background()
	j := job("k", t0)
	enqueue(t, s, j)
	require.Len(t, claim(t, s, t0, 10), 1)
	require.NoError(t, s.Read().Jobs().Retry(ctx, j.ID, t0.Add(time.Minute), "rail timeout"))
	assert.Empty(t, claim(t, s, t0.Add(time.Minute-time.Millisecond), 10), "not due before runAt")
	got := claim(t, s, t0.Add(time.Minute), 10)
	require.Len(t, got, 1, "due at runAt even though the old lease would still run")
	assert.Equal(t, "rail timeout", got[0].LastError)
	assert.Equal(t, 2, got[0].Attempts)
	assert.Equal(t, norm(t0.Add(time.Minute)), got[0].RunAt)

	// Retrying to an earlier time works too (the lease is cleared).
	require.NoError(t, s.Read().Jobs().Retry(ctx, j.ID, t0, "again"))
	got = claim(t, s, t0.Add(time.Minute), 10)
	require.Len(t, got, 1)
	assert.Equal(t, "again", got[0].LastError)

	require.ErrorIs(t, s.Read().Jobs().Retry(ctx, "Job:"+uuid.NewString(), t0, "x"), ports.ErrNotFound)
}

func testComplete(t *testing.T, s ports.Store) {
	ctx := context.Background()
	a, b := job("k", t0), job("k", t0)
	enqueue(t, s, a, b)
	require.Len(t, claim(t, s, t0, 10), 2)
	require.NoError(t, s.Read().Jobs().Complete(ctx, a.ID))
	require.ErrorIs(t, s.Read().Jobs().Complete(ctx, a.ID), ports.ErrNotFound)
	got := claim(t, s, t0.Add(time.Hour), 10)
	assert.Equal(t, []string{b.ID}, jobIDs(got), "a completed job is gone for good")
}

// testCompleteAll: a batch ends its jobs in one step, in or out of a unit
// of work; ids no longer queued are skipped.
func testCompleteAll(t *testing.T, s ports.Store) {
	ctx := context.Background()
	a, b, c, d := job("k", t0), job("k", t0), job("k", t0), job("k", t0)
	enqueue(t, s, a, b, c, d)
	require.Len(t, claim(t, s, t0, 10), 4)
	require.NoError(t, s.Read().Jobs().CompleteAll(ctx, []string{a.ID, "Job:" + uuid.NewString()}))
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error { return tx.Jobs().CompleteAll(ctx, []string{b.ID, a.ID}) }))
	err := s.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Jobs().CompleteAll(ctx, []string{c.ID}); err != nil {
			return err
		}
		return errors.New("rolled back")
	})
	require.Error(t, err)
	require.NoError(t, s.Read().Jobs().CompleteAll(ctx, nil))
	got := claim(t, s, t0.Add(time.Hour), 10)
	assert.ElementsMatch(t, []string{c.ID, d.ID}, jobIDs(got), "completed jobs are gone, a rolled-back completion is not")
}

// testCompleteAndRetryInTx: a worker may complete (or retry) a job in the
// same unit of work as the job's effects; a rollback undoes it.
func testCompleteAndRetryInTx(t *testing.T, s ports.Store) {
	ctx := context.Background()
	a, b := job("k", t0), job("k", t0)
	enqueue(t, s, a, b)
	require.Len(t, claim(t, s, t0, 10), 2)

	err := s.InTx(ctx, func(tx ports.Tx) error {
		require.NoError(t, tx.Jobs().Complete(ctx, a.ID))
		require.NoError(t, tx.Jobs().Retry(ctx, b.ID, t0, "x"))
		return errBoom
	})
	require.ErrorIs(t, err, errBoom)
	assert.Empty(t, claim(t, s, t0.Add(time.Second), 10), "both still leased")
	got := claim(t, s, t0.Add(lease), 10)
	assert.ElementsMatch(t, []string{a.ID, b.ID}, jobIDs(got), "neither completed nor retried")

	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Jobs().Complete(ctx, a.ID); err != nil {
			return err
		}
		if err := tx.Jobs().Retry(ctx, b.ID, t0, "later"); err != nil {
			return err
		}
		// A follow-up job enqueued with the completion.
		return tx.Jobs().Enqueue(ctx, job("next", t0))
	}))
	got = claim(t, s, t0.Add(lease+time.Second), 10)
	require.Len(t, got, 2)
	kinds := []string{got[0].Kind, got[1].Kind}
	assert.ElementsMatch(t, []string{"k", "next"}, kinds)
	for _, j := range got {
		if j.Kind == "k" {
			assert.Equal(t, b.ID, j.ID)
			assert.Equal(t, "later", j.LastError)
		}
	}
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Jobs().Complete(ctx, a.ID) })
	require.ErrorIs(t, err, ports.ErrNotFound)
}

// testConcurrentClaimers: 4 workers claim (in small batches) and complete
// 800 jobs; each job is handed out exactly once.
func testConcurrentClaimers(t *testing.T, s ports.Store) {
	ctx := context.Background()
	const workers, perWorker = 4, 200
	var all []ports.Job
	for i := range workers * perWorker {
		all = append(all, job("k", t0.Add(time.Duration(i%50)*time.Millisecond)))
	}
	enqueue(t, s, all...)

	now := t0.Add(time.Second)
	var mu sync.Mutex
	claimedBy := map[string]int{}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	start := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			<-start
			for {
				got, err := s.Read().Jobs().Claim(ctx, now, 7, time.Hour, ports.JobKinds{})
				if err != nil {
					errs[w] = err
					return
				}
				if len(got) == 0 {
					return
				}
				for _, j := range got {
					mu.Lock()
					claimedBy[j.ID]++
					mu.Unlock()
					if err := s.Read().Jobs().Complete(ctx, j.ID); err != nil {
						errs[w] = err
						return
					}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, claimedBy, len(all), "every job claimed")
	for id, n := range claimedBy {
		require.Equal(t, 1, n, "job %s claimed %d times", id, n)
	}
	assert.Empty(t, claim(t, s, now.Add(2*time.Hour), 10), "all completed")
}

// The backlog counts queued and due jobs by kind, and the oldest due job
// nobody holds.
func testBacklog(t *testing.T, s ports.Store) {
	ctx := context.Background()
	r, ok := s.Read().Jobs().(ports.JobBacklogReader)
	require.True(t, ok, "the store's job queue reports its backlog")
	got, err := r.Backlog(ctx, t0)
	require.NoError(t, err)
	assert.Empty(t, got)
	a1, a2 := job("alpha", t0.Add(-time.Minute)), job("alpha", t0.Add(-30*time.Second))
	a3, b1 := job("alpha", t0.Add(time.Hour)), job("beta", t0.Add(-2*time.Minute))
	enqueue(t, s, a1, a2, a3, b1)
	// The oldest beta job is claimed (held by a worker): not "oldest due".
	require.Len(t, claim(t, s, t0, 1), 1)
	got, err = r.Backlog(ctx, t0)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, ports.JobBacklog{Kind: "alpha", Queued: 3, Due: 2, OldestDue: norm(a1.RunAt)}, got[0])
	assert.Equal(t, ports.JobBacklog{Kind: "beta", Queued: 1, Due: 1}, got[1])
}
