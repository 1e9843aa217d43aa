package policy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/core/agents/policy"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/testkit"
)

const other = "InternalAccount:019542f5-b3e7-1d02-0000-000000000002"

// rates: 1 EUR buys 1.25 USD (and back at 0.8); 1 USD buys 150 JPY.
var rates = policy.RateFunc(func(from, to string) (decimal.Decimal, error) {
	table := map[[2]string]string{{"EUR", "USD"}: "1.25", {"USD", "EUR"}: "0.8", {"USD", "JPY"}: "150", {"JPY", "USD"}: "0.0066667"}
	v, ok := table[[2]string{from, to}]
	if !ok {
		return decimal.Decimal{}, fmt.Errorf("no rate %s/%s", from, to)
	}
	return decimal.RequireFromString(v), nil
})

func limits() policy.Policy {
	return policy.Policy{
		Permissions:          policy.Permissions,
		DefaultExecutionMode: policy.Auto,
		SpendingLimits: policy.SpendingLimits{Currency: "USD", PerTransactionLimit: 10_000,
			DailyLimit: policy.Int(25_000), DailyTransactionLimit: policy.Int(5), MonthlyLimit: policy.Int(100_000)},
		ApprovalThresholds: &policy.ApprovalThresholds{Currency: "USD", Amount: policy.Int(5_000)},
	}
}

// refused checks a 403 FORBIDDEN with the given reason and numbers.
func refused(t *testing.T, err error, reason string, limit, used, requested int64) {
	t.Helper()
	require.Error(t, err)
	fe, ok := fault.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, fault.KindForbidden, fe.Kind)
	assert.Equal(t, policy.CodeForbidden, fe.Code)
	assert.Equal(t, reason, fe.Details["reason"], fe.Message)
	assert.Equal(t, limit, fe.Details["limitAmount"], fe.Message)
	assert.Equal(t, used, fe.Details["used"], fe.Message)
	assert.Equal(t, requested, fe.Details["requested"], fe.Message)
	assert.Contains(t, fe.Message, fmt.Sprintf("limit %d", limit))
	assert.Contains(t, fe.Message, fmt.Sprintf("used %d", used))
	assert.Contains(t, fe.Message, fmt.Sprintf("requested %d", requested))
}

func TestConvertRoundsUpAgainstTheAgent(t *testing.T) {
	cases := []struct {
		amount   int64
		from, to string
		rate     string
		want     int64
	}{
		{8000, "EUR", "USD", "1.25", 10000},             // exact
		{8001, "EUR", "USD", "1.25", 10002},             // 10001.25 -> 10002
		{1, "EUR", "USD", "1.25", 2},                    // 1.25 -> 2
		{1, "USD", "JPY", "150", 2},                     // 0.01 USD = 1.5 JPY -> 2
		{100, "JPY", "USD", "0.0066667", 67},            // 1 USD × 0.66667 = 66.667 cents -> 67
		{1, "USD", "BTC", "0.00001", 10},                // 0.01 USD = 0.0000001 BTC = 10 sat
		{12345, "USD", "USD", "0", 12345},               // same currency: no rate
		{100_000_000, "BTC", "USD", "90000", 9_000_000}, // 1 BTC
	}
	for _, tc := range cases {
		got, err := policy.Convert(tc.amount, tc.from, tc.to, decimal.RequireFromString(tc.rate))
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%d %s -> %s", tc.amount, tc.from, tc.to)
	}
	_, err := policy.Convert(1, "EUR", "USD", decimal.Zero)
	require.Error(t, err)
	_, err = policy.Convert(9_000_000_000_000_000, "USD", "JPY", decimal.NewFromInt(150))
	require.Error(t, err, "beyond the largest amount")
}

// TestPerTransactionLimit: at, one under, one over, in the policy currency
// and in EUR (8000 EUR cents = 10000 USD cents exactly at 1.25).
func TestPerTransactionLimit(t *testing.T) {
	cases := []struct {
		name     string
		amount   int64
		currency string
		ok       bool
		usd      int64
	}{
		{"under, USD", 9_999, "USD", true, 9_999},
		{"at, USD", 10_000, "USD", true, 10_000},
		{"over, USD", 10_001, "USD", false, 10_001},
		{"under, EUR", 7_999, "EUR", true, 9_999}, // 9998.75 -> 9999
		{"at, EUR", 8_000, "EUR", true, 10_000},
		{"over, EUR", 8_001, "EUR", false, 10_002}, // 10001.25 -> 10002
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := limits().Decide(policy.Request{Operation: policy.OpTransferOut, AccountID: acct, Amount: tc.amount, Currency: tc.currency}, rates)
			if !tc.ok {
				refused(t, err, policy.ReasonPerTransaction, 10_000, 0, tc.usd)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.usd, d.Amount)
		})
	}
}

