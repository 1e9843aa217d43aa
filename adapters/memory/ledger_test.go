package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/ledgertest"
)

func TestLedgerContract(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T, clock *testkit.FakeClock) ports.LedgerStore {
		return memory.NewLedger(clock)
	})
}

func TestLedgerRecordsContract(t *testing.T) {
	ledgertest.RunRecords(t, func(t *testing.T, clock *testkit.FakeClock) (ports.LedgerStore, ports.Store) {
		l := memory.NewLedger(clock)
		return l, memory.NewStore(l)
	})
}

// A ledger no store is attached to has nowhere to write records.
func TestLedgerRecordsNeedAStore(t *testing.T) {
	l, _ := newTestLedger(t)
	_, err := l.PostWith(context.Background(), fundingEntry("f1", 100), ports.Records{Jobs: []ports.Job{{Kind: "k"}}})
	require.Error(t, err)
	_, err = l.Account(context.Background(), ledgerAlice)
	require.NoError(t, err)
	snap, _, err := l.Snapshot(context.Background())
	require.NoError(t, err)
	for _, a := range snap {
		assert.Zero(t, a.CreditsPosted, "nothing posted for %s", a.ID)
	}
}

const (
	ledgerAlice = "InternalAccount:alice"
	ledgerBob   = "InternalAccount:bob"
)

func newTestLedger(t *testing.T) (*memory.Ledger, *testkit.FakeClock) {
	t.Helper()
	clock := testkit.NewFakeClock(ledgertest.Epoch)
	l := memory.NewLedger(clock)
	require.NoError(t, l.CreateAccounts(context.Background(),
		ledger.Account{ID: ledger.SandboxFundingID("USD"), Currency: "USD", Kind: ledger.KindSandboxFunding},
		ledger.Account{ID: ledgerAlice, Currency: "USD", Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits},
		ledger.Account{ID: ledgerBob, Currency: "USD", Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits},
	))
	return l, clock
}

func fundingEntry(id string, amount int64) ledger.Entry {
	return ledger.Entry{
		ID: id, Ref: "Test:" + id,
		Transfers: []ledger.Transfer{{ID: id, DebitAccountID: ledger.SandboxFundingID("USD"), CreditAccountID: ledgerAlice, Amount: amount}},
	}
}

func TestLedgerCopiesValuesInAndOut(t *testing.T) {
	ctx := context.Background()
	l, _ := newTestLedger(t)

	e := fundingEntry("e1", 100)
	je, err := l.Post(ctx, e)
	require.NoError(t, err)

	// Changing what was passed in or handed out changes nothing inside.
	e.Transfers[0].Amount = 999
	je.Transfers[0].Amount = 999
	page, err := l.Journal(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, page, 1)
	page[0].Transfers[0].CreditAccountID = ledgerBob

	page, err = l.Journal(ctx, 0, 10)
	require.NoError(t, err)
	assert.Equal(t, int64(100), page[0].Transfers[0].Amount)
	assert.Equal(t, ledgerAlice, page[0].Transfers[0].CreditAccountID)

	stored, err := l.Post(ctx, fundingEntry("e1", 100))
	require.ErrorIs(t, err, ledger.ErrExists)
	assert.Equal(t, int64(100), stored.Transfers[0].Amount)
	stored.Transfers[0].Amount = 999
	page, err = l.Journal(ctx, 0, 10)
	require.NoError(t, err)
	assert.Equal(t, int64(100), page[0].Transfers[0].Amount, "the stored entry handed back is a copy")

	a, err := l.Account(ctx, ledgerAlice)
	require.NoError(t, err)
	assert.Equal(t, int64(100), a.CreditsPosted)
}

func TestLedgerEdges(t *testing.T) {
	ctx := context.Background()
	l, clock := newTestLedger(t)

	_, err := l.Post(ctx, ledger.Entry{ID: "h", Transfers: []ledger.Transfer{{ID: "h", DebitAccountID: ledger.SandboxFundingID("USD"), CreditAccountID: ledgerBob, Amount: 5, Kind: ledger.Pending, Timeout: time.Second}}})
	require.NoError(t, err)
	clock.Advance(time.Second)
	n, err := l.ExpireDue(ctx, clock.Now(), 0)
	require.NoError(t, err)
	assert.Zero(t, n, "a limit of 0 expires nothing")
	page, err := l.Journal(ctx, 0, 0)
	require.NoError(t, err)
	assert.Empty(t, page)

	require.Error(t, l.CreateAccounts(ctx, ledger.Account{Currency: "USD"}), "an account needs an id")
	require.Error(t, l.CreateAccounts(ctx, ledger.Account{ID: "x"}), "an account needs a currency")
	require.ErrorIs(t, l.CreateAccounts(ctx,
		ledger.Account{ID: "twice", Currency: "USD"},
		ledger.Account{ID: "twice", Currency: "EUR"},
	), ledger.ErrExistsDifferent, "conflicts within one batch are caught too")
	_, err = l.Account(ctx, "twice")
	require.ErrorIs(t, err, ports.ErrNotFound)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = l.Post(canceled, fundingEntry("late", 1))
	require.ErrorIs(t, err, context.Canceled)
	_, err = l.Post(ctx, fundingEntry("late", 1))
	require.NoError(t, err, "a canceled post recorded nothing")

	accts, pend, err := l.Snapshot(ctx)
	require.NoError(t, err)
	j, err := l.Journal(ctx, 0, 100)
	require.NoError(t, err)
	assert.Empty(t, ledger.Verify(accts, pend, j))
}
