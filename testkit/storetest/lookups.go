package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// ---- receiver lookups ----

func testLookups(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	full := ports.Lookup{
		ID: newID("Lookup"), PlatformID: p.ID, AccountID: newID("ExternalAccount"), CustomerID: newID("Customer"),
		SenderUmaAddress: "$ada@acme.example", SendingCurrency: "USD",
		Currencies: []ports.LookupCurrency{
			{Currency: "EUR", EstimatedRate: "0.92", Min: 100, Max: 1_000_000},
			{Currency: "MXN", EstimatedRate: "17.05", Min: 1_000, Max: 50_000_000},
		},
		RequiredPayerData: []ports.PayerDataField{{Name: "FULL_NAME", Mandatory: true}, {Name: "BIRTH_DATE"}},
		CreatedAt:         at(1),
	}
	bare := ports.Lookup{ID: newID("Lookup"), PlatformID: p.ID, AccountID: newID("ExternalAccount"), CreatedAt: at(2)}
	// A UMA receiver lookup: an address instead of an account.
	uma := full
	uma.ID, uma.AccountID, uma.ReceiverUmaAddress = newID("Lookup"), "", "$success.usd@sandbox.local"
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.Lookups().Create(ctx, full))
		got, err := tx.Lookups().Get(ctx, p.ID, full.ID)
		require.NoError(t, err)
		want := full
		want.CreatedAt = norm(want.CreatedAt)
		assert.Equal(t, want, got, "a unit of work reads its own writes")
		require.NoError(t, tx.Lookups().Create(ctx, uma))
		return tx.Lookups().Create(ctx, bare)
	})
	for _, want := range []ports.Lookup{full, bare, uma} {
		got, err := s.Read().Lookups().Get(ctx, p.ID, want.ID)
		require.NoError(t, err)
		want.CreatedAt = norm(want.CreatedAt)
		assert.Equal(t, want, got)
		_, err = s.Read().Lookups().Get(ctx, q.ID, want.ID)
		require.ErrorIs(t, err, ports.ErrNotFound, "another platform's lookup")
	}
	got, err := s.Read().Lookups().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	got.Currencies[0].Currency = "changed"
	again, err := s.Read().Lookups().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	assert.Equal(t, "EUR", again.Currencies[0].Currency, "values are copied out")

	dup := bare
	dup.PlatformID = q.ID
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Lookups().Create(ctx, dup) })
	requireConflict(t, err, "lookups_pkey")
	assert.Error(t, s.Read().Lookups().Create(ctx, ports.Lookup{ID: newID("Lookup"), PlatformID: p.ID, CreatedAt: at(3)}))

	gone := ports.Lookup{ID: newID("Lookup"), PlatformID: p.ID, CreatedAt: at(3)}
	err = s.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Lookups().Create(ctx, gone); err != nil {
			return err
		}
		return errBoom
	})
	require.ErrorIs(t, err, errBoom)
	_, err = s.Read().Lookups().Get(ctx, p.ID, gone.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
}
