// Package cachetest holds the contract suites for ports.IdempotencyStore,
// ports.ResponseCache and ports.SingleUse. Run them against every
// implementation (memory, PostgreSQL, Redis).
package cachetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// Advance moves the implementation's time forward by d: a fake clock's
// Advance for memory twins; for Redis, shortening the TTL of every key the
// test wrote by d (expiring those that reach zero).
type Advance func(d time.Duration)

// t0 has nanoseconds and a zone on purpose: stores keep times in UTC to the
// microsecond.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("UTC-5", -5*3600))

func norm(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func normRecord(r ports.IdempotencyRecord) ports.IdempotencyRecord {
	r.LockedUntil, r.CreatedAt, r.ExpiresAt = norm(r.LockedUntil), norm(r.CreatedAt), norm(r.ExpiresAt)
	return r
}

// claim is a fresh claim made at now with a 30 s lease.
func claim(scope string, now time.Time) ports.IdempotencyRecord {
	return ports.IdempotencyRecord{
		Scope:       scope,
		Key:         "key-" + uuid.NewString(),
		RequestHash: "hash-1",
		Owner:       "attempt-" + uuid.NewString(),
		LockedUntil: now.Add(30 * time.Second),
		CreatedAt:   now,
		ExpiresAt:   now.Add(24 * time.Hour),
	}
}

func newScope() string { return "tok_" + uuid.NewString()[:8] }

// ---- idempotency store ----

// RunIdempotency runs the ports.IdempotencyStore contract; each subtest
// gets its own store.
func RunIdempotency(t *testing.T, newStore func(t *testing.T) ports.IdempotencyStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s ports.IdempotencyStore)
	}{
		{"NewKeyIsOwned", idemNewKey},
		{"InProgressIsNotOwned", idemInProgress},
		{"LeaseTakeover", idemTakeover},
		{"CompletedReplays", idemCompleted},
		{"CompleteErrors", idemCompleteErrors},
		{"Release", idemRelease},
		{"ScopesIsolate", idemScopes},
		{"Purge", idemPurge},
		{"Copies", idemCopies},
		{"ConcurrentBeginOneOwner", idemConcurrentBegin},
		{"ConcurrentTakeoverOneOwner", idemConcurrentTakeover},
		{"RenewExtendsOwnClaim", idemRenew},
		{"RenewAfterTakeoverFails", idemRenewAfterTakeover},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

func idemNewKey(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	rec := claim(newScope(), t0)
	got, owned, err := s.Begin(ctx, rec, t0)
	require.NoError(t, err)
	assert.True(t, owned)
	assert.Equal(t, normRecord(rec), got)
}

func idemInProgress(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	rec := claim(newScope(), t0)
	_, owned, err := s.Begin(ctx, rec, t0)
	require.NoError(t, err)
	require.True(t, owned)

	again := rec
	again.RequestHash = "hash-2"
	again.LockedUntil = t0.Add(time.Hour)
	for _, now := range []time.Time{t0, t0.Add(29 * time.Second), rec.LockedUntil.Add(-time.Microsecond)} {
		got, owned, err := s.Begin(ctx, again, now)
		require.NoError(t, err)
		assert.False(t, owned, "lease held at %v", now)
		assert.Equal(t, normRecord(rec), got, "the stored claim, unchanged")
	}
}

func idemTakeover(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	rec := claim(newScope(), t0)
	_, owned, err := s.Begin(ctx, rec, t0)
	require.NoError(t, err)
	require.True(t, owned)

	// At LockedUntil the lease has passed.
	now := rec.LockedUntil
	next := rec
	next.RequestHash = "hash-2"
	next.LockedUntil = now.Add(30 * time.Second)
	next.CreatedAt = now
	next.ExpiresAt = now.Add(24 * time.Hour)
	got, owned, err := s.Begin(ctx, next, now)
	require.NoError(t, err)
	require.True(t, owned, "a passed lease is taken over")
	assert.Equal(t, "hash-2", got.RequestHash)
	assert.Equal(t, norm(next.LockedUntil), got.LockedUntil)
	assert.Equal(t, norm(next.ExpiresAt), got.ExpiresAt)
	assert.False(t, got.Completed)

	// The new holder's lease holds.
	third := next
	third.RequestHash = "hash-3"
	got2, owned, err := s.Begin(ctx, third, now.Add(time.Second))
	require.NoError(t, err)
	assert.False(t, owned)
	assert.Equal(t, got, got2)

	// And the new holder completes it.
	done := got
	done.StatusCode, done.Body = 201, []byte(`{"ok":true}`)
	require.NoError(t, s.Complete(ctx, done))
	got3, owned, err := s.Begin(ctx, third, now.Add(time.Hour))
	require.NoError(t, err)
	assert.False(t, owned)
	assert.True(t, got3.Completed)
	assert.Equal(t, "hash-2", got3.RequestHash)
}

func idemCompleted(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		header map[string]string
		body   []byte
	}{
		{"json", map[string]string{"Content-Type": "application/json", "Location": "/customers/1"}, []byte(`{"id":"Customer:1"}`)},
		{"binary", map[string]string{"Content-Type": "application/octet-stream"}, []byte{0, 1, 2, 0xfe, 0xff}},
		{"empty", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := claim(newScope(), t0)
			_, owned, err := s.Begin(ctx, rec, t0)
			require.NoError(t, err)
			require.True(t, owned)

			done := rec
			done.StatusCode = 201
			done.Header = tc.header
			done.Body = tc.body
			done.ExpiresAt = t0.Add(48 * time.Hour)
			require.NoError(t, s.Complete(ctx, done))

			want := normRecord(done)
			want.Completed = true
			for _, now := range []time.Time{t0, t0.Add(time.Hour), t0.Add(47 * time.Hour)} {
				other := rec
				other.RequestHash = "hash-2"
				got, owned, err := s.Begin(ctx, other, now)
				require.NoError(t, err)
				assert.False(t, owned, "a completed key is never owned again")
				assert.Equal(t, want, got)
			}
		})
	}
}

