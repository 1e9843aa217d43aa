package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

var t0 = time.Date(2025, 10, 13, 9, 0, 0, 0, time.UTC)

func spec(t *testing.T, name, currency string) ports.RailSpec {
	t.Helper()
	for _, s := range rails.DefaultSpecs() {
		if s.Name == name && s.Currency == currency {
			return s
		}
	}
	t.Fatalf("no rail %s/%s in the default table", name, currency)
	return ports.RailSpec{}
}

func usdAccount(number string) ports.ExternalAccount {
	return ports.ExternalAccount{ID: "ExternalAccount:1", Currency: "USD",
		Info: ports.AccountInfo{AccountType: "USD_ACCOUNT", AccountNumber: number, RoutingNumber: "021000021"}}
}

func request(s ports.RailSpec, dir ports.RailDirection, acct ports.ExternalAccount) ports.RailRequest {
	return ports.RailRequest{Ref: "Transaction:00000000-0000-0000-0000-000000000001", Rail: s.Name,
		Direction: dir, Currency: s.Currency, Amount: 12550, Account: acct}
}

// step is one look at the movement: advance the clock by `after` (from the
// previous step), then Submit (first step) or Status, and expect a result.
type step struct {
	after   time.Duration
	state   ports.RailState
	reason  string
	checkAt time.Duration // expected CheckAt - t0 when PENDING
}

