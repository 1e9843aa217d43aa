package transfers_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// step is one point of a sandbox scenario: after moving the clock by
// advance and running the due jobs, the transaction has status (and
// failureReason).
type step struct {
	advance time.Duration
	status  string
	reason  string
}

// The sandbox suffix table, transfer-out over ACH (10 s settlement).
var outScenarios = []struct {
	name   string
	suffix string
	steps  []step
	paid   bool
}{
	{"002 insufficient funds fails at once", "002", []step{{0, "FAILED", "ACCOUNT_CANNOT_RECEIVE"}}, false},
	{"003 closed or invalid fails at once", "003", []step{{0, "FAILED", "ACCOUNT_INVALID"}}, false},
	{"004 rejected by the bank", "004", []step{
		{0, "PROCESSING", ""}, {9 * time.Second, "PROCESSING", ""}, {time.Second, "REJECTED", ""}}, false},
	{"005 pending about 30 s then fails", "005", []step{
		{0, "PROCESSING", ""}, {10 * time.Second, "PROCESSING", ""}, {19 * time.Second, "PROCESSING", ""},
		{2 * time.Second, "FAILED", "COUNTERPARTY_POST_TX_FAILED"}}, false},
	{"other succeeds after settlement", "789", []step{
		{0, "PROCESSING", ""}, {9 * time.Second, "PROCESSING", ""}, {time.Second, "COMPLETED", ""}}, true},
}

func TestTransferOutSandboxSuffixes(t *testing.T) {
	for _, sc := range outScenarios {
		t.Run(sc.name, func(t *testing.T) { runOutScenario(t, newMemoryEnv(t), sc.suffix, sc.steps, sc.paid) })
	}
}

// On PostgreSQL the scenarios share one database, one after the other.
func TestTransferOutSandboxSuffixesPostgres(t *testing.T) {
	e := newPostgresEnv(t)
	for _, sc := range outScenarios {
		t.Run(sc.name, func(t *testing.T) { e.T = t; runOutScenario(t, e, sc.suffix, sc.steps, sc.paid) })
	}
}

func runOutScenario(t *testing.T, e *env, suffix string, steps []step, paid bool) {
	ctx := context.Background()
	pid := e.platform()
	c, acct := e.customer(pid)
	dest := e.external(pid, c.ID, usdAccount(suffix))
	e.Fund(pid, acct.ID, 10_000)
	settlement := ledger.RailSettlementID("ACH", "USD")
	before := e.LedgerAccount(settlement)

	tx, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{
		SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 2_500,
		RemittanceInformation: "invoice 42", PurposeOfPayment: "GOODS_OR_SERVICES",
	})
	require.NoError(t, err)
	assert.Equal(t, "PENDING", tx.Status)
	assert.Equal(t, "OUTGOING", tx.Type)
	assert.Equal(t, "ACH", tx.PaymentRail)
	assert.Equal(t, "AUTO", tx.RailSelectionMode)
	assert.Equal(t, c.ID, tx.CustomerID)
	assert.Equal(t, c.PlatformCustomerID, tx.PlatformCustomerID)
	assert.NotEmpty(t, tx.Reference)
	assert.Contains(t, tx.ReceiverIdentifiers, "12345678"+suffix)
	// The hold is placed with the response: spendable drops, total stays.
	assert.Equal(t, int64(7_500), e.available(acct.ID))
	assert.Equal(t, int64(10_000), e.LedgerAccount(acct.ID).Total())
	stored := e.txn(pid, tx.ID)
	assert.Equal(t, "invoice 42", stored.RemittanceInformation)
	assert.Equal(t, "GOODS_OR_SERVICES", stored.PurposeOfPayment)
	assert.Equal(t, "AUTO", stored.RailSelectionMode)

	for i, st := range steps {
		e.Advance(st.advance)
		got := e.txn(pid, tx.ID)
		require.Equalf(t, st.status, got.Status, "step %d", i)
		assert.Equalf(t, st.reason, got.FailureReason, "step %d", i)
		if st.status == "PROCESSING" {
			assert.Equal(t, int64(7_500), e.available(acct.ID), "held while the rail works")
		}
	}
	final := e.txn(pid, tx.ID)
	la := e.LedgerAccount(acct.ID)
	assert.Zero(t, la.DebitsPending, "no hold left open")
	if paid {
		require.NotNil(t, final.SettledAt)
		assert.Equal(t, e.Clock.Now(), final.SettledAt.UTC())
		assert.Equal(t, int64(7_500), la.Available())
		assert.Equal(t, before.CreditsPosted+2_500, e.LedgerAccount(settlement).CreditsPosted)
	} else {
		assert.Nil(t, final.SettledAt)
		assert.Equal(t, int64(10_000), la.Available(), "a failure restores the balance exactly")
		assert.Equal(t, before.CreditsPosted, e.LedgerAccount(settlement).CreditsPosted)
	}
	// Nothing else is pending, and re-running settles nothing twice.
	assert.Zero(t, e.RunJobs())
	e.Advance(time.Hour)
	assert.Equal(t, final, e.txn(pid, tx.ID))
	e.Verify()
}

