package approvals_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	railsandbox "github.com/corridorpay/corridor/adapters/rails/sandbox"
	umasandbox "github.com/corridorpay/corridor/adapters/uma/sandbox"
	"github.com/corridorpay/corridor/core/approvals"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/events"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/uma"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/coretest"
)

const sender = "$success.usd@sandbox.local"

// endpoint is a platform's webhook endpoint, "" for none.
type endpoint string

func (e endpoint) WebhookEndpoint(context.Context, string) (string, error) { return string(e), nil }

type env struct {
	*coretest.Env
	approvals *approvals.Service
	uma       *uma.Service
	platform  string
	account   string // the receiver's USD internal account
	credited  int64  // by earlier payments (check's expected balance)
}

func newEnv(t *testing.T, url string) *env { return newEnvOn(t, coretest.Memory(), url) }

// newEnvOn is a platform on b with one US customer, $ana, whose platform's
// webhook endpoint is url ("" for none).
func newEnvOn(t *testing.T, b coretest.Backend, url string) *env {
	t.Helper()
	ce := coretest.New(t, b, railsandbox.Factory(b.Clock))
	p := ce.Platform("USD")
	region, addr := "US", "$ana@corridor.test"
	c, err := ce.Customers.Create(context.Background(), p, customers.Input{CustomerType: "INDIVIDUAL", Region: &region, UmaAddress: &addr})
	require.NoError(t, err)
	acct := ce.InternalAccount(ports.InternalAccountFilter{PlatformID: p, CustomerID: c.ID, Currency: "USD"})
	a := approvals.New(ce.Store, ce.Ledger, ce.Clock, endpoint(url))
	a.Register(ce.Runner)
	u := uma.New(ce.Store, ce.Ledger, umasandbox.New(""), ce.Rails, ce.Clock, ce.IDs, true)
	u.SetApprovals(a)
	return &env{Env: ce, approvals: a, uma: u, platform: p, account: acct.ID}
}

// receive simulates an incoming UMA payment of 2500 to the customer.
func (e *env) receive(t *testing.T, fields ...ports.CounterpartyField) ports.Transaction {
	t.Helper()
	tx, err := e.uma.SimulateReceive(context.Background(), e.platform, uma.Receive{SenderUmaAddress: sender,
		ReceiverUmaAddress: "$ana@corridor.test", Currency: "USD", Amount: 2500, RequestedReceiverFields: fields})
	require.NoError(t, err)
	return tx
}

// reply passes the endpoint's answer to the payment's PENDING event.
func (e *env) reply(t *testing.T, tx ports.Transaction, code int, body string) {
	t.Helper()
	ev := ports.Event{ID: "Webhook:x", PlatformID: e.platform, Type: events.TypeIncomingPending, ResourceID: tx.ID}
	decided, err := e.approvals.Reply(context.Background(), ev, events.Answer{StatusCode: code, Body: []byte(body)})
	require.NoError(t, err)
	assert.True(t, decided)
}

func (e *env) tx(t *testing.T, id string) ports.Transaction {
	t.Helper()
	tx, err := e.Store.Read().Transactions().Get(context.Background(), e.platform, id)
	require.NoError(t, err)
	return tx
}

func (e *env) balance(t *testing.T) int64 {
	t.Helper()
	return e.LedgerAccount(e.account).Net()
}