func idemCompleteErrors(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	err := s.Complete(ctx, claim(newScope(), t0))
	require.ErrorIs(t, err, ports.ErrNotFound)

	rec := claim(newScope(), t0)
	_, _, err = s.Begin(ctx, rec, t0)
	require.NoError(t, err)
	done := rec
	done.StatusCode, done.Body = 200, []byte("first")
	require.NoError(t, s.Complete(ctx, done))
	second := done
	second.Body = []byte("second")
	require.ErrorIs(t, s.Complete(ctx, second), ports.ErrConflict)

	got, _, err := s.Begin(ctx, rec, t0)
	require.NoError(t, err)
	assert.Equal(t, []byte("first"), got.Body, "the first response stays")
}

func idemRelease(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	rec := claim(newScope(), t0)
	_, owned, err := s.Begin(ctx, rec, t0)
	require.NoError(t, err)
	require.True(t, owned)
	require.NoError(t, s.Release(ctx, rec.Scope, rec.Key, rec.Owner))

	retry := rec
	retry.RequestHash = "hash-2"
	got, owned, err := s.Begin(ctx, retry, t0.Add(time.Second))
	require.NoError(t, err)
	assert.True(t, owned, "a released key is claimed afresh")
	assert.Equal(t, "hash-2", got.RequestHash)

	// Releasing a completed key keeps it.
	done := got
	done.StatusCode = 200
	require.NoError(t, s.Complete(ctx, done))
	require.NoError(t, s.Release(ctx, rec.Scope, rec.Key, rec.Owner))
	got, owned, err = s.Begin(ctx, retry, t0.Add(time.Minute))
	require.NoError(t, err)
	assert.False(t, owned)
	assert.True(t, got.Completed)

	// Releasing an unknown key is fine.
	require.NoError(t, s.Release(ctx, rec.Scope, "absent-"+uuid.NewString(), rec.Owner))
}

