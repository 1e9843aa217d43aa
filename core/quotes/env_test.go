package quotes_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	fxstatic "github.com/corridorpay/corridor/adapters/fx/static"
	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/adapters/system"
	umasandbox "github.com/corridorpay/corridor/adapters/uma/sandbox"
	walletsandbox "github.com/corridorpay/corridor/adapters/walletsig/sandbox"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

var start = time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC)

// env is the quote use cases on one backend, with a fake clock and a job
// runner the test drives.
type env struct {
	t         testing.TB
	clock     *testkit.FakeClock
	store     ports.Store
	ledger    ports.LedgerStore
	ids       ports.IDs
	uma       umasandbox.Directory
	platforms *platforms.Service
	customers *customers.Service
	accounts  *accounts.Service
	lookup    *lookup.Service
	quotes    *quotes.Service
	runner    *jobs.Runner
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newEnv(t testing.TB, clock *testkit.FakeClock, store ports.Store, led ports.LedgerStore) *env {
	t.Helper()
	ctx := context.Background()
	dir := umasandbox.New("")
	reg, err := rails.FromSpecs(rails.DefaultSpecs(), sandbox.FactoryWithUMA(clock, dir))
	require.NoError(t, err)
	require.NoError(t, led.CreateAccounts(ctx, ledger.SystemAccounts(money.Codes(), reg.SettlementRails())...))
	ids := system.IDs{}
	rates := fxstatic.Default(clock)
	e := &env{
		t: t, clock: clock, store: store, ledger: led, ids: ids, uma: dir,
		platforms: platforms.New(store, led, clock, ids),
		customers: customers.New(store, clock, ids, customers.Options{}),
		accounts:  accounts.New(store, led, clock, ids, true),
		lookup:    lookup.New(store, rates, clock, ids, lookup.WithUmaDirectory(dir)),
		quotes: quotes.New(store, led, reg, rates, walletsandbox.Verifier{}, clock, ids,
			quotes.Options{Logger: quietLog(), Sandbox: true}),
		runner: jobs.NewRunner(store.Read().Jobs(), clock, quietLog()),
	}
	e.quotes.Register(e.runner)
	return e
}

func newMemoryEnv(t testing.TB) *env {
	clock := testkit.NewFakeClock(start)
	led := memory.NewLedger(clock)
	return newEnv(t, clock, memory.NewStore(led), led)
}

func newPostgresEnv(t testing.TB) *env {
	clock := testkit.NewFakeClock(start)
	db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
	require.NoError(t, err)
	led := postgres.NewLedger(db, clock, postgres.LedgerOptions{Logger: quietLog()})
	t.Cleanup(func() { led.Close(); _ = db.Close() })
	return newEnv(t, clock, postgres.NewStore(db), led)
}

func (e *env) platform() string {
	e.t.Helper()
	p, err := e.platforms.Create(context.Background(), "platform", "example.test", []string{"USD", "EUR", "MXN", "USDC", "BTC"})
	require.NoError(e.t, err)
	return p.ID
}

// customer creates a US customer (with an e-mail, so it also gets an
// EMBEDDED_WALLET in USD) and returns it with its USD INTERNAL_FIAT account.
func (e *env) customer(platformID string) (ports.Customer, ports.InternalAccount) {
	e.t.Helper()
	ctx := context.Background()
	region, email := "US", "ada@example.com"
	c, err := e.customers.Create(ctx, platformID, customers.Input{CustomerType: "INDIVIDUAL", Region: &region, Email: &email})
	require.NoError(e.t, err)
	return c, e.internal(platformID, c.ID, accounts.TypeInternalFiat)
}

func (e *env) internal(platformID, customerID, typ string) ports.InternalAccount {
	e.t.Helper()
	rows, _, err := e.store.Read().InternalAccounts().List(context.Background(), ports.InternalAccountFilter{
		PlatformID: platformID, CustomerID: customerID, Currency: "USD", Type: typ}, ports.Page{Limit: 10})
	require.NoError(e.t, err)
	require.Len(e.t, rows, 1)
	return rows[0]
}

// external stores an ACTIVE external account of the customer.
func (e *env) external(platformID, customerID, currency string, info ports.AccountInfo) ports.ExternalAccount {
	e.t.Helper()
	now := e.clock.Now()
	a := ports.ExternalAccount{
		ID: e.ids.New("ExternalAccount"), PlatformID: platformID, CustomerID: customerID,
		Currency: currency, Status: "ACTIVE", Info: info,
		BeneficiaryVerificationStatus: "MATCHED", CreatedAt: now, UpdatedAt: now,
	}
	ctx := context.Background()
	require.NoError(e.t, e.store.InTx(ctx, func(tx ports.Tx) error { return tx.ExternalAccounts().Create(ctx, a) }))
	return a
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

func (e *env) fund(platformID, accountID string, amount int64) {
	e.t.Helper()
	_, err := e.accounts.Fund(context.Background(), platformID, accountID, amount, "")
	require.NoError(e.t, err)
}

func (e *env) account(id string) ledger.Account {
	e.t.Helper()
	a, err := e.ledger.Account(context.Background(), id)
	require.NoError(e.t, err)
	return a
}

// runJobs runs every job due now (and what they schedule for now).
func (e *env) runJobs() {
	e.t.Helper()
	_, err := e.runner.RunAll(context.Background(), 100)
	require.NoError(e.t, err)
}

// advance moves the clock and runs what became due.
func (e *env) advance(d time.Duration) {
	e.t.Helper()
	e.clock.Advance(d)
	e.runJobs()
}

func (e *env) quote(platformID, id string) ports.Quote {
	e.t.Helper()
	q, err := e.quotes.Get(context.Background(), platformID, id)
	require.NoError(e.t, err)
	return q
}

func (e *env) txn(platformID, id string) ports.Transaction {
	e.t.Helper()
	t, err := e.store.Read().Transactions().Get(context.Background(), platformID, id)
	require.NoError(e.t, err)
	return t
}

// verify checks the ledger's invariants over everything posted.
func (e *env) verify() {
	e.t.Helper()
	ctx := context.Background()
	accts, pend, err := e.ledger.Snapshot(ctx)
	require.NoError(e.t, err)
	var journal []ledger.JournalEntry
	for after := int64(0); ; {
		page, err := e.ledger.Journal(ctx, after, 1000)
		require.NoError(e.t, err)
		if len(page) == 0 {
			break
		}
		journal = append(journal, page...)
		after = page[len(page)-1].Seq
	}
	require.Empty(e.t, ledger.Verify(accts, pend, journal))
}

// requireFault checks a domain error's kind, code and named fields.
func requireFault(t testing.TB, err error, kind fault.Kind, code string, fields ...string) *fault.Error {
	t.Helper()
	f, ok := fault.As(err)
	require.Truef(t, ok, "want a fault, got %v", err)
	require.Equal(t, kind, f.Kind, f.Error())
	require.Equal(t, code, f.Code, f.Error())
	var got []string
	for _, fe := range f.Fields {
		got = append(got, fe.Field)
	}
	for _, want := range fields {
		require.Containsf(t, got, want, "fields of %v", f)
	}
	return f
}
