package transfers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/coretest"
)

var start = coretest.Start

// env is the transfer use cases on one backend (coretest.Env: a fake clock
// and a job runner the test drives).
type env struct {
	*coretest.Env
	transfers *transfers.Service
	txns      *transactions.Service
}

func newEnv(t testing.TB, b coretest.Backend) *env {
	t.Helper()
	c := coretest.New(t, b, sandbox.Factory(b.Clock))
	e := &env{
		Env:       c,
		transfers: transfers.New(c.Store, c.Ledger, c.Rails, c.Clock, c.IDs, transfers.Options{Logger: coretest.QuietLog()}),
		txns:      transactions.New(c.Store),
	}
	e.transfers.Register(e.Runner)
	return e
}

func newMemoryEnv(t testing.TB) *env { return newEnv(t, coretest.Memory()) }

func newPostgresEnv(t testing.TB) *env { return newEnv(t, coretest.Postgres(t)) }

// backends are the environments a test runs on when it must hold for
// both stores.
var backends = []struct {
	name string
	env  func(testing.TB) *env
}{{"memory", newMemoryEnv}, {"postgres", newPostgresEnv}}

func (e *env) platform() string { return e.Platform("USD", "EUR", "MXN", "USDC") }

// customer creates a US customer and returns it with its USD account.
func (e *env) customer(platformID string) (ports.Customer, ports.InternalAccount) {
	e.T.Helper()
	region := "US"
	c, err := e.Customers.Create(context.Background(), platformID, customers.Input{CustomerType: "INDIVIDUAL", Region: &region})
	require.NoError(e.T, err)
	return c, e.InternalAccount(ports.InternalAccountFilter{PlatformID: platformID, CustomerID: c.ID, Currency: "USD"})
}

// platformAccount is the platform's own internal account in currency.
func (e *env) platformAccount(platformID, currency string) ports.InternalAccount {
	return e.InternalAccount(ports.InternalAccountFilter{PlatformID: platformID, PlatformOnly: true, Currency: currency})
}

// external stores an ACTIVE external account of the customer (or of the
// platform, customerID "") in the currency of its type.
func (e *env) external(platformID, customerID string, info ports.AccountInfo) ports.ExternalAccount {
	e.T.Helper()
	return e.External(platformID, customerID, currencyOf(info.AccountType), info)
}

func currencyOf(accountType string) string {
	switch accountType {
	case "USD_ACCOUNT":
		return "USD"
	case "EUR_ACCOUNT":
		return "EUR"
	case "MXN_ACCOUNT":
		return "MXN"
	case "SOLANA_WALLET", "BASE_WALLET", "POLYGON_WALLET":
		return "USDC"
	}
	panic("no fixture currency for " + accountType)
}

// usdAccount is a USD_ACCOUNT whose account number ends in suffix.
func usdAccount(suffix string) ports.AccountInfo {
	return ports.AccountInfo{
		AccountType: "USD_ACCOUNT", AccountNumber: "12345678" + suffix, RoutingNumber: "021000021",
		BankAccountType: "CHECKING", BankName: "Test Bank",
		Beneficiary: &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ada Lovelace"},
	}
}

func (e *env) available(accountID string) int64 {
	e.T.Helper()
	return e.LedgerAccount(accountID).Available()
}

func (e *env) txn(platformID, id string) ports.Transaction {
	e.T.Helper()
	t, err := e.txns.Get(context.Background(), platformID, id)
	require.NoError(e.T, err)
	return t
}
