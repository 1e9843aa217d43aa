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
