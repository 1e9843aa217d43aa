package rails_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

func registry(t *testing.T) *rails.Registry {
	t.Helper()
	reg, err := rails.FromSpecs(rails.DefaultSpecs(), sandbox.Factory(testkit.NewFakeClock(time.Unix(0, 0))))
	require.NoError(t, err)
	return reg
}

func TestDefaultTableCoversTheCorridors(t *testing.T) {
	want := map[string][]string{
		"ACH": {"USD"}, "WIRE": {"USD"}, "RTP": {"USD"}, "FEDNOW": {"USD"},
		"SEPA": {"EUR"}, "SEPA_INSTANT": {"EUR"}, "SPEI": {"MXN"}, "PIX": {"BRL"},
		"FASTER_PAYMENTS": {"GBP"}, "UPI": {"INR"}, "NEFT": {"INR"}, "RTGS": {"INR"},
		"BANK_TRANSFER": {"NGN", "AED", "CAD"},
		"LIGHTNING":     {"BTC"}, "SPARK": {"BTC"},
		"SOLANA": {"USDC"}, "BASE": {"USDC"}, "POLYGON": {"USDC"}, "ETHEREUM": {"USDC"},
		"SWIFT": {"AED", "BRL", "CAD", "EUR", "GBP", "INR", "JPY", "MXN", "NGN", "USD"},
		"UMA":   {"AED", "BRL", "BTC", "CAD", "EUR", "GBP", "INR", "JPY", "MXN", "NGN", "USD", "USDC"},
	}
	assert.Equal(t, want, rails.SettlementRails(rails.DefaultSpecs()))
	assert.Equal(t, want, registry(t).SettlementRails())
	for _, s := range rails.DefaultSpecs() {
		_, ok := money.Lookup(s.Currency)
		assert.True(t, ok, "%s moves unknown currency %s", s.Name, s.Currency)
		assert.NotEmpty(t, s.AccountTypes, s.Name)
		if s.Instant {
			assert.Zero(t, s.SettlementDelay, "%s is instant", s.Name)
		} else {
			assert.Positive(t, s.SettlementDelay, "%s settles later", s.Name)
		}
	}
}

func TestEveryRailHasASettlementAccount(t *testing.T) {
	accts := map[string]bool{}
	for _, a := range ledger.SystemAccounts(money.Codes(), registry(t).SettlementRails()) {
		accts[a.ID] = true
	}
	for _, s := range rails.DefaultSpecs() {
		assert.True(t, accts[ledger.RailSettlementID(s.Name, s.Currency)], "%s/%s", s.Name, s.Currency)
	}
}

func TestForAccountPicksTheDefaultRail(t *testing.T) {
	reg := registry(t)
	cases := []struct{ currency, accountType, rail string }{
		{"USD", "USD_ACCOUNT", "ACH"},
		{"EUR", "EUR_ACCOUNT", "SEPA_INSTANT"},
		{"MXN", "MXN_ACCOUNT", "SPEI"},
		{"BRL", "BRL_ACCOUNT", "PIX"},
		{"GBP", "GBP_ACCOUNT", "FASTER_PAYMENTS"},
		{"INR", "INR_ACCOUNT", "UPI"},
		{"NGN", "NGN_ACCOUNT", "BANK_TRANSFER"},
		{"AED", "AED_ACCOUNT", "BANK_TRANSFER"},
		{"CAD", "CAD_ACCOUNT", "BANK_TRANSFER"},
		{"BTC", "LIGHTNING", "LIGHTNING"},
		{"BTC", "SPARK_WALLET", "SPARK"},
		{"USDC", "SOLANA_WALLET", "SOLANA"},
		{"USDC", "BASE_WALLET", "BASE"},
		{"USDC", "POLYGON_WALLET", "POLYGON"},
		{"USDC", "ETHEREUM_WALLET", "ETHEREUM"},
		{"USD", "SWIFT_ACCOUNT", "SWIFT"},
		{"JPY", "SWIFT_ACCOUNT", "SWIFT"},
	}
	for _, tc := range cases {
		r, err := reg.ForAccount(tc.currency, tc.accountType)
		require.NoError(t, err, tc.accountType)
		assert.Equal(t, tc.rail, r.Spec().Name, tc.accountType)
		assert.Equal(t, tc.currency, r.Spec().Currency, tc.accountType)
	}
	for _, tc := range []struct{ currency, accountType string }{
		{"USD", "EUR_ACCOUNT"}, // currency and account type disagree
		{"USDC", "SPARK_WALLET"},
		{"COP", "COP_ACCOUNT"}, // no corridor
		{"USD", ""},
	} {
		_, err := reg.ForAccount(tc.currency, tc.accountType)
		assertField(t, err, "destination.accountId")
	}
}

