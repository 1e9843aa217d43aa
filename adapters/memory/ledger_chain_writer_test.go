//go:build ledgerchain

// These tests need the writer to hash the journal: postLocked calling
// chainLocked (see ledger_chain.go). Run them with -tags ledgerchain; drop
// the build tag once the writer hashes.

package memory_test

import (
	"testing"

	"github.com/corridorpay/corridor/testkit/reporttest"
)

func TestLedgerWriterHashesTheJournal(t *testing.T) {
	reporttest.RunChain(t, newReportsEnv)
}
