package memory

import (
	"context"
	"sync"
	"time"

	"github.com/corridorpay/corridor/ports"
)

// FailureCounter is the in-memory ports.FailureCounter, timed by the clock.
type FailureCounter struct {
	clock ports.Clock
	mu    sync.Mutex
	// m holds each key's count and the end of its window.
	m    map[string]cacheEntry[int64]
	adds int
}

var _ ports.FailureCounter = (*FailureCounter)(nil)

// NewFailureCounter returns an empty counter timed by clock.
func NewFailureCounter(clock ports.Clock) *FailureCounter {
	return &FailureCounter{clock: clock, m: map[string]cacheEntry[int64]{}}
}

// Failures returns each key's count in its current window.
func (c *FailureCounter) Failures(_ context.Context, keys ...string) ([]ports.FailureCount, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	out := make([]ports.FailureCount, len(keys))
	for i, k := range keys {
		if w, ok := c.m[k]; ok && now.Before(w.expires) {
			out[i] = ports.FailureCount{N: w.v, ResetIn: w.expires.Sub(now)}
		}
	}
	return out, nil
}

// AddFailure counts one failure for each key.
func (c *FailureCounter) AddFailure(_ context.Context, window time.Duration, keys ...string) ([]ports.FailureCount, error) {
	if window <= 0 {
		return nil, errCacheTTL
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	sweepNowAndThen(c.m, now, &c.adds)
	out := make([]ports.FailureCount, len(keys))
	for i, k := range keys {
		w, ok := c.m[k]
		if !ok || !now.Before(w.expires) {
			w = cacheEntry[int64]{expires: now.Add(window)}
		}
		w.v++
		c.m[k] = w
		out[i] = ports.FailureCount{N: w.v, ResetIn: w.expires.Sub(now)}
	}
	return out, nil
}
