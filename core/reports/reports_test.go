package reports_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/reports"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/testkit"
)

const (
	pA = "Platform:a"
	pB = "Platform:b"
	a1 = "InternalAccount:a1"
	b1 = "InternalAccount:b1"
)

var (
	t0     = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ach    = ledger.RailSettlementID("ACH", "USD")
	fund   = ledger.SandboxFundingID("USD")
	viewA  = reports.Viewer{PlatformID: pA}
	viewB  = reports.Viewer{PlatformID: pB}
	viewOp = reports.Operator()
)

type env struct {
	t     *testing.T
	ctx   context.Context
	clock *testkit.FakeClock
	l     *memory.Ledger
	svc   *reports.Service
}

func newEnv(t *testing.T) *env {
	clock := testkit.NewFakeClock(t0)
	l := memory.NewLedger(clock)
	s := memory.NewStore(l)
	e := &env{t: t, ctx: context.Background(), clock: clock, l: l,
		svc: reports.New(memory.NewLedgerReports(l, s), clock)}
	require.NoError(t, l.CreateAccounts(e.ctx, append(ledger.SystemAccounts([]string{"USD"}, map[string][]string{"ACH": {"USD"}}),
		ledger.Account{ID: a1, Currency: "USD", Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits, PlatformID: pA},
		ledger.Account{ID: b1, Currency: "USD", Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits, PlatformID: pB})...))
	e.post(ledger.Entry{ID: "fund:a1", Ref: a1, Transfers: []ledger.Transfer{{ID: "fund:a1", DebitAccountID: fund, CreditAccountID: a1, Amount: 1_000, Currency: "USD", Code: "sandbox_funding"}}})
	e.post(ledger.Entry{ID: "fund:b1", Ref: b1, Transfers: []ledger.Transfer{{ID: "fund:b1", DebitAccountID: fund, CreditAccountID: b1, Amount: 500, Currency: "USD", Code: "sandbox_funding"}}})
	e.post(ledger.Entry{ID: "pay", Ref: "Transaction:pay", Transfers: []ledger.Transfer{{ID: "pay", DebitAccountID: a1, CreditAccountID: b1, Amount: 100, Currency: "USD", Code: "payment"}}})
	e.post(ledger.Entry{ID: "out", Ref: "Transaction:out", Transfers: []ledger.Transfer{{ID: "out", DebitAccountID: a1, CreditAccountID: ach, Amount: 250, Currency: "USD", Code: "transfer_out"}}})
	return e
}

func (e *env) post(en ledger.Entry) {
	e.t.Helper()
	e.clock.Advance(time.Second)
	_, err := e.l.Post(e.ctx, en)
	require.NoError(e.t, err)
}

// field requires err to be a 400 naming field.
func field(t *testing.T, err error, name string) {
	t.Helper()
	f, ok := fault.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, fault.KindInvalid, f.Kind)
	require.NotEmpty(t, f.Fields)
	assert.Equal(t, name, f.Fields[0].Field)
}

func kind(t *testing.T, err error, k fault.Kind) {
	t.Helper()
	f, ok := fault.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, k, f.Kind)
}

