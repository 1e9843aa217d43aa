package ledgertest

import (
	"fmt"
	"sync"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// cancelChange is the Required change that cancels transaction id (FAILED
// while PENDING or PROCESSING).
func (f *recFixture) cancelChange(id string) ports.TransactionStatusChange {
	return ports.TransactionStatusChange{PlatformID: recPlatform, TransactionID: id, From: []string{"PENDING", "PROCESSING"},
		Status: "FAILED", UpdatedAt: f.clock.Now().UTC(), Required: true}
}

// settleChange is the Required change that completes transaction id.
func (f *recFixture) settleChange(id string) ports.TransactionStatusChange {
	now := f.clock.Now().UTC()
	return ports.TransactionStatusChange{PlatformID: recPlatform, TransactionID: id, From: []string{"PENDING", "PROCESSING"},
		Status: "COMPLETED", UpdatedAt: now, SettledAt: &now, Required: true}
}

// credit is a transfer-in's settlement: the rail pays alice.
func credit(txID string, amount int64) ledger.Entry {
	return entry("credit:"+txID, single("credit:"+txID, railUSD, alice, amount))
}

// storeTxn records transaction id (PENDING, amount 100) without moving
// money, as a transfer-in is recorded.
func (f *recFixture) storeTxn(id string) {
	f.t.Helper()
	require.NoError(f.t, f.s.WriteRecords(f.ctx, ports.Records{Transactions: []ports.Transaction{f.txn(id, 100)}}))
}

func testRecordsTxnRequiredHolds(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	id := "Transaction:rec-cancel"
	job := f.held(id)

	// A cancel: the hold voided with the Required change.
	_, err := f.s.PostWith(f.ctx, entry("cancel:"+id, voidHold("cancel:"+id, "hold:"+id)), ports.Records{
		StatusChanges: []ports.TransactionStatusChange{f.cancelChange(id)}, CompletedJobs: []string{job.ID}})
	require.NoError(t, err)
	st, _, _ := f.status(id)
	assert.Equal(t, "FAILED", st)
	assert.Equal(t, int64(1_000), f.account(alice).Available(), "the hold is released exactly")
	assert.False(t, f.queued(job.ID))

	// Records alone: a transfer-in cancelled, then its settlement refused.
	in := "Transaction:rec-in"
	f.storeTxn(in)
	require.NoError(t, f.s.WriteRecords(f.ctx, ports.Records{StatusChanges: []ports.TransactionStatusChange{f.cancelChange(in)}}))
	st, _, _ = f.status(in)
	assert.Equal(t, "FAILED", st)
	_, err = f.s.PostWith(f.ctx, credit(in, 100), ports.Records{StatusChanges: []ports.TransactionStatusChange{f.settleChange(in)}})
	require.ErrorIs(t, err, ports.ErrPrecondition)
	assert.Equal(t, int64(1_000), f.account(alice).Available(), "the refused credit moved nothing")

	// A transaction created in the same call may be required by it.
	fresh := "Transaction:rec-fresh"
	_, err = f.s.PostWith(f.ctx, credit(fresh, 50), ports.Records{Transactions: []ports.Transaction{f.txn(fresh, 50)},
		StatusChanges: []ports.TransactionStatusChange{f.settleChange(fresh)}})
	require.NoError(t, err)
	st, settled, _ := f.status(fresh)
	assert.Equal(t, "COMPLETED", st)
	assert.NotNil(t, settled)
	assert.Equal(t, int64(1_050), f.account(alice).Available())
	f.verify()
}

func testRecordsTxnRequiredFails(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	done := "Transaction:rec-done"
	f.storeTxn(done)
	require.NoError(t, f.s.WriteRecords(f.ctx, ports.Records{StatusChanges: []ports.TransactionStatusChange{f.settleChange(done)}}))
	now := f.clock.Now().UTC()
	other := f.settleChange("Transaction:rec-open")
	other.PlatformID = "Platform:another"
	f.storeTxn("Transaction:rec-open")
	for _, tc := range []struct {
		change ports.TransactionStatusChange
		why    string
	}{
		{f.cancelChange(done), "wrong status"},
		{f.cancelChange("Transaction:rec-missing"), "no such transaction"},
		{other, "another platform's"},
	} {
		job := ports.Job{Kind: "ledgertest.other", Key: "ledgertest.other:" + tc.why, RunAt: now}
		_, err := f.s.PostWith(f.ctx, credit(tc.change.TransactionID+tc.why, 100), ports.Records{
			StatusChanges: []ports.TransactionStatusChange{tc.change}, Jobs: []ports.Job{job},
			Events: []ports.Event{f.event("Transaction:ev-" + tc.why)}})
		require.ErrorIs(t, err, ports.ErrPrecondition, tc.why)
		assert.False(t, f.recorded("Transaction:ev-"+tc.why), "%s: no event", tc.why)
		err = f.s.WriteRecords(f.ctx, ports.Records{StatusChanges: []ports.TransactionStatusChange{tc.change}, Jobs: []ports.Job{job}})
		require.ErrorIs(t, err, ports.ErrPrecondition, tc.why)
		assert.NotContains(t, f.jobs(), job.Key, "%s: nothing of the call is written", tc.why)
	}
	st, _, _ := f.status(done)
	assert.Equal(t, "COMPLETED", st)
	st, _, _ = f.status("Transaction:rec-open")
	assert.Equal(t, "PENDING", st)
	assert.Len(t, f.journal(100), 1, "only the funding is recorded")
	assert.Equal(t, int64(1_000), f.account(alice).Available())
	f.verify()
}

// testRecordsTxnRequiredConcurrent races, for each of several
// transactions, a settlement (a credit with its Required COMPLETED), a
// cancel (the Required FAILED alone) and a status change that is not
// required (PROCESSING): exactly one of settlement and cancel wins, and
// the money says which.
func testRecordsTxnRequiredConcurrent(f *recFixture) {
	t := f.t
	const n = 12
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("Transaction:rec-race-%02d", i)
		f.storeTxn(ids[i])
	}
	f.clock.Advance(time.Second)
	settled := make([]error, n)
	cancelled := make([]error, n)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(3)
		go func() {
			defer wg.Done()
			_, settled[i] = f.s.PostWith(f.ctx, credit(id, 100), ports.Records{StatusChanges: []ports.TransactionStatusChange{f.settleChange(id)}})
		}()
		go func() {
			defer wg.Done()
			cancelled[i] = f.s.WriteRecords(f.ctx, ports.Records{StatusChanges: []ports.TransactionStatusChange{f.cancelChange(id)}})
		}()
		go func() {
			defer wg.Done()
			assert.NoError(t, f.s.WriteRecords(f.ctx, ports.Records{StatusChanges: []ports.TransactionStatusChange{{PlatformID: recPlatform,
				TransactionID: id, From: []string{"PENDING"}, Status: "PROCESSING", UpdatedAt: f.clock.Now().UTC()}}}))
		}()
	}
	wg.Wait()
	credits := int64(0)
	for i, id := range ids {
		st, _, _ := f.status(id)
		switch {
		case settled[i] == nil:
			require.ErrorIs(t, cancelled[i], ports.ErrPrecondition, id)
			assert.Equal(t, "COMPLETED", st, id)
			credits += 100
		default:
			require.ErrorIs(t, settled[i], ports.ErrPrecondition, id)
			require.NoError(t, cancelled[i], id)
			assert.Equal(t, "FAILED", st, id)
		}
	}
	assert.Equal(t, credits, f.account(alice).Available(), "credited exactly for the settled transactions")
	f.verify()
}
