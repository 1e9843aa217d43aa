package httpapi_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// gatedLedger holds every posting, once armed, until the gate opens, so a
// request can be kept running while the test moves time.
type gatedLedger struct {
	ports.LedgerStore
	armed   atomic.Bool
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedLedger) PostWith(ctx context.Context, e ledger.Entry, recs ports.Records) (ledger.JournalEntry, error) {
	if g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.gate
	}
	return g.LedgerStore.PostWith(ctx, e, recs)
}

// storedClaim reads the key's record without claiming it.
func (h *apiHarness) storedClaim(scope, key string) ports.IdempotencyRecord {
	h.t.Helper()
	now := h.clock.Now()
	rec, owned, err := h.idem.Begin(context.Background(), ports.IdempotencyRecord{
		Scope: scope, Key: key, RequestHash: "probe", Owner: "probe", LockedUntil: now,
		CreatedAt: now, ExpiresAt: now.Add(time.Hour),
	}, now)
	require.NoError(h.t, err)
	require.False(h.t, owned, "the key must be held")
	return rec
}

// TestIdempotencyLeaseRenewedWhileRunning: a request that runs longer than
// its claim's lease keeps the key (renewed every interval), so a retry is
// 409 rather than a second run; the lease itself stays short.
func TestIdempotencyLeaseRenewedWhileRunning(t *testing.T) {
	h := memoryHarness(t, true)
	led := &gatedLedger{LedgerStore: h.ledger, entered: make(chan struct{}), gate: make(chan struct{})}
	h.accounts = accounts.New(h.store, led, h.clock, h.ids, true)
	const lease = 10 * time.Second
	h.serve(httpapi.Deps{IdempotencyLease: lease, IdempotencyRenewEvery: 10 * time.Millisecond})
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")

	led.armed.Store(true)
	first := make(chan apiResponse, 1)
	go func() { first <- h.post(tn, fundPath(acct.ID), `{"amount":250}`, "Idempotency-Key", "slow") }()
	<-led.entered
	start := h.clock.Now()
	assert.False(t, h.storedClaim(tn.platformID, "slow").LockedUntil.After(start.Add(lease)), "the lease is short")

	// Time passes well beyond the first lease; the running request renews.
	for range 3 {
		h.clock.Advance(8 * time.Second)
		want := h.clock.Now().Add(lease)
		require.Eventually(t, func() bool {
			return !h.storedClaim(tn.platformID, "slow").LockedUntil.Before(want)
		}, 5*time.Second, 5*time.Millisecond, "renewed to now+lease")
	}
	retry := h.post(tn, fundPath(acct.ID), `{"amount":250}`, "Idempotency-Key", "slow")
	requireError(t, retry, http.StatusConflict, "IDEMPOTENCY_KEY_IN_USE")

	close(led.gate)
	r := <-first
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	again := h.post(tn, fundPath(acct.ID), `{"amount":250}`, "Idempotency-Key", "slow")
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.Equal(t, int64(250), h.balance(tn, acct.ID), "one funding")
}

// plantDeadClaim plants, on key, the claim a process that died while
// running POST path with body would leave: the middleware's hash, another
// owner, the default lease from now. (It learns the hash by sending the
// same request once on the key "probe-"+key.)
func (h *apiHarness) plantDeadClaim(tn tenant, key, path, body string) {
	h.t.Helper()
	probe := h.post(tn, path, body, "Idempotency-Key", "probe-"+key)
	require.Less(h.t, probe.status, 300, string(probe.body))
	hash := h.storedClaim(tn.platformID, "probe-"+key).RequestHash
	now := h.clock.Now()
	_, owned, err := h.idem.Begin(context.Background(), ports.IdempotencyRecord{
		Scope: tn.platformID, Key: key, RequestHash: hash, Owner: "dead-attempt",
		LockedUntil: now.Add(httpapi.DefaultIdempotencyLease), CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour),
	}, now)
	require.NoError(h.t, err)
	require.True(h.t, owned)
}

// TestIdempotencyDeadClaimLapsesWithinLease: the claim of a process that
// died after its funding committed (never renewed) blocks a retry only
// until its short lease passes; the retry then finds the posted entry and
// moves nothing.
func TestIdempotencyDeadClaimLapsesWithinLease(t *testing.T) {
	h := memoryHarness(t, true)
	h.serve(httpapi.Deps{})
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")
	body := `{"amount":300}`

	h.plantDeadClaim(tn, "dead", fundPath(acct.ID), body)
	_, err := h.accounts.Fund(context.Background(), tn.platformID, acct.ID, 300, "dead")
	require.NoError(t, err)

	requireError(t, h.post(tn, fundPath(acct.ID), body, "Idempotency-Key", "dead"), http.StatusConflict, "IDEMPOTENCY_KEY_IN_USE")
	h.clock.Advance(httpapi.DefaultIdempotencyLease)
	r := h.post(tn, fundPath(acct.ID), body, "Idempotency-Key", "dead")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, int64(600), h.balance(tn, acct.ID), "probe 300 + dead 300, the retry moved nothing")
}

// TestIdempotencyDeadTransferOutRetried: the same for a transfer-out whose
// hold and transaction committed before its process died: the retry after
// the lease answers that transaction, and the balance is held once.
func TestIdempotencyDeadTransferOutRetried(t *testing.T) {
	h := memoryHarness(t, true)
	xfers := transfers.New(h.store, h.ledger, h.defaultRails(sandbox.Factory(h.clock)), h.clock, h.ids, transfers.Options{Logger: h.log})
	h.serve(httpapi.Deps{Transfers: xfers, Transactions: transactions.New(h.store)})
	th := &transferHarness{apiHarness: h}
	tn := h.tenant("USD")
	c, acct := th.customerWithAccount(tn)
	dest := th.externalAccount(tn, c.ID, "USD", usdInfo("789"))
	th.fund(tn, acct.ID, 10_000)
	body := outBody(acct.ID, dest.ID, 2500, "")

	h.plantDeadClaim(tn, "dead-out", "/transfer-out", body)
	tx, err := xfers.TransferOut(context.Background(), tn.platformID, transfers.OutRequest{
		SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 2500, IdempotencyKey: "dead-out"})
	require.NoError(t, err)

	requireError(t, h.post(tn, "/transfer-out", body, "Idempotency-Key", "dead-out"), http.StatusConflict, "IDEMPOTENCY_KEY_IN_USE")
	h.clock.Advance(httpapi.DefaultIdempotencyLease)
	m := created(t, h.post(tn, "/transfer-out", body, "Idempotency-Key", "dead-out"))
	assert.Equal(t, tx.ID, m["id"], "the retry answers the committed transaction")
	assert.Equal(t, int64(10_000-2*2500), h.balance(tn, acct.ID), "probe and dead-out held once each")
}
