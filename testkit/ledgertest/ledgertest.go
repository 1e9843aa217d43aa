// Package ledgertest is the ports.LedgerStore contract suite. Every ledger
// store (memory, PostgreSQL) runs it from its own tests:
//
//	func TestLedgerContract(t *testing.T) {
//		ledgertest.Run(t, func(t *testing.T, clock *testkit.FakeClock) ports.LedgerStore {
//			return memory.NewLedger(clock)
//		})
//	}
//
// The suite only uses the port, so it holds every implementation to the same
// behaviour: account creation, single and two-phase transfers, expiry,
// refusals that change nothing, idempotent re-posting, journal paging, the
// invariants checked by ledger.Verify, and concurrent posting.
package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// Epoch is the fake clock's starting time in every subtest.
var Epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// NewStore returns an empty store whose times come from clock. It is called
// once per subtest, with the subtest's t (register cleanup there).
type NewStore func(t *testing.T, clock *testkit.FakeClock) ports.LedgerStore

// Run runs the contract suite as subtests of t.
func Run(t *testing.T, newStore func(t *testing.T, clock *testkit.FakeClock) ports.LedgerStore) {
	tests := []struct {
		name string
		run  func(f *fixture)
	}{
		{"CreateAccounts", testCreateAccounts},
		{"PostSingle", testPostSingle},
		{"PendingPostAndVoid", testPendingPostAndVoid},
		{"PartialPost", testPartialPost},
		{"Expire", testExpire},
		{"OpenHolds", testOpenHolds},
		{"RefusedEntryChangesNothing", testRefusedEntryChangesNothing},
		{"IdempotentRepost", testIdempotentRepost},
		{"Reversal", testReversal},
		{"JournalOrderAndPaging", testJournalPaging},
		{"MixedWorkloadVerifies", testMixedWorkload},
		{"ConcurrentTransfers", testConcurrentTransfers},
		{"ConcurrentRefusalsAreIsolated", testConcurrentRefusals},
		{"ConcurrentDuplicates", testConcurrentDuplicates},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewFakeClock(Epoch)
			s := newStore(t, clock)
			require.NotNil(t, s, "newStore returned nil")
			tt.run(&fixture{t: t, s: s, clock: clock, ctx: context.Background()})
		})
	}
}

// Account ids of the suite's chart.
const (
	alice = "InternalAccount:ledgertest-alice" // USD, protected
	bob   = "InternalAccount:ledgertest-bob"   // USD, protected
	carol = "InternalAccount:ledgertest-carol" // USD, protected
	dave  = "InternalAccount:ledgertest-dave"  // EUR, protected
)

var (
	fundUSD = ledger.SandboxFundingID("USD")
	fundEUR = ledger.SandboxFundingID("EUR")
	feeUSD  = ledger.FeeRevenueID("USD")
	fxUSD   = ledger.FXPositionID("USD")
	fxEUR   = ledger.FXPositionID("EUR")
	railUSD = ledger.RailSettlementID("ACH", "USD")
)

type fixture struct {
	t     *testing.T
	s     ports.LedgerStore
	clock *testkit.FakeClock
	ctx   context.Context
}

func protected(id, currency string) ledger.Account {
	return ledger.Account{ID: id, Currency: currency, Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits, PlatformID: "Platform:ledgertest"}
}

// chart creates the system accounts for USD and EUR (with an ACH rail) and
// alice, bob, carol (USD) and dave (EUR), all protected.
func (f *fixture) chart() {
	f.t.Helper()
	accts := ledger.SystemAccounts([]string{"USD", "EUR"}, map[string][]string{"ACH": {"USD"}})
	accts = append(accts, protected(alice, "USD"), protected(bob, "USD"), protected(carol, "USD"), protected(dave, "EUR"))
	require.NoError(f.t, f.s.CreateAccounts(f.ctx, accts...))
}

func (f *fixture) post(e ledger.Entry) (ledger.JournalEntry, error) { return f.s.Post(f.ctx, e) }

func (f *fixture) mustPost(e ledger.Entry) ledger.JournalEntry {
	f.t.Helper()
	je, err := f.s.Post(f.ctx, e)
	require.NoError(f.t, err, "post %s", e.ID)
	return je
}

// refuse posts e and requires it refused with code.
func (f *fixture) refuse(e ledger.Entry, code ledger.Code) *ledger.Error {
	f.t.Helper()
	_, err := f.s.Post(f.ctx, e)
	require.Error(f.t, err, "post %s", e.ID)
	var le *ledger.Error
	require.ErrorAs(f.t, err, &le, "post %s: %v", e.ID, err)
	require.Equal(f.t, code.String(), le.Code.String(), "post %s: %v", e.ID, err)
	return le
}

// fund credits acct from its currency's sandbox funding account.
func (f *fixture) fund(id, acct string, amount int64) ledger.JournalEntry {
	f.t.Helper()
	a := f.account(acct)
	return f.mustPost(entry(id, single(id, ledger.SandboxFundingID(a.Currency), acct, amount)))
}

func (f *fixture) account(id string) ledger.Account {
	f.t.Helper()
	a, err := f.s.Account(f.ctx, id)
	require.NoError(f.t, err, "account %s", id)
	return a
}

