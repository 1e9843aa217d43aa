package transfers_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ports"
)

// onBackends runs test on memory and PostgreSQL, each with a platform
// and a customer with its USD account.
func onBackends(t *testing.T, test func(t *testing.T, e *env, pid string, c ports.Customer, acct ports.InternalAccount)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := b.env(t)
			pid := e.platform()
			c, acct := e.customer(pid)
			test(t, e, pid, c, acct)
		})
	}
}

// requireNotCancellable checks err is 409 TRANSACTION_NOT_CANCELLABLE.
func requireNotCancellable(t *testing.T, err error) {
	t.Helper()
	f, ok := fault.As(err)
	require.True(t, ok, "want a fault, got %v", err)
	assert.Equal(t, fault.KindConflict, f.Kind)
	assert.Equal(t, transfers.CodeNotCancellable, f.Code)
}

// A transfer-out cancelled while PENDING and one cancelled while
// PROCESSING are FAILED with their holds released exactly; the rail's
// later outcome changes nothing, and a second cancel is 409.
func TestCancelTransferOut(t *testing.T) {
	onBackends(t, func(t *testing.T, e *env, pid string, c ports.Customer, acct ports.InternalAccount) {
		ctx := context.Background()
		dest := e.external(pid, c.ID, usdAccount("789"))
		e.Fund(pid, acct.ID, 10_000)

		pending, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 3_000})
		require.NoError(t, err)
		got, err := e.transfers.Cancel(ctx, pid, pending.ID, "REQUESTED_AFTER_HOURS", "")
		require.NoError(t, err)
		assert.Equal(t, "FAILED", got.Status)
		assert.Nil(t, got.SettledAt)
		assert.Equal(t, int64(10_000), e.available(acct.ID), "the hold is released exactly")

		processing, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 2_500})
		require.NoError(t, err)
		e.RunJobs()
		require.Equal(t, "PROCESSING", e.txn(pid, processing.ID).Status)
		assert.Equal(t, int64(7_500), e.available(acct.ID))
		got, err = e.transfers.Cancel(ctx, pid, processing.ID, "", "")
		require.NoError(t, err)
		assert.Equal(t, "FAILED", got.Status)
		assert.Equal(t, int64(10_000), e.available(acct.ID))

		// The rail's settlement comes too late: nothing is paid.
		e.Advance(time.Minute)
		e.Advance(time.Hour)
		for _, id := range []string{pending.ID, processing.ID} {
			assert.Equal(t, "FAILED", e.txn(pid, id).Status)
			_, err = e.transfers.Cancel(ctx, pid, id, "", "")
			requireNotCancellable(t, err)
		}
		for _, id := range []string{pending.ID, processing.ID} {
			assert.Equal(t, 1, e.events(pid, id)["OUTGOING_PAYMENT.FAILED"], "the cancel's event, once")
			assert.Zero(t, e.events(pid, id)["OUTGOING_PAYMENT.COMPLETED"])
		}
		la := e.LedgerAccount(acct.ID)
		assert.Equal(t, int64(10_000), la.Available())
		assert.Zero(t, la.DebitsPending, "no hold left open")
		assert.Zero(t, la.DebitsPosted-la.CreditsPosted+10_000, "nothing was paid out")
		e.Verify()
	})
}

