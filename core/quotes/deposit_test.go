package quotes_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/approvals"
	"github.com/corridorpay/corridor/core/events"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// endpoint is a platform's webhook endpoint ("" for none), as
// approvals.Endpoints.
type endpoint string

func (e endpoint) WebhookEndpoint(context.Context, string) (string, error) { return string(e), nil }

// withApprovals wires the platform's decisions on incoming payments into
// e's quotes, the platform having a webhook endpoint url ("" for none).
func (e *env) withApprovals(url string) *approvals.Service {
	a := approvals.New(e.Store, e.Ledger, e.Clock, endpoint(url))
	a.Register(e.Runner)
	a.SetFollower(e.quotes)
	e.quotes.SetApprovals(a)
	return a
}

// deposit is a REALTIME_FUNDING quote of the customer crediting its
// internal account acct, paid in currency (USDC on Solana, or USD).
func deposit(customerID, currency, acct string) quotes.CreateRequest {
	r := realtime(customerID, currency, "", acct)
	if currency == "USDC" {
		r.Source.CryptoNetwork = "SOLANA"
	}
	r.LockedSide, r.LockedAmount = fx.SideReceiving, 50_00
	return r
}

// funding is the settlement account of the rail a deposit's funds arrive on.
func funding(currency string) string {
	if currency == "USDC" {
		return ledger.RailSettlementID("SOLANA", "USDC")
	}
	return ledger.RailSettlementID("RTP", "USD")
}

func TestDepositWithoutEndpointIsCreditedOnArrival(t *testing.T) {
	onBothStores(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.withApprovals("")
		f := e.fixture("789")
		for _, currency := range []string{"USD", "USDC"} {
			before := e.LedgerAccount(f.acct.ID).Net()
			q, err := e.quotes.Create(ctx, f.pid, deposit(f.cust.ID, currency, f.acct.ID))
			require.NoError(t, err, currency)
			assert.Equal(t, f.acct.ID, q.DestinationAccountID)
			assert.Equal(t, "USD", q.ReceivingCurrency)
			assert.Equal(t, int64(50_00), q.TotalReceivingAmount)
			assert.Empty(t, q.PaymentRail, "no rail pays an internal account")
			require.Len(t, q.PaymentInstructions, 1, "the payer funds it by its instructions")
			tx := e.txn(f.pid, q.TransactionID)
			assert.Equal(t, transactions.TypeIncoming, tx.Type)
			assert.Equal(t, transactions.StatusCreated, tx.Status, "created until its funds arrive")
			assert.Equal(t, f.acct.ID, tx.DestinationAccountID)

			sent, err := e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: q.ID, CurrencyCode: currency})
			require.NoError(t, err, currency)
			assert.Equal(t, transactions.StatusCompleted, sent.Status)
			assert.NotNil(t, sent.SettledAt)
			assert.Nil(t, sent.Details.Approval)
			assert.Equal(t, quotes.StatusCompleted, e.quote(f.pid, q.ID).Status)
			assert.Equal(t, before+q.TotalReceivingAmount, e.LedgerAccount(f.acct.ID).Net(), currency)
			assert.Equal(t, -q.TotalSendingAmount, e.LedgerAccount(funding(currency)).Net(), currency)
			assert.Equal(t, q.FeesIncluded, e.LedgerAccount(ledger.FeeRevenueID(currency)).Net(), currency)
			_, err = e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: q.ID, CurrencyCode: currency})
			testkit.RequireFault(t, err, fault.KindConflict, "CONFLICT")
			assert.Equal(t, quotes.CodeQuoteDeposit, creditCode(t, e, q, f.acct.ID), "a deposit's credit is not a payout")
		}
		e.RunJobs()
		e.Verify()
	})
}

