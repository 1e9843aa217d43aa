// The group-commit writer hashes the journal: each batch chains to the
// last committed hash, read in its load statement under the journal lock.

package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/testkit/reporttest"
)

func TestLedgerWriterHashesTheJournal(t *testing.T) {
	t.Parallel()
	reporttest.RunChain(t, newReportsEnv)
}

// Concurrent posters share batches; the chain still runs through every
// entry in seq order.
func TestLedgerWriterChainsConcurrentBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, db, _ := newLedger(t, postgres.LedgerOptions{})
	chart(t, l)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				id := fmt.Sprintf("c%02d-%02d", g, i)
				_, err := l.Post(ctx, entry(id, single(id, fundUSD, alice, 1)))
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	v, err := postgres.NewLedgerReports(db).VerifyJournal(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, v.Breaks)
	assert.Equal(t, int64(400), v.Hashed)
	assert.NotEqual(t, ledger.ZeroHash, v.Head)
}
