package lookup_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/fx/static"
	"github.com/corridorpay/corridor/adapters/memory"
	railsandbox "github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/adapters/system"
	umasandbox "github.com/corridorpay/corridor/adapters/uma/sandbox"
	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/externalfixture"
)

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

type env struct {
	svc      *lookup.Service
	ext      *external.Service
	store    *memory.Store
	clock    *testkit.FakeClock
	platform string
}

func newEnv(t *testing.T, platformCurrencies ...string) *env {
	t.Helper()
	clock := testkit.NewFakeClock(t0)
	store := memory.NewStore(memory.NewLedger(clock))
	fx, err := static.New(clock, map[string]string{"EUR": "0.8", "MXN": "20", "BRL": "5", "BTC": "0.00002", "USDC": "1", "INR": "80"})
	require.NoError(t, err)
	reg, err := rails.FromSpecs(rails.DefaultSpecs(), railsandbox.Factory(clock))
	require.NoError(t, err)
	svc := lookup.New(store, fx, clock, system.IDs{}, lookup.WithRails(reg), lookup.WithUmaDirectory(umasandbox.New("")))
	e := &env{svc: svc, ext: external.New(store, clock, system.IDs{}), store: store, clock: clock}
	e.platform = e.addPlatform(t, platformCurrencies)
	return e
}

func (e *env) addPlatform(t *testing.T, currencies []string) string {
	t.Helper()
	p := ports.Platform{ID: system.IDs{}.New("Platform"), Currencies: currencies, CreatedAt: t0, UpdatedAt: t0}
	require.NoError(t, e.store.InTx(context.Background(), func(tx ports.Tx) error { return tx.Platforms().Create(context.Background(), p) }))
	return p.ID
}

func (e *env) addCustomer(t *testing.T, typ, uma string, currencies ...string) string {
	t.Helper()
	c := ports.Customer{ID: system.IDs{}.New("Customer"), PlatformID: e.platform, CustomerType: typ, UmaAddress: uma,
		Currencies: currencies, CreatedAt: t0, UpdatedAt: t0}
	require.NoError(t, e.store.InTx(context.Background(), func(tx ports.Tx) error { return tx.Customers().Create(context.Background(), c) }))
	return c.ID
}

func (e *env) account(t *testing.T, typ string) ports.ExternalAccount {
	t.Helper()
	a, err := e.ext.Create(context.Background(), e.platform, external.Input{Currency: externalfixture.Currency[typ], Info: externalfixture.Info(typ, "")})
	require.NoError(t, err)
	return a
}

func TestLookupByCustomer(t *testing.T) {
	e := newEnv(t, "USD")
	ctx := context.Background()
	acct := e.account(t, "MXN_ACCOUNT")
	cust := e.addCustomer(t, "INDIVIDUAL", "$ana@example.test", "EUR", "USDC")

	l, err := e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: acct.ID, CustomerID: cust})
	require.NoError(t, err)
	assert.Regexp(t, `^Lookup:[0-9a-f-]{36}$`, l.ID)
	assert.Equal(t, acct.ID, l.AccountID)
	assert.Equal(t, cust, l.CustomerID)
	assert.Equal(t, "EUR", l.SendingCurrency, "the customer's first currency")
	assert.Equal(t, []ports.LookupCurrency{{Currency: "MXN", EstimatedRate: "24.875", Min: 10_00, Max: 5_000_000_00}}, l.Currencies)
	assert.Equal(t, []ports.PayerDataField{{Name: "FULL_NAME", Mandatory: true}, {Name: "BIRTH_DATE", Mandatory: true}, {Name: "NATIONALITY", Mandatory: true}}, l.RequiredPayerData)
	assert.Equal(t, t0, l.CreatedAt)

	stored, err := e.svc.Get(ctx, e.platform, l.ID)
	require.NoError(t, err)
	assert.Equal(t, l, stored, "the lookup is stored for the quote")
	_, err = e.svc.Get(ctx, e.addPlatform(t, nil), l.ID)
	testkit.RequireFault(t, err, fault.KindNotFound, "LOOKUP_REQUEST_NOT_FOUND")
}

func TestLookupByUmaAddress(t *testing.T) {
	e := newEnv(t, "BRL")
	ctx := context.Background()
	acct := e.account(t, "EUR_ACCOUNT")
	biz := e.addCustomer(t, "BUSINESS", "$acme@example.test")

	l, err := e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: acct.ID, SenderUmaAddress: "$acme@example.test"})
	require.NoError(t, err)
	assert.Equal(t, biz, l.CustomerID)
	assert.Equal(t, "$acme@example.test", l.SenderUmaAddress)
	assert.Equal(t, "BRL", l.SendingCurrency, "a customer without currencies sends in the platform's")
	assert.Equal(t, "0.1592", l.Currencies[0].EstimatedRate, "0.16 less the 0.5% counterparty spread")
	assert.Equal(t, []ports.PayerDataField{{Name: "COMPANY_LEGAL_NAME", Mandatory: true}, {Name: "POSTAL_ADDRESS", Mandatory: true},
		{Name: "REGISTRATION_NUMBER"}, {Name: "COUNTRY_OF_RESIDENCE"}}, l.RequiredPayerData, "business payers")

	// Both: they must agree.
	l, err = e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: acct.ID, CustomerID: biz, SenderUmaAddress: "$acme@example.test"})
	require.NoError(t, err)
	assert.Equal(t, biz, l.CustomerID)
	_, err = e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: acct.ID, CustomerID: biz, SenderUmaAddress: "$other@example.test"})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "senderUmaAddress")
}