// The sandbox suffix table, transfer-in over an ACH pull.
var inScenarios = []struct {
	name   string
	suffix string
	steps  []step
	paid   bool
}{
	{"002 insufficient funds fails at once", "002", []step{{0, "FAILED", "COLLECTION_FAILED"}}, false},
	{"003 closed or invalid fails at once", "003", []step{{0, "FAILED", "COLLECTION_FAILED"}}, false},
	{"004 rejected by the bank", "004", []step{
		{0, "PROCESSING", ""}, {10 * time.Second, "FAILED", "COLLECTION_FAILED"}}, false},
	{"005 pending about 30 s then fails", "005", []step{
		{0, "PROCESSING", ""}, {29 * time.Second, "PROCESSING", ""}, {time.Second, "FAILED", "COLLECTION_FAILED"}}, false},
	{"other succeeds after settlement", "321", []step{
		{0, "PROCESSING", ""}, {9 * time.Second, "PROCESSING", ""}, {time.Second, "COMPLETED", ""}}, true},
}

func TestTransferInSandboxSuffixes(t *testing.T) {
	for _, sc := range inScenarios {
		t.Run(sc.name, func(t *testing.T) {
			e := newMemoryEnv(t)
			ctx := context.Background()
			pid := e.platform()
			c, acct := e.customer(pid)
			src := e.external(pid, c.ID, usdAccount(sc.suffix))
			e.Fund(pid, acct.ID, 1_000)

			tx, err := e.transfers.TransferIn(ctx, pid, transfers.InRequest{
				SourceAccountID: src.ID, DestinationAccountID: acct.ID, Amount: 4_000,
			})
			require.NoError(t, err)
			assert.Equal(t, "PENDING", tx.Status)
			assert.Equal(t, "INCOMING", tx.Type)
			assert.Equal(t, "ACH", tx.PaymentRail)
			assert.Equal(t, int64(4_000), tx.ReceivedAmount)
			assert.Contains(t, tx.SenderIdentifiers, src.ID)
			assert.Equal(t, []string{acct.ID}, tx.ReceiverIdentifiers)

			for i, st := range sc.steps {
				e.Advance(st.advance)
				got := e.txn(pid, tx.ID)
				require.Equalf(t, st.status, got.Status, "step %d", i)
				assert.Equalf(t, st.reason, got.FailureReason, "step %d", i)
				if st.status != "COMPLETED" {
					assert.Equal(t, int64(1_000), e.available(acct.ID), "nothing is credited before the rail succeeds")
				}
			}
			want := int64(1_000)
			if sc.paid {
				want = 5_000
				assert.NotNil(t, e.txn(pid, tx.ID).SettledAt)
			}
			assert.Equal(t, want, e.available(acct.ID))
			e.Advance(time.Hour)
			assert.Equal(t, want, e.available(acct.ID), "credited once")
			e.Verify()
		})
	}
}