func (f *fixture) pending(id string) ledger.PendingTransfer {
	f.t.Helper()
	p, err := f.s.Pending(f.ctx, id)
	require.NoError(f.t, err, "pending %s", id)
	return p
}

// counters is an account's debits pending, debits posted, credits pending
// and credits posted.
func (f *fixture) counters(id string) [4]int64 {
	f.t.Helper()
	a := f.account(id)
	return [4]int64{a.DebitsPending, a.DebitsPosted, a.CreditsPending, a.CreditsPosted}
}

// journal reads the whole journal in pages of pageSize.
func (f *fixture) journal(pageSize int) []ledger.JournalEntry {
	f.t.Helper()
	var out []ledger.JournalEntry
	var after int64
	for {
		page, err := f.s.Journal(f.ctx, after, pageSize)
		require.NoError(f.t, err)
		require.LessOrEqual(f.t, len(page), pageSize, "Journal returned more than limit")
		if len(page) == 0 {
			return out
		}
		for _, je := range page {
			require.Greater(f.t, je.Seq, after, "Journal must return entries after afterSeq in Seq order")
			after = je.Seq
		}
		out = append(out, page...)
	}
}

// verify requires ledger.Verify to find nothing wrong with the store.
func (f *fixture) verify() {
	f.t.Helper()
	accts, pend, err := f.s.Snapshot(f.ctx)
	require.NoError(f.t, err)
	j := f.journal(100)
	if v := ledger.Verify(accts, pend, j); v != nil {
		f.t.Fatalf("ledger.Verify found %d violations, first: %s\nall: %v", len(v), v[0], v)
	}
}

