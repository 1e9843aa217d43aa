package memory_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/reporttest"
)

func newReportsEnv(t *testing.T, clock *testkit.FakeClock) reporttest.Env {
	l := memory.NewLedger(clock)
	s := memory.NewStore(l)
	return reporttest.Env{Ledger: l, Store: s, Reports: memory.NewLedgerReports(l, s)}
}

// TestLedgerReportsContract holds the memory reports to the contract
// shared with PostgreSQL.
func TestLedgerReportsContract(t *testing.T) {
	reporttest.Run(t, newReportsEnv)
}

// TestLedgerReportsProperty: point-in-time balances, trial balances,
// exports and statements agree with the journal over random histories.
func TestLedgerReportsProperty(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		reporttest.RunProperty(t, newReportsEnv, 400, seed)
	}
}

// TestLedgerTamper: stripped hashes and a re-chained forgery are caught.
func TestLedgerTamper(t *testing.T) {
	reporttest.RunTamper(t, newReportsEnv, reporttest.Tamper{
		StripHashes: func(t *testing.T, env reporttest.Env) { memory.StripHashesForTest(env.Ledger.(*memory.Ledger)) },
		Forge: func(t *testing.T, env reporttest.Env, transferID string, delta int64) {
			require.True(t, memory.ForgeForTest(env.Ledger.(*memory.Ledger), transferID, delta))
		},
	})
}