func TestTransferOutInstantRailSettlesOnNextRun(t *testing.T) {
	e := newMemoryEnv(t)
	pid, acct, _, tx := e.payout(t, "RTP")
	assert.Equal(t, "RTP", tx.PaymentRail)
	assert.Equal(t, "MANUAL", tx.RailSelectionMode)
	assert.Equal(t, "PENDING", e.txn(pid, tx.ID).Status, "nothing is decided inside the request")
	e.RunJobs()
	assert.Equal(t, "COMPLETED", e.txn(pid, tx.ID).Status)
	assert.Zero(t, e.available(acct.ID))
	e.Verify()
}

// payout funds a new customer's account with 10.00 USD and pays it all
// out to the customer's US account on rail (empty: the default).
func (e *env) payout(t *testing.T, rail string) (string, ports.InternalAccount, ports.ExternalAccount, ports.Transaction) {
	t.Helper()
	pid := e.platform()
	c, acct := e.customer(pid)
	dest := e.external(pid, c.ID, usdAccount("111"))
	e.Fund(pid, acct.ID, 1_000)
	tx, err := e.transfers.TransferOut(context.Background(), pid, transfers.OutRequest{
		SourceAccountID: acct.ID, DestinationAccountID: dest.ID, PaymentRail: rail, Amount: 1_000})
	require.NoError(t, err)
	return pid, acct, dest, tx
}

// A submission job carries the rail request with the destination's
// snapshot as JSON without its empty fields (a payload used to spell out
// every field of every account type: 1,601 bytes here), and reads back as
// the request it was.
func TestSubmitJobPayloadLeavesOutEmptyFields(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	_, _, dest, tx := e.payout(t, "")
	due, err := e.Store.Read().Jobs().Claim(ctx, e.Clock.Now(), 10, time.Minute, ports.JobKinds{Only: []string{transfers.KindSubmit}})
	require.NoError(t, err)
	require.Len(t, due, 1)
	payload := string(due[0].Payload)
	assert.NotContains(t, payload, `:""`, "no empty string is stored")
	assert.NotContains(t, payload, `:false`, "no false flag is stored")
	assert.Less(t, len(payload), 1_000, "about 900 bytes (1,601 with the empty fields)")
	var got struct {
		TransactionID string
		Request       ports.RailRequest
	}
	require.NoError(t, json.Unmarshal(due[0].Payload, &got))
	assert.Equal(t, tx.ID, got.TransactionID)
	assert.Equal(t, tx.ID, got.Request.Ref)
	assert.Equal(t, int64(1_000), got.Request.Amount)
	assert.Equal(t, dest.ID, got.Request.Account.ID)
	assert.Equal(t, dest.Info, got.Request.Account.Info)
	assert.Equal(t, dest.CreatedAt.UTC(), got.Request.Account.CreatedAt.UTC())
}

func TestPlatformTransfers(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	pid := e.platform()
	acct := e.platformAccount(pid, "USD")
	dest := e.external(pid, "", usdAccount("222"))
	e.Fund(pid, acct.ID, 500)
	out, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 200})
	require.NoError(t, err)
	assert.Empty(t, out.CustomerID)
	assert.Empty(t, out.PlatformCustomerID)
	in, err := e.transfers.TransferIn(ctx, pid, transfers.InRequest{SourceAccountID: dest.ID, DestinationAccountID: acct.ID, Amount: 50})
	require.NoError(t, err)
	e.RunJobs()
	e.Advance(10 * time.Second)
	assert.Equal(t, "COMPLETED", e.txn(pid, out.ID).Status)
	assert.Equal(t, "COMPLETED", e.txn(pid, in.ID).Status)
	assert.Equal(t, int64(350), e.available(acct.ID))
	e.Verify()
}

