package quotes_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/coretest"
)

// expect is where a payout stands at one point of its life.
type expect struct {
	quote, txn, reason   string
	refund, refundReason string // "" = no refund
	// spent is what the source account has paid for good (its available
	// balance is funded − spent), held what is still on hold.
	spent, held bool
	// settled is whether the rail's settlement account holds the payout.
	settled bool
}

// check compares the quote, its transaction and the ledger with want.
func (e *env) check(t *testing.T, pid, sourceID string, q ports.Quote, want expect) {
	t.Helper()
	got := e.quote(pid, q.ID)
	assert.Equal(t, want.quote, got.Status, "quote status")
	tx := e.txn(pid, q.TransactionID)
	assert.Equal(t, want.txn, tx.Status, "transaction status")
	assert.Equal(t, want.reason, tx.FailureReason, "failureReason")
	if want.refund == "" {
		assert.Nil(t, tx.Details.Refund, "refund")
	} else if assert.NotNil(t, tx.Details.Refund, "refund") {
		assert.Equal(t, want.refund, tx.Details.Refund.Status)
		assert.Equal(t, want.refundReason, tx.Details.Refund.Reason)
		assert.Equal(t, want.refund == transactions.RefundCompleted, tx.Details.Refund.SettledAt != nil)
	}
	if want.txn == transactions.StatusCompleted {
		assert.NotNil(t, tx.SettledAt)
	}
	src := e.LedgerAccount(sourceID)
	var spent, held int64
	if want.spent {
		spent = q.TotalSendingAmount
	}
	if want.held {
		held = q.TotalSendingAmount
	}
	assert.Equal(t, funded-spent-held, src.Available(), "available")
	assert.Equal(t, held, src.DebitsPending, "held")
	settlement := e.LedgerAccount(ledger.RailSettlementID(q.PaymentRail, q.ReceivingCurrency))
	var paid int64
	if want.settled {
		paid = q.TotalReceivingAmount
	}
	assert.Equal(t, paid, settlement.Net(), "settlement account")
	assert.Equal(t, map[bool]int64{true: q.TotalReceivingAmount}[want.held], settlement.CreditsPending, "settlement held")
}

var (
	processing = expect{quote: quotes.StatusProcessing, txn: transactions.StatusProcessing, held: true}
	completed  = expect{quote: quotes.StatusCompleted, txn: transactions.StatusCompleted, spent: true, settled: true}
)

func failed(reason string) expect {
	return expect{quote: quotes.StatusFailed, txn: transactions.StatusFailed, reason: reason,
		refund: transactions.RefundCompleted, refundReason: transactions.RefundTransactionFailed}
}

// refunding is a returned payout whose funds are not back yet: the refund
// is PENDING, the source has paid and the rail's settlement account holds
// the payout.
func refunding(reason string) expect {
	return expect{quote: quotes.StatusFailed, txn: transactions.StatusFailed, reason: reason,
		refund: transactions.RefundPending, refundReason: transactions.RefundTransactionFailed, spent: true, settled: true}
}

// step moves the clock by after, runs the due jobs and expects want.
type step struct {
	after time.Duration
	want  expect
}