func TestDepositAwaitsThePlatformsDecision(t *testing.T) {
	ctx := context.Background()
	type step struct {
		name string
		// decide decides the payment (the endpoint's answer, a call, or
		// the window passing).
		decide func(t *testing.T, e *env, a *approvals.Service, pid string, tx ports.Transaction)
		status string
		reason string
		refund string // the refund's reason; "" when credited
	}
	reply := func(code int) func(*testing.T, *env, *approvals.Service, string, ports.Transaction) {
		return func(t *testing.T, e *env, a *approvals.Service, pid string, tx ports.Transaction) {
			ev := ports.Event{ID: "Webhook:x", PlatformID: pid, Type: events.TypeIncomingPending, ResourceID: tx.ID}
			decided, err := a.Reply(ctx, ev, events.Answer{StatusCode: code, Body: []byte(`{}`)})
			require.NoError(t, err)
			assert.True(t, decided)
		}
	}
	for _, s := range []step{
		{name: "200 approves", decide: reply(200), status: transactions.StatusCompleted},
		{name: "403 rejects", decide: reply(403), status: transactions.StatusRejected, refund: transactions.RefundTransactionFailed},
		{name: "500 fails", decide: reply(500), status: transactions.StatusFailed,
			reason: transactions.ReasonApprovalWebhookError, refund: transactions.RefundTransactionFailed},
		{name: "202 then approve", decide: func(t *testing.T, e *env, a *approvals.Service, pid string, tx ports.Transaction) {
			reply(202)(t, e, a, pid, tx)
			assert.True(t, transactions.AwaitsApproval(e.txn(pid, tx.ID)), "202 defers")
			_, err := a.Approve(ctx, pid, tx.ID, nil)
			require.NoError(t, err)
		}, status: transactions.StatusCompleted},
		{name: "202 then reject", decide: func(t *testing.T, e *env, a *approvals.Service, pid string, tx ports.Transaction) {
			reply(202)(t, e, a, pid, tx)
			_, err := a.Reject(ctx, pid, tx.ID)
			require.NoError(t, err)
		}, status: transactions.StatusRejected, refund: transactions.RefundTransactionFailed},
		{name: "no decision in the window", decide: func(t *testing.T, e *env, a *approvals.Service, pid string, tx ports.Transaction) {
			e.Clock.Advance(approvals.Window)
			e.RunJobs()
			_, err := a.Approve(ctx, pid, tx.ID, nil)
			testkit.RequireFault(t, err, fault.KindConflict, approvals.CodeNotPending)
		}, status: transactions.StatusFailed, reason: transactions.ReasonApprovalTimedOut, refund: transactions.RefundTimeout},
	} {
		t.Run(s.name, func(t *testing.T) {
			onBothStores(t, func(t *testing.T, e *env) {
				a := e.withApprovals("https://platform.example/hooks")
				f := e.fixture("789")
				before := e.LedgerAccount(f.acct.ID).Net()
				q, err := e.quotes.Create(ctx, f.pid, deposit(f.cust.ID, "USDC", f.acct.ID))
				require.NoError(t, err)
				sent, err := e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: q.ID, CurrencyCode: "USDC"})
				require.NoError(t, err)

				// Held for the decision: nothing spendable yet.
				assert.Equal(t, transactions.StatusPending, sent.Status)
				require.True(t, transactions.AwaitsApproval(sent))
				assert.Equal(t, start.Add(approvals.Window), sent.Details.Approval.Deadline)
				assert.Len(t, sent.Details.Approval.HoldIDs, 3, "send, payout and fee legs")
				assert.Equal(t, quotes.StatusProcessing, e.quote(f.pid, q.ID).Status)
				acct := e.LedgerAccount(f.acct.ID)
				assert.Equal(t, before, acct.Net())
				assert.Equal(t, q.TotalReceivingAmount, acct.CreditsPending)

				s.decide(t, e, a, f.pid, sent)
				tx := e.txn(f.pid, q.TransactionID)
				assert.Equal(t, s.status, tx.Status)
				assert.Equal(t, s.reason, tx.FailureReason)
				acct = e.LedgerAccount(f.acct.ID)
				assert.Zero(t, acct.CreditsPending)
				if s.refund == "" {
					assert.Equal(t, quotes.StatusCompleted, e.quote(f.pid, q.ID).Status)
					assert.NotNil(t, tx.SettledAt)
					assert.Nil(t, tx.Details.Refund)
					assert.Equal(t, before+q.TotalReceivingAmount, acct.Net())
					assert.Equal(t, -q.TotalSendingAmount, e.LedgerAccount(funding("USDC")).Net())
				} else {
					assert.Equal(t, quotes.StatusFailed, e.quote(f.pid, q.ID).Status)
					require.NotNil(t, tx.Details.Refund, "the payer's funds go back")
					assert.Equal(t, transactions.RefundCompleted, tx.Details.Refund.Status)
					assert.Equal(t, s.refund, tx.Details.Refund.Reason)
					assert.NotNil(t, tx.Details.Refund.SettledAt)
					assert.Equal(t, before, acct.Net(), "never credited")
					assert.Zero(t, e.LedgerAccount(funding("USDC")).Net())
				}

				// Decided once: a late call is 409 and moves nothing.
				_, err = a.Approve(ctx, f.pid, tx.ID, nil)
				testkit.RequireFault(t, err, fault.KindConflict, approvals.CodeNotPending)
				assert.Equal(t, acct.Net(), e.LedgerAccount(f.acct.ID).Net())
				e.Clock.Advance(approvals.Window)
				e.RunJobs()
				assert.Equal(t, s.status, e.txn(f.pid, q.TransactionID).Status)
				e.Verify()
			})
		})
	}
}

