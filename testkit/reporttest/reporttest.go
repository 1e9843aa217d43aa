// Package reporttest is the ports.LedgerReports contract suite. Every
// reports adapter (memory, PostgreSQL) runs it from its own tests with a
// fresh ledger, store and reports per subtest:
//
//	reporttest.Run(t, func(t *testing.T, clock *testkit.FakeClock) reporttest.Env {
//		l := memory.NewLedger(clock)
//		s := memory.NewStore(l)
//		return reporttest.Env{Ledger: l, Store: s, Reports: memory.NewLedgerReports(l, s)}
//	})
//
// It posts through the LedgerStore port and reads through LedgerReports
// only, so every implementation answers alike: scoping, trial balances,
// point-in-time balances, statements and their pages, the journal with its
// links, the reconciliation export, journal verification, and a property
// test over random histories (RunProperty).
package reporttest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
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

// Env is one fresh ledger: the store posting, the business store (for the
// export's transaction columns) and the reports reading.
type Env struct {
	Ledger  ports.LedgerStore
	Store   ports.Store
	Reports ports.LedgerReports
}

// NewEnv returns a fresh Env whose times come from clock.
type NewEnv func(t *testing.T, clock *testkit.FakeClock) Env

// Run runs the contract suite as subtests of t.
func Run(t *testing.T, newEnv NewEnv) {
	tests := []struct {
		name string
		run  func(f *fixture)
	}{
		{"AccountsScopeAndPages", testAccounts},
		{"TrialBalance", testTrialBalance},
		{"BalanceAt", testBalanceAt},
		{"StatementAndPages", testStatement},
		{"EntriesFiltersAndLinks", testEntries},
		{"ExportSettlement", testExport},
		{"VerifyCleanJournal", testVerifyClean},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewFakeClock(Epoch)
			env := newEnv(t, clock)
			f := &fixture{t: t, env: env, clock: clock, ctx: context.Background()}
			f.chart()
			tt.run(f)
		})
	}
}

// Account ids of the suite's chart: platform A has a USD and an EUR
// account, platform B a USD account.
const (
	platformA = "Platform:reporttest-a"
	platformB = "Platform:reporttest-b"
	a1        = "InternalAccount:reporttest-a1" // USD, platform A
	a2        = "InternalAccount:reporttest-a2" // EUR, platform A
	b1        = "InternalAccount:reporttest-b1" // USD, platform B
)

var (
	fundUSD = ledger.SandboxFundingID("USD")
	fundEUR = ledger.SandboxFundingID("EUR")
	fxUSD   = ledger.FXPositionID("USD")
	fxEUR   = ledger.FXPositionID("EUR")
	feeUSD  = ledger.FeeRevenueID("USD")
	achUSD  = ledger.RailSettlementID("ACH", "USD")
	sepaEUR = ledger.RailSettlementID("SEPA", "EUR")
)

type fixture struct {
	t     *testing.T
	env   Env
	clock *testkit.FakeClock
	ctx   context.Context
}

func (f *fixture) chart() {
	f.t.Helper()
	accts := ledger.SystemAccounts([]string{"USD", "EUR"}, map[string][]string{"ACH": {"USD"}, "SEPA": {"EUR"}})
	for _, a := range []struct{ id, cur, platform string }{{a1, "USD", platformA}, {a2, "EUR", platformA}, {b1, "USD", platformB}} {
		accts = append(accts, ledger.Account{ID: a.id, Currency: a.cur, Kind: ledger.KindInternal,
			Flags: ledger.DebitsMustNotExceedCredits, PlatformID: a.platform})
	}
	require.NoError(f.t, f.env.Ledger.CreateAccounts(f.ctx, accts...))
}

func (f *fixture) post(e ledger.Entry) ledger.JournalEntry {
	f.t.Helper()
	je, err := f.env.Ledger.Post(f.ctx, e)
	require.NoError(f.t, err, "post %s", e.ID)
	return je
}

// tick moves the clock by whole milliseconds (PostgreSQL keeps microseconds).
func (f *fixture) tick(ms int) { f.clock.Advance(time.Duration(ms) * time.Millisecond) }

func single(id, from, to string, amount int64, currency, code string) ledger.Transfer {
	return ledger.Transfer{ID: id, DebitAccountID: from, CreditAccountID: to, Amount: amount, Currency: currency, Kind: ledger.Single, Code: code}
}

func hold(id, from, to string, amount int64, currency, code string) ledger.Transfer {
	return ledger.Transfer{ID: id, DebitAccountID: from, CreditAccountID: to, Amount: amount, Currency: currency, Kind: ledger.Pending, Code: code}
}