// A transfer-in cancelled before the rail settles it is FAILED and is
// never credited, though the rail reports success later.
func TestCancelTransferIn(t *testing.T) {
	onBackends(t, func(t *testing.T, e *env, pid string, c ports.Customer, acct ports.InternalAccount) {
		ctx := context.Background()
		src := e.external(pid, c.ID, usdAccount("321"))
		tx, err := e.transfers.TransferIn(ctx, pid, transfers.InRequest{SourceAccountID: src.ID, DestinationAccountID: acct.ID, Amount: 4_000})
		require.NoError(t, err)
		e.RunJobs()
		require.Equal(t, "PROCESSING", e.txn(pid, tx.ID).Status)
		got, err := e.transfers.Cancel(ctx, pid, tx.ID, "", "")
		require.NoError(t, err)
		assert.Equal(t, "FAILED", got.Status)
		e.Advance(time.Minute)
		assert.Equal(t, "FAILED", e.txn(pid, tx.ID).Status)
		assert.Zero(t, e.available(acct.ID), "never credited")
		assert.Equal(t, 1, e.events(pid, tx.ID)["INCOMING_PAYMENT.FAILED"], "the cancel's event, once")
		assert.Zero(t, e.events(pid, tx.ID)["INCOMING_PAYMENT.COMPLETED"])
		assert.Zero(t, e.RunJobs(), "the rail's check is done with")
		e.Verify()
	})
}

// Only an unsettled transfer on a rail that is not instant, of the
// platform, can be cancelled.
func TestCancelRefusals(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	pid := e.platform()
	c, acct := e.customer(pid)
	dest := e.external(pid, c.ID, usdAccount("789"))
	e.Fund(pid, acct.ID, 10_000)

	settled, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 100})
	require.NoError(t, err)
	e.Advance(0)
	e.Advance(10 * time.Second)
	require.Equal(t, "COMPLETED", e.txn(pid, settled.ID).Status)
	_, err = e.transfers.Cancel(ctx, pid, settled.ID, "", "")
	requireNotCancellable(t, err)

	failed, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID,
		DestinationAccountID: e.external(pid, c.ID, usdAccount("002")).ID, Amount: 100})
	require.NoError(t, err)
	e.RunJobs()
	require.Equal(t, "FAILED", e.txn(pid, failed.ID).Status)
	_, err = e.transfers.Cancel(ctx, pid, failed.ID, "", "")
	requireNotCancellable(t, err)

	instant, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID,
		PaymentRail: "RTP", Amount: 100})
	require.NoError(t, err)
	_, err = e.transfers.Cancel(ctx, pid, instant.ID, "", "")
	requireNotCancellable(t, err)
	assert.Equal(t, "PENDING", e.txn(pid, instant.ID).Status, "a refused cancel changes nothing")

	open, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 100})
	require.NoError(t, err)
	other := e.platform()
	for _, tc := range []struct{ platform, id string }{{other, open.ID}, {pid, "Transaction:unknown"}} {
		_, err = e.transfers.Cancel(ctx, tc.platform, tc.id, "", "")
		f, ok := fault.As(err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, fault.KindNotFound, f.Kind)
	}
	assert.Equal(t, "PENDING", e.txn(pid, open.ID).Status)
	e.Verify()
}