// Every destination suffix of the quote table, on an instant rail
// (SEPA_INSTANT, EUR) and a batch rail (ACH, USD), driven by the fake clock
// and the job runner, with the ledger verified at the end.
func TestDestinationSuffixOutcomes(t *testing.T) {
	const achDelay = 10 * time.Second
	cases := []struct {
		suffix string
		steps  []step
	}{
		{"789", []step{{0, completed}}},
		{"002", []step{{0, failed(transactions.ReasonExecutionFailed)}}},
		{"003", []step{
			{0, processing},
			{sandbox.QuoteSlowAfter - time.Second, processing},
			{time.Second, completed}}},
		{"004", []step{{0, failed("ACCOUNT_CANNOT_RECEIVE")}}},
		{"005", []step{
			{0, completed},
			{sandbox.QuoteReturnAfter - time.Second, completed},
			{time.Second, refunding(transactions.ReasonPayoutReturned)},
			{sandbox.QuoteRefundAfter - time.Second, refunding(transactions.ReasonPayoutReturned)},
			{time.Second, failed(transactions.ReasonPayoutReturned)}}},
		{"006", []step{{0, expect{quote: quotes.StatusFailed, txn: transactions.StatusRefunded,
			refund: transactions.RefundCompleted, refundReason: transactions.RefundUserCancellation}}}},
		{"007", []step{{0, expect{quote: quotes.StatusFailed, txn: transactions.StatusFailed,
			reason: transactions.ReasonExecutionFailed, refund: transactions.RefundFailed, refundReason: transactions.RefundTransactionFailed,
			spent: true, settled: true}}}},
	}
	backends := []struct {
		name string
		env  func(testing.TB) *env
	}{{"memory", newMemoryEnv}, {"postgres", newPostgresEnv}}
	for _, b := range backends {
		for _, c := range cases {
			t.Run(b.name+"/SEPA_INSTANT/"+c.suffix, func(t *testing.T) {
				e := b.env(t)
				f := e.fixture(c.suffix)
				q := e.executed(f.pid, usdToEUR(f.acct.ID, f.dest.ID))
				assert.Equal(t, "SEPA_INSTANT", q.PaymentRail)
				for i, s := range c.steps {
					e.Advance(s.after)
					t.Logf("step %d at +%s", i, e.Clock.Now().Sub(start))
					e.check(t, f.pid, f.acct.ID, q, s.want)
				}
				e.Verify()
			})
		}
	}
	// On a batch rail the outcome waits for the settlement delay.
	batch := map[string][]step{
		"789": {{0, processing}, {achDelay - time.Second, processing}, {time.Second, completed}},
		"003": {{0, processing}, {sandbox.QuoteSlowAfter - time.Second, processing}, {time.Second, completed}},
		"004": {{0, processing}, {achDelay, failed("ACCOUNT_CANNOT_RECEIVE")}},
		"005": {{0, processing}, {achDelay, completed}, {sandbox.QuoteReturnAfter, refunding(transactions.ReasonPayoutReturned)},
			{sandbox.QuoteRefundAfter, failed(transactions.ReasonPayoutReturned)}},
	}
	for suffix, steps := range batch {
		t.Run("ACH/"+suffix, func(t *testing.T) {
			e := newMemoryEnv(t)
			pid := e.platform()
			c, a := e.customer(pid)
			e.Fund(pid, a.ID, funded)
			dest := e.External(pid, c.ID, "USD", usdAccount(suffix))
			q := e.executed(pid, quotes.CreateRequest{
				Source:       quotes.Source{Type: quotes.SourceAccount, AccountID: a.ID},
				Destination:  quotes.Destination{Type: quotes.DestinationAccount, AccountID: dest.ID},
				LockedSide:   fx.SideReceiving,
				LockedAmount: 50_00,
			})
			assert.Equal(t, "ACH", q.PaymentRail)
			assert.Equal(t, int64(50_00), q.TotalReceivingAmount)
			for _, s := range steps {
				e.Advance(s.after)
				e.check(t, pid, a.ID, q, s.want)
			}
			e.Verify()
		})
	}
}

// rejecting is a rail whose receiver refuses what the sandbox's would
// fail to deliver (suffix 004): REJECTED instead of FAILED.
type rejecting struct{ ports.Rail }

func (r rejecting) Submit(ctx context.Context, req ports.RailRequest) (ports.RailResult, error) {
	return r.reject(r.Rail.Submit(ctx, req))
}

func (r rejecting) Status(ctx context.Context, req ports.RailRequest, ref string) (ports.RailResult, error) {
	return r.reject(r.Rail.Status(ctx, req, ref))
}

func (rejecting) reject(res ports.RailResult, err error) (ports.RailResult, error) {
	if res.State == ports.RailFailed && res.FailureReason == "ACCOUNT_CANNOT_RECEIVE" {
		res.State, res.FailureReason = ports.RailRejected, ""
	}
	return res, err
}

// A payout its receiver rejects: the quote FAILED, its transaction
// REJECTED without failureReason, the funds refunded to the source.
func TestRejectedPayout(t *testing.T) {
	run := func(t *testing.T, b coretest.Backend) {
		e := newEnvWithRails(t, b, func(r ports.Rail) ports.Rail { return rejecting{r} })
		f := e.fixture("004")
		q := e.executed(f.pid, usdToEUR(f.acct.ID, f.dest.ID))
		e.Advance(0)
		e.check(t, f.pid, f.acct.ID, q, expect{quote: quotes.StatusFailed, txn: transactions.StatusRejected,
			refund: transactions.RefundCompleted, refundReason: transactions.RefundTransactionFailed})
		e.Verify()
	}
	t.Run("memory", func(t *testing.T) { run(t, coretest.Memory()) })
	t.Run("postgres", func(t *testing.T) { run(t, coretest.Postgres(t)) })
}

// executed creates and executes a quote.
func (e *env) executed(pid string, req quotes.CreateRequest) ports.Quote {
	e.T.Helper()
	ctx := context.Background()
	q, err := e.quotes.Create(ctx, pid, req)
	require.NoError(e.T, err)
	q, err = e.quotes.Execute(ctx, pid, q.ID, "")
	require.NoError(e.T, err)
	return q
}

// payerInfo carries every payer field a sandbox receiver asks for.
var payerInfo = map[string]any{"FULL_NAME": "Ada Lovelace", "POSTAL_ADDRESS": "1 Main St, Springfield",
	"BIRTH_DATE": "1990-01-01", "NATIONALITY": "US"}