func idemScopes(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	a := claim(newScope(), t0)
	b := a
	b.Scope = newScope()
	b.RequestHash = "hash-b"
	_, owned, err := s.Begin(ctx, a, t0)
	require.NoError(t, err)
	require.True(t, owned)
	got, owned, err := s.Begin(ctx, b, t0)
	require.NoError(t, err)
	assert.True(t, owned, "the same key in another scope is another key")
	assert.Equal(t, "hash-b", got.RequestHash)

	done := a
	done.StatusCode = 200
	require.NoError(t, s.Complete(ctx, done))
	got, owned, err = s.Begin(ctx, b, t0)
	require.NoError(t, err)
	assert.False(t, owned)
	assert.False(t, got.Completed, "completing one scope's key leaves the other's")
	require.NoError(t, s.Release(ctx, b.Scope, b.Key, b.Owner))
	got, _, err = s.Begin(ctx, a, t0)
	require.NoError(t, err)
	assert.True(t, got.Completed, "releasing one scope's key leaves the other's")
}

func idemPurge(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	scope := newScope()
	now := t0.Add(100 * time.Hour)
	var expired, kept []ports.IdempotencyRecord
	for i, exp := range []time.Duration{-time.Hour, -time.Microsecond, 0, time.Hour, -2 * time.Hour} {
		rec := claim(scope, t0)
		rec.ExpiresAt = now.Add(exp)
		_, owned, err := s.Begin(ctx, rec, t0)
		require.NoError(t, err)
		require.True(t, owned)
		if i%2 == 0 {
			done := rec
			done.StatusCode = 200
			require.NoError(t, s.Complete(ctx, done))
		}
		if exp < 0 {
			expired = append(expired, rec)
		} else {
			kept = append(kept, rec)
		}
	}
	n, err := s.Purge(ctx, now)
	require.NoError(t, err)
	assert.Equal(t, len(expired), n)
	n, err = s.Purge(ctx, now)
	require.NoError(t, err)
	assert.Zero(t, n, "a second purge finds nothing")

	for _, rec := range expired {
		fresh := rec
		fresh.RequestHash = "fresh"
		got, owned, err := s.Begin(ctx, fresh, t0)
		require.NoError(t, err)
		assert.True(t, owned, "a purged key is new again")
		assert.Equal(t, "fresh", got.RequestHash)
	}
	for _, rec := range kept {
		fresh := rec
		fresh.RequestHash = "fresh"
		got, owned, err := s.Begin(ctx, fresh, t0)
		require.NoError(t, err)
		assert.False(t, owned, "an unexpired key stays")
		assert.Equal(t, "hash-1", got.RequestHash)
	}
}

func idemCopies(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	rec := claim(newScope(), t0)
	_, _, err := s.Begin(ctx, rec, t0)
	require.NoError(t, err)
	done := rec
	done.StatusCode = 200
	done.Header = map[string]string{"Content-Type": "application/json"}
	done.Body = []byte("body")
	require.NoError(t, s.Complete(ctx, done))
	done.Header["Content-Type"] = "text/plain"
	done.Body[0] = 'X'

	got, _, err := s.Begin(ctx, rec, t0)
	require.NoError(t, err)
	assert.Equal(t, "application/json", got.Header["Content-Type"])
	assert.Equal(t, []byte("body"), got.Body)
	got.Header["Content-Type"] = "text/plain"
	got.Body[0] = 'Y'

	got, _, err = s.Begin(ctx, rec, t0)
	require.NoError(t, err)
	assert.Equal(t, "application/json", got.Header["Content-Type"])
	assert.Equal(t, []byte("body"), got.Body)
}