// check asserts the payment's status and reason, the receiver's balance
// (credited on approval only), that no hold is left open, and the ledger's
// invariants.
func (e *env) check(t *testing.T, id, status, reason string) {
	t.Helper()
	ctx := context.Background()
	tx := e.tx(t, id)
	assert.Equal(t, status, tx.Status)
	assert.Equal(t, reason, tx.FailureReason)
	want := e.credited
	if status == transactions.StatusCompleted {
		want += 2500
		assert.NotNil(t, tx.SettledAt)
		assert.Nil(t, tx.Details.Refund)
	} else {
		// Never credited: the held funds went back to the sender.
		require.NotNil(t, tx.Details.Refund)
		assert.Equal(t, transactions.RefundCompleted, tx.Details.Refund.Status)
		wantReason := transactions.RefundTransactionFailed
		if reason == transactions.ReasonApprovalTimedOut {
			wantReason = transactions.RefundTimeout
		}
		assert.Equal(t, wantReason, tx.Details.Refund.Reason)
		assert.Equal(t, tx.Reference+"-R", tx.Details.Refund.Reference)
		assert.NotNil(t, tx.Details.Refund.SettledAt)
	}
	assert.Equal(t, want, e.balance(t))
	_, pend, err := e.Ledger.Snapshot(ctx)
	require.NoError(t, err)
	for _, p := range pend {
		assert.NotEqual(t, ledger.PendingOpen, p.Status, "hold %s left open", p.ID)
	}
	e.Verify()
	// The timeout job is gone once decided.
	assert.Empty(t, e.timeoutJobs(t), "timeout job left")
}

// timeoutJobs are the queued approval timeouts (claimed for a moment).
func (e *env) timeoutJobs(t *testing.T) []ports.Job {
	t.Helper()
	jobs, err := e.Store.Read().Jobs().Claim(context.Background(), e.Clock.Now().Add(time.Hour), 10, time.Nanosecond,
		ports.JobKinds{Only: []string{approvals.KindTimeout}})
	require.NoError(t, err)
	return jobs
}

func TestArrivalIsHeldPending(t *testing.T) {
	e := newEnv(t, "https://platform.example/hooks")
	tx := e.receive(t)
	assert.Equal(t, transactions.StatusPending, tx.Status)
	assert.True(t, transactions.AwaitsApproval(e.tx(t, tx.ID)))
	assert.Zero(t, e.balance(t), "unapproved money is not available")
	assert.Equal(t, int64(2500), e.LedgerAccount(e.account).CreditsPending)
}

func TestNoEndpointCreditsAtOnce(t *testing.T) {
	e := newEnv(t, "")
	tx := e.receive(t)
	assert.Equal(t, transactions.StatusCompleted, tx.Status)
	assert.Equal(t, int64(2500), e.balance(t))
}

var fullName = ports.CounterpartyField{Name: "FULL_NAME", Mandatory: true}

func TestWebhookReplies(t *testing.T) {
	cases := []struct {
		name           string
		fields         []ports.CounterpartyField
		code           int
		body           string
		status, reason string
	}{
		{"200 approves", nil, 200, ``, transactions.StatusCompleted, ""},
		{"200 with the required info", []ports.CounterpartyField{fullName, {Name: "EMAIL"}}, 200,
			`{"receiverCustomerInfo":{"FULL_NAME":"Ana Lima"}}`, transactions.StatusCompleted, ""},
		{"200 without the required info", []ports.CounterpartyField{fullName}, 200, `{"receiverCustomerInfo":{}}`,
			transactions.StatusFailed, transactions.ReasonMissingPayeeData},
		{"200 with an empty required field", []ports.CounterpartyField{fullName}, 200, `{"receiverCustomerInfo":{"FULL_NAME":""}}`,
			transactions.StatusFailed, transactions.ReasonMissingPayeeData},
		{"200 with a blank required field", []ports.CounterpartyField{fullName}, 200, `{"receiverCustomerInfo":{"FULL_NAME":" \t"}}`,
			transactions.StatusFailed, transactions.ReasonMissingPayeeData},
		{"200 with a required field that is not text", []ports.CounterpartyField{fullName}, 200, `{"receiverCustomerInfo":{"FULL_NAME":{"a":1}}}`,
			transactions.StatusFailed, transactions.ReasonMissingPayeeData},
		{"200 with no body when info is required", []ports.CounterpartyField{fullName}, 200, ``,
			transactions.StatusFailed, transactions.ReasonMissingPayeeData},
		{"200 without an optional field approves", []ports.CounterpartyField{{Name: "EMAIL"}}, 200, `{}`,
			transactions.StatusCompleted, ""},
		{"403 rejects", nil, 403, `{"reason":"RESTRICTED_JURISDICTION"}`, transactions.StatusRejected, ""},
		{"422 asks for data", nil, 422, `{"requiredFields":["TAX_ID"]}`, transactions.StatusFailed,
			transactions.ReasonMissingPayeeData},
		{"500 is a webhook error", nil, 500, ``, transactions.StatusFailed, transactions.ReasonApprovalWebhookError},
		{"no answer is a webhook error", nil, 0, ``, transactions.StatusFailed, transactions.ReasonApprovalWebhookError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "https://platform.example/hooks")
			tx := e.receive(t, c.fields...)
			e.reply(t, tx, c.code, c.body)
			e.check(t, tx.ID, c.status, c.reason)
			// A second answer (a redelivery) changes nothing.
			e.reply(t, tx, 200, ``)
			e.check(t, tx.ID, c.status, c.reason)
		})
	}
}