func TestLookupSendingCurrencyFallbacks(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acct := e.account(t, "SPARK_WALLET")
	cust := e.addCustomer(t, "INDIVIDUAL", "$bo@example.test")
	l, err := e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: acct.ID, CustomerID: cust})
	require.NoError(t, err)
	assert.Equal(t, "USD", l.SendingCurrency, "neither customer nor platform names one")
	assert.Equal(t, []ports.LookupCurrency{{Currency: "BTC", EstimatedRate: "0.00001996", Min: 1_000, Max: 100_000_000}}, l.Currencies)

	btcSender := e.addCustomer(t, "INDIVIDUAL", "$sat@example.test", "BTC")
	usd := e.account(t, "USD_ACCOUNT")
	l, err = e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: usd.ID, CustomerID: btcSender})
	require.NoError(t, err)
	assert.Equal(t, "49750", l.Currencies[0].EstimatedRate)
	assert.Equal(t, int64(50_000_00), l.Currencies[0].Max, "the BTC→USD corridor row")

	ln := e.account(t, "LIGHTNING")
	l, err = e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: ln.ID, CustomerID: btcSender})
	require.NoError(t, err)
	assert.Equal(t, "1", l.Currencies[0].EstimatedRate)
	assert.Equal(t, int64(10_000_000), l.Currencies[0].Max, "the Lightning row")
}

func TestLookupErrors(t *testing.T) {
	e := newEnv(t, "USD")
	ctx := context.Background()
	acct := e.account(t, "USD_ACCOUNT")
	cust := e.addCustomer(t, "INDIVIDUAL", "$ana@example.test", "USD")

	_, err := e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: acct.ID})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "senderUmaAddress", "customerId")
	_, err = e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: acct.ID, SenderUmaAddress: "ana@example.test"})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "senderUmaAddress")
	_, err = e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: "ExternalAccount:00000000-0000-0000-0000-000000000000", CustomerID: cust})
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
	_, err = e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: acct.ID, CustomerID: "Customer:00000000-0000-0000-0000-000000000000"})
	testkit.RequireFault(t, err, fault.KindNotFound, "USER_NOT_FOUND")
	_, err = e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: acct.ID, SenderUmaAddress: "$nobody@example.test"})
	testkit.RequireFault(t, err, fault.KindNotFound, "USER_NOT_FOUND")

	// Another platform's account is unknown; a deleted one too.
	other := e.addPlatform(t, nil)
	_, err = e.svc.Lookup(ctx, other, lookup.Query{AccountID: acct.ID, CustomerID: cust})
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
	require.NoError(t, e.ext.Delete(ctx, e.platform, acct.ID, external.ScopeAll))
	_, err = e.svc.Lookup(ctx, e.platform, lookup.Query{AccountID: acct.ID, CustomerID: cust})
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")

	// A rate source that cannot quote the pair is an internal error.
	broken := lookup.New(e.store, noRates{}, e.clock, system.IDs{})
	acct2 := e.account(t, "GBP_ACCOUNT")
	_, err = broken.Lookup(ctx, e.platform, lookup.Query{AccountID: acct2.ID, CustomerID: cust})
	require.ErrorIs(t, err, ports.ErrNoRate)
	_, isFault := fault.As(err)
	assert.False(t, isFault)
}

type noRates struct{}

func (noRates) Rate(context.Context, string, string) (ports.Rate, error) {
	return ports.Rate{}, errors.Join(errors.New("down"), ports.ErrNoRate)
}

func TestTables(t *testing.T) {
	for _, cur := range []string{"USD", "EUR", "GBP", "CAD", "MXN", "BRL", "INR", "NGN", "AED", "JPY", "USDC", "BTC"} {
		fields := lookup.PayerData(cur, false)
		require.NotEmpty(t, fields)
		assert.Equal(t, ports.PayerDataField{Name: "FULL_NAME", Mandatory: true}, fields[0], cur)
	}
	assert.Equal(t, []ports.PayerDataField{{Name: "FULL_NAME", Mandatory: true}}, lookup.PayerData("XYZ", false))
	// PayerData returns a copy.
	f := lookup.PayerData("USD", false)
	f[0].Name = "X"
	assert.Equal(t, "FULL_NAME", lookup.PayerData("USD", false)[0].Name)
}
