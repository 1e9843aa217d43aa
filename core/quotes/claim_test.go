package quotes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// unclaimed is the context of a request whose Idempotency-Key claim,
// made beside it, found the key held by another request.
func unclaimed() context.Context {
	return ports.WithClaimWait(context.Background(), func(context.Context) error { return ports.ErrNotClaimed })
}

// A request run beside its Idempotency-Key claim (the HTTP layer's
// overlappedOperations) reads, but writes nothing when it does not own the
// key: no quote, no hold, no status change, not even a quote's expiry.
func TestUnclaimedRequestWritesNothing(t *testing.T) {
	onBothStores(t, func(t *testing.T, e *env) {
		f := e.fixture("789")
		req := usdToEUR(f.acct.ID, f.dest.ID)
		req.IdempotencyKey = "k1"
		for _, immediate := range []bool{false, true} {
			req.ImmediatelyExecute = immediate
			_, err := e.quotes.Create(unclaimed(), f.pid, req)
			require.ErrorIs(t, err, ports.ErrNotClaimed, "immediatelyExecute=%v", immediate)
			_, err = e.quotes.Get(context.Background(), f.pid, quotes.QuoteID(f.pid, "k1"))
			testkit.RequireFault(t, err, fault.KindNotFound, "QUOTE_NOT_FOUND")
		}

		req.IdempotencyKey, req.ImmediatelyExecute = "k2", false
		q, err := e.quotes.Create(context.Background(), f.pid, req)
		require.NoError(t, err)
		_, err = e.quotes.Execute(unclaimed(), f.pid, q.ID, "")
		require.ErrorIs(t, err, ports.ErrNotClaimed)
		assert.Equal(t, quotes.StatusPending, e.quote(f.pid, q.ID).Status, "not executed")

		e.Clock.Advance(q.ExpiresAt.Sub(e.Clock.Now()) + time.Minute)
		_, err = e.quotes.Execute(unclaimed(), f.pid, q.ID, "")
		require.ErrorIs(t, err, ports.ErrNotClaimed)
		assert.Equal(t, quotes.StatusPending, e.quote(f.pid, q.ID).Status, "not even expired")
		assert.Equal(t, funded, e.LedgerAccount(f.acct.ID).Available(), "nothing held")

		_, err = e.quotes.Execute(context.Background(), f.pid, q.ID, "")
		testkit.RequireFault(t, err, fault.KindConflict, "QUOTE_EXPIRED") // the key's owner expires it
		assert.Equal(t, quotes.StatusExpired, e.quote(f.pid, q.ID).Status)
		e.Verify()
	})
}
