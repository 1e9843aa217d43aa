package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/corridorpay/corridor/ports"
)

// Enqueue schedules a job of kind with payload encoded as JSON, due at
// runAt. key de-duplicates (enqueuing a key already pending is a no-op);
// empty means none. Pass tx.Jobs() to enqueue atomically with a unit of
// work.
func Enqueue[T any](ctx context.Context, q ports.JobQueue, kind, key string, runAt time.Time, payload T) error {
	b, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("jobs: encode %s payload: %w", kind, err)
	}
	if err := q.Enqueue(ctx, ports.Job{Kind: kind, Key: key, Payload: b, RunAt: runAt}); err != nil {
		return fmt.Errorf("jobs: enqueue %s: %w", kind, err)
	}
	return nil
}

// Decode reads a job's JSON payload.
func Decode[T any](j ports.Job) (T, error) {
	var v T
	if err := json.Unmarshal(j.Payload, &v); err != nil {
		return v, fmt.Errorf("jobs: decode %s payload of %s: %w", j.Kind, j.ID, err)
	}
	return v, nil
}

// HandleJSON registers a handler that receives the job's payload decoded
// from JSON. A payload that does not decode is an error like any other (the
// job is retried and logged, never dropped).
func HandleJSON[T any](r *Runner, kind string, h func(ctx context.Context, j ports.Job, payload T) error) {
	r.Handle(kind, func(ctx context.Context, j ports.Job) error {
		v, err := Decode[T](j)
		if err != nil {
			return err
		}
		return h(ctx, j, v)
	})
}
