package ports

import (
	"context"
	"slices"
	"time"
)

// Job is durable background work: "run Kind with Payload at RunAt". Rail
// outcomes that happen later, quote expiries and webhook retries are jobs.
type Job struct {
	ID string
	// Kind names the handler.
	Kind string
	// Key de-duplicates: enqueuing a job whose Key is already pending is a
	// no-op. Empty: no de-duplication.
	Key      string
	Payload  []byte
	RunAt    time.Time
	Attempts int
	// LastError is the error of the last failed attempt.
	LastError string
}

// JobQueue stores jobs. Several workers (in several processes) may claim
// concurrently: a claimed job is invisible to others until its lease ends.
type JobQueue interface {
	// Enqueue schedules j (ID assigned by the queue when empty).
	Enqueue(ctx context.Context, j Job) error
	// Claim leases up to n jobs of kinds due at or before now, oldest
	// RunAt first.
	Claim(ctx context.Context, now time.Time, n int, lease time.Duration, kinds JobKinds) ([]Job, error)
	// Complete removes a finished job.
	Complete(ctx context.Context, id string) error
	// CompleteAll removes finished jobs in one step; ids no longer queued
	// are skipped (a batch handler ends its jobs with its work).
	CompleteAll(ctx context.Context, ids []string) error
	// Retry puts a failed job back for runAt, recording the error.
	Retry(ctx context.Context, id string, runAt time.Time, lastError string) error
}

// JobKinds selects the kinds a claim takes: those in Only when it is
// set, else every kind but those in Except (the zero value: every kind).
// Webhook deliveries run on their own runner, so an endpoint that times
// out never holds the rail jobs' handlers.
type JobKinds struct {
	Only, Except []string
}

// Match reports whether kind is selected.
func (k JobKinds) Match(kind string) bool {
	if len(k.Only) > 0 {
		return slices.Contains(k.Only, kind)
	}
	return !slices.Contains(k.Except, kind)
}

// JobBacklog is one kind's share of the queue, for monitoring.
type JobBacklog struct {
	Kind string
	// Queued counts the kind's jobs; Due those whose RunAt has come.
	Queued, Due int64
	// OldestDue is the RunAt of the oldest due job nobody holds (zero when
	// none): how far behind the workers are.
	OldestDue time.Time
}

// JobBacklogReader reports the queue's backlog by kind (the stores' job
// queues implement it beside JobQueue; metrics read it at scrape time).
type JobBacklogReader interface {
	Backlog(ctx context.Context, now time.Time) ([]JobBacklog, error)
}