// TestApprovalThreshold: above the threshold (not at it) needs approval
// even in AUTO; the threshold has its own currency.
func TestApprovalThreshold(t *testing.T) {
	eur := limits()
	eur.ApprovalThresholds = &policy.ApprovalThresholds{Currency: "EUR", Amount: policy.Int(4_000)} // = 5000 USD cents
	cases := []struct {
		name     string
		p        policy.Policy
		amount   int64
		currency string
		want     policy.ExecutionMode
	}{
		{"under, USD", limits(), 4_999, "USD", policy.Auto},
		{"at, USD", limits(), 5_000, "USD", policy.Auto},
		{"over, USD", limits(), 5_001, "USD", policy.ApprovalRequired},
		{"under, EUR request", limits(), 3_999, "EUR", policy.Auto},            // 4998.75 -> 4999
		{"at, EUR request", limits(), 4_000, "EUR", policy.Auto},               // 5000
		{"over, EUR request", limits(), 4_001, "EUR", policy.ApprovalRequired}, // 5001.25 -> 5002
		{"under, EUR threshold", eur, 4_999, "USD", policy.Auto},               // 3999.2 -> 4000: at
		{"at, EUR threshold", eur, 5_000, "USD", policy.Auto},                  // 4000
		{"over, EUR threshold", eur, 5_001, "USD", policy.ApprovalRequired},    // 4000.8 -> 4001
		{"over, rounding against the agent", eur, 5_000 + 1, "USD", policy.ApprovalRequired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.p.Decide(policy.Request{Operation: policy.OpExecuteQuote, AccountID: acct, Amount: tc.amount, Currency: tc.currency}, rates)
			require.NoError(t, err)
			assert.Equal(t, tc.want, d.Mode)
		})
	}
	// A null amount is no threshold.
	p := limits()
	p.ApprovalThresholds.Amount = nil
	d, err := p.Decide(policy.Request{Operation: policy.OpTransferOut, AccountID: acct, Amount: 10_000, Currency: "USD"}, rates)
	require.NoError(t, err)
	assert.Equal(t, policy.Auto, d.Mode)
}

func TestExecutionModesAndAccountRules(t *testing.T) {
	p := limits()
	p.DefaultExecutionMode = policy.ApprovalRequired
	p.AccountRestrictions = &policy.AccountRestrictions{
		AllowedAccountIDs: []string{acct, "Account:019542f5-b3e7-1d02-0000-000000000002"},
		AccountRules: []policy.AccountRule{
			{AccountID: acct, ExecutionMode: policy.Auto, PerTransactionLimit: policy.Int(2_000)},
		},
	}
	req := func(account string, amount int64) policy.Request {
		return policy.Request{Operation: policy.OpTransferOut, AccountID: account, Amount: amount, Currency: "USD"}
	}
	// The rule's mode and limit on its account.
	d, err := p.Decide(req(acct, 2_000), rates)
	require.NoError(t, err)
	assert.Equal(t, policy.Auto, d.Mode)
	_, err = p.Decide(req(acct, 2_001), rates)
	refused(t, err, policy.ReasonPerTransaction, 2_000, 0, 2_001)
	// The other allowed account (named in the reference's Account: form)
	// has the defaults.
	d, err = p.Decide(req(other, 9_000), rates)
	require.NoError(t, err)
	assert.Equal(t, policy.ApprovalRequired, d.Mode)
	// A rule whose limit is null inherits the policy's.
	p.AccountRestrictions.AccountRules[0].PerTransactionLimit = nil
	d, err = p.Decide(req(acct, 4_000), rates)
	require.NoError(t, err)
	assert.Equal(t, policy.Auto, d.Mode)
	// Above the threshold the AUTO rule still waits for approval.
	d, err = p.Decide(req(acct, 6_000), rates)
	require.NoError(t, err)
	assert.Equal(t, policy.ApprovalRequired, d.Mode)
	// An account not allowed.
	_, err = p.Decide(req("InternalAccount:019542f5-b3e7-1d02-0000-000000000003", 1), rates)
	fe, ok := fault.As(err)
	require.True(t, ok)
	assert.Equal(t, fault.KindForbidden, fe.Kind)
	assert.Equal(t, policy.ReasonAccount, fe.Details["reason"])
	// An empty allow-list allows nothing; null allows every account.
	p.AccountRestrictions.AllowedAccountIDs = []string{}
	_, err = p.Decide(req(acct, 1), rates)
	require.Error(t, err)
	p.AccountRestrictions.AllowedAccountIDs = nil
	_, err = p.Decide(req("InternalAccount:019542f5-b3e7-1d02-0000-000000000003", 1), rates)
	require.NoError(t, err)
}

