package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// chainAsWriter re-chains the journal the way postLocked does once it
// calls chainLocked on each new entry, so verification can be tested
// before the writer hashes.
func chainAsWriter(l *Ledger) {
	l.mu.Lock()
	defer l.mu.Unlock()
	recorded := l.journal
	l.journal = nil
	for _, je := range recorded {
		l.chainLocked(&je)
		l.journal = append(l.journal, je)
	}
}

func TestChainLockedAndVerify(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	l := NewLedger(clock)
	fund := ledger.SandboxFundingID("USD")
	require.NoError(t, l.CreateAccounts(ctx,
		ledger.Account{ID: fund, Currency: "USD", Kind: ledger.KindSandboxFunding},
		ledger.Account{ID: "InternalAccount:a", Currency: "USD", Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits},
		ledger.Account{ID: "InternalAccount:b", Currency: "USD", Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits}))
	for i, e := range []ledger.Entry{
		{ID: "fund", Ref: "InternalAccount:a", Transfers: []ledger.Transfer{{ID: "fund", DebitAccountID: fund, CreditAccountID: "InternalAccount:a", Amount: 900, Currency: "USD"}}},
		{ID: "pay", Ref: "Transaction:1", Transfers: []ledger.Transfer{{ID: "pay", DebitAccountID: "InternalAccount:a", CreditAccountID: "InternalAccount:b", Amount: 300, Currency: "USD"}}},
		{ID: "pay2", Ref: "Transaction:2", Transfers: []ledger.Transfer{{ID: "pay2", DebitAccountID: "InternalAccount:b", CreditAccountID: "InternalAccount:a", Amount: 100, Currency: "USD"}}},
	} {
		clock.Advance(time.Duration(i+1) * time.Second)
		_, err := l.Post(ctx, e)
		require.NoError(t, err)
	}
	chainAsWriter(l)
	r := NewLedgerReports(l, nil)
	v, err := r.VerifyJournal(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, v.Breaks)
	assert.Equal(t, int64(3), v.Hashed)
	j, err := l.Journal(ctx, 0, 10)
	require.NoError(t, err)
	assert.Equal(t, ledger.ZeroHash, j[0].PrevHash)
	assert.Equal(t, j[1].Hash, j[2].PrevHash)
	assert.Equal(t, j[2].Hash, v.Head)

	// An edited amount is named.
	l.mu.Lock()
	edited := append([]ledger.Transfer(nil), l.journal[1].Transfers...)
	edited[0].Amount = 301
	l.journal[1].Transfers = edited
	l.mu.Unlock()
	v, err = r.VerifyJournal(ctx, nil)
	require.NoError(t, err)
	require.NotEmpty(t, v.Breaks)
	assert.Equal(t, ledger.BreakHash, v.Breaks[0].Kind)
	assert.Equal(t, "pay", v.Breaks[0].EntryID)
	var counters []string
	for _, b := range v.Breaks {
		if b.Kind == ports.BreakCounter {
			counters = append(counters, b.AccountID)
		}
	}
	assert.ElementsMatch(t, []string{"InternalAccount:a", "InternalAccount:b"}, counters)
}
