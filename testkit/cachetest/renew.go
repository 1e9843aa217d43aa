package cachetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// stored reads rec's key back without claiming it: a Begin with a hash no
// caller uses, at a time when rec's lease is held.
func stored(t *testing.T, s ports.IdempotencyStore, rec ports.IdempotencyRecord, now time.Time) ports.IdempotencyRecord {
	t.Helper()
	probe := rec
	probe.RequestHash, probe.Owner = "probe", "probe-"+uuid.NewString()
	got, owned, err := s.Begin(context.Background(), probe, now)
	require.NoError(t, err)
	require.False(t, owned, "the probe must not claim the key")
	return got
}

func idemRenew(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	rec := claim(newScope(), t0) // lease to t0+30s
	_, owned, err := s.Begin(ctx, rec, t0)
	require.NoError(t, err)
	require.True(t, owned)

	// The owner moves its lease on; a later Begin still finds it held.
	until := t0.Add(60 * time.Second)
	ok, err := s.Renew(ctx, rec.Scope, rec.Key, rec.Owner, until)
	require.NoError(t, err)
	assert.True(t, ok)
	got := stored(t, s, rec, t0.Add(45*time.Second))
	assert.Equal(t, norm(until), got.LockedUntil)
	assert.Equal(t, rec.Owner, got.Owner)
	assert.Equal(t, "hash-1", got.RequestHash)

	// Another owner, or an unknown key, renews nothing.
	ok, err = s.Renew(ctx, rec.Scope, rec.Key, "attempt-other", t0.Add(time.Hour))
	require.NoError(t, err)
	assert.False(t, ok)
	ok, err = s.Renew(ctx, rec.Scope, "absent-"+uuid.NewString(), rec.Owner, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, norm(until), stored(t, s, rec, t0.Add(45*time.Second)).LockedUntil)

	// A lapsed lease nobody took over is still the owner's to renew.
	late := until.Add(5 * time.Second)
	ok, err = s.Renew(ctx, rec.Scope, rec.Key, rec.Owner, late.Add(10*time.Second))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, norm(late.Add(10*time.Second)), stored(t, s, rec, late).LockedUntil)

	// A completed key is not renewed.
	done := rec
	done.StatusCode, done.Body = 201, []byte(`{"ok":true}`)
	require.NoError(t, s.Complete(ctx, done))
	ok, err = s.Renew(ctx, rec.Scope, rec.Key, rec.Owner, t0.Add(2*time.Hour))
	require.NoError(t, err)
	assert.False(t, ok)
	got = stored(t, s, rec, t0)
	assert.True(t, got.Completed)
	assert.Equal(t, norm(late.Add(10*time.Second)), got.LockedUntil)
}

// idemRenewAfterTakeover: an attempt that stalled past its lease and was
// taken over can neither renew nor release the new owner's claim.
func idemRenewAfterTakeover(t *testing.T, s ports.IdempotencyStore) {
	ctx := context.Background()
	stale := claim(newScope(), t0)
	_, owned, err := s.Begin(ctx, stale, t0)
	require.NoError(t, err)
	require.True(t, owned)

	now := stale.LockedUntil.Add(time.Second)
	taker := stale
	taker.Owner = "attempt-" + uuid.NewString()
	taker.LockedUntil = now.Add(10 * time.Second)
	got, owned, err := s.Begin(ctx, taker, now)
	require.NoError(t, err)
	require.True(t, owned)
	assert.Equal(t, taker.Owner, got.Owner, "a takeover names its owner")

	ok, err := s.Renew(ctx, stale.Scope, stale.Key, stale.Owner, now.Add(time.Hour))
	require.NoError(t, err)
	assert.False(t, ok, "the stale attempt cannot steal the claim back")
	require.NoError(t, s.Release(ctx, stale.Scope, stale.Key, stale.Owner))
	got = stored(t, s, taker, now.Add(time.Second))
	assert.Equal(t, taker.Owner, got.Owner)
	assert.Equal(t, norm(taker.LockedUntil), got.LockedUntil, "nor move or drop its lease")

	ok, err = s.Renew(ctx, taker.Scope, taker.Key, taker.Owner, now.Add(20*time.Second))
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, s.Release(ctx, taker.Scope, taker.Key, taker.Owner))
	fresh := taker
	fresh.Owner = "attempt-" + uuid.NewString()
	_, owned, err = s.Begin(ctx, fresh, now.Add(time.Second))
	require.NoError(t, err)
	assert.True(t, owned, "the owner's release frees the key")
}