func TestSandboxSuffixTable(t *testing.T) {
	const (
		ach = "ACH"
		rtp = "RTP"
	)
	achDelay := 10 * time.Second
	cases := []struct {
		name   string
		rail   string
		dir    ports.RailDirection
		number string
		steps  []step
	}{
		{"002 payout fails at once", ach, ports.RailPayout, "123456002", []step{
			{state: ports.RailFailed, reason: "ACCOUNT_CANNOT_RECEIVE"}}},
		{"002 pull fails at once (insufficient funds)", ach, ports.RailPull, "123456002", []step{
			{state: ports.RailFailed, reason: "COLLECTION_FAILED"}}},
		{"003 payout fails at once", ach, ports.RailPayout, "123456003", []step{
			{state: ports.RailFailed, reason: "ACCOUNT_INVALID"}}},
		{"003 pull fails at once", ach, ports.RailPull, "123456003", []step{
			{state: ports.RailFailed, reason: "COLLECTION_FAILED"}}},
		{"003 instant payout fails at once", rtp, ports.RailPayout, "123456003", []step{
			{state: ports.RailFailed, reason: "ACCOUNT_INVALID"}}},
		{"004 payout pending until settlement, then rejected", ach, ports.RailPayout, "123456004", []step{
			{state: ports.RailPending, checkAt: achDelay},
			{after: achDelay - time.Nanosecond, state: ports.RailPending, checkAt: achDelay},
			{after: time.Nanosecond, state: ports.RailRejected},
			{after: time.Hour, state: ports.RailRejected}}},
		{"004 pull rejected at settlement", ach, ports.RailPull, "123456004", []step{
			{state: ports.RailPending, checkAt: achDelay},
			{after: achDelay, state: ports.RailFailed, reason: "COLLECTION_FAILED"}}},
		{"004 instant payout rejected at the next check", rtp, ports.RailPayout, "123456004", []step{
			{state: ports.RailPending, checkAt: 0},
			{state: ports.RailRejected}}},
		{"005 payout pending 30 s then fails", rtp, ports.RailPayout, "123456005", []step{
			{state: ports.RailPending, checkAt: 30 * time.Second},
			{state: ports.RailPending, checkAt: 30 * time.Second},
			{after: 10 * time.Second, state: ports.RailPending, checkAt: 30 * time.Second},
			{after: 20*time.Second - time.Millisecond, state: ports.RailPending, checkAt: 30 * time.Second},
			{after: time.Millisecond, state: ports.RailFailed, reason: "COUNTERPARTY_POST_TX_FAILED"}}},
		{"005 outlasts a shorter settlement delay", ach, ports.RailPayout, "123456005", []step{
			{state: ports.RailPending, checkAt: 30 * time.Second},
			{after: achDelay, state: ports.RailPending, checkAt: 30 * time.Second},
			{after: 20 * time.Second, state: ports.RailFailed, reason: "COUNTERPARTY_POST_TX_FAILED"}}},
		{"005 pull fails after 30 s", ach, ports.RailPull, "123456005", []step{
			{state: ports.RailPending, checkAt: 30 * time.Second},
			{after: 29 * time.Second, state: ports.RailPending, checkAt: 30 * time.Second},
			{after: time.Second, state: ports.RailFailed, reason: "COLLECTION_FAILED"}}},
		{"other payout succeeds at settlement", ach, ports.RailPayout, "123456789", []step{
			{state: ports.RailPending, checkAt: achDelay},
			{after: achDelay - time.Second, state: ports.RailPending, checkAt: achDelay},
			{after: time.Second, state: ports.RailSucceeded}}},
		{"other pull succeeds at settlement", ach, ports.RailPull, "123456001", []step{
			{state: ports.RailPending, checkAt: achDelay},
			{after: achDelay, state: ports.RailSucceeded}}},
		{"other instant payout succeeds at the next check", rtp, ports.RailPayout, "123456006", []step{
			{state: ports.RailPending, checkAt: 0},
			{state: ports.RailSucceeded}}},
		{"1xx beneficiary suffixes move money normally", rtp, ports.RailPayout, "123456102", []step{
			{state: ports.RailPending, checkAt: 0},
			{state: ports.RailSucceeded}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := testkit.NewFakeClock(t0)
			s := spec(t, tc.rail, "USD")
			rail := sandbox.New(s, clock)
			req := request(s, tc.dir, usdAccount(tc.number))
			var ref string
			for i, st := range tc.steps {
				clock.Advance(st.after)
				var res ports.RailResult
				var err error
				if i == 0 {
					res, err = rail.Submit(context.Background(), req)
					ref = res.ExternalRef
				} else {
					// A fresh adapter each time: nothing lives in memory
					// between calls, as after a restart.
					res, err = sandbox.New(s, clock).Status(context.Background(), req, ref)
				}
				require.NoError(t, err, "step %d", i)
				assert.Equal(t, st.state, res.State, "step %d", i)
				assert.Equal(t, st.reason, res.FailureReason, "step %d", i)
				assert.Equal(t, ref, res.ExternalRef, "step %d: the reference is stable", i)
				if st.state == ports.RailPending {
					assert.Equal(t, t0.Add(st.checkAt), res.CheckAt, "step %d", i)
				} else {
					assert.True(t, res.CheckAt.IsZero(), "step %d: a final state has no CheckAt", i)
				}
				if st.state == ports.RailFailed {
					assert.NotEmpty(t, res.FailureDetail, "step %d", i)
				}
			}
		})
	}
}

func TestSandboxFailureDetails(t *testing.T) {
	clock := testkit.NewFakeClock(t0)
	s := spec(t, "ACH", "USD")
	rail := sandbox.New(s, clock)
	res, err := rail.Submit(context.Background(), request(s, ports.RailPull, usdAccount("555002")))
	require.NoError(t, err)
	assert.Equal(t, "insufficient funds", res.FailureDetail)
	res, err = rail.Submit(context.Background(), request(s, ports.RailPayout, usdAccount("555003")))
	require.NoError(t, err)
	assert.Equal(t, "account closed or invalid", res.FailureDetail)
	res, err = rail.Submit(context.Background(), request(s, ports.RailPayout, usdAccount("555004")))
	require.NoError(t, err)
	clock.Advance(s.SettlementDelay)
	res, err = rail.Status(context.Background(), request(s, ports.RailPayout, usdAccount("555004")), res.ExternalRef)
	require.NoError(t, err)
	assert.Equal(t, "rejected by the bank", res.FailureDetail)
}

