package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/cachetest"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

func TestIdempotencyContract(t *testing.T) {
	cachetest.RunIdempotency(t, func(t *testing.T) ports.IdempotencyStore {
		return postgres.NewIdempotencyStore(pgtest.NewDB(t))
	})
}

// Many concurrent requests over few keys: the grouped claims and responses
// keep the single-row semantics (one owner per key, the others see its
// claim or its response, every owner's response stored once).
func TestIdempotencyGroupedWrites(t *testing.T) {
	s := postgres.NewIdempotencyStore(pgtest.NewDB(t))
	ctx := context.Background()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	const keys, callers = 40, 5
	var mu sync.Mutex
	owners := map[string][]string{} // key -> hashes that owned it
	var wg sync.WaitGroup
	start := make(chan struct{})
	for k := range keys {
		for c := range callers {
			wg.Go(func() {
				<-start
				key, hash := fmt.Sprintf("k-%d", k), fmt.Sprintf("h-%d-%d", k, c)
				rec := ports.IdempotencyRecord{Scope: "tok_group", Key: key, RequestHash: hash,
					LockedUntil: now.Add(time.Minute), CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}
				got, owned, err := s.Begin(ctx, rec, now)
				if !assert.NoError(t, err) {
					return
				}
				if !owned {
					assert.NotEqual(t, hash, got.RequestHash, "a caller that does not own the key sees another's claim")
					return
				}
				mu.Lock()
				owners[key] = append(owners[key], hash)
				mu.Unlock()
				done := rec
				done.Completed, done.StatusCode, done.Body = true, 201, []byte(hash)
				assert.NoError(t, s.Complete(ctx, done))
			})
		}
	}
	close(start)
	wg.Wait()
	require.Len(t, owners, keys)
	for k := range keys {
		key := fmt.Sprintf("k-%d", k)
		require.Len(t, owners[key], 1, "key %s", key)
		got, owned, err := s.Begin(ctx, ports.IdempotencyRecord{Scope: "tok_group", Key: key, RequestHash: "later",
			LockedUntil: now.Add(time.Minute), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}, now)
		require.NoError(t, err)
		assert.False(t, owned)
		assert.True(t, got.Completed)
		assert.Equal(t, owners[key][0], got.RequestHash)
		assert.Equal(t, []byte(owners[key][0]), got.Body, "the owner's response, stored once")
	}
}

// One group holding claims and responses, as concurrent requests queued
// together make it: the new claim and the pending response are written by
// the group's one statement, and each call the statement cannot settle
// (a claim of a stored key, a claim of a key answered in the same group, a
// response for an unknown or a finished key) gets the single-row answer.
func TestIdempotencyGroupOfClaimsAndResponses(t *testing.T) {
	s := postgres.NewIdempotencyStore(pgtest.NewDB(t))
	ctx := context.Background()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	claim := func(key, hash string) ports.IdempotencyRecord {
		return ports.IdempotencyRecord{Scope: "tok_mixed", Key: key, RequestHash: hash, Owner: hash,
			LockedUntil: now.Add(time.Minute), CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}
	}
	response := func(rec ports.IdempotencyRecord, body string) ports.IdempotencyRecord {
		rec.Completed, rec.StatusCode, rec.Body, rec.Header = true, 201, []byte(body), map[string]string{"Location": "/x/" + rec.Key}
		return rec
	}
	for _, key := range []string{"held", "done", "both"} {
		_, owned, err := s.Begin(ctx, claim(key, "first-"+key), now)
		require.NoError(t, err)
		require.True(t, owned)
	}
	require.NoError(t, s.Complete(ctx, response(claim("done", "first-done"), "done body")))

	got := postgres.IdemGroupForTest(ctx, s,
		[]ports.IdempotencyRecord{claim("new", "new-hash"), claim("done", "retry-done"), claim("both", "retry-both")},
		[]ports.IdempotencyRecord{response(claim("held", "first-held"), "held body"), response(claim("both", "first-both"), "both body"),
			response(claim("ghost", "nobody"), "x"), response(claim("done", "first-done"), "again")},
		now)
	require.Len(t, got, 7)

	// Claims: the new key is owned; the stored and the just-answered keys
	// are not, and show their stored responses.
	require.NoError(t, got[0].Err)
	assert.True(t, got[0].Owned)
	assert.Equal(t, "new-hash", got[0].Rec.RequestHash)
	for i, want := range map[int]string{1: "done body", 2: "both body"} {
		require.NoError(t, got[i].Err)
		assert.False(t, got[i].Owned, "claim %d", i)
		assert.True(t, got[i].Rec.Completed, "claim %d", i)
		assert.Equal(t, []byte(want), got[i].Rec.Body, "claim %d", i)
	}
	// Responses: two stored, an unknown key and a finished one refused.
	assert.NoError(t, got[3].Err)
	assert.NoError(t, got[4].Err)
	assert.ErrorIs(t, got[5].Err, ports.ErrNotFound)
	assert.ErrorIs(t, got[6].Err, ports.ErrConflict)

	for key, want := range map[string]string{"held": "held body", "both": "both body", "done": "done body"} {
		rec, owned, err := s.Begin(ctx, claim(key, "later"), now)
		require.NoError(t, err)
		assert.False(t, owned, key)
		assert.True(t, rec.Completed, key)
		assert.Equal(t, []byte(want), rec.Body, key)
		assert.Equal(t, map[string]string{"Location": "/x/" + key}, rec.Header, key)
	}
	rec, owned, err := s.Begin(ctx, claim("new", "later"), now)
	require.NoError(t, err)
	assert.False(t, owned)
	assert.False(t, rec.Completed)
	assert.Equal(t, "new-hash", rec.RequestHash, "the group's claim is held")
}