// story posts a small history at distinct instants and returns its times:
// funding, a transfer between platforms' accounts, a payout held and
// settled on ACH, one held and voided, a reversal, and a cross-currency
// quote through the FX positions.
func (f *fixture) story() map[string]time.Time {
	f.t.Helper()
	at := map[string]time.Time{}
	step := func(name string, e ledger.Entry) {
		f.tick(1000)
		je := f.post(e)
		at[name] = je.PostedAt
	}
	step("fundA1", ledger.Entry{ID: "fund:a1", Ref: a1, Transfers: []ledger.Transfer{single("fund:a1", fundUSD, a1, 10_000, "USD", "sandbox_funding")}})
	step("fundA2", ledger.Entry{ID: "fund:a2", Ref: a2, Transfers: []ledger.Transfer{single("fund:a2", fundEUR, a2, 5_000, "EUR", "sandbox_funding")}})
	step("fundB1", ledger.Entry{ID: "fund:b1", Ref: b1, Transfers: []ledger.Transfer{single("fund:b1", fundUSD, b1, 7_000, "USD", "sandbox_funding")}})
	step("holdOut", ledger.Entry{ID: "hold:Transaction:out1", Ref: "Transaction:out1", Transfers: []ledger.Transfer{
		hold("hold:Transaction:out1", a1, achUSD, 2_500, "USD", "transfer_out")}})
	step("settleOut", ledger.Entry{ID: "settle:Transaction:out1", Ref: "Transaction:out1", Transfers: []ledger.Transfer{
		{ID: "settle:Transaction:out1", Kind: ledger.PostPending, PendingID: "hold:Transaction:out1", Code: "transfer_out"}}})
	step("holdOut2", ledger.Entry{ID: "hold:Transaction:out2", Ref: "Transaction:out2", Transfers: []ledger.Transfer{
		hold("hold:Transaction:out2", b1, achUSD, 1_000, "USD", "transfer_out")}})
	step("voidOut2", ledger.Entry{ID: "release:Transaction:out2", Ref: "Transaction:out2", Transfers: []ledger.Transfer{
		{ID: "release:Transaction:out2", Kind: ledger.VoidPending, PendingID: "hold:Transaction:out2", Code: "transfer_out"}}})
	step("in", ledger.Entry{ID: "credit:Transaction:in1", Ref: "Transaction:in1", Transfers: []ledger.Transfer{
		single("credit:Transaction:in1", achUSD, b1, 300, "USD", "transfer_in")}})
	pay := ledger.Entry{ID: "pay:1", Ref: "Transaction:pay1", Transfers: []ledger.Transfer{single("pay:1", a1, b1, 400, "USD", "payment")}}
	step("pay", pay)
	rev, err := ledger.Reversal(pay, "reverse:pay:1", "Transaction:pay1")
	require.NoError(f.t, err)
	step("reverse", rev)
	step("quote", ledger.Entry{ID: "quote:1", Ref: "Transaction:q1", Transfers: []ledger.Transfer{
		single("quote:1:send", a1, fxUSD, 1_100, "USD", "quote_send"),
		single("quote:1:payout", fxEUR, sepaEUR, 1_000, "EUR", "quote_payout"),
		single("quote:1:fee", a1, feeUSD, 20, "USD", "quote_fee"),
	}})
	f.tick(1000)
	at["end"] = f.clock.Now()
	return at
}

var (
	scopeA   = ports.AccountScope{PlatformID: platformA}
	scopeB   = ports.AccountScope{PlatformID: platformB}
	scopeAll = ports.AccountScope{All: true}
)

func ids(accts []ledger.Account) []string {
	out := make([]string, len(accts))
	for i, a := range accts {
		out[i] = a.ID
	}
	return out
}