func TestSandboxReadsEveryPrimaryIdentifier(t *testing.T) {
	cases := []struct {
		rail, currency string
		info           ports.AccountInfo
	}{
		{"SEPA_INSTANT", "EUR", ports.AccountInfo{AccountType: "EUR_ACCOUNT", IBAN: "DE89370400440532013003"}},
		{"SPEI", "MXN", ports.AccountInfo{AccountType: "MXN_ACCOUNT", ClabeNumber: "032180000118359003"}},
		{"PIX", "BRL", ports.AccountInfo{AccountType: "BRL_ACCOUNT", PixKey: "ana003@example.com", PixKeyType: "EMAIL"}},
		{"UPI", "INR", ports.AccountInfo{AccountType: "INR_ACCOUNT", VPA: "ravi003@upi"}},
		{"SOLANA", "USDC", ports.AccountInfo{AccountType: "SOLANA_WALLET", Address: "4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd003"}},
		{"LIGHTNING", "BTC", ports.AccountInfo{AccountType: "LIGHTNING", LightningAddress: "satoshi003@wallet.example"}},
	}
	for _, tc := range cases {
		t.Run(tc.rail, func(t *testing.T) {
			clock := testkit.NewFakeClock(t0)
			s := spec(t, tc.rail, tc.currency)
			req := request(s, ports.RailPayout, ports.ExternalAccount{ID: "ExternalAccount:2", Currency: tc.currency, Info: tc.info})
			res, err := sandbox.New(s, clock).Submit(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, ports.RailFailed, res.State)
			assert.Equal(t, "ACCOUNT_INVALID", res.FailureReason)
		})
	}
}

func TestSandboxRefusesMisroutedRequests(t *testing.T) {
	clock := testkit.NewFakeClock(t0)
	ach := spec(t, "ACH", "USD")
	wire := spec(t, "WIRE", "USD")
	good := request(ach, ports.RailPayout, usdAccount("123456789"))
	res, err := sandbox.New(ach, clock).Submit(context.Background(), good)
	require.NoError(t, err)

	mutate := func(f func(*ports.RailRequest)) ports.RailRequest {
		r := good
		f(&r)
		return r
	}
	for name, req := range map[string]ports.RailRequest{
		"no ref":            mutate(func(r *ports.RailRequest) { r.Ref = "" }),
		"other rail":        mutate(func(r *ports.RailRequest) { r.Rail = "WIRE" }),
		"other currency":    mutate(func(r *ports.RailRequest) { r.Currency = "EUR" }),
		"zero amount":       mutate(func(r *ports.RailRequest) { r.Amount = 0 }),
		"unknown direction": mutate(func(r *ports.RailRequest) { r.Direction = "SIDEWAYS" }),
	} {
		_, err := sandbox.New(ach, clock).Submit(context.Background(), req)
		assert.Error(t, err, name)
	}
	_, err = sandbox.New(wire, clock).Submit(context.Background(), request(wire, ports.RailPull, usdAccount("123456789")))
	assert.ErrorContains(t, err, "cannot pull")

	for name, ref := range map[string]string{
		"malformed":      "nonsense",
		"other prefix":   "bank:ACH:USD:1:" + good.Ref,
		"other rail":     "sandbox:WIRE:USD:1:" + good.Ref,
		"other movement": "sandbox:ACH:USD:1:Transaction:other",
		"bad time":       "sandbox:ACH:USD:soon:" + good.Ref,
	} {
		_, err := sandbox.New(ach, clock).Status(context.Background(), good, ref)
		assert.Error(t, err, name)
	}
	_, err = sandbox.New(ach, clock).Status(context.Background(), good, res.ExternalRef)
	assert.NoError(t, err)
}

func TestFactoryBuildsTheDefaultRegistry(t *testing.T) {
	clock := testkit.NewFakeClock(t0)
	reg, err := rails.FromSpecs(rails.DefaultSpecs(), sandbox.Factory(clock))
	require.NoError(t, err)
	for _, s := range rails.DefaultSpecs() {
		r, ok := reg.Rail(s.Name, s.Currency)
		require.True(t, ok, s.Name)
		assert.Equal(t, s, r.Spec())
	}
}