func TestDepositRefusals(t *testing.T) {
	ctx := context.Background()
	e := newMemoryEnv(t)
	e.withApprovals("")
	f := e.fixture("789")

	fromAccount := deposit(f.cust.ID, "USD", f.acct.ID)
	fromAccount.Source = quotes.Source{Type: quotes.SourceAccount, AccountID: f.acct.ID}
	_, err := e.quotes.Create(ctx, f.pid, fromAccount)
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "destination.accountId")

	railNamed := deposit(f.cust.ID, "USD", f.acct.ID)
	railNamed.Destination.PaymentRail = "ACH"
	_, err = e.quotes.Create(ctx, f.pid, railNamed)
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "destination.paymentRail")

	_, err = e.quotes.Create(ctx, f.pid, deposit(f.cust.ID, "USD", "Customer:nope"))
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "destination.accountId")

	_, err = e.quotes.Create(ctx, f.pid, deposit(f.cust.ID, "USD", "InternalAccount:nope"))
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")

	other, otherAcct := e.customer(f.pid)
	_, err = e.quotes.Create(ctx, f.pid, deposit(f.cust.ID, "USD", otherAcct.ID))
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "destination.accountId")
	// Without source.customerId the account's owner pays.
	q, err := e.quotes.Create(ctx, f.pid, deposit("", "USD", otherAcct.ID))
	require.NoError(t, err)
	assert.Equal(t, other.ID, q.CustomerID)

	// Another platform's account is not found.
	p2 := e.platform()
	_, err = e.quotes.Create(ctx, p2, deposit("", "USD", f.acct.ID))
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")

	// The wrong amount: nothing credited, the funds go back.
	q, err = e.quotes.Create(ctx, f.pid, deposit(f.cust.ID, "USD", f.acct.ID))
	require.NoError(t, err)
	tx, err := e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: q.ID, CurrencyCode: "USD", CurrencyAmount: 1})
	require.NoError(t, err)
	assert.Equal(t, transactions.StatusFailed, tx.Status)
	assert.Equal(t, quotes.ReasonCollectionFailed, tx.FailureReason, "an incoming payment's reason")
	require.NotNil(t, tx.Details.Refund)
	assert.Equal(t, funded, e.LedgerAccount(f.acct.ID).Net())

	// A deposit on its way keeps its account open: the customer cannot be
	// deleted (which closes its accounts) until it is settled.
	_, err = e.Customers.Delete(ctx, f.pid, other.ID)
	testkit.RequireFault(t, err, fault.KindConflict, "CUSTOMER_HAS_FUNDS")

	// Unfunded until expiresAt: EXPIRED, nothing credited.
	q, err = e.quotes.Create(ctx, f.pid, deposit(f.cust.ID, "USD", f.acct.ID))
	require.NoError(t, err)
	e.Clock.Set(q.ExpiresAt)
	e.RunJobs()
	assert.Equal(t, quotes.StatusExpired, e.quote(f.pid, q.ID).Status)
	tx = e.txn(f.pid, q.TransactionID)
	assert.Equal(t, transactions.StatusExpired, tx.Status)
	assert.Equal(t, quotes.ReasonQuoteExpired, tx.FailureReason)
	assert.Equal(t, funded, e.LedgerAccount(f.acct.ID).Net())
	e.Verify()
}

// creditCode is the transfer code of the entry of q that credited account.
func creditCode(t *testing.T, e *env, q ports.Quote, account string) string {
	t.Helper()
	journal, err := e.Ledger.Journal(context.Background(), 0, 100_000)
	require.NoError(t, err)
	for _, je := range journal {
		if je.Entry.Ref != q.TransactionID {
			continue
		}
		for _, tr := range je.Entry.Transfers {
			if tr.CreditAccountID == account {
				return tr.Code
			}
		}
	}
	t.Fatalf("no entry of %s credits %s", q.ID, account)
	return ""
}