// Every sandbox UMA receiver address.
func TestUmaReceiverOutcomes(t *testing.T) {
	cases := []struct {
		user     string
		currency string
		steps    []step
	}{
		{"success.usd", "USD", []step{{0, completed}}},
		{"success.eur", "EUR", []step{{0, completed}}},
		{"success.mxn", "MXN", []step{{0, completed}}},
		{"pending.long.usd", "USD", []step{
			{0, processing},
			{sandbox.UMALongPending - time.Minute, processing},
			{time.Minute, completed}}},
		{"fail.compliance.usd", "USD", []step{{0, failed("COMPLIANCE_REJECTED")}}},
	}
	for _, c := range cases {
		t.Run(c.user, func(t *testing.T) {
			e := newMemoryEnv(t)
			ctx := context.Background()
			pid := e.platform()
			cust, a := e.customer(pid)
			e.Fund(pid, a.ID, funded)
			addr := e.uma.Address(c.user)
			l, err := e.lookup.LookupUma(ctx, pid, lookup.UmaQuery{ReceiverUmaAddress: addr, CustomerID: cust.ID})
			require.NoError(t, err)
			req := quotes.CreateRequest{
				Source:             quotes.Source{Type: quotes.SourceAccount, AccountID: a.ID},
				Destination:        quotes.Destination{Type: quotes.DestinationUMA, UmaAddress: addr, Currency: c.currency},
				LockedSide:         fx.SideSending,
				LockedAmount:       100_00,
				LookupID:           l.ID,
				SenderCustomerInfo: payerInfo,
			}
			q := e.executed(pid, req)
			assert.Equal(t, quotes.UMARail, q.PaymentRail)
			assert.Equal(t, c.currency, q.ReceivingCurrency)
			tx := e.txn(pid, q.TransactionID)
			assert.Equal(t, addr, tx.Details.DestinationUmaAddress)
			assert.Equal(t, cust.UmaAddress, tx.Details.SourceUmaAddress)
			assert.Equal(t, quotes.DestinationUMA, tx.Details.DestinationType)
			for _, s := range c.steps {
				e.Advance(s.after)
				e.check(t, pid, a.ID, q, s.want)
			}
			e.Verify()
		})
	}
}

func TestUmaDestinationRefusals(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	pid := e.platform()
	cust, a := e.customer(pid)
	addr := e.uma.Address("success.eur")
	l, err := e.lookup.LookupUma(ctx, pid, lookup.UmaQuery{ReceiverUmaAddress: addr, CustomerID: cust.ID})
	require.NoError(t, err)
	base := quotes.CreateRequest{
		Source:       quotes.Source{Type: quotes.SourceAccount, AccountID: a.ID},
		Destination:  quotes.Destination{Type: quotes.DestinationUMA, UmaAddress: e.uma.Address("success.usd")},
		LockedSide:   fx.SideSending,
		LockedAmount: 100_00,
		LookupID:     l.ID,
	}
	_, err = e.quotes.Create(ctx, pid, base)
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "lookupId")

	base.Destination = quotes.Destination{Type: quotes.DestinationUMA, UmaAddress: addr, Currency: "MXN"}
	base.SenderCustomerInfo = payerInfo
	_, err = e.quotes.Create(ctx, pid, base)
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "destination.currency")

	base.Destination.Currency = ""
	base.SenderCustomerInfo = nil
	_, err = e.quotes.Create(ctx, pid, base)
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "senderCustomerInfo.FULL_NAME", "senderCustomerInfo.POSTAL_ADDRESS")

	base.SenderCustomerInfo = payerInfo
	q, err := e.quotes.Create(ctx, pid, base)
	require.NoError(t, err)
	assert.Equal(t, "EUR", q.ReceivingCurrency, "the lookup's first currency")
}

// 20 concurrent executes of one quote move its money exactly once.
func TestConcurrentExecutes(t *testing.T) {
	onBothStores(t, func(t *testing.T, e *env) {
		f := e.fixture("789")
		ctx := context.Background()
		q, err := e.quotes.Create(ctx, f.pid, usdToEUR(f.acct.ID, f.dest.ID))
		require.NoError(t, err)
		const n = 20
		var (
			wg                         sync.WaitGroup
			mu                         sync.Mutex
			executed, conflicts, other int
		)
		gate := make(chan struct{})
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				_, err := e.quotes.Execute(ctx, f.pid, q.ID, "")
				mu.Lock()
				defer mu.Unlock()
				switch fe, ok := fault.As(err); {
				case err == nil:
					executed++
				case ok && fe.Kind == fault.KindConflict:
					conflicts++
				default:
					other++
					t.Log(err)
				}
			}()
		}
		close(gate)
		wg.Wait()
		assert.Equal(t, 1, executed)
		assert.Equal(t, n-1, conflicts)
		assert.Zero(t, other)
		src := e.LedgerAccount(f.acct.ID)
		assert.Equal(t, funded-q.TotalSendingAmount, src.Available())
		assert.Equal(t, q.TotalSendingAmount, src.DebitsPending)

		e.RunJobs()
		e.check(t, f.pid, f.acct.ID, q, completed)
		assert.Equal(t, q.FeesIncluded, e.LedgerAccount(ledger.FeeRevenueID("USD")).Net())
		e.Verify()
	})
}
