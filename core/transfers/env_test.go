package transfers_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

var start = time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC)

// env is the transfer use cases on one backend, with a fake clock and a job
// runner the test drives.
type env struct {
	t         testing.TB
	clock     *testkit.FakeClock
	store     ports.Store
	ledger    ports.LedgerStore
	ids       ports.IDs
	platforms *platforms.Service
	customers *customers.Service
	accounts  *accounts.Service
	transfers *transfers.Service
	txns      *transactions.Service
	runner    *jobs.Runner
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newEnv builds the services on store and led (which tell time by clock).
func newEnv(t testing.TB, clock *testkit.FakeClock, store ports.Store, led ports.LedgerStore) *env {
	t.Helper()
	ctx := context.Background()
	reg, err := rails.FromSpecs(rails.DefaultSpecs(), sandbox.Factory(clock))
	require.NoError(t, err)
	require.NoError(t, led.CreateAccounts(ctx, ledger.SystemAccounts(money.Codes(), reg.SettlementRails())...))
	ids := system.IDs{}
	e := &env{
		t: t, clock: clock, store: store, ledger: led, ids: ids,
		platforms: platforms.New(store, led, clock, ids),
		customers: customers.New(store, clock, ids, customers.Options{}),
		accounts:  accounts.New(store, led, clock, ids, true),
		transfers: transfers.New(store, led, reg, clock, ids, transfers.Options{Logger: quietLog()}),
		txns:      transactions.New(store),
		runner:    jobs.NewRunner(store.Read().Jobs(), clock, quietLog()),
	}
	e.transfers.Register(e.runner)
	return e
}

func newMemoryEnv(t testing.TB) *env {
	clock := testkit.NewFakeClock(start)
	led := memory.NewLedger(clock)
	return newEnv(t, clock, memory.NewStore(led), led)
}

// pgBackend opens the ledger and store on dsn; close releases them.
func pgBackend(t testing.TB, dsn string, clock ports.Clock) (ports.Store, ports.LedgerStore, func()) {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn)
	require.NoError(t, err)
	led := postgres.NewLedger(db, clock, postgres.LedgerOptions{Logger: quietLog()})
	return postgres.NewStore(db), led, func() { led.Close(); _ = db.Close() }
}

// pgtestDatabase is a scratch migrated database (the test fails when
// PostgreSQL is unreachable).
func pgtestDatabase(t testing.TB) string { return pgtest.NewDatabase(t) }

func newPostgresEnv(t testing.TB) *env {
	clock := testkit.NewFakeClock(start)
	store, led, closeFn := pgBackend(t, pgtestDatabase(t), clock)
	t.Cleanup(closeFn)
	return newEnv(t, clock, store, led)
}

func (e *env) platform() string {
	e.t.Helper()
	p, err := e.platforms.Create(context.Background(), "platform", "example.test", []string{"USD", "EUR", "MXN", "USDC"})
	require.NoError(e.t, err)
	return p.ID
}

// customer creates a US customer and returns it with its USD account.
func (e *env) customer(platformID string) (ports.Customer, ports.InternalAccount) {
	e.t.Helper()
	ctx := context.Background()
	region := "US"
	c, err := e.customers.Create(ctx, platformID, customers.Input{CustomerType: "INDIVIDUAL", Region: &region})
	require.NoError(e.t, err)
	rows, _, err := e.store.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{
		PlatformID: platformID, CustomerID: c.ID, Currency: "USD"}, ports.Page{Limit: 10})
	require.NoError(e.t, err)
	require.Len(e.t, rows, 1)
	return c, rows[0]
}

// platformAccount is the platform's own internal account in currency.
func (e *env) platformAccount(platformID, currency string) ports.InternalAccount {
	e.t.Helper()
	rows, _, err := e.store.Read().InternalAccounts().List(context.Background(), ports.InternalAccountFilter{
		PlatformID: platformID, PlatformOnly: true, Currency: currency}, ports.Page{Limit: 10})
	require.NoError(e.t, err)
	require.Len(e.t, rows, 1)
	return rows[0]
}

// external stores an ACTIVE external account of the customer (or of the
// platform, customerID ""). Fixtures go through the store: the external
// account rules are core/external's and tested there.
func (e *env) external(platformID, customerID string, info ports.AccountInfo) ports.ExternalAccount {
	e.t.Helper()
	now := e.clock.Now()
	a := ports.ExternalAccount{
		ID: e.ids.New("ExternalAccount"), PlatformID: platformID, CustomerID: customerID,
		Currency: currencyOf(info.AccountType), Status: "ACTIVE", Info: info,
		BeneficiaryVerificationStatus: "MATCHED", CreatedAt: now, UpdatedAt: now,
	}
	ctx := context.Background()
	require.NoError(e.t, e.store.InTx(ctx, func(tx ports.Tx) error { return tx.ExternalAccounts().Create(ctx, a) }))
	return a
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

func (e *env) fund(platformID, accountID string, amount int64) {
	e.t.Helper()
	_, err := e.accounts.Fund(context.Background(), platformID, accountID, amount, "")
	require.NoError(e.t, err)
}

func (e *env) available(accountID string) int64 {
	e.t.Helper()
	a, err := e.ledger.Account(context.Background(), accountID)
	require.NoError(e.t, err)
	return a.Available()
}

func (e *env) ledgerAccount(id string) ledger.Account {
	e.t.Helper()
	a, err := e.ledger.Account(context.Background(), id)
	require.NoError(e.t, err)
	return a
}

// runJobs runs every job due now (and what they schedule for now).
func (e *env) runJobs() int {
	e.t.Helper()
	n, err := e.runner.RunAll(context.Background(), 100)
	require.NoError(e.t, err)
	return n
}

// advance moves the clock and runs what became due.
func (e *env) advance(d time.Duration) {
	e.t.Helper()
	e.clock.Advance(d)
	e.runJobs()
}

func (e *env) txn(platformID, id string) ports.Transaction {
	e.t.Helper()
	t, err := e.txns.Get(context.Background(), platformID, id)
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
