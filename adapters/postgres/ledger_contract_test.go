package postgres_test

import (
	"testing"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/ledgertest"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// TestLedgerContract holds the PostgreSQL ledger to the LedgerStore contract
// shared with the memory store; each subtest gets its own scratch database.
func TestLedgerContract(t *testing.T) {
	t.Parallel()
	ledgertest.Run(t, func(t *testing.T, clock *testkit.FakeClock) ports.LedgerStore {
		l := postgres.NewLedger(pgtest.NewDB(t), clock, postgres.LedgerOptions{})
		t.Cleanup(l.Close)
		return l
	})
}

// TestLedgerRecordsContract holds the PostgreSQL ledger's PostWith to the
// contract shared with the memory ledger: records commit with their entry.
func TestLedgerRecordsContract(t *testing.T) {
	t.Parallel()
	ledgertest.RunRecords(t, func(t *testing.T, clock *testkit.FakeClock) (ports.LedgerStore, ports.Store) {
		db := pgtest.NewDB(t)
		l := postgres.NewLedger(db, clock, postgres.LedgerOptions{})
		t.Cleanup(l.Close)
		return l, postgres.NewStore(db)
	})
}