// Cancels race the rail's settlements of the same transfers (out and in):
// each transfer ends either COMPLETED (its cancel 409) or FAILED (its
// cancel 200), and the balance says exactly which.
func TestCancelRacesSettlement(t *testing.T) {
	onBackends(t, func(t *testing.T, e *env, pid string, c ports.Customer, acct ports.InternalAccount) {
		ctx := context.Background()
		dest := e.external(pid, c.ID, usdAccount("789"))
		src := e.external(pid, c.ID, usdAccount("321"))
		const n, out, in, start = 10, 300, 200, 100_000
		e.Fund(pid, acct.ID, start)
		var outs, ins []ports.Transaction
		for i := range n {
			o, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID,
				Amount: out, IdempotencyKey: fmt.Sprintf("out-%d", i)})
			require.NoError(t, err)
			outs = append(outs, o)
			in, err := e.transfers.TransferIn(ctx, pid, transfers.InRequest{SourceAccountID: src.ID, DestinationAccountID: acct.ID,
				Amount: in, IdempotencyKey: fmt.Sprintf("in-%d", i)})
			require.NoError(t, err)
			ins = append(ins, in)
		}
		e.RunJobs() // all PROCESSING
		e.Clock.Advance(10 * time.Second)

		all := append(append([]ports.Transaction{}, outs...), ins...)
		errs := make([]error, len(all))
		var wg sync.WaitGroup
		wg.Add(len(all) + 1)
		go func() {
			defer wg.Done()
			e.RunJobs() // the settlements
		}()
		for i, tx := range all {
			go func() {
				defer wg.Done()
				_, errs[i] = e.transfers.Cancel(ctx, pid, tx.ID, "", "")
			}()
		}
		wg.Wait()
		e.Advance(time.Minute)

		want := int64(start)
		won := map[string]int{}
		for i, tx := range all {
			got := e.txn(pid, tx.ID)
			won[got.Status]++
			evs := e.events(pid, tx.ID)
			prefix := map[string]string{"OUTGOING": "OUTGOING_PAYMENT.", "INCOMING": "INCOMING_PAYMENT."}[tx.Type]
			assert.Equal(t, 1, evs[prefix+"COMPLETED"]+evs[prefix+"FAILED"], "%s: one ending, one event: %v", tx.ID, evs)
			switch got.Status {
			case "FAILED":
				require.NoError(t, errs[i], tx.ID)
			case "COMPLETED":
				requireNotCancellable(t, errs[i])
				if tx.Type == "OUTGOING" {
					want -= out
				} else {
					want += in
				}
			default:
				t.Fatalf("%s ended %s", tx.ID, got.Status)
			}
		}
		t.Logf("outcomes: %v", won)
		la := e.LedgerAccount(acct.ID)
		assert.Equal(t, want, la.Available(), "the balance follows the winners exactly")
		assert.Zero(t, la.DebitsPending, "no hold left open")
		e.Verify()
	})
}

// events counts the webhook events recorded about resource id, by type.
func (e *env) events(platformID, id string) map[string]int {
	e.T.Helper()
	evs, _, err := e.Store.Read().Events().List(context.Background(), ports.EventFilter{PlatformID: platformID, ResourceID: id},
		ports.Page{Limit: 100})
	require.NoError(e.T, err)
	out := map[string]int{}
	for _, ev := range evs {
		out[ev.Type]++
	}
	return out
}

// A keyed cancel retried after its first attempt committed (a crash lost
// the stored response, so the retry runs again) is answered with the
// cancelled transaction; another key, or none, is still 409; the hold was
// released once. Transfer-out and transfer-in, on both stores.
func TestCancelRetriedWithItsKey(t *testing.T) {
	onBackends(t, func(t *testing.T, e *env, pid string, c ports.Customer, acct ports.InternalAccount) {
		ctx := context.Background()
		dest := e.external(pid, c.ID, usdAccount("789"))
		e.Fund(pid, acct.ID, 10_000)
		out, err := e.transfers.TransferOut(ctx, pid, transfers.OutRequest{SourceAccountID: acct.ID, DestinationAccountID: dest.ID, Amount: 3_000})
		require.NoError(t, err)
		in, err := e.transfers.TransferIn(ctx, pid, transfers.InRequest{SourceAccountID: dest.ID, DestinationAccountID: acct.ID, Amount: 500})
		require.NoError(t, err)
		for _, id := range []string{out.ID, in.ID} {
			first, err := e.transfers.Cancel(ctx, pid, id, "", "cancel-"+id)
			require.NoError(t, err)
			require.Equal(t, "FAILED", first.Status)
			again, err := e.transfers.Cancel(ctx, pid, id, "", "cancel-"+id)
			require.NoError(t, err, "the same key finds its own cancel")
			assert.Equal(t, "FAILED", again.Status)
			assert.Equal(t, first.UpdatedAt, again.UpdatedAt, "nothing changed again")
			for _, other := range []string{"another-key", ""} {
				_, err = e.transfers.Cancel(ctx, pid, id, "", other)
				requireNotCancellable(t, err)
			}
		}
		assert.Equal(t, int64(10_000), e.available(acct.ID), "the hold was released once")
	})
}