func TestPlatformsSeeOnlyTheirOwn(t *testing.T) {
	e := newEnv(t)
	page, err := e.svc.ListAccounts(e.ctx, viewA, reports.AccountQuery{})
	require.NoError(t, err)
	require.Len(t, page.Accounts, 1)
	assert.Equal(t, a1, page.Accounts[0].ID)
	assert.Equal(t, reports.Balance{Counters: ledger.Counters{DebitsPosted: 350, CreditsPosted: 1_000}, Available: 650, Total: 650, Net: 650},
		page.Accounts[0].Balance)
	assert.True(t, page.Accounts[0].Protected)

	_, err = e.svc.GetAccount(e.ctx, viewA, b1)
	kind(t, err, fault.KindNotFound)
	_, err = e.svc.GetAccount(e.ctx, viewA, ach)
	kind(t, err, fault.KindNotFound)
	_, err = e.svc.BalanceAt(e.ctx, viewA, b1, "")
	kind(t, err, fault.KindNotFound)
	_, err = e.svc.Statement(e.ctx, viewA, b1, reports.StatementQuery{})
	kind(t, err, fault.KindNotFound)
	_, err = e.svc.Entries(e.ctx, viewA, reports.EntryQuery{AccountID: b1})
	kind(t, err, fault.KindNotFound)
	_, err = e.svc.GetEntry(e.ctx, viewA, "fund:b1")
	kind(t, err, fault.KindNotFound)

	// The operator sees the system accounts too.
	op, err := e.svc.ListAccounts(e.ctx, viewOp, reports.AccountQuery{Limit: 100})
	require.NoError(t, err)
	assert.Len(t, op.Accounts, 6)
	sys, err := e.svc.GetAccount(e.ctx, viewOp, ach)
	require.NoError(t, err)
	assert.Equal(t, int64(250), sys.Balance.Net)

	// A's entries: its funding, the payment and the payout; the payment's
	// other leg (B's account) is redacted, the settlement account is not.
	es, err := e.svc.Entries(e.ctx, viewA, reports.EntryQuery{})
	require.NoError(t, err)
	var got []string
	for _, en := range es.Entries {
		got = append(got, en.ID)
	}
	assert.Equal(t, []string{"fund:a1", "pay", "out"}, got)
	pay, err := e.svc.GetEntry(e.ctx, viewA, "pay")
	require.NoError(t, err)
	assert.Equal(t, a1, pay.Legs[0].DebitAccountID)
	assert.Equal(t, reports.Redacted, pay.Legs[0].CreditAccountID)
	assert.Equal(t, "TRANSACTION", pay.CausedBy.Type)
	out, err := e.svc.GetEntry(e.ctx, viewA, "out")
	require.NoError(t, err)
	assert.Equal(t, ach, out.Legs[0].CreditAccountID)
	fundB, err := e.svc.GetEntry(e.ctx, viewOp, "fund:b1")
	require.NoError(t, err)
	assert.Equal(t, b1, fundB.Legs[0].CreditAccountID)
	assert.Equal(t, "FUNDING", fundB.CausedBy.Type)

	st, err := e.svc.Statement(e.ctx, viewB, b1, reports.StatementQuery{})
	require.NoError(t, err)
	require.Len(t, st.Lines, 2)
	assert.Equal(t, fund, st.Lines[0].Counterparty)
	assert.Equal(t, reports.Redacted, st.Lines[1].Counterparty)
	assert.Equal(t, "CREDIT", st.Lines[1].Direction)
	assert.Equal(t, int64(600), st.Closing.Net)
}

func TestTrialBalance(t *testing.T) {
	e := newEnv(t)
	op, err := e.svc.TrialBalance(e.ctx, viewOp, "")
	require.NoError(t, err)
	require.Len(t, op.Currencies, 1)
	usd := op.Currencies[0]
	assert.True(t, op.Balanced)
	assert.True(t, usd.Balanced)
	assert.Zero(t, usd.Net)
	assert.Zero(t, usd.Total)
	assert.Equal(t, usd.Debits, usd.Credits)
	assert.Len(t, usd.Accounts, 4)

	mine, err := e.svc.TrialBalance(e.ctx, viewA, "")
	require.NoError(t, err)
	usd = mine.Currencies[0]
	require.Len(t, usd.Accounts, 1)
	assert.Equal(t, int64(650), usd.Net)
	assert.Equal(t, int64(-650), usd.OthersNet)
	assert.Zero(t, usd.Total)
	assert.True(t, usd.Balanced)

	// As of the first funding: only A's 1,000.
	past, err := e.svc.TrialBalance(e.ctx, viewOp, t0.Add(time.Second).Format(time.RFC3339))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Second), past.AsOf)
	require.Len(t, past.Currencies[0].Accounts, 2)
	assert.Equal(t, int64(1_000), past.Currencies[0].Credits)

	_, err = e.svc.TrialBalance(e.ctx, viewOp, "yesterday")
	field(t, err, "asOf")
}

func TestValidation(t *testing.T) {
	e := newEnv(t)
	_, err := e.svc.BalanceAt(e.ctx, viewA, a1, "2026-13-01")
	field(t, err, "asOf")
	_, err = e.svc.Statement(e.ctx, viewA, a1, reports.StatementQuery{From: "nope"})
	field(t, err, "from")
	_, err = e.svc.Statement(e.ctx, viewA, a1, reports.StatementQuery{To: "2026-03-01T25:00:00Z"})
	field(t, err, "to")
	_, err = e.svc.Statement(e.ctx, viewA, a1, reports.StatementQuery{From: "2026-03-02", To: "2026-03-01"})
	field(t, err, "from")
	_, err = e.svc.Statement(e.ctx, viewA, a1, reports.StatementQuery{Limit: 10_000})
	field(t, err, "limit")
	_, err = e.svc.Entries(e.ctx, viewA, reports.EntryQuery{From: "2026-03-01T12:00:00Z", To: "2026-03-01T11:00:00Z"})
	field(t, err, "from")
	_, _, err = e.svc.ExportWindow(e.ctx, viewOp, reports.ExportQuery{Currency: "USD"})
	field(t, err, "rail")
	_, _, err = e.svc.ExportWindow(e.ctx, viewOp, reports.ExportQuery{Rail: "ACH", Currency: "USD", To: "x"})
	field(t, err, "to")
	_, _, err = e.svc.ExportWindow(e.ctx, viewOp, reports.ExportQuery{Rail: "CARRIER_PIGEON", Currency: "USD"})
	kind(t, err, fault.KindNotFound)

	// Dates and fractional seconds are instants too.
	pb, err := e.svc.BalanceAt(e.ctx, viewA, a1, "2026-03-01")
	require.NoError(t, err)
	assert.Zero(t, pb.Balance.Net)
	pb, err = e.svc.BalanceAt(e.ctx, viewA, a1, "2026-03-01T12:00:01.000000001Z")
	require.NoError(t, err)
	assert.Equal(t, int64(1_000), pb.Balance.Net)
	assert.Equal(t, "fund:a1", pb.LastEntryID)
}