func TestPermissions(t *testing.T) {
	ops := map[policy.Operation]policy.Permission{
		policy.OpCreateQuote:            policy.CreateQuotes,
		policy.OpExecuteQuote:           policy.ExecuteQuotes,
		policy.OpTransferIn:             policy.CreateTransfers,
		policy.OpTransferOut:            policy.CreateTransfers,
		policy.OpViewTransactions:       policy.ViewTransactions,
		policy.OpManageExternalAccounts: policy.ManageExternalAccounts,
	}
	for op, perm := range ops {
		p := limits()
		require.NoError(t, p.Permit(op), op)
		p.Permissions = []policy.Permission{}
		for _, o := range policy.Permissions {
			if o != perm {
				p.Permissions = append(p.Permissions, o)
			}
		}
		err := p.Permit(op)
		fe, ok := fault.As(err)
		require.True(t, ok, op)
		assert.Equal(t, fault.KindForbidden, fe.Kind)
		assert.Equal(t, string(perm), fe.Details["permission"])
		assert.Contains(t, fe.Message, string(perm))
		_, err = p.Decide(policy.Request{Operation: op, AccountID: acct, Amount: 1, Currency: "USD"}, rates)
		require.Error(t, err)
	}
}

func TestNoRateRefuses(t *testing.T) {
	_, err := limits().Decide(policy.Request{Operation: policy.OpTransferOut, AccountID: acct, Amount: 1, Currency: "MXN"}, rates)
	fe, ok := fault.As(err)
	require.True(t, ok)
	assert.Equal(t, fault.KindForbidden, fe.Kind)
	assert.Equal(t, policy.ReasonNoRate, fe.Details["reason"])
}

func meter(at time.Time) (policy.Meter, *testkit.FakeClock) {
	clock := testkit.NewFakeClock(at)
	return policy.Meter{Store: memory.NewAgentUsageStore(), Clock: clock}, clock
}

var start = time.Date(2026, 1, 30, 12, 0, 0, 0, time.UTC)

// TestDailyAndMonthlyLimits: at, one under and one over each usage limit,
// in USD and in EUR (converted, rounded up).
func TestDailyAndMonthlyLimits(t *testing.T) {
	cases := []struct {
		name     string
		limit    func(p *policy.Policy)
		reason   string
		limitV   int64
		amount   int64
		currency string
		ok       bool
		used     int64 // USD cents already spent (by 10000-cent actions, at most 2)
		usd      int64
	}{
		{"daily under, USD", nil, policy.ReasonDaily, 25_000, 4_999, "USD", true, 20_000, 4_999},
		{"daily at, USD", nil, policy.ReasonDaily, 25_000, 5_000, "USD", true, 20_000, 5_000},
		{"daily over, USD", nil, policy.ReasonDaily, 25_000, 5_001, "USD", false, 20_000, 5_001},
		{"daily under, EUR", nil, policy.ReasonDaily, 25_000, 3_999, "EUR", true, 20_000, 4_999},
		{"daily at, EUR", nil, policy.ReasonDaily, 25_000, 4_000, "EUR", true, 20_000, 5_000},
		{"daily over, EUR", nil, policy.ReasonDaily, 25_000, 4_001, "EUR", false, 20_000, 5_002},
		{"monthly under, USD", monthly, policy.ReasonMonthly, 15_000, 4_999, "USD", true, 10_000, 4_999},
		{"monthly at, USD", monthly, policy.ReasonMonthly, 15_000, 5_000, "USD", true, 10_000, 5_000},
		{"monthly over, USD", monthly, policy.ReasonMonthly, 15_000, 5_001, "USD", false, 10_000, 5_001},
		{"monthly at, EUR", monthly, policy.ReasonMonthly, 15_000, 4_000, "EUR", true, 10_000, 5_000},
		{"monthly over, EUR", monthly, policy.ReasonMonthly, 15_000, 4_001, "EUR", false, 10_000, 5_002},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p := limits()
			p.ApprovalThresholds = nil
			if tc.limit != nil {
				tc.limit(&p)
			}
			m, _ := meter(start)
			for i := int64(0); i < tc.used/10_000; i++ {
				_, err := m.Admit(ctx, "Agent:1", fmt.Sprint("before/", i), p, policy.Request{Operation: policy.OpTransferOut, AccountID: acct, Amount: 10_000, Currency: "USD"}, rates)
				require.NoError(t, err)
			}
			d, err := m.Admit(ctx, "Agent:1", "this", p, policy.Request{Operation: policy.OpExecuteQuote, AccountID: acct, Amount: tc.amount, Currency: tc.currency}, rates)
			u, uerr := m.Usage(ctx, "Agent:1")
			require.NoError(t, uerr)
			if !tc.ok {
				refused(t, err, tc.reason, tc.limitV, tc.used, tc.usd)
				assert.Equal(t, tc.used, u.DailySpend, "a refused action reserves nothing")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.usd, d.Amount)
			assert.Equal(t, tc.used+tc.usd, u.DailySpend)
			assert.Equal(t, tc.used+tc.usd, u.MonthlySpend)
		})
	}
}