// sameEntry requires got to be the recorded entry want.
func (f *fixture) sameEntry(want, got ledger.JournalEntry) {
	f.t.Helper()
	assert.Equal(f.t, want.ID, got.ID)
	assert.Equal(f.t, want.Ref, got.Ref)
	assert.Equal(f.t, want.Reverses, got.Reverses)
	assert.Equal(f.t, want.Seq, got.Seq)
	assert.True(f.t, want.PostedAt.Equal(got.PostedAt), "PostedAt %v, want %v", got.PostedAt, want.PostedAt)
	assert.Equal(f.t, want.Transfers, got.Transfers)
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

// ---- subtests ----

func testCreateAccounts(f *fixture) {
	t := f.t
	f.chart()

	a := f.account(alice)
	assert.Equal(t, alice, a.ID)
	assert.Equal(t, "USD", a.Currency)
	assert.Equal(t, ledger.KindInternal, a.Kind)
	assert.Equal(t, ledger.DebitsMustNotExceedCredits, a.Flags)
	assert.Equal(t, "Platform:ledgertest", a.PlatformID)
	assert.Equal(t, [4]int64{}, f.counters(alice))
	assert.True(t, a.CreatedAt.Equal(Epoch), "CreatedAt defaults to the clock: %v", a.CreatedAt)
	sys := f.account(fundUSD)
	assert.Equal(t, ledger.KindSandboxFunding, sys.Kind)
	assert.Zero(t, sys.Flags)

	// Creating an existing account again is a no-op, even when the request
	// carries counters or another creation time.
	f.fund("fund-alice", alice, 500)
	f.clock.Advance(time.Hour)
	again := protected(alice, "USD")
	again.CreditsPosted = 1_000_000
	require.NoError(t, f.s.CreateAccounts(f.ctx, again, protected(bob, "USD")))
	assert.Equal(t, [4]int64{0, 0, 0, 500}, f.counters(alice))
	assert.True(t, f.account(alice).CreatedAt.Equal(Epoch))

	// New accounts start at zero whatever the request says.
	fresh := protected("InternalAccount:ledgertest-fresh", "USD")
	fresh.DebitsPosted, fresh.CreditsPosted = 7, 9
	require.NoError(t, f.s.CreateAccounts(f.ctx, fresh))
	assert.Equal(t, [4]int64{}, f.counters(fresh.ID))
	assert.True(t, f.account(fresh.ID).CreatedAt.Equal(Epoch.Add(time.Hour)))

	// The same id with another currency, kind or flags is refused, and a
	// refused batch creates nothing.
	for _, conflict := range []ledger.Account{
		{ID: alice, Currency: "EUR", Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits},
		{ID: alice, Currency: "USD", Kind: ledger.KindInternal},
		{ID: alice, Currency: "USD", Kind: ledger.KindFeeRevenue, Flags: ledger.DebitsMustNotExceedCredits},
	} {
		err := f.s.CreateAccounts(f.ctx, protected("InternalAccount:ledgertest-new", "USD"), conflict)
		require.ErrorIs(t, err, ledger.ErrExistsDifferent, "conflicting %+v", conflict)
		_, err = f.s.Account(f.ctx, "InternalAccount:ledgertest-new")
		require.ErrorIs(t, err, ports.ErrNotFound, "a refused batch must create nothing")
	}
	assert.Equal(t, "USD", f.account(alice).Currency)

	_, err := f.s.Account(f.ctx, "InternalAccount:ledgertest-nobody")
	require.ErrorIs(t, err, ports.ErrNotFound)

	got, err := f.s.Accounts(f.ctx, carol, "InternalAccount:ledgertest-nobody", alice, fundEUR)
	require.NoError(t, err)
	ids := make([]string, len(got))
	for i, a := range got {
		ids[i] = a.ID
	}
	assert.Equal(t, []string{carol, alice, fundEUR}, ids, "Accounts keeps the order asked for and skips missing ids")
	assert.Equal(t, int64(500), got[1].CreditsPosted)

	none, err := f.s.Accounts(f.ctx)
	require.NoError(t, err)
	assert.Empty(t, none)
	require.NoError(t, f.s.CreateAccounts(f.ctx), "creating nothing is fine")
	f.verify()
}

func testPostSingle(f *fixture) {
	t := f.t
	f.chart()
	funded := f.fund("fund-alice", alice, 10_000)
	assert.Positive(t, funded.Seq)
	assert.True(t, funded.PostedAt.Equal(Epoch), "PostedAt comes from the clock: %v", funded.PostedAt)

	f.clock.Advance(time.Second)
	je := f.mustPost(ledger.Entry{
		ID: "pay-1", Ref: "Transaction:1",
		Transfers: []ledger.Transfer{single("pay-1:0", alice, bob, 2_500)},
	})
	assert.Equal(t, "pay-1", je.ID)
	assert.Equal(t, "Transaction:1", je.Ref)
	assert.Greater(t, je.Seq, funded.Seq)
	assert.True(t, je.PostedAt.Equal(Epoch.Add(time.Second)))
	require.Len(t, je.Transfers, 1)
	assert.Equal(t, ledger.Transfer{
		ID: "pay-1:0", DebitAccountID: alice, CreditAccountID: bob, Amount: 2_500, Currency: "USD", Kind: ledger.Single, Code: "test",
	}, je.Transfers[0], "the recorded transfer carries the currency")

	assert.Equal(t, [4]int64{0, 2_500, 0, 10_000}, f.counters(alice))
	assert.Equal(t, [4]int64{0, 0, 0, 2_500}, f.counters(bob))
	assert.Equal(t, int64(7_500), f.account(alice).Available())
	assert.Equal(t, int64(-10_000), f.account(fundUSD).Net())

	// An FX-like entry: four linked legs in two currencies, one fee leg.
	f.mustPost(entry("fx-1",
		single("fx-1:send", alice, fxUSD, 1_000),
		single("fx-1:receive", fxEUR, dave, 920),
		single("fx-1:fee", alice, feeUSD, 10),
	))
	assert.Equal(t, int64(6_490), f.account(alice).Available())
	assert.Equal(t, int64(920), f.account(dave).Available())
	assert.Equal(t, int64(-920), f.account(fxEUR).Net())
	f.verify()
}

func testPendingPostAndVoid(f *fixture) {
	t := f.t
	f.chart()
	f.fund("fund-alice", alice, 1_000)

	je := f.mustPost(entry("hold-1", hold("h1", alice, railUSD, 400, time.Minute)))
	assert.Equal(t, ledger.Pending, je.Transfers[0].Kind)
	assert.Equal(t, time.Minute, je.Transfers[0].Timeout)
	assert.Equal(t, [4]int64{400, 0, 0, 1_000}, f.counters(alice))
	assert.Equal(t, [4]int64{0, 0, 400, 0}, f.counters(railUSD))
	assert.Equal(t, int64(600), f.account(alice).Available())

	p := f.pending("h1")
	assert.Equal(t, ledger.PendingOpen, p.Status)
	assert.Equal(t, "hold-1", p.EntryID)
	assert.Equal(t, int64(400), p.Amount)
	assert.Equal(t, alice, p.DebitAccountID)
	assert.Equal(t, railUSD, p.CreditAccountID)
	assert.Equal(t, "USD", p.Currency)
	assert.True(t, p.ExpiresAt.Equal(Epoch.Add(time.Minute)), "ExpiresAt %v", p.ExpiresAt)

	// The hold counts against alice's bound.
	f.refuse(entry("too-much", single("too-much", alice, bob, 601)), ledger.CodeExceedsCredits)

	f.clock.Advance(10 * time.Second)
	posted := f.mustPost(entry("post-1", postHold("p1", "h1", 0)))
	assert.Equal(t, ledger.Transfer{
		ID: "p1", DebitAccountID: alice, CreditAccountID: railUSD, Amount: 400, Currency: "USD",
		Kind: ledger.PostPending, PendingID: "h1", Code: "test",
	}, posted.Transfers[0], "the recorded post carries what it moved")
	assert.Equal(t, [4]int64{0, 400, 0, 1_000}, f.counters(alice))
	assert.Equal(t, [4]int64{0, 0, 0, 400}, f.counters(railUSD))
	p = f.pending("h1")
	assert.Equal(t, ledger.PendingPosted, p.Status)
	assert.Equal(t, int64(400), p.PostedAmount)
	f.refuse(entry("post-1b", postHold("p1b", "h1", 0)), ledger.CodePendingAlreadyPosted)
	f.refuse(entry("void-1b", voidHold("v1b", "h1")), ledger.CodePendingAlreadyPosted)

	f.mustPost(entry("hold-2", hold("h2", alice, bob, 300, 0)))
	voided := f.mustPost(entry("void-2", voidHold("v2", "h2")))
	assert.Equal(t, int64(300), voided.Transfers[0].Amount)
	assert.Equal(t, [4]int64{0, 400, 0, 1_000}, f.counters(alice))
	assert.Equal(t, [4]int64{}, f.counters(bob))
	assert.Equal(t, ledger.PendingVoided, f.pending("h2").Status)
	assert.True(t, f.pending("h2").ExpiresAt.IsZero(), "a hold without timeout has no expiry")
	f.refuse(entry("void-2b", voidHold("v2b", "h2")), ledger.CodePendingAlreadyVoided)
	f.refuse(entry("post-2b", postHold("p2b", "h2", 0)), ledger.CodePendingAlreadyVoided)

	f.refuse(entry("post-x", postHold("px", "no-such-hold", 0)), ledger.CodePendingNotFound)
	_, err := f.s.Pending(f.ctx, "no-such-hold")
	require.ErrorIs(t, err, ports.ErrNotFound)
	f.refuse(entry("hold-dup", hold("h1", alice, bob, 1, 0)), ledger.CodeTransferIDExists)
	// A transfer id is unique across entries, whatever its kind.
	f.refuse(entry("single-dup", single("p1", alice, bob, 1)), ledger.CodeTransferIDExists)
	f.verify()
}

func testPartialPost(f *fixture) {
	t := f.t
	f.chart()
	f.fund("fund-alice", alice, 1_000)
	f.mustPost(entry("hold-1", hold("h1", alice, bob, 400, time.Hour)))

	f.refuse(entry("post-over", postHold("p-over", "h1", 401)), ledger.CodeExceedsPendingAmount)
	je := f.mustPost(entry("post-1", postHold("p1", "h1", 150)))
	assert.Equal(t, int64(150), je.Transfers[0].Amount)
	assert.Equal(t, [4]int64{0, 150, 0, 1_000}, f.counters(alice), "the rest of the hold is released")
	assert.Equal(t, [4]int64{0, 0, 0, 150}, f.counters(bob))
	assert.Equal(t, int64(850), f.account(alice).Available())
	p := f.pending("h1")
	assert.Equal(t, ledger.PendingPosted, p.Status)
	assert.Equal(t, int64(150), p.PostedAmount)
	assert.Equal(t, int64(400), p.Amount)
	f.verify()
}

func testExpire(f *fixture) {
	t := f.t
	f.chart()
	f.fund("fund-alice", alice, 1_000)
	f.mustPost(entry("hold-10", hold("h10", alice, bob, 10, 10*time.Second)))
	f.mustPost(entry("hold-20", hold("h20", alice, bob, 20, 20*time.Second)))
	f.mustPost(entry("hold-30", hold("h30", alice, bob, 30, 30*time.Second)))
	f.mustPost(entry("hold-never", hold("h-never", alice, bob, 40, 0)))

	n, err := f.s.ExpireDue(f.ctx, f.clock.Now(), 10)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing is due yet")

	f.clock.Advance(20 * time.Second)
	// A due hold can no longer be posted or voided, even before it expires.
	f.refuse(entry("post-20", postHold("p20", "h20", 0)), ledger.CodePendingExpired)
	f.refuse(entry("void-10", voidHold("v10", "h10")), ledger.CodePendingExpired)

	n, err = f.s.ExpireDue(f.ctx, f.clock.Now(), 1)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "limit is honoured")
	assert.Equal(t, ledger.PendingExpired, f.pending("h10").Status, "the earliest expires first")
	assert.Equal(t, ledger.PendingOpen, f.pending("h20").Status)

	n, err = f.s.ExpireDue(f.ctx, f.clock.Now(), 10)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	n, err = f.s.ExpireDue(f.ctx, f.clock.Now(), 10)
	require.NoError(t, err)
	assert.Zero(t, n, "an expired hold expires once")

	assert.Equal(t, ledger.PendingExpired, f.pending("h20").Status)
	assert.Equal(t, ledger.PendingOpen, f.pending("h30").Status)
	assert.Equal(t, ledger.PendingOpen, f.pending("h-never").Status)
	assert.Equal(t, [4]int64{70, 0, 0, 1_000}, f.counters(alice), "expired holds are released")
	assert.Equal(t, [4]int64{0, 0, 70, 0}, f.counters(bob))
	f.refuse(entry("post-10", postHold("p10", "h10", 0)), ledger.CodePendingExpired)

	var expiries []string
	for _, je := range f.journal(100) {
		for _, tr := range je.Transfers {
			if tr.Code == ledger.CodeExpiry {
				assert.Equal(t, ledger.VoidPending, tr.Kind)
				expiries = append(expiries, tr.PendingID)
			}
		}
	}
	assert.Equal(t, []string{"h10", "h20"}, expiries, "each expiry is a journal entry")

	f.clock.Advance(time.Hour)
	n, err = f.s.ExpireDue(f.ctx, f.clock.Now(), 10)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "h30 expires; a hold without timeout never does")
	assert.Equal(t, ledger.PendingOpen, f.pending("h-never").Status)
	f.verify()
}