func TestExportScopesRowsToThePlatform(t *testing.T) {
	e := newEnv(t)
	e.post(ledger.Entry{ID: "outB", Ref: "Transaction:outB", Transfers: []ledger.Transfer{{ID: "outB", DebitAccountID: b1, CreditAccountID: ach, Amount: 40, Currency: "USD"}}})
	rows := func(v reports.Viewer) []reports.ExportRow {
		var out []reports.ExportRow
		require.NoError(t, e.svc.Export(e.ctx, v, reports.ExportQuery{Rail: "ACH", Currency: "USD"}, func(r reports.ExportRow) error {
			out = append(out, r)
			return nil
		}))
		return out
	}
	all := rows(viewOp)
	require.Len(t, all, 2)
	mine := rows(viewB)
	require.Len(t, mine, 1)
	assert.Equal(t, "outB", mine[0].EntryID)
	assert.Equal(t, int64(40), mine[0].Posted)
	assert.Equal(t, "Transaction:outB", mine[0].TransactionID)
}

func TestVerifyIsForTheOperator(t *testing.T) {
	e := newEnv(t)
	_, err := e.svc.Verify(e.ctx, viewA, nil)
	kind(t, err, fault.KindForbidden)
	v, err := e.svc.Verify(e.ctx, viewOp, nil)
	require.NoError(t, err)
	assert.True(t, v.OK)
	assert.Equal(t, int64(4), v.Entries)
	assert.Zero(t, v.Unhashed)
	assert.Len(t, v.Head, 64)
	assert.Equal(t, int64(4), v.HeadSeq)
}

// A checkpoint signs the verified head with the operator's key; the
// journal then verifies against it, and a platform can sign nothing.
func TestCheckpointSignsTheVerifiedHead(t *testing.T) {
	e := newEnv(t)
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	_, _, err = e.svc.Checkpoint(e.ctx, viewA, key, nil)
	kind(t, err, fault.KindForbidden)
	cps, v, err := e.svc.Checkpoint(e.ctx, viewOp, key, nil)
	require.NoError(t, err)
	require.Len(t, cps, 1, "one chain, one checkpoint")
	cp := cps[0]
	assert.Equal(t, v.HeadSeq, cp.Seq)
	assert.Equal(t, v.HeadID, cp.EntryID)
	assert.Equal(t, v.Head, cp.Head)
	anchor, err := cp.Verify(key.Public().(ed25519.PublicKey))
	require.NoError(t, err)
	again, err := e.svc.Verify(e.ctx, viewOp, nil, anchor)
	require.NoError(t, err)
	assert.True(t, again.OK)
	assert.Equal(t, 1, again.Checkpoints)
}

func TestParseInstant(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-03-01T12:00:00Z":          t0,
		"2026-03-01T13:00:00+01:00":     t0,
		"2026-03-01T12:00:00.5Z":        t0.Add(500 * time.Millisecond),
		"2026-03-01":                    time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		" 2026-03-01T12:00:00.000001Z ": t0.Add(time.Microsecond),
	} {
		got, err := reports.ParseInstant("asOf", in)
		require.NoError(t, err, in)
		assert.True(t, want.Equal(got), in)
		assert.Equal(t, time.UTC, got.Location())
	}
	for _, in := range []string{"", "now", "1700000000", "2026-03-01 12:00:00", "2026-02-30"} {
		_, err := reports.ParseInstant("asOf", in)
		field(t, err, "asOf")
	}
	var f *fault.Error
	_, err := reports.ParseInstant("to", "x")
	require.True(t, errors.As(err, &f))
	assert.Contains(t, f.Message, "to")
}
