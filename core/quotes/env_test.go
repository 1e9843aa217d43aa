package quotes_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	fxstatic "github.com/corridorpay/corridor/adapters/fx/static"
	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	umasandbox "github.com/corridorpay/corridor/adapters/uma/sandbox"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/coretest"
)

var (
	start    = coretest.Start
	quietLog = coretest.QuietLog
)

// env is the quote use cases on one backend (coretest.Env: a fake clock
// and a job runner the test drives).
type env struct {
	*coretest.Env
	uma    umasandbox.Directory
	lookup *lookup.Service
	quotes *quotes.Service
}

func newEnv(t testing.TB, b coretest.Backend) *env {
	return newEnvWithRails(t, b, func(r ports.Rail) ports.Rail { return r })
}

// newEnvWithRails is newEnv with each sandbox rail passed through wrap.
func newEnvWithRails(t testing.TB, b coretest.Backend, wrap func(ports.Rail) ports.Rail) *env {
	t.Helper()
	dir := umasandbox.New("")
	rail := sandbox.FactoryWithUMA(b.Clock, dir)
	c := coretest.New(t, b, func(s ports.RailSpec) ports.Rail { return wrap(rail(s)) })
	rates := fxstatic.Default(b.Clock)
	e := &env{
		Env: c, uma: dir,
		lookup: lookup.New(c.Store, rates, c.Clock, c.IDs, lookup.WithUmaDirectory(dir)),
		quotes: quotes.New(c.Store, c.Ledger, c.Rails, rates,
			walletauth.New(c.Store, memory.NewSingleUse(c.Clock), nil, nil, c.Clock, c.IDs, walletauth.Options{Sandbox: true}), c.Clock, c.IDs,
			quotes.Options{Logger: quietLog(), Sandbox: true}),
	}
	e.quotes.Register(e.Runner)
	return e
}

func newMemoryEnv(t testing.TB) *env { return newEnv(t, coretest.Memory()) }

func newPostgresEnv(t testing.TB) *env { return newEnv(t, coretest.Postgres(t)) }

// onBothStores runs fn as subtests "memory" and "postgres", each on a
// fresh env.
func onBothStores(t *testing.T, fn func(t *testing.T, e *env)) {
	for _, b := range []struct {
		name string
		env  func(testing.TB) *env
	}{{"memory", newMemoryEnv}, {"postgres", newPostgresEnv}} {
		t.Run(b.name, func(t *testing.T) { fn(t, b.env(t)) })
	}
}

func (e *env) platform() string { return e.Platform("USD", "EUR", "MXN", "USDC", "BTC") }

// customer creates a US customer (with an e-mail, so it also gets an
// EMBEDDED_WALLET in USD) and returns it with its USD INTERNAL_FIAT account.
func (e *env) customer(platformID string) (ports.Customer, ports.InternalAccount) {
	e.T.Helper()
	region, email := "US", "ada@example.com"
	c, err := e.Customers.Create(context.Background(), platformID, customers.Input{CustomerType: "INDIVIDUAL", Region: &region, Email: &email})
	require.NoError(e.T, err)
	return c, e.internal(platformID, c.ID, accounts.TypeInternalFiat)
}

func (e *env) internal(platformID, customerID, typ string) ports.InternalAccount {
	return e.InternalAccount(ports.InternalAccountFilter{PlatformID: platformID, CustomerID: customerID, Currency: "USD", Type: typ})
}

// eurAccount is a EUR_ACCOUNT whose IBAN ends in suffix (SEPA_INSTANT).
func eurAccount(suffix string) ports.AccountInfo {
	return ports.AccountInfo{
		AccountType: "EUR_ACCOUNT", IBAN: "DE89370400440532013" + suffix, SwiftCode: "COBADEFFXXX",
		Beneficiary: &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ada Lovelace"},
	}
}

// usdAccount is a USD_ACCOUNT whose account number ends in suffix (ACH).
func usdAccount(suffix string) ports.AccountInfo {
	return ports.AccountInfo{
		AccountType: "USD_ACCOUNT", AccountNumber: "12345678" + suffix, RoutingNumber: "021000021",
		BankAccountType: "CHECKING", BankName: "Test Bank",
		Beneficiary: &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Grace Hopper"},
	}
}

func (e *env) quote(platformID, id string) ports.Quote {
	e.T.Helper()
	q, err := e.quotes.Get(context.Background(), platformID, id)
	require.NoError(e.T, err)
	return q
}

func (e *env) txn(platformID, id string) ports.Transaction {
	e.T.Helper()
	t, err := e.Store.Read().Transactions().Get(context.Background(), platformID, id)
	require.NoError(e.T, err)
	return t
}
