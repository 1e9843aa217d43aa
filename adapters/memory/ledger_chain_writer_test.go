// The writer hashes the journal: postLocked calls chainLocked.

package memory_test

import (
	"testing"

	"github.com/corridorpay/corridor/testkit/reporttest"
)

func TestLedgerWriterHashesTheJournal(t *testing.T) {
	reporttest.RunChain(t, newReportsEnv)
}
