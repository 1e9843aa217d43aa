package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// TestLedgerQuoteChangesInOneBatch puts calls that depend on each other's
// quote records into one batch, queued in a known order: each sees the
// quotes created and changed by the calls accepted before it, and nothing
// of a refused one.
func TestLedgerQuoteChangesInOneBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, db, clock := batchedLedger(t, 5)
	store := postgres.NewStore(db)
	now := clock.Now().UTC()
	quote := func(id string) ports.Quote {
		return ports.Quote{ID: id, PlatformID: "Platform:p1", Status: "PENDING", SendingCurrency: "USD", ReceivingCurrency: "USD",
			LockedSide: "SENDING", LockedAmount: 1, TotalSendingAmount: 1, TotalReceivingAmount: 1,
			ExpiresAt: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now}
	}
	execute := func(id string) []ports.QuoteStatusChange {
		return []ports.QuoteStatusChange{{PlatformID: "Platform:p1", QuoteID: id, From: []string{"PENDING"},
			Status: "PROCESSING", UpdatedAt: now, ExecutedAt: &now, NotExpiredAt: &now, Required: true}}
	}
	require.NoError(t, store.InTx(ctx, func(tx ports.Tx) error { return tx.Quotes().Create(ctx, quote("Quote:stored")) }))

	calls := []struct {
		e    ledger.Entry
		recs ports.Records
	}{
		{entry("create", single("create:0", alice, bob, 1)), ports.Records{Quotes: []ports.Quote{quote("Quote:new")}}},
		{entry("exec-new", single("exec-new:0", alice, bob, 1)), ports.Records{QuoteChanges: execute("Quote:new")}},
		{entry("exec-new-again", single("exec-new-again:0", alice, bob, 1)), ports.Records{QuoteChanges: execute("Quote:new")}},
		{entry("exec-stored-refused", single("exec-stored-refused:0", alice, bob, 5_000)), ports.Records{QuoteChanges: execute("Quote:stored")}},
		{entry("exec-stored", single("exec-stored:0", alice, bob, 1)), ports.Records{QuoteChanges: execute("Quote:stored")}},
	}
	errs := make([]error, len(calls))
	queued := make(chan struct{})
	postgres.OnEnqueueForTest(l, func() { queued <- struct{}{} })
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { _, errs[i] = l.PostWith(ctx, c.e, c.recs) })
		<-queued // in the queue before the next starts: the batch (all five) is in this order
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1], "a quote created earlier in the batch can be executed")
	require.ErrorIs(t, errs[2], ports.ErrPrecondition, "the quote moved on earlier in the batch")
	require.ErrorIs(t, errs[3], ledger.ErrExceedsCredits)
	require.NoError(t, errs[4], "the refused call changed nothing")
	for _, id := range []string{"Quote:new", "Quote:stored"} {
		q, err := store.Read().Quotes().Get(ctx, "Platform:p1", id)
		require.NoError(t, err)
		assert.Equal(t, "PROCESSING", q.Status, id)
		require.NotNil(t, q.ExecutedAt, id)
	}
	assert.Equal(t, int64(1_000-3), account(t, l, alice).Available())
	verify(t, l, db)
}