// testOpenHolds: OpenHolds lists open holds created at or before a time,
// by id, paged after an id; resolved holds and younger ones are left out.
func testOpenHolds(f *fixture) {
	t := f.t
	f.chart()
	f.fund("fund-alice", alice, 1_000)
	f.mustPost(entry("e-b", hold("hold-b", alice, railUSD, 10, 0)))
	f.mustPost(entry("e-a", hold("hold-a", alice, railUSD, 20, 0)))
	f.mustPost(entry("e-d", hold("hold-d", alice, railUSD, 30, time.Hour)))
	f.mustPost(entry("e-x", hold("hold-x", alice, railUSD, 40, 0)))
	f.mustPost(entry("void-x", voidHold("void-x", "hold-x")))
	cutoff := f.clock.Now()
	f.clock.Advance(time.Minute)
	f.mustPost(entry("e-c", hold("hold-c", alice, railUSD, 50, 0)))

	ids := func(createdBefore time.Time, after string, limit int) []string {
		t.Helper()
		ps, err := f.s.OpenHolds(f.ctx, createdBefore, after, limit)
		require.NoError(t, err)
		var out []string
		for _, p := range ps {
			assert.Equal(t, ledger.PendingOpen, p.Status)
			out = append(out, p.ID)
		}
		return out
	}
	assert.Equal(t, []string{"hold-a", "hold-b", "hold-d"}, ids(cutoff, "", 10), "open, old enough, by id")
	assert.Equal(t, []string{"hold-a", "hold-b"}, ids(cutoff, "", 2))
	assert.Equal(t, []string{"hold-d"}, ids(cutoff, "hold-b", 2), "paged after an id")
	assert.Equal(t, []string{"hold-a", "hold-b", "hold-c", "hold-d"}, ids(f.clock.Now(), "", 10))
	assert.Empty(t, ids(Epoch.Add(-time.Second), "", 10))
	assert.Empty(t, ids(f.clock.Now(), "", 0))
	f.mustPost(entry("post-a", postHold("post-a", "hold-a", 0)))
	assert.Equal(t, []string{"hold-b", "hold-d"}, ids(cutoff, "", 10), "a posted hold is no longer open")
}