func TestDeferredThenApprove(t *testing.T) {
	e := newEnv(t, "https://platform.example/hooks")
	ctx := context.Background()
	tx := e.receive(t, fullName)
	e.reply(t, tx, 202, ``)
	assert.True(t, transactions.AwaitsApproval(e.tx(t, tx.ID)))
	assert.Zero(t, e.balance(t))
	e.Clock.Advance(2 * time.Second)

	_, err := e.approvals.Approve(ctx, e.platform, tx.ID, nil)
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "receiverCustomerInfo")
	for _, bad := range []any{"   ", true, 123, map[string]any{}, []any{"Ana"}} {
		_, err = e.approvals.Approve(ctx, e.platform, tx.ID, map[string]any{"FULL_NAME": bad})
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "receiverCustomerInfo")
	}
	got, err := e.approvals.Approve(ctx, e.platform, tx.ID, map[string]any{"FULL_NAME": "Ana Lima"})
	require.NoError(t, err)
	assert.Equal(t, transactions.StatusCompleted, got.Status)
	e.check(t, tx.ID, transactions.StatusCompleted, "")

	// Decided: approve or reject again is 409 and moves nothing.
	_, err = e.approvals.Approve(ctx, e.platform, tx.ID, map[string]any{"FULL_NAME": "Ana Lima"})
	testkit.RequireFault(t, err, fault.KindConflict, approvals.CodeNotPending)
	_, err = e.approvals.Reject(ctx, e.platform, tx.ID)
	testkit.RequireFault(t, err, fault.KindConflict, approvals.CodeNotPending)
	e.check(t, tx.ID, transactions.StatusCompleted, "")
}

func TestDeferredThenReject(t *testing.T) {
	e := newEnv(t, "https://platform.example/hooks")
	tx := e.receive(t)
	e.reply(t, tx, 202, ``)
	got, err := e.approvals.Reject(context.Background(), e.platform, tx.ID)
	require.NoError(t, err)
	assert.Equal(t, transactions.StatusRejected, got.Status)
	e.check(t, tx.ID, transactions.StatusRejected, "")
}

func TestDeferredThenTimeout(t *testing.T) {
	e := newEnv(t, "https://platform.example/hooks")
	ctx := context.Background()
	tx := e.receive(t)
	e.reply(t, tx, 202, ``)
	queued := e.timeoutJobs(t)
	require.Len(t, queued, 1)
	job := queued[0]
	assert.Equal(t, coretest.Start.Add(approvals.Window), job.RunAt)

	// Run early (a runner's clock ahead of the deadline's): it waits.
	err := e.approvals.HandleTimeout(ctx, job)
	at, retry := jobs.IsRetryAt(err)
	require.True(t, retry, "%v", err)
	assert.Equal(t, coretest.Start.Add(approvals.Window), at)
	assert.True(t, transactions.AwaitsApproval(e.tx(t, tx.ID)))

	e.Clock.Advance(approvals.Window)
	require.NoError(t, e.approvals.HandleTimeout(ctx, job))
	e.check(t, tx.ID, transactions.StatusFailed, transactions.ReasonApprovalTimedOut)
	// Idempotent.
	require.NoError(t, e.approvals.HandleTimeout(ctx, job))
	e.check(t, tx.ID, transactions.StatusFailed, transactions.ReasonApprovalTimedOut)
}