// concurrently runs fn n times at once and counts the true results.
func concurrently(t *testing.T, n int, fn func(i int) (bool, error)) int {
	t.Helper()
	var wins atomic.Int32
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			won, err := fn(i)
			errs[i] = err
			if won {
				wins.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return int(wins.Load())
}

func idemConcurrentBegin(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	scope := newScope()
	for round := range 5 {
		base := claim(scope, t0)
		owners := concurrently(t, 12, func(i int) (bool, error) {
			rec := base
			rec.RequestHash = fmt.Sprintf("hash-%d", i)
			_, owned, err := s.Begin(ctx, rec, t0)
			return owned, err
		})
		assert.Equal(t, 1, owners, "round %d", round)
	}
}

func idemConcurrentTakeover(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	scope := newScope()
	for round := range 5 {
		base := claim(scope, t0)
		_, owned, err := s.Begin(ctx, base, t0)
		require.NoError(t, err)
		require.True(t, owned)
		later := base.LockedUntil.Add(time.Second)
		owners := concurrently(t, 12, func(i int) (bool, error) {
			rec := base
			rec.RequestHash = fmt.Sprintf("hash-%d", i)
			rec.LockedUntil = later.Add(30 * time.Second)
			_, owned, err := s.Begin(ctx, rec, later)
			return owned, err
		})
		assert.Equal(t, 1, owners, "round %d", round)
	}
}

// ---- response cache ----

// RunResponseCache runs the ports.ResponseCache contract; newCache returns
// a fresh cache and the hook that moves its time forward.
func RunResponseCache(t *testing.T, newCache func(t *testing.T) (ports.ResponseCache, Advance)) {
	runParallel(t, newCache, []subtest[ports.ResponseCache]{
		{"MissThenHit", rcMissThenHit},
		{"KeysIsolate", rcKeysIsolate},
		{"Overwrite", rcOverwrite},
		{"TTL", rcTTL},
		{"BadTTL", rcBadTTL},
		{"Copies", rcCopies},
	})
}

// subtest is one named check of an implementation S.
type subtest[S any] struct {
	name string
	fn   func(t *testing.T, s S, advance Advance)
}

// runParallel runs each subtest in parallel on a fresh implementation from
// newS.
func runParallel[S any](t *testing.T, newS func(t *testing.T) (S, Advance), tests []subtest[S]) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, advance := newS(t)
			tc.fn(t, s, advance)
		})
	}
}

func completed(scope, key string) ports.IdempotencyRecord {
	return ports.IdempotencyRecord{
		Scope: scope, Key: key, RequestHash: "hash-" + key, Completed: true, StatusCode: 201,
		Header:      map[string]string{"Content-Type": "application/json", "Location": "/x"},
		Body:        []byte(`{"id":"` + key + `"}` + "\x00\xff"),
		LockedUntil: t0.Add(30 * time.Second), CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour),
	}
}

func rcMissThenHit(t *testing.T, c ports.ResponseCache, _ Advance) {
	ctx := context.Background()
	rec := completed(newScope(), "k1")
	_, ok, err := c.Get(ctx, rec.Scope, rec.Key)
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, c.Put(ctx, rec, time.Minute))
	got, ok, err := c.Get(ctx, rec.Scope, rec.Key)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, normRecord(rec), got)

	bare := ports.IdempotencyRecord{Scope: rec.Scope, Key: "bare", StatusCode: 204}
	require.NoError(t, c.Put(ctx, bare, time.Minute))
	got, ok, err = c.Get(ctx, bare.Scope, bare.Key)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, normRecord(bare), got)
}