func testRefusedEntryChangesNothing(f *fixture) {
	t := f.t
	f.chart()
	f.fund("fund-alice", alice, 100)
	f.fund("fund-bob", bob, 50)
	ids := []string{alice, bob, carol, fundUSD, feeUSD, railUSD}
	before := map[string][4]int64{}
	for _, id := range ids {
		before[id] = f.counters(id)
	}
	journalBefore := f.journal(100)

	// The second leg overdraws bob; the first leg and the hold must not
	// apply either.
	le := f.refuse(entry("multi",
		single("multi:0", alice, carol, 60),
		hold("multi:hold", alice, railUSD, 10, time.Minute),
		single("multi:1", bob, carol, 51),
		single("multi:2", alice, feeUSD, 1),
	), ledger.CodeExceedsCredits)
	assert.Equal(t, "multi:1", le.TransferID)
	assert.Equal(t, bob, le.AccountID)
	le = f.refuse(entry("over", single("over", alice, bob, 101)), ledger.CodeExceedsCredits)
	assert.Equal(t, alice, le.AccountID)
	f.refuse(entry("ghost", single("ghost", alice, "InternalAccount:ledgertest-ghost", 1)), ledger.CodeAccountNotFound)
	f.refuse(entry("mismatch", single("mismatch", alice, dave, 1)), ledger.CodeCurrencyMismatch)
	f.refuse(entry("same", single("same", alice, alice, 1)), ledger.CodeSameAccount)
	f.refuse(entry("zero", single("zero", alice, bob, 0)), ledger.CodeAmountInvalid)
	odd := single("odd", alice, bob, 1)
	odd.Kind = 9
	f.refuse(entry("odd", odd), ledger.CodeKindInvalid)
	f.refuse(entry("whale", single("whale", alice, bob, math.MaxInt64)), ledger.CodeOverflow)

	for _, id := range ids {
		assert.Equal(t, before[id], f.counters(id), "account %s", id)
	}
	_, err := f.s.Pending(f.ctx, "multi:hold")
	require.ErrorIs(t, err, ports.ErrNotFound, "a refused entry opens no hold")
	assert.Equal(t, len(journalBefore), len(f.journal(100)), "a refused entry is not journaled")

	// A refused entry's id stays free.
	f.fund("fund-bob-2", bob, 1)
	f.mustPost(entry("multi",
		single("multi:0", alice, carol, 60),
		hold("multi:hold", alice, railUSD, 10, time.Minute),
		single("multi:1", bob, carol, 51),
		single("multi:2", alice, feeUSD, 1),
	))
	assert.Equal(t, [4]int64{10, 61, 0, 100}, f.counters(alice))
	assert.Equal(t, int64(111), f.account(carol).Available())
	f.verify()
}

