// Package coretest is the environment the core use-case tests share: one
// backend (memory or PostgreSQL) with a fake clock, the rail table's system
// accounts, the platform, customer and account services, a job runner the
// test drives, and the ledger checks every such test makes.
package coretest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// Start is when a backend's fake clock starts.
var Start = time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC)

// QuietLog is a logger that discards everything.
func QuietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Backend is a store and a ledger store that tell time by Clock.
type Backend struct {
	Clock  *testkit.FakeClock
	Store  ports.Store
	Ledger ports.LedgerStore
}

// Memory is an in-memory backend.
func Memory() Backend {
	clock := testkit.NewFakeClock(Start)
	led := memory.NewLedger(clock)
	return Backend{Clock: clock, Store: memory.NewStore(led), Ledger: led}
}

// Postgres is a backend on a scratch database, closed when t ends.
func Postgres(t testing.TB) Backend {
	clock := testkit.NewFakeClock(Start)
	store, led, closeFn := OpenPostgres(t, pgtest.NewDatabase(t), clock)
	t.Cleanup(closeFn)
	return Backend{Clock: clock, Store: store, Ledger: led}
}

// OpenPostgres opens the store and ledger on dsn; close releases them.
func OpenPostgres(t testing.TB, dsn string, clock ports.Clock) (ports.Store, ports.LedgerStore, func()) {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn)
	require.NoError(t, err)
	led := postgres.NewLedger(db, clock, postgres.LedgerOptions{Logger: QuietLog()})
	return postgres.NewStore(db), led, func() { led.Close(); _ = db.Close() }
}

// Env is the services every money-moving use case builds on.
type Env struct {
	T         testing.TB
	Clock     *testkit.FakeClock
	Store     ports.Store
	Ledger    ports.LedgerStore
	IDs       ports.IDs
	Rails     *rails.Registry
	Platforms *platforms.Service
	Customers *customers.Service
	Accounts  *accounts.Service
	Runner    *jobs.Runner
}

// New builds the shared services on b, with the default rail table (each
// rail made by newRail) and its system accounts.
func New(t testing.TB, b Backend, newRail func(ports.RailSpec) ports.Rail) *Env {
	t.Helper()
	reg, err := rails.FromSpecs(rails.DefaultSpecs(), newRail)
	require.NoError(t, err)
	require.NoError(t, b.Ledger.CreateAccounts(context.Background(), ledger.SystemAccounts(money.Codes(), reg.SettlementRails())...))
	ids := system.IDs{}
	return &Env{
		T: t, Clock: b.Clock, Store: b.Store, Ledger: b.Ledger, IDs: ids, Rails: reg,
		Platforms: platforms.New(b.Store, b.Ledger, b.Clock, ids),
		Customers: customers.New(b.Store, b.Ledger, b.Clock, ids, customers.Options{}),
		Accounts:  accounts.New(b.Store, b.Ledger, b.Clock, ids, true),
		// Webhook deliveries run on their own runner (core/events).
		Runner: jobs.NewRunner(b.Store.Read().Jobs(), b.Clock, QuietLog(),
			jobs.WithKinds(ports.JobKinds{Except: []string{ports.EventDeliveryJob}})),
	}
}

// Platform creates a platform serving currencies and returns its id.
func (e *Env) Platform(currencies ...string) string {
	e.T.Helper()
	p, err := e.Platforms.Create(context.Background(), "platform", "example.test", currencies)
	require.NoError(e.T, err)
	return p.ID
}

// InternalAccount is the one internal account f matches.
func (e *Env) InternalAccount(f ports.InternalAccountFilter) ports.InternalAccount {
	e.T.Helper()
	rows, _, err := e.Store.Read().InternalAccounts().List(context.Background(), f, ports.Page{Limit: 10})
	require.NoError(e.T, err)
	require.Len(e.T, rows, 1)
	return rows[0]
}

// External stores an ACTIVE external account of the customer (or of the
// platform, customerID ""). Fixtures go through the store: the external
// account rules are core/external's and tested there.
func (e *Env) External(platformID, customerID, currency string, info ports.AccountInfo) ports.ExternalAccount {
	e.T.Helper()
	now := e.Clock.Now()
	a := ports.ExternalAccount{
		ID: e.IDs.New("ExternalAccount"), PlatformID: platformID, CustomerID: customerID,
		Currency: currency, Status: "ACTIVE", Info: info,
		BeneficiaryVerificationStatus: "MATCHED", CreatedAt: now, UpdatedAt: now,
	}
	ctx := context.Background()
	require.NoError(e.T, e.Store.InTx(ctx, func(tx ports.Tx) error { return tx.ExternalAccounts().Create(ctx, a) }))
	return a
}

// Fund credits an internal account through the sandbox funding path.
func (e *Env) Fund(platformID, accountID string, amount int64) {
	e.T.Helper()
	_, err := e.Accounts.Fund(context.Background(), platformID, accountID, amount, "")
	require.NoError(e.T, err)
}

// LedgerAccount is the ledger's view of account id.
func (e *Env) LedgerAccount(id string) ledger.Account {
	e.T.Helper()
	a, err := e.Ledger.Account(context.Background(), id)
	require.NoError(e.T, err)
	return a
}

// RunJobs runs every job due now (and what they schedule for now) and
// returns how many ran.
func (e *Env) RunJobs() int {
	e.T.Helper()
	n, err := e.Runner.RunAll(context.Background(), 100)
	require.NoError(e.T, err)
	return n
}

// Advance moves the clock and runs what became due.
func (e *Env) Advance(d time.Duration) {
	e.T.Helper()
	e.Clock.Advance(d)
	e.RunJobs()
}

// Verify checks the ledger's invariants over everything posted.
func (e *Env) Verify() {
	e.T.Helper()
	ctx := context.Background()
	accts, pend, err := e.Ledger.Snapshot(ctx)
	require.NoError(e.T, err)
	var journal []ledger.JournalEntry
	for after := int64(0); ; {
		page, err := e.Ledger.Journal(ctx, after, 1000)
		require.NoError(e.T, err)
		if len(page) == 0 {
			break
		}
		journal = append(journal, page...)
		after = page[len(page)-1].Seq
	}
	require.Empty(e.T, ledger.Verify(accts, pend, journal))
}