func TestTransferOutRefusals(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	pid := e.platform()
	other := e.platform()
	c, acct := e.customer(pid)
	c2, acct2 := e.customer(pid)
	dest := e.external(pid, c.ID, usdAccount("789"))
	destOther := e.external(pid, c2.ID, usdAccount("788"))
	mxn := e.external(pid, c.ID, ports.AccountInfo{AccountType: "MXN_ACCOUNT", ClabeNumber: "032180000118359719"})
	foreign := e.external(other, "", usdAccount("787"))
	e.Fund(pid, acct.ID, 1_000)
	_ = acct2

	inactive := e.external(pid, c.ID, usdAccount("786"))
	inactive.Status = "UNDER_REVIEW"
	require.NoError(t, e.Store.InTx(ctx, func(tx ports.Tx) error { return tx.ExternalAccounts().Update(ctx, inactive) }))

	cases := []struct {
		name   string
		req    transfers.OutRequest
		kind   fault.Kind
		code   string
		fields []string
	}{
		{"missing everything", transfers.OutRequest{}, fault.KindInvalid, "INVALID_INPUT",
			[]string{"source.accountId", "destination.accountId", "amount"}},
		{"negative amount", transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: -5},
			fault.KindInvalid, "INVALID_INPUT", []string{"amount"}},
		{"accounts swapped", transfers.OutRequest{SourceAccountID: dest.ID, DestinationAccountID: acct.ID, Amount: 5},
			fault.KindInvalid, "INVALID_INPUT", []string{"source.accountId", "destination.accountId"}},
		{"remittance too long", transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 5,
			RemittanceInformation: string(make([]byte, 81))}, fault.KindInvalid, "INVALID_INPUT", []string{"remittanceInformation"}},
		{"unknown purpose", transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 5,
			PurposeOfPayment: "BRIBE"}, fault.KindInvalid, "INVALID_INPUT", []string{"purposeOfPayment"}},
		{"unknown source", transfers.OutRequest{SourceAccountID: "InternalAccount:nope", DestinationAccountID: dest.ID, Amount: 5},
			fault.KindNotFound, "NOT_FOUND", nil},
		{"another platform's destination", transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: foreign.ID, Amount: 5},
			fault.KindNotFound, "NOT_FOUND", nil},
		{"another customer's destination", transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: destOther.ID, Amount: 5},
			fault.KindInvalid, "INVALID_INPUT", []string{"destination.accountId"}},
		{"currency mismatch", transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: mxn.ID, Amount: 5},
			fault.KindInvalid, "INVALID_INPUT", []string{"destination.accountId"}},
		{"inactive destination", transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: inactive.ID, Amount: 5},
			fault.KindInvalid, "INVALID_INPUT", []string{"destination.accountId"}},
		{"unknown rail", transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 5, PaymentRail: "TELEGRAPH"},
			fault.KindInvalid, "INVALID_INPUT", []string{"destination.paymentRail"}},
		{"rail of another currency", transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 5, PaymentRail: "SEPA"},
			fault.KindInvalid, "INVALID_INPUT", []string{"destination.paymentRail"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.transfers.TransferOut(ctx, pid, tc.req)
			testkit.RequireFault(t, err, tc.kind, tc.code, tc.fields...)
		})
	}

	t.Run("insufficient available balance", func(t *testing.T) {
		_, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 1_001})
		f := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_AMOUNT", "amount")
		assert.Equal(t, "insufficient available balance", f.Message)
		assert.Equal(t, map[string]any{"available": int64(1_000), "requested": int64(1_001), "currency": "USD"}, f.Details)
	})
	t.Run("held funds are not available", func(t *testing.T) {
		_, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 600})
		require.NoError(t, err)
		_, err = e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 600})
		f := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_AMOUNT")
		assert.Equal(t, int64(400), f.Details["available"])
	})
	// Nothing a refusal touched moved money or left a transaction.
	page, err := e.txns.List(ctx, pid, transactions.Query{}, ports.Page{})
	require.NoError(t, err)
	assert.Equal(t, 1, page.Total)
	e.Verify()
}