func testIdempotentRepost(f *fixture) {
	t := f.t
	f.chart()
	f.fund("fund-alice", alice, 1_000)
	e := entry("pay-1", single("pay-1:0", alice, bob, 300))
	first := f.mustPost(e)
	journalLen := len(f.journal(100))

	f.clock.Advance(time.Minute)
	again, err := f.post(e)
	require.ErrorIs(t, err, ledger.ErrExists)
	assert.Equal(t, ledger.CodeExists, ledger.CodeOf(err))
	f.sameEntry(first, again)

	changed := entry("pay-1", single("pay-1:0", alice, bob, 301))
	stored, err := f.post(changed)
	require.ErrorIs(t, err, ledger.ErrExistsDifferent)
	assert.False(t, errors.Is(err, ledger.ErrExists))
	f.sameEntry(first, stored)

	assert.Equal(t, [4]int64{0, 300, 0, 1_000}, f.counters(alice), "a replay moves no money")
	assert.Equal(t, journalLen, len(f.journal(100)))

	// Re-posting a post whose request left the amount to the hold.
	f.mustPost(entry("hold-1", hold("h1", alice, bob, 200, time.Hour)))
	post := entry("post-1", postHold("p1", "h1", 0))
	firstPost := f.mustPost(post)
	again, err = f.post(post)
	require.ErrorIs(t, err, ledger.ErrExists)
	f.sameEntry(firstPost, again)
	f.verify()
}

func testReversal(f *fixture) {
	t := f.t
	f.chart()
	f.fund("fund-alice", alice, 1_000)
	orig := f.mustPost(entry("pay-1", single("pay-1:0", alice, bob, 300), single("pay-1:fee", alice, feeUSD, 5)))

	rev, err := ledger.Reversal(orig.Entry, "rev-1", "Correction:1")
	require.NoError(t, err)
	je := f.mustPost(rev)
	assert.Equal(t, "pay-1", je.Reverses)
	assert.Equal(t, int64(1_000), f.account(alice).Available())
	assert.Equal(t, int64(0), f.account(bob).Net())
	assert.Equal(t, int64(0), f.account(feeUSD).Net())

	rev2, err := ledger.Reversal(orig.Entry, "rev-2", "Correction:2")
	require.NoError(t, err)
	f.refuse(rev2, ledger.CodeAlreadyReversed)
	f.refuse(ledger.Entry{ID: "rev-3", Reverses: "no-such-entry", Transfers: rev.Transfers}, ledger.CodeReversalNotAllowed)
	f.verify()
}

func testJournalPaging(f *fixture) {
	t := f.t
	f.chart()
	f.fund("fund-alice", alice, 1_000_000)
	want := []string{"fund-alice"}
	for i := range 25 {
		id := fmt.Sprintf("pay-%02d", i)
		f.clock.Advance(time.Second)
		f.mustPost(entry(id, single(id, alice, bob, int64(i+1))))
		want = append(want, id)
	}

	all, err := f.s.Journal(f.ctx, 0, 1_000)
	require.NoError(t, err)
	require.Len(t, all, len(want))
	for i, je := range all {
		assert.Equal(t, want[i], je.ID, "journal position %d", i)
		if i > 0 {
			assert.Greater(t, je.Seq, all[i-1].Seq, "Seq strictly increases")
			assert.False(t, je.PostedAt.Before(all[i-1].PostedAt))
		}
	}

	for _, size := range []int{1, 7, 10, 26} {
		paged := f.journal(size)
		require.Len(t, paged, len(all), "page size %d", size)
		for i := range paged {
			f.sameEntry(all[i], paged[i])
		}
	}

	page, err := f.s.Journal(f.ctx, all[9].Seq, 5)
	require.NoError(t, err)
	require.Len(t, page, 5)
	assert.Equal(t, all[10].ID, page[0].ID)
	assert.Equal(t, all[14].ID, page[4].ID)

	page, err = f.s.Journal(f.ctx, all[len(all)-1].Seq, 10)
	require.NoError(t, err)
	assert.Empty(t, page)
}

// testMixedWorkload runs a seeded random workload through the store and
// requires the invariants to hold at the end.
func testMixedWorkload(f *fixture) {
	t := f.t
	f.chart()
	r := rand.New(rand.NewPCG(7, 11))
	usd := []string{alice, bob, carol}
	for _, id := range usd {
		f.fund("fund-"+id, id, 5_000)
	}
	f.fund("fund-dave", dave, 5_000)
	var open []string
	accepted, refused := 0, 0
	record := func(err error) {
		if err == nil {
			accepted++
			return
		}
		var le *ledger.Error
		if !errors.As(err, &le) {
			t.Fatalf("a non-ledger error: %v", err)
		}
		refused++
	}
	for i := range 300 {
		id := fmt.Sprintf("op-%d", i)
		from, to := usd[r.IntN(3)], usd[r.IntN(3)]
		amount := int64(1 + r.IntN(1_500))
		var err error
		switch op := r.IntN(10); {
		case op < 3:
			_, err = f.post(entry(id, single(id, from, to, amount)))
		case op < 5:
			timeout := time.Duration(r.IntN(30)) * time.Second
			_, err = f.post(entry(id, hold(id, from, railUSD, amount, timeout)))
			if err == nil {
				open = append(open, id)
			}
		case op < 7 && len(open) > 0:
			k := r.IntN(len(open))
			h := open[k]
			if r.IntN(2) == 0 {
				_, err = f.post(entry(id, postHold(id, h, int64(r.IntN(int(amount))))))
			} else {
				_, err = f.post(entry(id, voidHold(id, h)))
			}
			open = append(open[:k], open[k+1:]...)
		case op < 8:
			f.clock.Advance(time.Duration(r.IntN(10)) * time.Second)
			_, err = f.s.ExpireDue(f.ctx, f.clock.Now(), 1+r.IntN(5))
			require.NoError(t, err)
			continue
		case op < 9:
			_, err = f.post(entry(id,
				single(id+":send", from, fxUSD, amount),
				single(id+":receive", fxEUR, dave, amount*9/10+1),
			))
		default:
			_, err = f.post(entry(id, single(id, dave, fundEUR, amount)))
		}
		record(err)
	}
	assert.Positive(t, accepted)
	assert.Positive(t, refused)
	f.verify()

	accts, _, err := f.s.Snapshot(f.ctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(accts), 11, "Snapshot returns every account")
	for _, a := range accts {
		if a.Flags&ledger.DebitsMustNotExceedCredits != 0 {
			assert.GreaterOrEqual(t, a.Available(), int64(0), "account %s", a.ID)
		}
	}
}