func TestApproveAfterWindowIs409(t *testing.T) {
	e := newEnv(t, "https://platform.example/hooks")
	ctx := context.Background()
	tx := e.receive(t)
	e.reply(t, tx, 202, ``)
	// The window ends before the timeout job has run: approve is refused
	// and times the payment out itself.
	e.Clock.Advance(approvals.Window)
	_, err := e.approvals.Approve(ctx, e.platform, tx.ID, nil)
	testkit.RequireFault(t, err, fault.KindConflict, approvals.CodeNotPending)
	e.check(t, tx.ID, transactions.StatusFailed, transactions.ReasonApprovalTimedOut)
	// A late webhook answer, then the job, change nothing.
	e.reply(t, tx, 200, ``)
	_, err = e.approvals.Reject(ctx, e.platform, tx.ID)
	testkit.RequireFault(t, err, fault.KindConflict, approvals.CodeNotPending)
	e.check(t, tx.ID, transactions.StatusFailed, transactions.ReasonApprovalTimedOut)
}

func TestNotAnApprovalPayment(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	tx := e.receive(t) // credited at once
	ev := ports.Event{ID: "Webhook:x", PlatformID: e.platform, Type: events.TypeIncomingPending, ResourceID: tx.ID}
	decided, err := e.approvals.Reply(ctx, ev, events.Answer{StatusCode: 403})
	require.NoError(t, err)
	assert.False(t, decided, "an answer about a payment without approval only acknowledges")
	_, err = e.approvals.Approve(ctx, e.platform, tx.ID, nil)
	testkit.RequireFault(t, err, fault.KindConflict, approvals.CodeNotPending)
	_, err = e.approvals.Reject(ctx, e.platform, "Transaction:00000000-0000-0000-0000-000000000000")
	testkit.RequireFault(t, err, fault.KindNotFound, approvals.CodeNotFound)
	assert.Equal(t, int64(2500), e.balance(t))
}

// TestOnPostgres runs the main flow on PostgreSQL: a payment held, one
// approved after a 202, another timed out by the job queue at its
// window's end.
func TestOnPostgres(t *testing.T) {
	e := newEnvOn(t, coretest.Postgres(t), "https://platform.example/hooks")
	ctx := context.Background()
	approved := e.receive(t, fullName)
	assert.True(t, transactions.AwaitsApproval(e.tx(t, approved.ID)))
	e.reply(t, approved, 202, ``)
	_, err := e.approvals.Approve(ctx, e.platform, approved.ID, map[string]any{"FULL_NAME": "Ana Lima"})
	require.NoError(t, err)
	e.check(t, approved.ID, transactions.StatusCompleted, "")
	e.credited = 2500

	timedOut, err := e.uma.SimulateReceive(ctx, e.platform, uma.Receive{SenderUmaAddress: sender,
		ReceiverUmaAddress: "$ana@corridor.test", Currency: "USD", Amount: 700})
	require.NoError(t, err)
	e.reply(t, timedOut, 202, ``)
	e.Advance(approvals.Window - time.Millisecond)
	assert.True(t, transactions.AwaitsApproval(e.tx(t, timedOut.ID)))
	e.Advance(time.Millisecond)
	e.check(t, timedOut.ID, transactions.StatusFailed, transactions.ReasonApprovalTimedOut)
	_, err = e.approvals.Approve(ctx, e.platform, timedOut.ID, nil)
	testkit.RequireFault(t, err, fault.KindConflict, approvals.CodeNotPending)
	assert.Equal(t, int64(2500), e.balance(t))
}
