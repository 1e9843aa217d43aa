// Package lookuptest is the contract suite of ports.LookupRepo, run
// against every store (memory and PostgreSQL).
package lookuptest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// Run runs the suite; newStore returns an empty, migrated store.
func Run(t *testing.T, newStore func(t *testing.T) ports.Store) {
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, newStore(t)) })
	t.Run("PlatformIsolation", func(t *testing.T) { isolation(t, newStore(t)) })
	t.Run("Rollback", func(t *testing.T) { rollback(t, newStore(t)) })
	t.Run("DuplicateID", func(t *testing.T) { duplicate(t, newStore(t)) })
}

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 123456789, time.UTC)

func platform(t *testing.T, s ports.Store) string {
	t.Helper()
	ctx := context.Background()
	p := ports.Platform{ID: "Platform:" + uuid.NewString(), Name: "p", CreatedAt: t0, UpdatedAt: t0}
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error { return tx.Platforms().Create(ctx, p) }))
	return p.ID
}

func lookup(platformID string) ports.Lookup {
	return ports.Lookup{
		ID: "Lookup:" + uuid.NewString(), PlatformID: platformID, AccountID: "ExternalAccount:" + uuid.NewString(),
		CustomerID: "Customer:" + uuid.NewString(), SenderUmaAddress: "$ana@example.test", SendingCurrency: "USD",
		Currencies: []ports.LookupCurrency{
			{Currency: "MXN", EstimatedRate: "18.2", Min: 100, Max: 100_000_000},
			{Currency: "EUR", EstimatedRate: "0.92", Min: 1, Max: 5_000_000},
		},
		RequiredPayerData: []ports.PayerDataField{{Name: "FULL_NAME", Mandatory: true}, {Name: "BIRTH_DATE", Mandatory: false}},
		CreatedAt:         t0,
	}
}

func create(t *testing.T, s ports.Store, l ports.Lookup) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error { return tx.Lookups().Create(ctx, l) }))
}

func roundTrip(t *testing.T, s ports.Store) {
	ctx := context.Background()
	l := lookup(platform(t, s))
	create(t, s, l)
	got, err := s.Read().Lookups().Get(ctx, l.PlatformID, l.ID)
	require.NoError(t, err)
	want := l
	want.CreatedAt = t0.Truncate(time.Microsecond)
	assert.Equal(t, want, got)
	assert.Equal(t, time.UTC, got.CreatedAt.Location())

	// A lookup without a customer or payer fields.
	bare := lookup(l.PlatformID)
	bare.CustomerID, bare.RequiredPayerData = "", nil
	create(t, s, bare)
	got, err = s.Read().Lookups().Get(ctx, bare.PlatformID, bare.ID)
	require.NoError(t, err)
	assert.Empty(t, got.CustomerID)
	assert.Empty(t, got.RequiredPayerData)
	assert.Len(t, got.Currencies, 2)

	// A UMA receiver lookup: an address instead of an account.
	uma := lookup(l.PlatformID)
	uma.AccountID, uma.ReceiverUmaAddress = "", "$success.usd@sandbox.local"
	create(t, s, uma)
	got, err = s.Read().Lookups().Get(ctx, uma.PlatformID, uma.ID)
	require.NoError(t, err)
	want = uma
	want.CreatedAt = t0.Truncate(time.Microsecond)
	assert.Equal(t, want, got)

	// Reads inside the unit of work see its own write.
	inner := lookup(l.PlatformID)
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Lookups().Create(ctx, inner); err != nil {
			return err
		}
		_, err := tx.Lookups().Get(ctx, inner.PlatformID, inner.ID)
		return err
	}))
}

func isolation(t *testing.T, s ports.Store) {
	ctx := context.Background()
	l := lookup(platform(t, s))
	create(t, s, l)
	other := platform(t, s)
	_, err := s.Read().Lookups().Get(ctx, other, l.ID)
	assert.True(t, errors.Is(err, ports.ErrNotFound), "%v", err)
	_, err = s.Read().Lookups().Get(ctx, l.PlatformID, "Lookup:"+uuid.NewString())
	assert.True(t, errors.Is(err, ports.ErrNotFound), "%v", err)
}

func rollback(t *testing.T, s ports.Store) {
	ctx := context.Background()
	l := lookup(platform(t, s))
	boom := errors.New("boom")
	err := s.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Lookups().Create(ctx, l); err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	_, err = s.Read().Lookups().Get(ctx, l.PlatformID, l.ID)
	assert.True(t, errors.Is(err, ports.ErrNotFound), "%v", err)
	// Writes outside a unit of work are refused.
	assert.Error(t, s.Read().Lookups().Create(ctx, l))
}

func duplicate(t *testing.T, s ports.Store) {
	ctx := context.Background()
	l := lookup(platform(t, s))
	create(t, s, l)
	err := s.InTx(ctx, func(tx ports.Tx) error { return tx.Lookups().Create(ctx, l) })
	assert.True(t, errors.Is(err, ports.ErrConflict), "%v", err)
}