func monthly(p *policy.Policy) {
	p.SpendingLimits.DailyLimit = nil
	p.SpendingLimits.MonthlyLimit = policy.Int(15_000)
}

func TestDailyTransactionLimit(t *testing.T) {
	ctx := context.Background()
	p := limits()
	p.SpendingLimits.DailyLimit = nil
	p.SpendingLimits.DailyTransactionLimit = policy.Int(2)
	m, _ := meter(start)
	req := policy.Request{Operation: policy.OpTransferIn, AccountID: acct, Amount: 1, Currency: "USD"}
	for i := range 2 { // under, then at
		_, err := m.Admit(ctx, "Agent:1", fmt.Sprint("n/", i), p, req, rates)
		require.NoError(t, err)
	}
	_, err := m.Admit(ctx, "Agent:1", "n/2", p, req, rates)
	refused(t, err, policy.ReasonDailyCount, 2, 2, 1)
	// Reading and quoting are not counted.
	_, err = m.Admit(ctx, "Agent:1", "q", p, policy.Request{Operation: policy.OpCreateQuote, AccountID: acct, Amount: 1, Currency: "USD"}, rates)
	require.NoError(t, err)
}

// TestRolloverOnTheFakeClock: the daily counters start again at UTC
// midnight, the monthly one on the first of the month; usage shows the
// next reset day and month.
func TestRolloverOnTheFakeClock(t *testing.T) {
	ctx := context.Background()
	p := limits()
	p.ApprovalThresholds = nil
	p.SpendingLimits.DailyLimit = policy.Int(10_000)
	p.SpendingLimits.MonthlyLimit = policy.Int(18_000)
	m, clock := meter(time.Date(2026, 1, 30, 23, 59, 59, 0, time.UTC))
	spend := func(id string, amount int64) error {
		_, err := m.Admit(ctx, "Agent:1", id, p, policy.Request{Operation: policy.OpTransferOut, AccountID: acct, Amount: amount, Currency: "USD"}, rates)
		return err
	}
	require.NoError(t, spend("a", 10_000))
	refused(t, spend("b", 1), policy.ReasonDaily, 10_000, 10_000, 1)
	u, err := m.Usage(ctx, "Agent:1")
	require.NoError(t, err)
	assert.Equal(t, policy.Usage{DailyTransactionCount: 1, DailySpend: 10_000, MonthlySpend: 10_000,
		DailyResetDate: "2026-01-31", MonthlyResetMonth: "2026-02"}, u)

	clock.Advance(time.Second) // 2026-01-31T00:00:00Z
	u, err = m.Usage(ctx, "Agent:1")
	require.NoError(t, err)
	assert.Equal(t, policy.Usage{MonthlySpend: 10_000, DailyResetDate: "2026-02-01", MonthlyResetMonth: "2026-02"}, u)
	require.NoError(t, spend("c", 5_000))
	clock.Advance(12 * time.Hour)
	refused(t, spend("d", 3_001), policy.ReasonMonthly, 18_000, 15_000, 3_001)
	require.NoError(t, m.GiveBack(ctx, "c"), "a failed action gives its usage back")
	require.NoError(t, m.GiveBack(ctx, "c"), "once")
	u, err = m.Usage(ctx, "Agent:1")
	require.NoError(t, err)
	assert.Equal(t, int64(10_000), u.MonthlySpend)
	assert.Equal(t, int64(0), u.DailySpend)

	clock.Set(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	u, err = m.Usage(ctx, "Agent:1")
	require.NoError(t, err)
	assert.Equal(t, policy.Usage{DailyResetDate: "2026-02-02", MonthlyResetMonth: "2026-03"}, u)
	require.NoError(t, spend("e", 10_000))

	// December rolls into the next year.
	clock.Set(time.Date(2026, 12, 31, 10, 0, 0, 0, time.UTC))
	u, err = m.Usage(ctx, "Agent:1")
	require.NoError(t, err)
	assert.Equal(t, "2027-01-01", u.DailyResetDate)
	assert.Equal(t, "2027-01", u.MonthlyResetMonth)
}

func TestAdmitTwiceReservesOnce(t *testing.T) {
	ctx := context.Background()
	p := limits()
	m, _ := meter(start)
	req := policy.Request{Operation: policy.OpTransferOut, AccountID: acct, Amount: 10_000, Currency: "USD"}
	for range 2 {
		_, err := m.Admit(ctx, "Agent:1", "same", p, req, rates)
		require.NoError(t, err)
	}
	u, err := m.Usage(ctx, "Agent:1")
	require.NoError(t, err)
	assert.Equal(t, int64(1), u.DailyTransactionCount)
	assert.Equal(t, int64(10_000), u.DailySpend)
}