func testAccounts(f *fixture) {
	r := f.env.Reports
	got, err := r.Accounts(f.ctx, ports.LedgerAccountFilter{Scope: scopeA, Limit: 10})
	require.NoError(f.t, err)
	assert.Equal(f.t, []string{a1, a2}, ids(got))
	got, err = r.Accounts(f.ctx, ports.LedgerAccountFilter{Scope: scopeB, Limit: 10})
	require.NoError(f.t, err)
	assert.Equal(f.t, []string{b1}, ids(got))

	// The operator sees everything, by id, in pages of Limit (+1 to say
	// there is more).
	all, err := r.Accounts(f.ctx, ports.LedgerAccountFilter{Scope: scopeAll, Limit: 100})
	require.NoError(f.t, err)
	require.Len(f.t, all, 3+2*3+2)
	var walked []string
	after := ""
	for {
		page, err := r.Accounts(f.ctx, ports.LedgerAccountFilter{Scope: scopeAll, AfterID: after, Limit: 4})
		require.NoError(f.t, err)
		require.LessOrEqual(f.t, len(page), 5)
		if len(page) > 4 {
			page = page[:4]
			walked = append(walked, ids(page)...)
			after = page[3].ID
			continue
		}
		walked = append(walked, ids(page)...)
		break
	}
	assert.Equal(f.t, ids(all), walked)
	for i := 1; i < len(walked); i++ {
		assert.Less(f.t, walked[i-1], walked[i], "accounts are ordered by id (byte order)")
	}

	sys, err := r.Accounts(f.ctx, ports.LedgerAccountFilter{Scope: ports.AccountScope{PlatformID: platformA, System: true},
		Kind: ledger.KindRailSettlement, Limit: 10})
	require.NoError(f.t, err)
	assert.ElementsMatch(f.t, []string{achUSD, sepaEUR}, ids(sys))
	eur, err := r.Accounts(f.ctx, ports.LedgerAccountFilter{Scope: ports.AccountScope{PlatformID: platformA, System: true},
		Currency: "EUR", Limit: 10})
	require.NoError(f.t, err)
	assert.ElementsMatch(f.t, []string{a2, fundEUR, fxEUR, ledger.FeeRevenueID("EUR"), sepaEUR}, ids(eur))

	a, err := r.Account(f.ctx, a1)
	require.NoError(f.t, err)
	assert.Equal(f.t, platformA, a.PlatformID)
	_, err = r.Account(f.ctx, "InternalAccount:missing")
	assert.ErrorIs(f.t, err, ports.ErrNotFound)
}

func testTrialBalance(f *fixture) {
	at := f.story()
	r := f.env.Reports
	zeroSum := func(tb ports.TrialBalance) {
		f.t.Helper()
		require.NotEmpty(f.t, tb.Totals)
		for cur, c := range tb.Totals {
			assert.Equal(f.t, c.DebitsPosted, c.CreditsPosted, "%s posted", cur)
			assert.Equal(f.t, c.DebitsPending, c.CreditsPending, "%s pending", cur)
		}
	}
	now, err := r.TrialBalance(f.ctx, scopeAll, nil)
	require.NoError(f.t, err)
	zeroSum(now)
	require.NotEmpty(f.t, now.Accounts)
	for _, a := range now.Accounts {
		live, err := f.env.Ledger.Account(f.ctx, a.ID)
		require.NoError(f.t, err)
		assert.Equal(f.t, live.Counters(), a.Counters(), a.ID)
	}
	for i := 1; i < len(now.Accounts); i++ {
		p, c := now.Accounts[i-1], now.Accounts[i]
		assert.True(f.t, p.Currency < c.Currency || (p.Currency == c.Currency && p.ID < c.ID), "ordered by currency then id")
	}

	// As of the payout's hold: a1 holds 2,500; B is funded; no quote yet.
	past, err := r.TrialBalance(f.ctx, scopeAll, ptr(at["holdOut"]))
	require.NoError(f.t, err)
	zeroSum(past)
	byID := map[string]ledger.Account{}
	for _, a := range past.Accounts {
		byID[a.ID] = a
	}
	assert.Equal(f.t, ledger.Counters{DebitsPending: 2_500, CreditsPosted: 10_000}, byID[a1].Counters())
	assert.Equal(f.t, ledger.Counters{CreditsPending: 2_500}, byID[achUSD].Counters())
	_, hasFX := byID[fxUSD]
	assert.False(f.t, hasFX, "accounts without postings yet are left out")
	assert.Equal(f.t, ledger.Counters{DebitsPending: 2_500, DebitsPosted: 17_000, CreditsPending: 2_500, CreditsPosted: 17_000}, past.Totals["USD"])

	// A platform sees its own accounts; the totals still cover the ledger.
	mine, err := r.TrialBalance(f.ctx, scopeA, nil)
	require.NoError(f.t, err)
	assert.Equal(f.t, []string{a2, a1}, ids(mine.Accounts), "EUR before USD")
	assert.Equal(f.t, now.Totals, mine.Totals)

	before, err := r.TrialBalance(f.ctx, scopeAll, ptr(Epoch))
	require.NoError(f.t, err)
	assert.Empty(f.t, before.Accounts)
}

func ptr[T any](v T) *T { return &v }