func TestTransferInRefusals(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	pid := e.platform()
	c, acct := e.customer(pid)
	ach := e.external(pid, c.ID, usdAccount("789"))
	sol := e.external(pid, c.ID, ports.AccountInfo{AccountType: "SOLANA_WALLET", Address: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"})

	_, err := e.transfers.TransferIn(ctx, pid, transfers.InRequest{SourceAccountID: sol.ID, DestinationAccountID: acct.ID, Amount: 5})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "source.accountId")
	_, err = e.transfers.TransferIn(ctx, pid, transfers.InRequest{SourceAccountID: ach.ID, DestinationAccountID: acct.ID})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "amount")
	_, err = e.transfers.TransferIn(ctx, pid, transfers.InRequest{SourceAccountID: ach.ID, DestinationAccountID: "InternalAccount:missing", Amount: 5})
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
	usdc := e.external(pid, c.ID, ports.AccountInfo{AccountType: "BASE_WALLET", Address: "0x52908400098527886E0F7030069857D2E4169EE7"})
	_, err = e.transfers.TransferIn(ctx, pid, transfers.InRequest{SourceAccountID: usdc.ID, DestinationAccountID: acct.ID, Amount: 5})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "source.accountId")
}

func TestIdempotencyKeyDerivesTheTransaction(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	pid := e.platform()
	c, acct := e.customer(pid)
	dest := e.external(pid, c.ID, usdAccount("789"))
	e.Fund(pid, acct.ID, 1_000)
	req := transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 300, IdempotencyKey: "k-1"}

	first, err := e.transfers.TransferOut(ctx, pid, req)
	require.NoError(t, err)
	assert.Equal(t, transfers.TransactionID(pid, "transfer-out", "k-1"), first.ID)
	again, err := e.transfers.TransferOut(ctx, pid, req)
	require.NoError(t, err)
	assert.Equal(t, first, again, "a retry returns the first attempt's transaction")
	assert.Equal(t, int64(700), e.available(acct.ID), "held once")

	changed := req
	changed.Amount = 301
	_, err = e.transfers.TransferOut(ctx, pid, changed)
	testkit.RequireFault(t, err, fault.KindUnprocessable, "IDEMPOTENCY_KEY_REUSED")

	// The same key on transfer-in is another transaction.
	in, err := e.transfers.TransferIn(ctx, pid, transfers.InRequest{SourceAccountID: dest.ID, DestinationAccountID: acct.ID, Amount: 300, IdempotencyKey: "k-1"})
	require.NoError(t, err)
	assert.NotEqual(t, first.ID, in.ID)
	e.RunJobs()
	e.Advance(10 * time.Second)
	assert.Equal(t, int64(1_000), e.available(acct.ID))
	e.Verify()
}

// A hold without its transaction cannot be written (they commit
// together); one placed by hand is never paid out: a request with its key
// is refused, and the reaper voids it once it is old enough.
func TestOrphanHoldIsReapedNotPaid(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend.name, func(t *testing.T) { orphanHoldIsReapedNotPaid(t, backend.env(t)) })
	}
}

func orphanHoldIsReapedNotPaid(t *testing.T, e *env) {
	ctx := context.Background()
	pid := e.platform()
	c, acct := e.customer(pid)
	dest := e.external(pid, c.ID, usdAccount("789"))
	e.Fund(pid, acct.ID, 1_000)

	id := transfers.TransactionID(pid, "transfer-out", "orphan")
	_, err := e.Ledger.Post(ctx, ledger.Entry{ID: "hold:" + id, Ref: id, Transfers: []ledger.Transfer{{
		ID: "hold:" + id, DebitAccountID: acct.ID, CreditAccountID: ledger.RailSettlementID("ACH", "USD"),
		Amount: 200, Currency: "USD", Kind: ledger.Pending, Code: transfers.CodeTransferOut}}})
	require.NoError(t, err)
	assert.Equal(t, int64(800), e.available(acct.ID))

	_, err = e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 200, IdempotencyKey: "orphan"})
	testkit.RequireFault(t, err, fault.KindConflict, "IDEMPOTENCY_KEY_REUSED")
	assert.Equal(t, int64(800), e.available(acct.ID), "nothing moved")

	n, err := e.transfers.ReapOrphanHolds(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "a young hold is left alone")
	e.Clock.Advance(transfers.OrphanHoldAge)
	n, err = e.transfers.ReapOrphanHolds(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	p, err := e.Ledger.Pending(ctx, "hold:"+id)
	require.NoError(t, err)
	assert.Equal(t, ledger.PendingVoided, p.Status)
	assert.Equal(t, int64(1_000), e.available(acct.ID), "the orphan's amount is back")
	_, err = e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 200, IdempotencyKey: "orphan"})
	testkit.RequireFault(t, err, fault.KindConflict, "IDEMPOTENCY_KEY_REUSED")
	e.Verify()
}

