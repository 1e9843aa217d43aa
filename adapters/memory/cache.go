package memory

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/corridorpay/corridor/ports"
)

// ---- idempotency store ----

// IdempotencyStore is the in-memory ports.IdempotencyStore.
type IdempotencyStore struct {
	mu   sync.Mutex
	recs map[cacheIdemKey]ports.IdempotencyRecord
}

var _ ports.IdempotencyStore = (*IdempotencyStore)(nil)

type cacheIdemKey struct{ scope, key string }

// NewIdempotencyStore returns an empty store.
func NewIdempotencyStore() *IdempotencyStore {
	return &IdempotencyStore{recs: map[cacheIdemKey]ports.IdempotencyRecord{}}
}

// Begin claims rec.Scope/rec.Key; see ports.IdempotencyStore.
func (s *IdempotencyStore) Begin(_ context.Context, rec ports.IdempotencyRecord, now time.Time) (ports.IdempotencyRecord, bool, error) {
	now = ports.Stored(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := cacheIdemKey{rec.Scope, rec.Key}
	old, ok := s.recs[k]
	switch {
	case !ok:
		rec = cacheCopyRecord(rec)
		s.recs[k] = rec
		return cacheCopyRecord(rec), true, nil
	case old.Completed || old.LockedUntil.After(now):
		return cacheCopyRecord(old), false, nil
	}
	// The unfinished claim's lease has passed: take it over.
	old.RequestHash = rec.RequestHash
	old.Owner = rec.Owner
	old.LockedUntil = ports.Stored(rec.LockedUntil)
	old.ExpiresAt = ports.Stored(rec.ExpiresAt)
	s.recs[k] = old
	return cacheCopyRecord(old), true, nil
}

// Complete stores the response of an owned, unfinished claim.
func (s *IdempotencyStore) Complete(_ context.Context, rec ports.IdempotencyRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := cacheIdemKey{rec.Scope, rec.Key}
	old, ok := s.recs[k]
	if !ok {
		return fmt.Errorf("idempotency key %s/%s: %w", rec.Scope, rec.Key, ports.ErrNotFound)
	}
	if old.Completed {
		return fmt.Errorf("idempotency key %s/%s already completed: %w", rec.Scope, rec.Key, ports.ErrConflict)
	}
	c := cacheCopyRecord(rec)
	old.Completed = true
	old.StatusCode = c.StatusCode
	old.Header = c.Header
	old.Body = c.Body
	if !c.ExpiresAt.IsZero() {
		old.ExpiresAt = c.ExpiresAt
	}
	s.recs[k] = old
	return nil
}

// Renew moves the lease of owner's unfinished claim to until; see
// ports.IdempotencyStore.
func (s *IdempotencyStore) Renew(_ context.Context, scope, key, owner string, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := cacheIdemKey{scope, key}
	old, ok := s.recs[k]
	if !ok || old.Completed || old.Owner != owner {
		return false, nil
	}
	old.LockedUntil = ports.Stored(until)
	s.recs[k] = old
	return true, nil
}

// Release drops owner's unfinished claim; a completed record, or one held
// by another owner, stays.
func (s *IdempotencyStore) Release(_ context.Context, scope, key, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := cacheIdemKey{scope, key}
	if old, ok := s.recs[k]; ok && !old.Completed && old.Owner == owner {
		delete(s.recs, k)
	}
	return nil
}

// Purge forgets records whose ExpiresAt is before now.
func (s *IdempotencyStore) Purge(_ context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now = ports.Stored(now)
	n := 0
	for k, r := range s.recs {
		if r.ExpiresAt.Before(now) {
			delete(s.recs, k)
			n++
		}
	}
	return n, nil
}

func cacheCopyRecord(r ports.IdempotencyRecord) ports.IdempotencyRecord {
	r.Header = maps.Clone(r.Header)
	r.Body = slices.Clone(r.Body)
	r.LockedUntil = ports.Stored(r.LockedUntil)
	r.CreatedAt = ports.Stored(r.CreatedAt)
	r.ExpiresAt = ports.Stored(r.ExpiresAt)
	return r
}

// ---- response cache ----

// errCacheTTL refuses a non-positive TTL, as Redis does.
var errCacheTTL = errors.New("memory cache: ttl must be positive")

// ResponseCache is the in-memory ports.ResponseCache; entries expire
// against the clock.
type ResponseCache struct {
	clock ports.Clock
	mu    sync.Mutex
	recs  map[cacheIdemKey]cacheEntry[ports.IdempotencyRecord]
	puts  int
}

var _ ports.ResponseCache = (*ResponseCache)(nil)

type cacheEntry[V any] struct {
	v       V
	expires time.Time
}

// sweepNowAndThen drops m's expired entries every 1024th write (counted
// in *writes), so entries nobody reads again do not pile up.
func sweepNowAndThen[K comparable, V any](m map[K]cacheEntry[V], now time.Time, writes *int) {
	*writes++
	if *writes%1024 != 0 {
		return
	}
	for k, e := range m {
		if !now.Before(e.expires) {
			delete(m, k)
		}
	}
}

// NewResponseCache returns an empty cache timed by clock.
func NewResponseCache(clock ports.Clock) *ResponseCache {
	return &ResponseCache{clock: clock, recs: map[cacheIdemKey]cacheEntry[ports.IdempotencyRecord]{}}
}

// Get returns the cached record, if present and not expired.
func (c *ResponseCache) Get(_ context.Context, scope, key string) (ports.IdempotencyRecord, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := cacheIdemKey{scope, key}
	e, ok := c.recs[k]
	if !ok {
		return ports.IdempotencyRecord{}, false, nil
	}
	if !c.clock.Now().Before(e.expires) {
		delete(c.recs, k)
		return ports.IdempotencyRecord{}, false, nil
	}
	return cacheCopyRecord(e.v), true, nil
}

// Put caches rec for ttl, replacing any earlier entry.
func (c *ResponseCache) Put(_ context.Context, rec ports.IdempotencyRecord, ttl time.Duration) error {
	if ttl <= 0 {
		return errCacheTTL
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	sweepNowAndThen(c.recs, now, &c.puts)
	c.recs[cacheIdemKey{rec.Scope, rec.Key}] = cacheEntry[ports.IdempotencyRecord]{v: cacheCopyRecord(rec), expires: now.Add(ttl)}
	return nil
}

// ---- single-use values ----

// SingleUse is the in-memory ports.SingleUse; values expire against the
// clock.
type SingleUse struct {
	clock ports.Clock
	mu    sync.Mutex
	vals  map[string]cacheEntry[[]byte]
	puts  int
}

var _ ports.SingleUse = (*SingleUse)(nil)

// NewSingleUse returns an empty holder timed by clock.
func NewSingleUse(clock ports.Clock) *SingleUse {
	return &SingleUse{clock: clock, vals: map[string]cacheEntry[[]byte]{}}
}

// Put stores value under key for ttl, replacing any earlier value.
func (s *SingleUse) Put(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return errCacheTTL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	sweepNowAndThen(s.vals, now, &s.puts)
	s.vals[key] = cacheEntry[[]byte]{v: slices.Clone(value), expires: now.Add(ttl)}
	return nil
}

// Consume returns the value and deletes it; of concurrent callers exactly
// one gets it.
func (s *SingleUse) Consume(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.vals[key]
	if !ok {
		return nil, false, nil
	}
	delete(s.vals, key)
	if !s.clock.Now().Before(e.expires) {
		return nil, false, nil
	}
	return e.v, true, nil
}
