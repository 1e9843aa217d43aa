package ports

import (
	"context"
	"time"
)

// FailureCounter counts failures per key in fixed windows: a key's window
// starts at its first failure and lasts the window given then; when it
// ends the count starts again from zero. The authentication throttle keeps
// failed attempts per API token id and per client address in it (Redis
// across instances, memory in one process).
type FailureCounter interface {
	// Failures returns each key's count in its current window (zero when
	// it has none), in the order of keys.
	Failures(ctx context.Context, keys ...string) ([]FailureCount, error)
	// AddFailure counts one failure for each key, starting a window of
	// length window for a key that has none, and returns the counts after.
	AddFailure(ctx context.Context, window time.Duration, keys ...string) ([]FailureCount, error)
}

// FailureCount is one key's failures and how long until its window ends.
type FailureCount struct {
	N       int64
	ResetIn time.Duration
}
