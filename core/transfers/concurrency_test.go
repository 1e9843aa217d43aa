package transfers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/coretest"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// 50 transfer-outs race for one account whose balance covers 20 of them:
// exactly 20 are accepted, 30 are refused with INVALID_AMOUNT, and the
// balance ends at the exact remainder, never below it.
func TestConcurrentTransferOuts(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend.name, func(t *testing.T) {
			e := backend.env(t)
			ctx := context.Background()
			pid := e.platform()
			c, acct := e.customer(pid)
			dest := e.external(pid, c.ID, usdAccount("789"))
			const amount, n, covered, remainder = 137, 50, 20, 100
			e.Fund(pid, acct.ID, covered*amount+remainder)

			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				accepted []ports.Transaction
				refused  int
				other    []error
			)
			gate := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-gate
					tx, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{
						SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: amount,
						IdempotencyKey: "race-" + string(rune('A'+i/26)) + string(rune('a'+i%26)),
					})
					mu.Lock()
					defer mu.Unlock()
					if f, ok := fault.As(err); ok && f.Code == "INVALID_AMOUNT" {
						refused++
						return
					}
					if err != nil {
						other = append(other, err)
						return
					}
					accepted = append(accepted, tx)
				}()
			}
			close(gate)
			wg.Wait()
			require.Empty(t, other)
			assert.Len(t, accepted, covered)
			assert.Equal(t, n-covered, refused)
			la := e.LedgerAccount(acct.ID)
			assert.Equal(t, int64(remainder), la.Available())
			assert.Equal(t, int64(covered*amount), la.DebitsPending)

			e.RunJobs()
			e.Advance(10 * time.Second)
			page, err := e.txns.List(ctx, pid, transactions.Query{CustomerID: c.ID, Status: "COMPLETED"}, ports.Page{Limit: 100})
			require.NoError(t, err)
			assert.Equal(t, covered, page.Total)
			la = e.LedgerAccount(acct.ID)
			assert.Equal(t, int64(remainder), la.Available())
			assert.Equal(t, int64(remainder), la.Total())
			assert.Zero(t, la.DebitsPending)
			e.Verify()
		})
	}
}

// A transfer-out waiting on the 30-second rail survives a restart on
// PostgreSQL: the first process places the hold and submits; a new process
// on the same database, 31 s later, runs the due check, fails the transfer
// and restores the balance exactly.
func TestPendingTransferSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	clock := testkit.NewFakeClock(start)
	store, led, stop := coretest.OpenPostgres(t, dsn, clock)
	e := newEnv(t, coretest.Backend{Clock: clock, Store: store, Ledger: led})
	pid := e.platform()
	c, acct := e.customer(pid)
	dest := e.external(pid, c.ID, usdAccount("005"))
	e.Fund(pid, acct.ID, 5_000)
	tx, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 1_234})
	require.NoError(t, err)
	e.RunJobs()
	e.Advance(20 * time.Second)
	require.Equal(t, "PROCESSING", e.txn(pid, tx.ID).Status)
	require.Equal(t, int64(5_000-1_234), e.available(acct.ID))
	stop() // the process goes away with its memory; only the database remains

	later := testkit.NewFakeClock(start.Add(31 * time.Second))
	store2, led2, stop2 := coretest.OpenPostgres(t, dsn, later)
	defer stop2()
	e2 := newEnv(t, coretest.Backend{Clock: later, Store: store2, Ledger: led2})
	assert.Equal(t, "PROCESSING", e2.txn(pid, tx.ID).Status)
	assert.Equal(t, 1, e2.RunJobs(), "the pending check, due at 30 s")
	got := e2.txn(pid, tx.ID)
	assert.Equal(t, "FAILED", got.Status)
	assert.Equal(t, "COUNTERPARTY_POST_TX_FAILED", got.FailureReason)
	la := e2.LedgerAccount(acct.ID)
	assert.Equal(t, int64(5_000), la.Available(), "the hold is voided: the balance is restored exactly")
	assert.Equal(t, int64(5_000), la.Total())
	assert.Zero(t, la.DebitsPending)
	assert.Zero(t, e2.RunJobs())
	e2.Verify()
}