// Concurrency sizing: small enough for PostgreSQL on two cores to finish in
// a few seconds, large enough that transfers overlap on the hot account.
const (
	concurrentWorkers   = 16
	concurrentTransfers = 100
)

// testConcurrentTransfers posts from many goroutines among a few protected
// accounts and one hot protected account. Each caller's result must be
// true: the final counters equal what the accepted results add up to.
func testConcurrentTransfers(f *fixture) {
	t := f.t
	const hot = "InternalAccount:ledgertest-hot"
	customers := []string{alice, bob, carol, "InternalAccount:ledgertest-erin"}
	accts := []ledger.Account{
		{ID: fundUSD, Currency: "USD", Kind: ledger.KindSandboxFunding},
		{ID: railUSD, Currency: "USD", Kind: ledger.KindRailSettlement},
		protected(hot, "USD"),
	}
	for _, c := range customers {
		accts = append(accts, protected(c, "USD"))
	}
	require.NoError(t, f.s.CreateAccounts(f.ctx, accts...))
	initial := map[string]int64{hot: 50_000}
	f.fund("fund-hot", hot, 50_000)
	for _, c := range customers {
		f.fund("fund-"+c, c, 5_000)
		initial[c] = 5_000
	}
	all := append([]string{hot, railUSD}, customers...)

	results := make([]transferOutcome, concurrentWorkers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range concurrentWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[w] = transferWorker(f, w, hot, customers, start)
		}()
	}
	close(start)
	wg.Wait()

	want := map[string]int64{}
	for id, v := range initial {
		want[id] = v
	}
	accepted := 0
	for w, res := range results {
		require.Empty(t, res.unexpected, "worker %d got errors other than exceeds_credits", w)
		accepted += res.accepted
		for id, d := range res.delta {
			want[id] += d
		}
	}
	assert.Greater(t, accepted, concurrentWorkers*concurrentTransfers/2, "most transfers must be accepted")
	var total int64
	for _, id := range all {
		a := f.account(id)
		assert.Equal(t, want[id], a.Net(), "account %s: the accepted results do not add up to its balance", id)
		assert.Zero(t, a.DebitsPending, "account %s: every hold was resolved", id)
		assert.Zero(t, a.CreditsPending, "account %s", id)
		if a.Flags&ledger.DebitsMustNotExceedCredits != 0 {
			assert.GreaterOrEqual(t, a.Available(), int64(0), "protected account %s went negative", id)
		}
		total += a.Net()
	}
	total += f.account(fundUSD).Net()
	assert.Zero(t, total, "money was created or destroyed")
	f.verify()
}

// transferOutcome is what one worker of testConcurrentTransfers saw: the
// net movement its accepted entries made on each account, how many entries
// were accepted and refused for lack of funds, and any other error.
type transferOutcome struct {
	delta             map[string]int64
	accepted, refused int
	unexpected        []string
}

// note counts err into o and reports whether the entry was accepted.
func (o *transferOutcome) note(err error) bool {
	switch {
	case err == nil:
		o.accepted++
		return true
	case ledger.CodeOf(err) == ledger.CodeExceedsCredits:
		o.refused++
	default:
		o.unexpected = append(o.unexpected, err.Error())
	}
	return false
}