func TestReaperRunsAsAPeriodicJob(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	pid := e.platform()
	_, acct := e.customer(pid)
	e.Fund(pid, acct.ID, 1_000)
	id := transfers.TransactionID(pid, "transfer-out", "lost")
	_, err := e.Ledger.Post(ctx, ledger.Entry{ID: "hold:" + id, Ref: id, Transfers: []ledger.Transfer{{
		ID: "hold:" + id, DebitAccountID: acct.ID, CreditAccountID: ledger.RailSettlementID("ACH", "USD"),
		Amount: 250, Currency: "USD", Kind: ledger.Pending}}})
	require.NoError(t, err)

	q := e.Store.Read().Jobs()
	require.NoError(t, e.transfers.ScheduleReaper(ctx, q, e.Clock.Now()))
	require.NoError(t, e.transfers.ScheduleReaper(ctx, q, e.Clock.Now()), "a second instance starting")
	assert.Equal(t, 1, e.RunJobs(), "one job per slot")
	assert.Equal(t, int64(750), e.available(acct.ID))
	for range 10 {
		e.Clock.Advance(transfers.ReapInterval)
		assert.Equal(t, 1, e.RunJobs(), "the reaper reschedules itself")
	}
	assert.Equal(t, int64(1_000), e.available(acct.ID))
	e.Verify()
}

// Jobs run at least once: running a transfer's handlers again, in any
// order, changes nothing.
func TestHandlersAreIdempotent(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	pid := e.platform()
	c, acct := e.customer(pid)
	ok := e.external(pid, c.ID, usdAccount("789"))
	bad := e.external(pid, c.ID, usdAccount("004"))
	e.Fund(pid, acct.ID, 1_000)

	// Capture every job the transfers schedule, then replay them all.
	var seen []ports.Job
	record := func(h func(context.Context, ports.Job) error) func(context.Context, ports.Job) error {
		return func(ctx context.Context, j ports.Job) error { seen = append(seen, j); return h(ctx, j) }
	}
	e.Runner.Handle(transfers.KindSubmit, record(e.transfers.HandleSubmit))
	e.Runner.Handle(transfers.KindCheck, record(e.transfers.HandleCheck))

	paid, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: ok.ID, Amount: 100})
	require.NoError(t, err)
	failed, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: bad.ID, Amount: 200})
	require.NoError(t, err)
	in, err := e.transfers.TransferIn(ctx, pid, transfers.InRequest{SourceAccountID: ok.ID, DestinationAccountID: acct.ID, Amount: 50})
	require.NoError(t, err)
	e.RunJobs()
	e.Advance(10 * time.Second)
	require.Equal(t, "COMPLETED", e.txn(pid, paid.ID).Status)
	require.Equal(t, "REJECTED", e.txn(pid, failed.ID).Status)
	require.Equal(t, "COMPLETED", e.txn(pid, in.ID).Status)
	require.GreaterOrEqual(t, len(seen), 6)
	wantTx := []ports.Transaction{e.txn(pid, paid.ID), e.txn(pid, failed.ID), e.txn(pid, in.ID)}
	wantBal := e.LedgerAccount(acct.ID)

	e.Clock.Advance(time.Minute)
	for i := len(seen) - 1; i >= 0; i-- {
		switch seen[i].Kind {
		case transfers.KindSubmit:
			require.NoError(t, e.transfers.HandleSubmit(ctx, seen[i]))
		case transfers.KindCheck:
			require.NoError(t, e.transfers.HandleCheck(ctx, seen[i]))
		}
	}
	assert.Equal(t, wantTx, []ports.Transaction{e.txn(pid, paid.ID), e.txn(pid, failed.ID), e.txn(pid, in.ID)})
	assert.Equal(t, wantBal, e.LedgerAccount(acct.ID))
	assert.Equal(t, int64(950), wantBal.Available(), "100 paid out, 50 pulled in")
	e.Verify()
}