func TestForPullOnlyOnPullRails(t *testing.T) {
	reg := registry(t)
	r, err := reg.ForPull("USD", "USD_ACCOUNT")
	require.NoError(t, err)
	assert.Equal(t, "ACH", r.Spec().Name)
	r, err = reg.ForPull("EUR", "EUR_ACCOUNT")
	require.NoError(t, err)
	assert.Equal(t, "SEPA", r.Spec().Name, "SEPA_INSTANT cannot pull; SEPA direct debit can")
	for _, tc := range []struct{ currency, accountType string }{
		{"MXN", "MXN_ACCOUNT"}, {"BTC", "SPARK_WALLET"}, {"USDC", "SOLANA_WALLET"}, {"USD", "EUR_ACCOUNT"},
	} {
		_, err := reg.ForPull(tc.currency, tc.accountType)
		assertField(t, err, "source.accountId")
	}
}

func TestValidateNamesThePaymentRail(t *testing.T) {
	reg := registry(t)
	ok := []struct{ rail, currency, accountType string }{
		{"WIRE", "USD", "USD_ACCOUNT"},
		{"RTP", "USD", "USD_ACCOUNT"},
		{"FEDNOW", "USD", "USD_ACCOUNT"},
		{"SEPA", "EUR", "EUR_ACCOUNT"},
		{"NEFT", "INR", "INR_ACCOUNT"},
		{"BANK_TRANSFER", "AED", "AED_ACCOUNT"},
		{"LIGHTNING", "BTC", "LIGHTNING_ACCOUNT"},
	}
	for _, tc := range ok {
		r, err := reg.Validate(tc.rail, tc.currency, tc.accountType)
		require.NoError(t, err, tc.rail)
		assert.Equal(t, tc.rail, r.Spec().Name)
		assert.Equal(t, tc.currency, r.Spec().Currency)
	}
	bad := []struct{ rail, currency, accountType, says string }{
		{"CARRIER_PIGEON", "USD", "USD_ACCOUNT", "unknown payment rail"},
		{"ach", "USD", "USD_ACCOUNT", "unknown payment rail"},
		{"ACH", "EUR", "EUR_ACCOUNT", "does not carry EUR"},
		{"BANK_TRANSFER", "USD", "USD_ACCOUNT", "does not carry USD"},
		{"SOLANA", "USDC", "BASE_WALLET", "cannot reach a BASE_WALLET"},
		{"SPEI", "MXN", "USD_ACCOUNT", "cannot reach a USD_ACCOUNT"},
	}
	for _, tc := range bad {
		_, err := reg.Validate(tc.rail, tc.currency, tc.accountType)
		assertField(t, err, "destination.paymentRail")
		assert.ErrorContains(t, err, tc.says, tc.rail)
	}
}

func TestForPayout(t *testing.T) {
	reg := registry(t)
	pick := func(requested, currency string, info ports.AccountInfo) string {
		t.Helper()
		r, err := reg.ForPayout(requested, currency, info)
		require.NoError(t, err)
		require.Equal(t, currency, r.Spec().Currency)
		return r.Spec().Name
	}
	upi := ports.AccountInfo{AccountType: "INR_ACCOUNT", VPA: "ravi@upi"}
	assert.Equal(t, "UPI", pick("", "INR", upi), "table default")

	bank := ports.AccountInfo{AccountType: "INR_ACCOUNT", AccountNumber: "000111222333", IFSC: "HDFC0001234"}
	assert.Equal(t, "NEFT", pick("", "INR", bank), "no vpa: UPI cannot reach it, the next row can")
	_, err := reg.ForPayout("UPI", "INR", bank)
	assertField(t, err, "destination.paymentRail")
	assert.ErrorContains(t, err, "NEFT, RTGS")

	both := bank
	both.VPA = "ravi@upi"
	assert.Equal(t, "UPI", pick("", "INR", both))
	both.Rail = "RTGS"
	assert.Equal(t, "RTGS", pick("", "INR", both), "the account's own rail")
	assert.Equal(t, "NEFT", pick("NEFT", "INR", both), "the request's rail wins")

	usd := ports.AccountInfo{AccountType: "USD_ACCOUNT", AccountNumber: "123456789", RoutingNumber: "021000021"}
	assert.Equal(t, "ACH", pick("", "USD", usd))
	assert.Equal(t, "WIRE", pick("WIRE", "USD", usd))
	assert.Equal(t, "SPARK", pick("", "BTC", ports.AccountInfo{AccountType: "SPARK_WALLET", Address: "spark1x"}))

	_, err = reg.ForPayout("ACH", "INR", bank)
	assertField(t, err, "destination.paymentRail")
	_, err = reg.ForPayout("", "USD", ports.AccountInfo{AccountType: "EUR_ACCOUNT"})
	assertField(t, err, "destination.accountId")
}

