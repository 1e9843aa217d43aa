package ledger_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
)

// t0 is the book tests' epoch.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Account ids of the book tests' chart.
const (
	alice    = "InternalAccount:alice"   // USD, protected
	bob      = "InternalAccount:bob"     // USD, protected
	carol    = "InternalAccount:carol"   // EUR, protected
	limitAcc = "InternalAccount:limited" // USD, credits must not exceed debits
	whaleA   = "sys:whale:a"             // USD, unbounded, only for overflow tests
	whaleB   = "sys:whale:b"             // USD, unbounded, only for overflow tests
)

var (
	fundUSD = ledger.SandboxFundingID("USD")
	fundEUR = ledger.SandboxFundingID("EUR")
	fxUSD   = ledger.FXPositionID("USD")
	fxEUR   = ledger.FXPositionID("EUR")
	feeUSD  = ledger.FeeRevenueID("USD")
)

// rig is a Book with a clock and the journal of what it accepted, so each
// test can end by running ledger.Verify.
type rig struct {
	t       *testing.T
	b       *ledger.Book
	now     time.Time
	journal []ledger.JournalEntry
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{t: t, b: ledger.NewBook(), now: t0}
	for _, a := range ledger.SystemAccounts([]string{"USD", "EUR"}, nil) {
		r.b.PutAccount(a)
	}
	for _, a := range []ledger.Account{
		{ID: alice, Currency: "USD", Flags: ledger.DebitsMustNotExceedCredits, Kind: ledger.KindInternal},
		{ID: bob, Currency: "USD", Flags: ledger.DebitsMustNotExceedCredits, Kind: ledger.KindInternal},
		{ID: carol, Currency: "EUR", Flags: ledger.DebitsMustNotExceedCredits, Kind: ledger.KindInternal},
		{ID: limitAcc, Currency: "USD", Flags: ledger.CreditsMustNotExceedDebits, Kind: ledger.KindInternal},
		{ID: whaleA, Currency: "USD"},
		{ID: whaleB, Currency: "USD"},
	} {
		r.b.PutAccount(a)
	}
	return r
}

// post applies e at the rig's time and journals it when accepted.
func (r *rig) post(e ledger.Entry) (ledger.Entry, error) {
	rec, err := r.b.Apply(e, r.now)
	if err == nil {
		r.journal = append(r.journal, ledger.JournalEntry{Entry: rec, Seq: int64(len(r.journal) + 1), PostedAt: r.now})
	}
	return rec, err
}

// mustPost posts e and fails the test when it is refused.
func (r *rig) mustPost(e ledger.Entry) ledger.Entry {
	r.t.Helper()
	rec, err := r.post(e)
	require.NoError(r.t, err, "post %s", e.ID)
	return rec
}

// refuse posts e, requires the given code, and requires the Book unchanged.
func (r *rig) refuse(e ledger.Entry, code ledger.Code) *ledger.Error {
	r.t.Helper()
	beforeA, beforeP := r.b.Accounts(), r.b.PendingTransfers()
	_, hadEntry := r.b.Entry(e.ID)
	_, err := r.post(e)
	require.Error(r.t, err, "post %s", e.ID)
	var le *ledger.Error
	require.ErrorAs(r.t, err, &le)
	require.Equal(r.t, code, le.Code, "post %s: %v", e.ID, err)
	require.Equal(r.t, beforeA, r.b.Accounts(), "a refused entry changed accounts")
	require.Equal(r.t, beforeP, r.b.PendingTransfers(), "a refused entry changed pending transfers")
	if !hadEntry {
		_, has := r.b.Entry(e.ID)
		require.False(r.t, has, "a refused entry was recorded")
	}
	return le
}

// fund credits acct from its currency's sandbox funding account.
func (r *rig) fund(acct string, amount int64) {
	r.t.Helper()
	a, ok := r.b.Account(acct)
	require.True(r.t, ok)
	id := fmt.Sprintf("fund:%s:%d", acct, len(r.journal))
	r.mustPost(entry(id, single(id, ledger.SandboxFundingID(a.Currency), acct, amount)))
}

func (r *rig) acct(id string) ledger.Account {
	r.t.Helper()
	a, ok := r.b.Account(id)
	require.True(r.t, ok, "account %s", id)
	return a
}

// counters is an account's four counters: debits pending, debits posted,
// credits pending, credits posted.
func (r *rig) counters(id string) [4]int64 {
	r.t.Helper()
	a := r.acct(id)
	return [4]int64{a.DebitsPending, a.DebitsPosted, a.CreditsPending, a.CreditsPosted}
}

// verify requires every invariant to hold.
func (r *rig) verify() {
	r.t.Helper()
	require.Empty(r.t, ledger.Verify(r.b.Accounts(), r.b.PendingTransfers(), r.journal))
}

func entry(id string, ts ...ledger.Transfer) ledger.Entry {
	return ledger.Entry{ID: id, Ref: "Test:" + id, Transfers: ts}
}

func single(id, from, to string, amount int64) ledger.Transfer {
	return ledger.Transfer{ID: id, DebitAccountID: from, CreditAccountID: to, Amount: amount, Kind: ledger.Single, Code: "test"}
}

func hold(id, from, to string, amount int64, timeout time.Duration) ledger.Transfer {
	return ledger.Transfer{ID: id, DebitAccountID: from, CreditAccountID: to, Amount: amount, Kind: ledger.Pending, Timeout: timeout, Code: "test"}
}

func postHold(id, pendingID string, amount int64) ledger.Transfer {
	return ledger.Transfer{ID: id, PendingID: pendingID, Amount: amount, Kind: ledger.PostPending, Code: "test"}
}

func voidHold(id, pendingID string) ledger.Transfer {
	return ledger.Transfer{ID: id, PendingID: pendingID, Kind: ledger.VoidPending, Code: "test"}
}