func testBalanceAt(f *fixture) {
	at := f.story()
	r := f.env.Reports
	cases := []struct {
		acct string
		t    time.Time
		want ledger.Counters
		last string
	}{
		{a1, Epoch, ledger.Counters{}, ""},
		{a1, at["fundA1"].Add(-time.Millisecond), ledger.Counters{}, ""},
		{a1, at["fundA1"], ledger.Counters{CreditsPosted: 10_000}, "fund:a1"},
		{a1, at["holdOut"], ledger.Counters{DebitsPending: 2_500, CreditsPosted: 10_000}, "hold:Transaction:out1"},
		{a1, at["settleOut"].Add(time.Millisecond), ledger.Counters{DebitsPosted: 2_500, CreditsPosted: 10_000}, "settle:Transaction:out1"},
		{a1, at["reverse"], ledger.Counters{DebitsPosted: 2_900, CreditsPosted: 10_400}, "reverse:pay:1"},
		{a1, at["end"], ledger.Counters{DebitsPosted: 4_020, CreditsPosted: 10_400}, "quote:1"},
		{b1, at["voidOut2"], ledger.Counters{CreditsPosted: 7_000}, "release:Transaction:out2"},
		{achUSD, at["in"], ledger.Counters{DebitsPosted: 300, CreditsPosted: 2_500}, "credit:Transaction:in1"},
	}
	for _, c := range cases {
		pb, err := r.BalanceAt(f.ctx, c.acct, c.t)
		require.NoError(f.t, err)
		assert.Equal(f.t, c.acct, pb.Account.ID)
		assert.Equal(f.t, c.want, pb.Account.Counters(), "%s at %s", c.acct, c.t)
		assert.Equal(f.t, c.last, pb.LastEntryID, "%s at %s", c.acct, c.t)
		if c.last != "" {
			assert.False(f.t, pb.LastPostedAt.After(c.t))
		}
	}
	_, err := r.BalanceAt(f.ctx, "InternalAccount:missing", at["end"])
	assert.ErrorIs(f.t, err, ports.ErrNotFound)
}

func testStatement(f *fixture) {
	at := f.story()
	r := f.env.Reports
	// a1 from just after its funding to the end: hold, settle, pay,
	// reverse, and the quote's two legs on it.
	q := ports.StatementQuery{AccountID: a1, From: at["fundA1"].Add(time.Millisecond), To: at["end"], Limit: 100}
	st, err := r.Statement(f.ctx, q)
	require.NoError(f.t, err)
	assert.Equal(f.t, a1, st.Account.ID)
	assert.Equal(f.t, ledger.Counters{CreditsPosted: 10_000}, st.Opening)
	assert.Equal(f.t, ledger.Counters{DebitsPosted: 4_020, CreditsPosted: 10_400}, st.Closing)
	var got []string
	sum := st.Opening
	for _, l := range st.Lines {
		got = append(got, l.Transfer.ID)
		sum = sum.Add(l.Delta)
		assert.Equal(f.t, sum, l.After, "running balance after %s", l.Transfer.ID)
		assert.Equal(f.t, a1, l.AccountID)
		assert.NotZero(f.t, l.Seq)
	}
	assert.Equal(f.t, []string{"hold:Transaction:out1", "settle:Transaction:out1", "pay:1", "reverse:pay:1:0", "quote:1:send", "quote:1:fee"}, got)
	assert.Equal(f.t, st.Closing, sum)
	byID := map[string]ports.StatementLine{}
	for _, l := range st.Lines {
		byID[l.Transfer.ID] = l
	}
	assert.Equal(f.t, "Transaction:out1", byID["settle:Transaction:out1"].Ref)
	assert.Equal(f.t, ledger.Counters{DebitsPending: -2_500, DebitsPosted: 2_500}, byID["settle:Transaction:out1"].Delta)
	assert.True(f.t, byID["settle:Transaction:out1"].Debit)
	assert.Equal(f.t, achUSD, byID["settle:Transaction:out1"].Transfer.CreditAccountID, "a post carries the hold's accounts")
	assert.Equal(f.t, "pay:1", byID["reverse:pay:1:0"].Reverses)
	assert.False(f.t, byID["reverse:pay:1:0"].Debit)
	assert.Equal(f.t, "reversal", byID["reverse:pay:1:0"].Transfer.Code)
	assert.Equal(f.t, 2, byID["quote:1:fee"].TransferIndex)
	assert.Equal(f.t, "quote_fee", byID["quote:1:fee"].Transfer.Code)

	// Pages of 2 walk the same lines; each page's deltas chain from the
	// posting before it.
	var walked []string
	q.Limit = 2
	for {
		page, err := r.Statement(f.ctx, q)
		require.NoError(f.t, err)
		assert.Equal(f.t, st.Opening, page.Opening)
		assert.Equal(f.t, st.Closing, page.Closing)
		lines := page.Lines
		more := len(lines) > q.Limit
		if more {
			lines = lines[:q.Limit]
		}
		for _, l := range lines {
			walked = append(walked, l.Transfer.ID)
			assert.Equal(f.t, byID[l.Transfer.ID].Delta, l.Delta, l.Transfer.ID)
			assert.Equal(f.t, byID[l.Transfer.ID].Key, l.Key)
		}
		if !more {
			break
		}
		q.After = &lines[len(lines)-1].Key
	}
	assert.Equal(f.t, got, walked)

	// A window is half-open: [fundA1, holdOut) holds the funding only.
	win, err := r.Statement(f.ctx, ports.StatementQuery{AccountID: a1, From: at["fundA1"], To: at["holdOut"], Limit: 10})
	require.NoError(f.t, err)
	require.Len(f.t, win.Lines, 1)
	assert.Equal(f.t, "fund:a1", win.Lines[0].EntryID)
	assert.Equal(f.t, ledger.Counters{}, win.Opening)
	assert.Equal(f.t, ledger.Counters{CreditsPosted: 10_000}, win.Closing)

	_, err = r.Statement(f.ctx, ports.StatementQuery{AccountID: "InternalAccount:missing", From: Epoch, To: at["end"], Limit: 10})
	assert.ErrorIs(f.t, err, ports.ErrNotFound)
}

