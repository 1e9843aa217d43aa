package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/corridorpay/corridor/ports"
)

// ---- jobs ----

// storeJob is a queued job and its lease: a job is claimable when its RunAt
// has come and its lease (lockedUntil) has ended or was never taken.
type storeJob struct {
	job         ports.Job
	lockedUntil time.Time
}

// storeJobs is the job queue. Inside a unit of work Enqueue, Complete and
// Retry are buffered and applied at commit (dropped on rollback); through
// Read() they apply at once. Claim always applies at once to the committed
// queue (a lease taken by a unit of work that later fails just runs out).
type storeJobs struct{ tx *storeTx }

// Enqueue queues j; a job whose ID or Key is already queued is a no-op.
func (q storeJobs) Enqueue(_ context.Context, j ports.Job) error {
	if j.ID == "" {
		j.ID = "Job:" + uuid.NewString()
	}
	j = storeCopyJob(j)
	if q.tx.w == nil {
		q.tx.s.mu.Lock()
		defer q.tx.s.mu.Unlock()
		storeEnqueueJob(&q.tx.s.state, j)
		return nil
	}
	done, err := q.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if j.Key != "" {
		if _, taken := q.tx.s.state.jobKeys[j.Key]; taken {
			return nil
		}
	}
	if _, exists := q.tx.s.state.jobs[j.ID]; exists {
		return nil
	}
	storeEnqueueJob(&q.tx.w.state, j)
	return nil
}

// storeEnqueueJob adds j to st unless its Key (or ID) is already queued.
func storeEnqueueJob(st *storeState, j ports.Job) {
	if _, exists := st.jobs[j.ID]; exists {
		return
	}
	if j.Key != "" {
		if _, taken := st.jobKeys[j.Key]; taken {
			return
		}
		st.jobKeys[j.Key] = j.ID
	}
	st.jobs[j.ID] = storeJob{job: j}
}

// storeCommitJobs applies a unit of work's enqueues (skipping keys queued
// meanwhile through Read()) and then its completions and retries.
func storeCommitJobs(st, w *storeState, ops []func(*storeState)) {
	ids := make([]string, 0, len(w.jobs))
	for id := range w.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		storeEnqueueJob(st, w.jobs[id].job)
	}
	for _, op := range ops {
		op(st)
	}
}

// Claim leases up to n due jobs, oldest RunAt first, against now.
func (q storeJobs) Claim(_ context.Context, now time.Time, n int, lease time.Duration, kinds ports.JobKinds) ([]ports.Job, error) {
	q.tx.mu.Lock()
	defer q.tx.mu.Unlock()
	if q.tx.done {
		return nil, errStoreTxDone
	}
	if n <= 0 {
		return nil, nil
	}
	now = storeTime(now)
	q.tx.s.mu.Lock()
	defer q.tx.s.mu.Unlock()
	st := &q.tx.s.state
	// The n oldest due jobs, kept sorted as they are found (sorting every
	// due job to take n cost a quarter of the process when deliveries
	// queued up by the thousand).
	older := func(a, b ports.Job) int {
		if c := a.RunAt.Compare(b.RunAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	}
	due := make([]ports.Job, 0, min(n, 64))
	for _, sj := range st.jobs {
		if sj.job.RunAt.After(now) || sj.lockedUntil.After(now) || !kinds.Match(sj.job.Kind) {
			continue
		}
		if len(due) == n && older(sj.job, due[n-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(due, sj.job, older)
		if len(due) == n {
			due = due[:n-1]
		}
		due = slices.Insert(due, i, sj.job)
	}
	until := storeTime(now.Add(lease))
	for i, j := range due {
		j.Attempts++
		st.jobs[j.ID] = storeJob{job: j, lockedUntil: until}
		due[i] = storeCopyJob(j)
	}
	return due, nil
}

// Complete removes a job; ErrNotFound when it is not queued.
func (q storeJobs) Complete(_ context.Context, id string) error {
	return q.apply(id, func(st *storeState) {
		sj, ok := st.jobs[id]
		if !ok {
			return
		}
		delete(st.jobs, id)
		if sj.job.Key != "" && st.jobKeys[sj.job.Key] == id {
			delete(st.jobKeys, sj.job.Key)
		}
	})
}

// CompleteAll removes the jobs of ids still queued.
func (q storeJobs) CompleteAll(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if err := q.Complete(ctx, id); err != nil && !errors.Is(err, ports.ErrNotFound) {
			return err
		}
	}
	return nil
}

// Retry makes a job due again at runAt with lastError, ending its lease.
func (q storeJobs) Retry(_ context.Context, id string, runAt time.Time, lastError string) error {
	runAt = storeTime(runAt)
	return q.apply(id, func(st *storeState) {
		sj, ok := st.jobs[id]
		if !ok {
			return
		}
		sj.job.RunAt = runAt
		sj.job.LastError = lastError
		sj.lockedUntil = time.Time{}
		st.jobs[id] = sj
	})
}

// apply runs op on the committed queue at once (Read()) or at commit (in a
// unit of work), after checking the job is queued.
func (q storeJobs) apply(id string, op func(*storeState)) error {
	if q.tx.w == nil {
		q.tx.s.mu.Lock()
		defer q.tx.s.mu.Unlock()
		if _, ok := q.tx.s.state.jobs[id]; !ok {
			return fmt.Errorf("job %s: %w", id, ports.ErrNotFound)
		}
		op(&q.tx.s.state)
		return nil
	}
	done, err := q.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	_, committed := q.tx.s.state.jobs[id]
	_, buffered := q.tx.w.state.jobs[id]
	if !committed && !buffered {
		return fmt.Errorf("job %s: %w", id, ports.ErrNotFound)
	}
	q.tx.w.jobOps = append(q.tx.w.jobOps, op)
	return nil
}

func storeCopyJob(j ports.Job) ports.Job {
	j.Payload = slices.Clone(j.Payload)
	j.RunAt = storeTime(j.RunAt)
	return j
}

var _ ports.JobBacklogReader = storeJobs{}

// Backlog counts the committed queue by kind, sorted by kind.
func (q storeJobs) Backlog(_ context.Context, now time.Time) ([]ports.JobBacklog, error) {
	now = storeTime(now)
	q.tx.s.mu.Lock()
	defer q.tx.s.mu.Unlock()
	byKind := map[string]*ports.JobBacklog{}
	for _, sj := range q.tx.s.state.jobs {
		b := byKind[sj.job.Kind]
		if b == nil {
			b = &ports.JobBacklog{Kind: sj.job.Kind}
			byKind[sj.job.Kind] = b
		}
		b.Queued++
		if sj.job.RunAt.After(now) {
			continue
		}
		b.Due++
		if !sj.lockedUntil.After(now) && (b.OldestDue.IsZero() || sj.job.RunAt.Before(b.OldestDue)) {
			b.OldestDue = sj.job.RunAt
		}
	}
	out := make([]ports.JobBacklog, 0, len(byKind))
	for _, b := range byKind {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b ports.JobBacklog) int { return cmp.Compare(a.Kind, b.Kind) })
	return out, nil
}