// A customer under review or rejected may not send; an unverified or
// approved one may, and incoming money is never blocked.
func TestTransferOutFollowsKYCStatus(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	pid := e.platform()
	for _, tc := range []struct {
		status  string
		allowed bool
	}{
		{"UNVERIFIED", true}, {"APPROVED", true}, {"PENDING", false}, {"REJECTED", false}, {"HOLD", false},
	} {
		t.Run(tc.status, func(t *testing.T) {
			c, acct := e.customer(pid)
			dest := e.external(pid, c.ID, usdAccount("789"))
			e.Fund(pid, acct.ID, 1_000)
			c.KYCStatus = tc.status
			require.NoError(t, e.Store.InTx(ctx, func(tx ports.Tx) error { return tx.Customers().Update(ctx, c) }))

			_, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 100})
			if tc.allowed {
				require.NoError(t, err)
				assert.Equal(t, int64(900), e.available(acct.ID))
			} else {
				f := testkit.RequireFault(t, err, fault.KindForbidden, "USER_NOT_READY")
				assert.Equal(t, tc.status, f.Details["kycStatus"])
				assert.Equal(t, int64(1_000), e.available(acct.ID), "a refused transfer holds nothing")
			}
			_, err = e.transfers.TransferIn(ctx, pid, transfers.InRequest{SourceAccountID: dest.ID, DestinationAccountID: acct.ID, Amount: 100})
			require.NoError(t, err, "incoming money is never blocked")
		})
	}
	e.Verify()
}

// A hold an earlier run (or a concurrent one) already settled finishes the
// transaction without its entry: COMPLETED on the rail's success, and
// COMPLETED too when the rail then reports a failure (the ledger is the
// truth), the job removed with the status either way.
func TestOutcomeOnHoldAlreadySettled(t *testing.T) {
	for _, suffix := range []string{"789", "004"} {
		t.Run(suffix, func(t *testing.T) {
			e := newMemoryEnv(t)
			ctx := context.Background()
			pid := e.platform()
			c, acct := e.customer(pid)
			dest := e.external(pid, c.ID, usdAccount(suffix))
			e.Fund(pid, acct.ID, 1_000)
			tx, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 100})
			require.NoError(t, err)
			e.RunJobs()
			require.Equal(t, "PROCESSING", e.txn(pid, tx.ID).Status)

			_, err = e.Ledger.Post(ctx, ledger.Entry{ID: "settle:" + tx.ID, Ref: tx.ID, Transfers: []ledger.Transfer{{
				ID: "settle:" + tx.ID, Kind: ledger.PostPending, PendingID: "hold:" + tx.ID, Code: transfers.CodeTransferOut}}})
			require.NoError(t, err)
			e.Advance(10 * time.Second)

			got := e.txn(pid, tx.ID)
			assert.Equal(t, "COMPLETED", got.Status)
			assert.Empty(t, got.FailureReason)
			require.NotNil(t, got.SettledAt)
			assert.Equal(t, e.Clock.Now(), got.SettledAt.UTC())
			assert.Equal(t, int64(900), e.available(acct.ID), "paid once")
			assert.Zero(t, e.RunJobs(), "the check job went with the status")
			e.Verify()
		})
	}
}