// The rails external accounts advertise (accountInfo.paymentRails) and the
// rails the registry routes over are the same set: every variant's rail
// exists for each of its currencies, and every variant has a payout rail.
func TestEveryExternalAccountTypeHasARail(t *testing.T) {
	reg := registry(t)
	for _, v := range external.Variants() {
		for _, cur := range v.Currencies {
			_, err := reg.ForAccount(cur, v.AccountType)
			assert.NoError(t, err, "%s in %s", v.AccountType, cur)
			for _, rail := range v.Rails {
				_, err := reg.Validate(rail.Name, cur, v.AccountType)
				assert.NoError(t, err, "%s advertises %s in %s", v.AccountType, rail.Name, cur)
			}
		}
	}
}

func TestNewRefusesABadTable(t *testing.T) {
	clock := testkit.NewFakeClock(time.Unix(0, 0))
	ach := ports.RailSpec{Name: "ACH", Currency: "USD", AccountTypes: []string{"USD_ACCOUNT"}, SettlementDelay: time.Second}
	cases := map[string][]ports.RailSpec{
		"duplicate":        {ach, ach},
		"no name":          {{Currency: "USD", AccountTypes: []string{"USD_ACCOUNT"}}},
		"unknown currency": {{Name: "X", Currency: "XXX", AccountTypes: []string{"X_ACCOUNT"}}},
		"no account types": {{Name: "X", Currency: "USD"}},
		"negative delay":   {{Name: "X", Currency: "USD", AccountTypes: []string{"USD_ACCOUNT"}, SettlementDelay: -time.Second}},
	}
	for name, specs := range cases {
		_, err := rails.FromSpecs(specs, sandbox.Factory(clock))
		assert.Error(t, err, name)
	}
	// Same rail name in two currencies is fine (BANK_TRANSFER).
	eur := ach
	eur.Currency, eur.AccountTypes = "EUR", []string{"EUR_ACCOUNT"}
	reg, err := rails.FromSpecs([]ports.RailSpec{ach, eur}, sandbox.Factory(clock))
	require.NoError(t, err)
	assert.Len(t, reg.Specs(), 2)
	_, ok := reg.Rail("ACH", "EUR")
	assert.True(t, ok)
	_, ok = reg.Rail("ACH", "GBP")
	assert.False(t, ok)
}

func TestAddingACorridorIsATableRow(t *testing.T) {
	specs := append(rails.DefaultSpecs(), ports.RailSpec{
		Name: "BANK_TRANSFER", Currency: "JPY", AccountTypes: []string{"JPY_ACCOUNT"}, SettlementDelay: time.Minute,
	})
	reg, err := rails.FromSpecs(specs, sandbox.Factory(testkit.NewFakeClock(time.Unix(0, 0))))
	require.NoError(t, err)
	r, err := reg.ForAccount("JPY", "JPY_ACCOUNT")
	require.NoError(t, err)
	assert.Equal(t, "BANK_TRANSFER", r.Spec().Name)
	assert.Contains(t, reg.SettlementRails()["BANK_TRANSFER"], "JPY")
}

func assertField(t *testing.T, err error, field string) {
	t.Helper()
	require.Error(t, err)
	fe, ok := fault.As(err)
	require.True(t, ok, "a fault.Error: %v", err)
	assert.Equal(t, fault.KindInvalid, fe.Kind)
	require.Len(t, fe.Fields, 1)
	assert.Equal(t, field, fe.Fields[0].Field)
}

func TestWithSettlementDelay(t *testing.T) {
	specs := rails.DefaultSpecs()
	got := rails.WithSettlementDelay(specs, 1500*time.Millisecond)
	require.Len(t, got, len(specs))
	instant, later := 0, 0
	for i, s := range got {
		if specs[i].SettlementDelay == 0 {
			instant++
			require.Zero(t, s.SettlementDelay, "%s/%s stays instant", s.Name, s.Currency)
		} else {
			later++
			require.Equal(t, 1500*time.Millisecond, s.SettlementDelay, "%s/%s", s.Name, s.Currency)
		}
	}
	require.Positive(t, instant)
	require.Positive(t, later)
	require.Equal(t, 10*time.Second, specs[0].SettlementDelay, "the table itself is not changed")
}