func rcKeysIsolate(t *testing.T, c ports.ResponseCache, _ Advance) {
	ctx := context.Background()
	s := newScope()
	// Separators in scope or key cannot make two entries collide.
	recs := []ports.IdempotencyRecord{
		completed(s+":a", "b:c"),
		completed(s+":a:b", "c"),
		completed(s, "a:b:c"),
		completed(s+"x", "k"),
	}
	for i := range recs {
		recs[i].StatusCode = 200 + i
		require.NoError(t, c.Put(ctx, recs[i], time.Minute))
	}
	for _, rec := range recs {
		got, ok, err := c.Get(ctx, rec.Scope, rec.Key)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, normRecord(rec), got)
	}
	_, ok, err := c.Get(ctx, s, "k")
	require.NoError(t, err)
	assert.False(t, ok)
}

func rcOverwrite(t *testing.T, c ports.ResponseCache, _ Advance) {
	ctx := context.Background()
	rec := completed(newScope(), "k")
	require.NoError(t, c.Put(ctx, rec, time.Minute))
	rec2 := rec
	rec2.StatusCode = 409
	rec2.Body = []byte("second")
	require.NoError(t, c.Put(ctx, rec2, time.Minute))
	got, ok, err := c.Get(ctx, rec.Scope, rec.Key)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, normRecord(rec2), got)
}

func rcTTL(t *testing.T, c ports.ResponseCache, advance Advance) {
	ctx := context.Background()
	s := newScope()
	short, long := completed(s, "short"), completed(s, "long")
	require.NoError(t, c.Put(ctx, short, 10*time.Second))
	require.NoError(t, c.Put(ctx, long, time.Minute))
	// 5 s short of the TTL: Redis's real clock runs on between the calls,
	// and a loaded machine took more than the 1 s margin this once had.
	advance(5 * time.Second)
	_, ok, err := c.Get(ctx, s, "short")
	require.NoError(t, err)
	assert.True(t, ok, "before its TTL")
	advance(6 * time.Second)
	_, ok, err = c.Get(ctx, s, "short")
	require.NoError(t, err)
	assert.False(t, ok, "after its TTL")
	_, ok, err = c.Get(ctx, s, "long")
	require.NoError(t, err)
	assert.True(t, ok, "another entry's TTL runs on")

	// A new Put restarts the TTL.
	require.NoError(t, c.Put(ctx, long, 10*time.Second))
	advance(55 * time.Second)
	_, ok, err = c.Get(ctx, s, "long")
	require.NoError(t, err)
	assert.False(t, ok)
}

func rcBadTTL(t *testing.T, c ports.ResponseCache, _ Advance) {
	ctx := context.Background()
	rec := completed(newScope(), "k")
	assert.Error(t, c.Put(ctx, rec, 0))
	assert.Error(t, c.Put(ctx, rec, -time.Second))
	_, ok, err := c.Get(ctx, rec.Scope, rec.Key)
	require.NoError(t, err)
	assert.False(t, ok)
}

func rcCopies(t *testing.T, c ports.ResponseCache, _ Advance) {
	ctx := context.Background()
	rec := completed(newScope(), "k")
	want := normRecord(completed(rec.Scope, "k"))
	require.NoError(t, c.Put(ctx, rec, time.Minute))
	rec.Header["Content-Type"] = "text/plain"
	rec.Body[0] = 'X'
	got, _, err := c.Get(ctx, rec.Scope, rec.Key)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	got.Header["Content-Type"] = "text/plain"
	got.Body[0] = 'Y'
	got, _, err = c.Get(ctx, rec.Scope, rec.Key)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// ---- single-use values ----

// RunSingleUse runs the ports.SingleUse contract; newSingleUse returns a
// fresh holder and the hook that moves its time forward.
func RunSingleUse(t *testing.T, newSingleUse func(t *testing.T) (ports.SingleUse, Advance)) {
	runParallel(t, newSingleUse, []subtest[ports.SingleUse]{
		{"ConsumeOnce", suConsumeOnce},
		{"Values", suValues},
		{"Overwrite", suOverwrite},
		{"TTL", suTTL},
		{"BadTTL", suBadTTL},
		{"ConcurrentConsumeOneWinner", suConcurrentConsume},
	})
}

func suConsumeOnce(t *testing.T, s ports.SingleUse, _ Advance) {
	ctx := context.Background()
	key := "req:" + uuid.NewString()
	_, ok, err := s.Consume(ctx, key)
	require.NoError(t, err)
	assert.False(t, ok, "absent")
	require.NoError(t, s.Put(ctx, key, []byte("v"), time.Minute))
	v, ok, err := s.Consume(ctx, key)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []byte("v"), v)
	_, ok, err = s.Consume(ctx, key)
	require.NoError(t, err)
	assert.False(t, ok, "consumed")

	// Consumed, it may be put again.
	require.NoError(t, s.Put(ctx, key, []byte("w"), time.Minute))
	v, ok, err = s.Consume(ctx, key)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []byte("w"), v)
}