// transferWorker is worker w of testConcurrentTransfers: once start is
// closed it posts a seeded random mix of transfers, holds, posts and voids
// between hot, customers and the ACH rail, then voids the holds it left
// open, and returns what the store told it.
func transferWorker(f *fixture, w int, hot string, customers []string, start <-chan struct{}) transferOutcome {
	r := rand.New(rand.NewPCG(uint64(w), 99))
	res := transferOutcome{delta: map[string]int64{}}
	var holds []string
	<-start
	for i := range concurrentTransfers {
		id := fmt.Sprintf("w%d-%d", w, i)
		from, to := hot, customers[r.IntN(len(customers))]
		switch r.IntN(4) {
		case 0:
			from, to = to, hot
		case 1:
			from = customers[r.IntN(len(customers))]
			if from == to {
				to = hot
			}
		}
		if r.IntN(8) == 0 {
			to = railUSD
		}
		amount := int64(1 + r.IntN(400))
		switch {
		case len(holds) > 0 && r.IntN(4) == 0:
			h := holds[0]
			holds = holds[1:]
			if r.IntN(3) == 0 {
				_, err := f.s.Post(f.ctx, entry(id, voidHold(id, h)))
				res.note(err)
				continue
			}
			je, err := f.s.Post(f.ctx, entry(id, postHold(id, h, 0)))
			if res.note(err) {
				tr := je.Transfers[0]
				res.delta[tr.DebitAccountID] -= tr.Amount
				res.delta[tr.CreditAccountID] += tr.Amount
			}
		case r.IntN(5) == 0:
			if _, err := f.s.Post(f.ctx, entry(id, hold(id, from, to, amount, 0))); res.note(err) {
				holds = append(holds, id)
			}
		default:
			if _, err := f.s.Post(f.ctx, entry(id, single(id, from, to, amount))); res.note(err) {
				res.delta[from] -= amount
				res.delta[to] += amount
			}
		}
	}
	for i, h := range holds {
		id := fmt.Sprintf("w%d-close-%d", w, i)
		_, err := f.s.Post(f.ctx, entry(id, voidHold(id, h)))
		res.note(err)
	}
	return res
}

// testConcurrentRefusals posts bursts where every fifth entry must be
// refused; the refusals never fail the valid entries posted alongside.
func testConcurrentRefusals(f *fixture) {
	t := f.t
	const (
		hot   = "InternalAccount:ledgertest-hot"
		empty = "InternalAccount:ledgertest-empty"
		per   = 20
	)
	accts := []ledger.Account{{ID: fundUSD, Currency: "USD", Kind: ledger.KindSandboxFunding}, protected(hot, "USD"), protected(empty, "USD")}
	payers := make([]string, concurrentWorkers)
	for w := range payers {
		payers[w] = fmt.Sprintf("InternalAccount:ledgertest-payer-%02d", w)
		accts = append(accts, protected(payers[w], "USD"))
	}
	require.NoError(t, f.s.CreateAccounts(f.ctx, accts...))
	for _, p := range payers {
		f.fund("fund-"+p, p, 1_000)
	}

	type bad struct {
		e    ledger.Entry
		code ledger.Code
	}
	errs := make(chan string, concurrentWorkers*per)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range concurrentWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range per {
				id := fmt.Sprintf("w%d-%d", w, i)
				if i%5 != 4 {
					if _, err := f.s.Post(f.ctx, entry(id, single(id, payers[w], hot, 10))); err != nil {
						errs <- fmt.Sprintf("valid entry %s failed: %v", id, err)
					}
					continue
				}
				b := []bad{
					{entry(id, single(id, empty, hot, 1)), ledger.CodeExceedsCredits},
					{entry(id, single(id, payers[w], "InternalAccount:ledgertest-ghost", 1)), ledger.CodeAccountNotFound},
					{entry(id, postHold(id, "no-such-hold", 0)), ledger.CodePendingNotFound},
					{entry(id, single(id+":a", payers[w], hot, 10), single(id+":b", empty, hot, 1)), ledger.CodeExceedsCredits},
				}[(i/5+w)%4]
				_, err := f.s.Post(f.ctx, b.e)
				if got := ledger.CodeOf(err); got != b.code {
					errs <- fmt.Sprintf("invalid entry %s: got %v, want %s", id, err, b.code)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	valid := int64(per - per/5)
	for _, p := range payers {
		assert.Equal(t, int64(1_000)-10*valid, f.account(p).Available(), "payer %s: a refusal leaked into its entries", p)
	}
	assert.Equal(t, int64(concurrentWorkers)*10*valid, f.account(hot).Available())
	assert.Equal(t, [4]int64{}, f.counters(empty))
	f.verify()
}

// testConcurrentDuplicates posts the same entries from several goroutines at
// once: each is recorded exactly once and every caller learns its outcome.
func testConcurrentDuplicates(f *fixture) {
	t := f.t
	f.chart()
	const (
		workers = 8
		entries = 25
	)
	type result struct {
		seq int64
		err error
	}
	results := make([][]result, workers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := make([]result, entries)
			<-start
			for k := range entries {
				i := (k + w*3) % entries // each worker starts elsewhere
				id := fmt.Sprintf("dup-%02d", i)
				je, err := f.s.Post(f.ctx, entry(id, single(id, fundUSD, alice, 7)))
				res[i] = result{je.Seq, err}
			}
			results[w] = res
		}()
	}
	close(start)
	wg.Wait()

	for i := range entries {
		winners := 0
		var seq int64
		for w := range workers {
			r := results[w][i]
			switch {
			case r.err == nil:
				winners++
			case errors.Is(r.err, ledger.ErrExists):
			default:
				t.Errorf("dup-%02d worker %d: %v", i, w, r.err)
			}
			if seq == 0 {
				seq = r.seq
			}
			assert.Equal(t, seq, r.seq, "dup-%02d: every caller gets the recorded entry", i)
		}
		assert.Equal(t, 1, winners, "dup-%02d must be recorded exactly once", i)
	}
	assert.Equal(t, int64(entries*7), f.account(alice).Available())
	assert.Len(t, f.journal(100), entries)
	f.verify()
}