func entryIDs(es []ports.ReportEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func testEntries(f *fixture) {
	at := f.story()
	r := f.env.Reports
	all, err := r.Entries(f.ctx, ports.EntryFilter{Scope: scopeAll, Limit: 100})
	require.NoError(f.t, err)
	require.Len(f.t, all, 11)
	for i := 1; i < len(all); i++ {
		assert.Less(f.t, all[i-1].Seq, all[i].Seq)
	}
	// One writer: every entry is on shard 0.
	zero, one := int16(0), int16(1)
	onZero, err := r.Entries(f.ctx, ports.EntryFilter{Scope: scopeAll, Shard: &zero, Limit: 100})
	require.NoError(f.t, err)
	assert.Equal(f.t, entryIDs(all), entryIDs(onZero))
	onOne, err := r.Entries(f.ctx, ports.EntryFilter{Scope: scopeAll, Shard: &one, Limit: 100})
	require.NoError(f.t, err)
	assert.Empty(f.t, onOne)
	onOne, err = r.Entries(f.ctx, ports.EntryFilter{Scope: scopeAll, AccountID: a1, Shard: &one, Limit: 100})
	require.NoError(f.t, err)
	assert.Empty(f.t, onOne, "an account's entries on another shard")

	// Platform B sees the entries touching its account, nothing else.
	bs, err := r.Entries(f.ctx, ports.EntryFilter{Scope: scopeB, Limit: 100})
	require.NoError(f.t, err)
	assert.Equal(f.t, []string{"fund:b1", "hold:Transaction:out2", "release:Transaction:out2", "credit:Transaction:in1", "pay:1", "reverse:pay:1"}, entryIDs(bs))

	byAcct, err := r.Entries(f.ctx, ports.EntryFilter{Scope: scopeAll, AccountID: a1, Limit: 100})
	require.NoError(f.t, err)
	assert.Equal(f.t, []string{"fund:a1", "hold:Transaction:out1", "settle:Transaction:out1", "pay:1", "reverse:pay:1", "quote:1"}, entryIDs(byAcct),
		"the quote has two legs on a1 and is listed once")
	byRef, err := r.Entries(f.ctx, ports.EntryFilter{Scope: scopeAll, Ref: "Transaction:out1", Limit: 100})
	require.NoError(f.t, err)
	assert.Equal(f.t, []string{"hold:Transaction:out1", "settle:Transaction:out1"}, entryIDs(byRef))
	window, err := r.Entries(f.ctx, ports.EntryFilter{Scope: scopeAll, From: ptr(at["holdOut"]), To: ptr(at["in"]), Limit: 100})
	require.NoError(f.t, err)
	assert.Equal(f.t, []string{"hold:Transaction:out1", "settle:Transaction:out1", "hold:Transaction:out2", "release:Transaction:out2"}, entryIDs(window))
	acctWindow, err := r.Entries(f.ctx, ports.EntryFilter{Scope: scopeAll, AccountID: achUSD, From: ptr(at["settleOut"]),
		To: ptr(at["end"]), Ref: "Transaction:out2", Limit: 100})
	require.NoError(f.t, err)
	assert.Equal(f.t, []string{"hold:Transaction:out2", "release:Transaction:out2"}, entryIDs(acctWindow))

	// Pages: by the whole journal and by account.
	for _, filter := range []ports.EntryFilter{{Scope: scopeAll}, {Scope: scopeAll, AccountID: a1}, {Scope: scopeB}} {
		full, err := r.Entries(f.ctx, ports.EntryFilter{Scope: filter.Scope, AccountID: filter.AccountID, Limit: 100})
		require.NoError(f.t, err)
		var walked []string
		filter.Limit = 2
		for {
			page, err := r.Entries(f.ctx, filter)
			require.NoError(f.t, err)
			more := len(page) > filter.Limit
			if more {
				page = page[:filter.Limit]
			}
			walked = append(walked, entryIDs(page)...)
			if !more {
				break
			}
			filter.After = ptr(page[len(page)-1].Key())
		}
		assert.Equal(f.t, entryIDs(full), walked, "pages of %+v", filter)
	}

	// Links, legs and owners.
	pay, err := r.Entry(f.ctx, "pay:1")
	require.NoError(f.t, err)
	assert.Equal(f.t, "reverse:pay:1", pay.ReversedBy)
	assert.Equal(f.t, "Transaction:pay1", pay.Ref)
	assert.Equal(f.t, map[string]string{a1: platformA, b1: platformB}, pay.Owners)
	rev, err := r.Entry(f.ctx, "reverse:pay:1")
	require.NoError(f.t, err)
	assert.Equal(f.t, "pay:1", rev.Reverses)
	assert.Empty(f.t, rev.ReversedBy)
	quote, err := r.Entry(f.ctx, "quote:1")
	require.NoError(f.t, err)
	require.Len(f.t, quote.Transfers, 3)
	assert.Equal(f.t, "quote:1:payout", quote.Transfers[1].ID)
	assert.Equal(f.t, "", quote.Owners[fxEUR])
	assert.Equal(f.t, platformA, quote.Owners[a1])
	assert.True(f.t, quote.PostedAt.Equal(at["quote"]))
	settle, err := r.Entry(f.ctx, "settle:Transaction:out1")
	require.NoError(f.t, err)
	assert.Equal(f.t, int64(2_500), settle.Transfers[0].Amount)
	assert.Equal(f.t, ledger.PostPending, settle.Transfers[0].Kind)
	_, err = r.Entry(f.ctx, "missing")
	assert.ErrorIs(f.t, err, ports.ErrNotFound)
}

func testExport(f *fixture) {
	// The payout's transaction exists: its reference and status show.
	now := f.clock.Now()
	require.NoError(f.t, f.env.Store.InTx(f.ctx, func(tx ports.Tx) error {
		return tx.Transactions().Create(f.ctx, ports.Transaction{ID: "Transaction:out1", PlatformID: platformA,
			Type: "OUTGOING", Status: "COMPLETED", PaymentRail: "ACH", SourceCurrency: "USD", DestinationCurrency: "USD",
			SentAmount: 2_500, ReceivedAmount: 2_500, Reference: "REF-OUT1", CreatedAt: now, UpdatedAt: now})
	}))
	// So does the quote's (platform A's cross-currency payment).
	require.NoError(f.t, f.env.Store.InTx(f.ctx, func(tx ports.Tx) error {
		return tx.Transactions().Create(f.ctx, ports.Transaction{ID: "Transaction:q1", PlatformID: platformA,
			Type: "OUTGOING", Status: "PROCESSING", PaymentRail: "SEPA", SourceCurrency: "USD", DestinationCurrency: "EUR",
			SentAmount: 1_120, ReceivedAmount: 1_000, Reference: "REF-Q1", CreatedAt: now, UpdatedAt: now})
	}))
	at := f.story()
	r := f.env.Reports
	export := func(x ports.SettlementExport) []ports.SettlementRow {
		f.t.Helper()
		var rows []ports.SettlementRow
		require.NoError(f.t, r.ExportSettlement(f.ctx, x, func(row ports.SettlementRow) error {
			rows = append(rows, row)
			return nil
		}))
		return rows
	}
	rows := export(ports.SettlementExport{Rail: "ACH", Currency: "USD", From: Epoch, To: at["end"]})
	var got []string
	var posted, pending int64
	for _, row := range rows {
		got = append(got, row.TransferID)
		posted += row.Posted
		pending += row.Pending
		assert.Equal(f.t, achUSD, row.AccountID)
		assert.Equal(f.t, "ACH", row.Rail)
		assert.Equal(f.t, "USD", row.Currency)
	}
	require.Equal(f.t, []string{"hold:Transaction:out1", "settle:Transaction:out1", "hold:Transaction:out2",
		"release:Transaction:out2", "credit:Transaction:in1"}, got)
	settled := rows[1]
	assert.Equal(f.t, "Transaction:out1", settled.TransactionID)
	assert.Equal(f.t, "REF-OUT1", settled.RailReference)
	assert.Equal(f.t, "COMPLETED", settled.Status)
	assert.Equal(f.t, a1, settled.Counterparty)
	assert.Equal(f.t, int64(2_500), settled.Amount)
	assert.Equal(f.t, int64(2_500), settled.Posted)
	assert.Equal(f.t, int64(-2_500), settled.Pending)
	assert.Equal(f.t, ledger.PostPending, settled.Kind)
	assert.True(f.t, settled.Key.PostedAt.Equal(at["settleOut"]))
	assert.Equal(f.t, int64(0), rows[0].Posted)
	assert.Equal(f.t, int64(2_500), rows[0].Pending)
	assert.Equal(f.t, int64(-300), rows[4].Posted, "money in debits the settlement account")
	assert.Equal(f.t, "Transaction:in1", rows[4].TransactionID)
	assert.Empty(f.t, rows[4].Status, "no stored transaction")
	// The rows sum to the account's movement over the window.
	end, err := r.BalanceAt(f.ctx, achUSD, at["end"])
	require.NoError(f.t, err)
	assert.Equal(f.t, end.Account.Counters().Net(), posted)
	assert.Equal(f.t, end.Account.Counters().PendingNet(), pending)

	// A window, and one platform's rows.
	win := export(ports.SettlementExport{Rail: "ACH", Currency: "USD", From: at["settleOut"], To: at["voidOut2"]})
	require.Len(f.t, win, 2)
	assert.Equal(f.t, int64(2_500), win[0].Posted)
	assert.Equal(f.t, int64(1_000), win[1].Pending)
	onlyB := export(ports.SettlementExport{Rail: "ACH", Currency: "USD", From: Epoch, To: at["end"], PlatformID: platformB})
	var bIDs []string
	for _, row := range onlyB {
		bIDs = append(bIDs, row.TransferID)
	}
	assert.Equal(f.t, []string{"hold:Transaction:out2", "release:Transaction:out2", "credit:Transaction:in1"}, bIDs)
	assert.Equal(f.t, int64(-1_000), onlyB[1].Pending, "a filtered row's change is still from the posting before it")
	sepa := export(ports.SettlementExport{Rail: "SEPA", Currency: "EUR", From: Epoch, To: at["end"]})
	require.Len(f.t, sepa, 1)
	assert.Equal(f.t, fxEUR, sepa[0].Counterparty)
	assert.Equal(f.t, "quote_payout", sepa[0].Code)
	// A quote's payout leg has a system account as counterparty; the row
	// is still its platform's, through the transaction.
	sepaA := export(ports.SettlementExport{Rail: "SEPA", Currency: "EUR", From: Epoch, To: at["end"], PlatformID: platformA})
	require.Len(f.t, sepaA, 1)
	assert.Equal(f.t, "Transaction:q1", sepaA[0].TransactionID)
	assert.Equal(f.t, "REF-Q1", sepaA[0].RailReference)
	assert.Empty(f.t, export(ports.SettlementExport{Rail: "SEPA", Currency: "EUR", From: Epoch, To: at["end"], PlatformID: platformB}))
	assert.Empty(f.t, export(ports.SettlementExport{Rail: "WIRE", Currency: "USD", From: Epoch, To: at["end"]}))

	// fn's error stops the export and comes back as it is.
	stop := fmt.Errorf("client went away")
	n := 0
	err = r.ExportSettlement(f.ctx, ports.SettlementExport{Rail: "ACH", Currency: "USD", From: Epoch, To: at["end"]},
		func(ports.SettlementRow) error { n++; return stop })
	assert.Equal(f.t, stop, err)
	assert.Equal(f.t, 1, n)
}

func testVerifyClean(f *fixture) {
	f.story()
	var calls int
	var last [2]int64
	v, err := f.env.Reports.VerifyJournal(f.ctx, func(done, total int64) {
		calls++
		last = [2]int64{done, total}
	})
	require.NoError(f.t, err)
	assert.Empty(f.t, v.Breaks)
	assert.True(f.t, v.OK())
	assert.Equal(f.t, int64(11), v.Entries)
	assert.Equal(f.t, v.Entries, v.Hashed+v.Unhashed)
	assert.Equal(f.t, int64(11), v.Accounts)
	assert.Positive(f.t, calls)
	assert.Equal(f.t, last[0], last[1], "progress ends at its total")
}

// RunChain runs the checks that need the store's writer to hash the
// journal (ledger.Hash chained per batch): every entry verified as hashed,
// and the head of the chain is the last entry's hash.
func RunChain(t *testing.T, newEnv NewEnv) {
	clock := testkit.NewFakeClock(Epoch)
	env := newEnv(t, clock)
	f := &fixture{t: t, env: env, clock: clock, ctx: context.Background()}
	f.chart()
	f.story()
	v, err := env.Reports.VerifyJournal(f.ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, v.Breaks)
	assert.Equal(t, int64(11), v.Hashed)
	assert.Zero(t, v.Unhashed)
	last, err := env.Reports.Entry(f.ctx, "quote:1")
	require.NoError(t, err)
	assert.Equal(t, last.Hash, v.Head)
	assert.Equal(t, ledger.Hash(last.PrevHash, last.JournalEntry), last.Hash)
}

// Tamper edits a store behind its writer's back, as anyone who can write
// its database could.
type Tamper struct {
	// StripHashes removes every entry's hash and previous hash.
	StripHashes func(t *testing.T, env Env)
	// Forge adds delta to the amount of the Single transfer transferID
	// (the last posting of both its accounts) and to the counters it
	// moved (the accounts' and, where the store keeps them, the
	// postings'), then recomputes the hash chain end to end: a forgery
	// consistent with itself.
	Forge func(t *testing.T, env Env, transferID string, delta int64)
}

// RunTamper checks that neither attack on the journal goes unseen:
// stripped hashes are breaks, and a forgery re-chained end to end, which
// verifies on its own, fails against a checkpoint signed before it.
func RunTamper(t *testing.T, newEnv NewEnv, tamper Tamper) {
	setup := func(t *testing.T) (*fixture, ledger.Anchor) {
		clock := testkit.NewFakeClock(Epoch)
		f := &fixture{t: t, env: newEnv(t, clock), clock: clock, ctx: context.Background()}
		f.chart()
		f.story()
		v, err := f.env.Reports.VerifyJournal(f.ctx, nil)
		require.NoError(t, err)
		require.True(t, v.OK(), "breaks: %+v", v.Breaks)
		_, key, err := ed25519.GenerateKey(rand.Reader)
		require.NoError(t, err)
		require.Len(t, v.Chains, 1)
		cp := ledger.SignCheckpoint(key, v.Chains[0], clock.Now())
		anchor, err := cp.Verify(key.Public().(ed25519.PublicKey))
		require.NoError(t, err)
		assert.Equal(t, "quote:1", cp.EntryID)
		return f, anchor
	}
	t.Run("HashesStripped", func(t *testing.T) {
		f, anchor := setup(t)
		tamper.StripHashes(t, f.env)
		v, err := f.env.Reports.VerifyJournal(f.ctx, nil, anchor)
		require.NoError(t, err)
		assert.False(t, v.OK())
		assert.Equal(t, int64(11), v.Unhashed)
		require.NotEmpty(t, v.Breaks)
		assert.Equal(t, ledger.BreakUnhashed, v.Breaks[0].Kind)
		assert.Equal(t, "fund:a1", v.Breaks[0].EntryID)
		assert.Contains(t, v.Breaks[0].Message, "removed")
	})
	t.Run("ForgedAndRechained", func(t *testing.T) {
		f, anchor := setup(t)
		tamper.Forge(t, f.env, "quote:1:fee", 1_000)
		v, err := f.env.Reports.VerifyJournal(f.ctx, nil)
		require.NoError(t, err)
		require.True(t, v.OK(), "the forgery must be consistent for the test to mean anything: %+v", v.Breaks)
		assert.NotEqual(t, anchor.Head, v.Head)
		v, err = f.env.Reports.VerifyJournal(f.ctx, nil, anchor)
		require.NoError(t, err)
		require.Len(t, v.Breaks, 1, "breaks: %+v", v.Breaks)
		assert.Equal(t, ledger.BreakCheckpoint, v.Breaks[0].Kind)
		assert.Equal(t, "quote:1", v.Breaks[0].EntryID)
		assert.Equal(t, anchor.Seq, v.Breaks[0].Seq)
	})
}
