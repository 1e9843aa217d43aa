package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	umasandbox "github.com/corridorpay/corridor/adapters/uma/sandbox"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// run submits req and then asks its status after each step's advance,
// checking every answer.
func run(t *testing.T, rail ports.Rail, clock *testkit.FakeClock, req ports.RailRequest, steps []step) {
	t.Helper()
	var ref string
	for i, st := range steps {
		clock.Advance(st.after)
		var res ports.RailResult
		var err error
		if i == 0 {
			res, err = rail.Submit(context.Background(), req)
			ref = res.ExternalRef
		} else {
			res, err = rail.Status(context.Background(), req, ref)
		}
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, st.state, res.State, "step %d", i)
		assert.Equal(t, st.reason, res.FailureReason, "step %d", i)
		if st.checkAt >= 0 && (st.state == ports.RailPending || st.state == ports.RailSucceeded) {
			if st.state == ports.RailSucceeded && st.checkAt == 0 {
				assert.True(t, res.CheckAt.IsZero(), "step %d: no return window", i)
			} else {
				assert.Equal(t, t0.Add(st.checkAt), res.CheckAt, "step %d", i)
			}
		}
		if st.state != ports.RailPending && st.state != ports.RailSucceeded {
			assert.NotEmpty(t, res.FailureDetail, "step %d", i)
		}
	}
}

func TestSandboxQuotePayoutTable(t *testing.T) {
	ach := 10 * time.Second
	cases := []struct {
		rail, number string
		steps        []step
	}{
		{"ACH", "123456002", []step{{state: ports.RailFailed, reason: "QUOTE_EXECUTION_FAILED"}}},
		{"RTP", "123456003", []step{
			{state: ports.RailPending, checkAt: sandbox.QuoteSlowAfter},
			{after: sandbox.QuoteSlowAfter - time.Second, state: ports.RailPending, checkAt: sandbox.QuoteSlowAfter},
			{after: time.Second, state: ports.RailSucceeded}}},
		{"ACH", "123456004", []step{
			{state: ports.RailPending, checkAt: ach},
			{after: ach, state: ports.RailFailed, reason: "ACCOUNT_CANNOT_RECEIVE"}}},
		{"ACH", "123456005", []step{
			{state: ports.RailPending, checkAt: ach},
			{after: ach, state: ports.RailSucceeded, checkAt: ach + sandbox.QuoteReturnAfter},
			{after: sandbox.QuoteReturnAfter, state: ports.RailReturned, reason: "PAYOUT_RETURNED",
				checkAt: ach + sandbox.QuoteReturnAfter + sandbox.QuoteRefundAfter}}},
		{"RTP", "123456006", []step{
			{state: ports.RailPending},
			{state: ports.RailCancelled}}},
		{"RTP", "123456007", []step{
			{state: ports.RailPending},
			{state: ports.RailFailedUnreturned, reason: "QUOTE_EXECUTION_FAILED"}}},
		{"RTP", "123456789", []step{
			{state: ports.RailPending},
			{state: ports.RailSucceeded}}},
	}
	for _, tc := range cases {
		t.Run(tc.rail+"/"+tc.number[6:], func(t *testing.T) {
			clock := testkit.NewFakeClock(t0)
			s := spec(t, tc.rail, "USD")
			req := request(s, ports.RailPayout, usdAccount(tc.number))
			req.Purpose = ports.RailPurposeQuote
			run(t, sandbox.New(s, clock), clock, req, tc.steps)
		})
	}
}

func TestSandboxUmaPayouts(t *testing.T) {
	dir := umasandbox.New("")
	cases := []struct {
		user  string
		steps []step
	}{
		{"success.usd", []step{{state: ports.RailPending}, {state: ports.RailSucceeded}}},
		{"pending.long.usd", []step{
			{state: ports.RailPending, checkAt: sandbox.UMALongPending},
			{after: sandbox.UMALongPending - time.Second, state: ports.RailPending, checkAt: sandbox.UMALongPending},
			{after: time.Second, state: ports.RailSucceeded}}},
		{"fail.compliance.usd", []step{{state: ports.RailPending}, {state: ports.RailFailed, reason: "COMPLIANCE_REJECTED"}}},
		{"nobody", []step{{state: ports.RailFailed, reason: "ACCOUNT_INVALID"}}},
	}
	s := ports.RailSpec{Name: "UMA", Currency: "USD", AccountTypes: []string{"UMA_ADDRESS"}, Instant: true}
	for _, tc := range cases {
		t.Run(tc.user, func(t *testing.T) {
			clock := testkit.NewFakeClock(t0)
			req := ports.RailRequest{Ref: "Transaction:1", Rail: "UMA", Direction: ports.RailPayout, Currency: "USD",
				Amount: 100, Purpose: ports.RailPurposeQuote, UmaAddress: dir.Address(tc.user)}
			run(t, sandbox.FactoryWithUMA(clock, dir)(s), clock, req, tc.steps)
		})
	}
	// Without a directory a UMA payout is a configuration error, not an
	// outcome.
	_, err := sandbox.New(s, testkit.NewFakeClock(t0)).Submit(context.Background(), ports.RailRequest{
		Ref: "Transaction:1", Rail: "UMA", Direction: ports.RailPayout, Currency: "USD", Amount: 100, UmaAddress: dir.Address("success.usd")})
	assert.Error(t, err)
}