func suValues(t *testing.T, s ports.SingleUse, _ Advance) {
	ctx := context.Background()
	for name, val := range map[string][]byte{
		"binary": {0, 1, 2, 0x80, 0xfe, 0xff},
		"empty":  {},
		"long":   make([]byte, 64<<10),
	} {
		t.Run(name, func(t *testing.T) {
			key := "challenge:" + uuid.NewString()
			in := append([]byte(nil), val...)
			require.NoError(t, s.Put(ctx, key, in, time.Minute))
			if len(in) > 0 {
				in[0] ^= 0xff // the stored value is a copy
			}
			v, ok, err := s.Consume(ctx, key)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Len(t, v, len(val))
			if len(val) > 0 {
				assert.Equal(t, val, v)
			}
		})
	}
}

func suOverwrite(t *testing.T, s ports.SingleUse, advance Advance) {
	ctx := context.Background()
	key := "otp:" + uuid.NewString()
	require.NoError(t, s.Put(ctx, key, []byte("first"), 10*time.Second))
	require.NoError(t, s.Put(ctx, key, []byte("second"), time.Minute))
	advance(20 * time.Second)
	v, ok, err := s.Consume(ctx, key)
	require.NoError(t, err)
	require.True(t, ok, "the second Put's TTL applies")
	assert.Equal(t, []byte("second"), v)
}

func suTTL(t *testing.T, s ports.SingleUse, advance Advance) {
	ctx := context.Background()
	short, long := "ttl:short:"+uuid.NewString(), "ttl:long:"+uuid.NewString()
	require.NoError(t, s.Put(ctx, short, []byte("s"), 5*time.Second))
	require.NoError(t, s.Put(ctx, long, []byte("l"), time.Minute))
	advance(4 * time.Second)
	require.NoError(t, s.Put(ctx, "ttl:probe:"+uuid.NewString(), []byte("p"), time.Second))
	advance(2 * time.Second)
	_, ok, err := s.Consume(ctx, short)
	require.NoError(t, err)
	assert.False(t, ok, "expired")
	v, ok, err := s.Consume(ctx, long)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []byte("l"), v)
}

func suBadTTL(t *testing.T, s ports.SingleUse, _ Advance) {
	ctx := context.Background()
	key := "bad:" + uuid.NewString()
	assert.Error(t, s.Put(ctx, key, []byte("v"), 0))
	assert.Error(t, s.Put(ctx, key, []byte("v"), -time.Second))
	_, ok, err := s.Consume(ctx, key)
	require.NoError(t, err)
	assert.False(t, ok)
}

func suConcurrentConsume(t *testing.T, s ports.SingleUse, _ Advance) {
	ctx := context.Background()
	for round := range 10 {
		key := "race:" + uuid.NewString()
		require.NoError(t, s.Put(ctx, key, []byte("once"), time.Minute))
		winners := concurrently(t, 12, func(int) (bool, error) {
			v, ok, err := s.Consume(ctx, key)
			if ok && string(v) != "once" {
				return false, fmt.Errorf("consumed %q", v)
			}
			return ok, err
		})
		assert.Equal(t, 1, winners, "round %d", round)
	}
}
