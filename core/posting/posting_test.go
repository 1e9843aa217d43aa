package posting_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/core/posting"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// A cross-currency entry through a rail and currency added after start-up
// creates every system account it names (two here) and posts once.
func TestPostCreatesMissingSystemAccounts(t *testing.T) {
	ctx := context.Background()
	led := memory.NewLedger(testkit.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	src := ledger.Account{ID: "InternalAccount:a", Currency: "USD", Kind: ledger.KindInternal}
	require.NoError(t, led.CreateAccounts(ctx, src, ledger.Account{ID: ledger.SandboxFundingID("USD"), Currency: "USD", Kind: ledger.KindSandboxFunding}))
	_, err := led.Post(ctx, ledger.Entry{ID: "fund", Transfers: []ledger.Transfer{{ID: "fund", DebitAccountID: ledger.SandboxFundingID("USD"),
		CreditAccountID: src.ID, Amount: 500, Currency: "USD"}}})
	require.NoError(t, err)

	e := ledger.Entry{ID: "pay", Transfers: []ledger.Transfer{
		{ID: "pay:1", DebitAccountID: src.ID, CreditAccountID: ledger.FXPositionID("USD"), Amount: 100, Currency: "USD"},
		{ID: "pay:2", DebitAccountID: ledger.FXPositionID("EUR"), CreditAccountID: ledger.RailSettlementID("NEWRAIL", "EUR"), Amount: 92, Currency: "EUR"},
	}}
	_, err = posting.Post(ctx, led, e, ports.Records{})
	require.NoError(t, err)
	for id, cur := range map[string]string{ledger.FXPositionID("USD"): "USD", ledger.FXPositionID("EUR"): "EUR", ledger.RailSettlementID("NEWRAIL", "EUR"): "EUR"} {
		a, err := led.Account(ctx, id)
		require.NoError(t, err, id)
		assert.Equal(t, cur, a.Currency)
	}
	a, err := led.Account(ctx, src.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(400), a.Available())

	// An unknown non-system account is the caller's error, not created.
	_, err = posting.Post(ctx, led, ledger.Entry{ID: "bad", Transfers: []ledger.Transfer{{ID: "bad", DebitAccountID: src.ID,
		CreditAccountID: "InternalAccount:nope", Amount: 1, Currency: "USD"}}}, ports.Records{})
	assert.Equal(t, ledger.CodeAccountNotFound, ledger.CodeOf(err))
}
