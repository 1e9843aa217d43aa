package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// NewStores returns an empty ledger store and the business store its
// PostWith records go to, both on clock.
type NewStores func(t *testing.T, clock *testkit.FakeClock) (ports.LedgerStore, ports.Store)

// RunRecords runs the contract of LedgerStore.PostWith as subtests of t:
// the records are written if and only if the call records the entry.
func RunRecords(t *testing.T, newStores NewStores) {
	tests := []struct {
		name string
		run  func(f *recFixture)
	}{
		{"AcceptedEntryWritesRecords", testRecordsAccepted},
		{"RefusedEntryWritesNothing", testRecordsRefused},
		{"ExistingEntryWritesNothing", testRecordsExisting},
		{"StoredTransactionFailsThePost", testRecordsConflict},
		{"QueuedJobKeyIsKept", testRecordsJobKey},
		{"ConcurrentHoldsWriteExactlyTheAcceptedRecords", testRecordsConcurrent},
		{"StatusChangesAndCompletedJobs", testRecordsStatusAndJobs},
		{"RefusedEntryChangesNoStatus", testRecordsRefusedStatus},
		{"RecordsWithoutEntry", testRecordsWithoutEntry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewFakeClock(Epoch)
			l, s := newStores(t, clock)
			require.NotNil(t, l, "newStores returned no ledger store")
			require.NotNil(t, s, "newStores returned no store")
			f := &recFixture{fixture: fixture{t: t, s: l, clock: clock, ctx: context.Background()}, store: s}
			f.chart()
			tt.run(f)
		})
	}
}

const recPlatform = "Platform:ledgertest"

type recFixture struct {
	fixture
	store ports.Store
}

// holdFor is the hold entry of a payout transaction txID from acct.
func holdFor(txID, acct string, amount int64) ledger.Entry {
	return ledger.Entry{ID: "hold:" + txID, Ref: txID, Transfers: []ledger.Transfer{
		hold("hold:"+txID, acct, railUSD, amount, 0)}}
}

func (f *recFixture) txn(id string, amount int64) ports.Transaction {
	now := f.clock.Now().UTC()
	return ports.Transaction{
		ID: id, PlatformID: recPlatform, CustomerID: "Customer:ledgertest", Type: "OUTGOING", Status: "PENDING",
		SourceAccountID: alice, SourceCurrency: "USD", DestinationAccountID: "ExternalAccount:ledgertest", DestinationCurrency: "USD",
		PaymentRail: "ACH", SenderIdentifiers: []string{alice}, ReceiverIdentifiers: []string{"ExternalAccount:ledgertest", "123456789"},
		SentAmount: amount, ReceivedAmount: amount, Reference: "REF-" + id, CreatedAt: now, UpdatedAt: now,
	}
}

func (f *recFixture) job(txID string) ports.Job {
	return ports.Job{Kind: "ledgertest.submit", Key: "ledgertest.submit:" + txID, Payload: []byte(`{"tx":"` + txID + `"}`), RunAt: f.clock.Now()}
}

func (f *recFixture) recs(txID string, amount int64) ports.Records {
	return ports.Records{Transactions: []ports.Transaction{f.txn(txID, amount)}, Jobs: []ports.Job{f.job(txID)}}
}

// stored reports whether transaction id exists.
func (f *recFixture) stored(id string) bool {
	f.t.Helper()
	_, err := f.store.Read().Transactions().Get(f.ctx, recPlatform, id)
	if errors.Is(err, ports.ErrNotFound) {
		return false
	}
	require.NoError(f.t, err, "get transaction %s", id)
	return true
}

// jobs claims every queued job (due within a year) and returns them by key.
func (f *recFixture) jobs() map[string]ports.Job {
	f.t.Helper()
	js, err := f.store.Read().Jobs().Claim(f.ctx, f.clock.Now().Add(365*24*time.Hour), 10_000, time.Hour)
	require.NoError(f.t, err)
	out := map[string]ports.Job{}
	for _, j := range js {
		_, dup := out[j.Key]
		require.False(f.t, dup, "job key %s queued twice", j.Key)
		out[j.Key] = j
	}
	return out
}

func testRecordsAccepted(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	want := f.txn("Transaction:rec-1", 300)
	je, err := f.s.PostWith(f.ctx, holdFor(want.ID, alice, 300), ports.Records{
		Transactions: []ports.Transaction{want}, Jobs: []ports.Job{f.job(want.ID)}})
	require.NoError(t, err)
	assert.Equal(t, "hold:"+want.ID, je.ID)
	assert.Equal(t, int64(700), f.account(alice).Available())

	got, err := f.store.Read().Transactions().Get(f.ctx, recPlatform, want.ID)
	require.NoError(t, err)
	assert.Equal(t, want.Status, got.Status)
	assert.Equal(t, want.SentAmount, got.SentAmount)
	assert.Equal(t, want.ReceiverIdentifiers, got.ReceiverIdentifiers)
	assert.Equal(t, want.Reference, got.Reference)
	assert.True(t, want.CreatedAt.Equal(got.CreatedAt), "CreatedAt %v, want %v", got.CreatedAt, want.CreatedAt)

	js := f.jobs()
	require.Contains(t, js, "ledgertest.submit:"+want.ID)
	j := js["ledgertest.submit:"+want.ID]
	assert.Equal(t, "ledgertest.submit", j.Kind)
	assert.JSONEq(t, `{"tx":"`+want.ID+`"}`, string(j.Payload))
	assert.NotEmpty(t, j.ID, "the queue assigns an id")

	// No records: PostWith is Post.
	_, err = f.s.PostWith(f.ctx, entry("plain", single("plain", alice, bob, 100)), ports.Records{})
	require.NoError(t, err)
	assert.Equal(t, int64(100), f.account(bob).Available())
	f.verify()
}

func testRecordsRefused(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 100)
	_, err := f.s.PostWith(f.ctx, holdFor("Transaction:rec-big", alice, 101), f.recs("Transaction:rec-big", 101))
	require.ErrorIs(t, err, ledger.ErrExceedsCredits)
	assert.False(t, f.stored("Transaction:rec-big"), "a refused entry writes no transaction")
	assert.Empty(t, f.jobs(), "a refused entry enqueues no job")
	assert.Equal(t, int64(100), f.account(alice).Available())
	f.verify()
}

func testRecordsExisting(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	e := holdFor("Transaction:rec-1", alice, 300)
	first, err := f.s.PostWith(f.ctx, e, f.recs("Transaction:rec-1", 300))
	require.NoError(t, err)

	// The same entry again, carrying other records: they are not written.
	again, err := f.s.PostWith(f.ctx, e, f.recs("Transaction:rec-other", 300))
	require.ErrorIs(t, err, ledger.ErrExists)
	assert.Equal(t, first.Seq, again.Seq, "the stored entry comes back")
	assert.True(t, f.stored("Transaction:rec-1"))
	assert.False(t, f.stored("Transaction:rec-other"), "an entry that already exists writes no records")
	js := f.jobs()
	assert.Len(t, js, 1)
	assert.Contains(t, js, "ledgertest.submit:Transaction:rec-1")
	assert.Equal(t, int64(700), f.account(alice).Available())
	f.verify()
}

func testRecordsConflict(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	taken := f.txn("Transaction:rec-taken", 50)
	require.NoError(t, f.store.InTx(f.ctx, func(tx ports.Tx) error { return tx.Transactions().Create(f.ctx, taken) }))

	_, err := f.s.PostWith(f.ctx, holdFor("Transaction:rec-new", alice, 300), ports.Records{
		Transactions: []ports.Transaction{f.txn("Transaction:rec-new", 300), f.txn(taken.ID, 300)},
		Jobs:         []ports.Job{f.job("Transaction:rec-new")}})
	require.ErrorIs(t, err, ports.ErrConflict)
	assert.False(t, f.stored("Transaction:rec-new"), "nothing of a failed post is written")
	assert.Empty(t, f.jobs())
	assert.Equal(t, int64(1_000), f.account(alice).Available(), "the entry is not recorded")
	_, err = f.s.Pending(f.ctx, "hold:Transaction:rec-new")
	require.ErrorIs(t, err, ports.ErrNotFound)
	got, err := f.store.Read().Transactions().Get(f.ctx, recPlatform, taken.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(50), got.SentAmount, "the stored transaction is untouched")

	// The entry itself was never the problem.
	_, err = f.s.PostWith(f.ctx, holdFor("Transaction:rec-new", alice, 300), f.recs("Transaction:rec-new", 300))
	require.NoError(t, err)
	assert.True(t, f.stored("Transaction:rec-new"))
	f.verify()
}

func testRecordsJobKey(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	queued := f.job("Transaction:rec-1")
	queued.Payload = []byte(`{"first":true}`)
	require.NoError(t, f.store.Read().Jobs().Enqueue(f.ctx, queued))

	_, err := f.s.PostWith(f.ctx, holdFor("Transaction:rec-1", alice, 300), f.recs("Transaction:rec-1", 300))
	require.NoError(t, err, "a queued job key is a no-op, not a failure")
	assert.True(t, f.stored("Transaction:rec-1"))
	js := f.jobs()
	require.Len(t, js, 1)
	assert.JSONEq(t, `{"first":true}`, string(js[queued.Key].Payload), "the queued job stays as it was")
}

// testRecordsConcurrent races 40 holds of 100 against a balance of 1,500
// (group-committing stores put them in shared batches): exactly the 15
// accepted holds have their transaction and job.
func testRecordsConcurrent(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_500)
	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("Transaction:rec-%02d", i)
			_, errs[i] = f.s.PostWith(f.ctx, holdFor(id, alice, 100), f.recs(id, 100))
		}()
	}
	wg.Wait()
	js := f.jobs()
	accepted := 0
	for i, err := range errs {
		id := fmt.Sprintf("Transaction:rec-%02d", i)
		if err != nil {
			require.ErrorIs(t, err, ledger.ErrExceedsCredits, "post %d", i)
			assert.False(t, f.stored(id), "refused %s has no transaction", id)
			assert.NotContains(t, js, "ledgertest.submit:"+id)
			continue
		}
		accepted++
		assert.True(t, f.stored(id), "accepted %s has its transaction", id)
		assert.Contains(t, js, "ledgertest.submit:"+id)
	}
	assert.Equal(t, 15, accepted)
	assert.Len(t, js, 15)
	assert.Equal(t, int64(0), f.account(alice).Available())
	f.verify()
}

// queued reports whether job id is still queued (leased or not): Retry
// finds it, making it due at once.
func (f *recFixture) queued(id string) bool {
	f.t.Helper()
	err := f.store.Read().Jobs().Retry(f.ctx, id, f.clock.Now(), "")
	if errors.Is(err, ports.ErrNotFound) {
		return false
	}
	require.NoError(f.t, err, "retry job %s", id)
	return true
}

// status is transaction id's stored status and settlement time.
func (f *recFixture) status(id string) (string, *time.Time, string) {
	f.t.Helper()
	got, err := f.store.Read().Transactions().Get(f.ctx, recPlatform, id)
	require.NoError(f.t, err, "get transaction %s", id)
	return got.Status, got.SettledAt, got.FailureReason
}

func testRecordsStatusAndJobs(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	id := "Transaction:rec-status"
	_, err := f.s.PostWith(f.ctx, holdFor(id, alice, 300), f.recs(id, 300))
	require.NoError(t, err)
	job := f.jobs()["ledgertest.submit:"+id]
	require.NotEmpty(t, job.ID)

	f.clock.Advance(time.Minute)
	now := f.clock.Now().UTC()
	_, err = f.s.PostWith(f.ctx, entry("settle:"+id, postHold("settle:"+id, "hold:"+id, 300)), ports.Records{
		StatusChanges: []ports.TransactionStatusChange{{PlatformID: recPlatform, TransactionID: id,
			From: []string{"PENDING", "PROCESSING"}, Status: "COMPLETED", UpdatedAt: now, SettledAt: &now}},
		CompletedJobs: []string{job.ID, "Job:not-queued"},
	})
	require.NoError(t, err, "a job id no longer queued is ignored")
	st, settled, _ := f.status(id)
	assert.Equal(t, "COMPLETED", st)
	require.NotNil(t, settled)
	assert.True(t, now.Truncate(time.Microsecond).Equal(*settled), "SettledAt %v, want %v", *settled, now)
	assert.False(t, f.queued(job.ID), "the completed job is gone")

	// A change whose From does not hold leaves the transaction as it is,
	// without failing the post.
	f.fund("fund-2", alice, 10)
	_, err = f.s.PostWith(f.ctx, entry("other", single("other", alice, bob, 10)), ports.Records{
		StatusChanges: []ports.TransactionStatusChange{{PlatformID: recPlatform, TransactionID: id,
			From: []string{"PENDING"}, Status: "FAILED", UpdatedAt: now, FailureReason: "ACCOUNT_INVALID"}},
	})
	require.NoError(t, err)
	st, _, reason := f.status(id)
	assert.Equal(t, "COMPLETED", st)
	assert.Empty(t, reason)
	f.verify()
}

func testRecordsRefusedStatus(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	id := "Transaction:rec-refused-status"
	_, err := f.s.PostWith(f.ctx, holdFor(id, alice, 300), f.recs(id, 300))
	require.NoError(t, err)
	job := f.jobs()["ledgertest.submit:"+id]
	now := f.clock.Now().UTC()
	// Posting more than the hold is refused: its records are not written.
	_, err = f.s.PostWith(f.ctx, entry("settle:"+id, postHold("settle:"+id, "hold:"+id, 301)), ports.Records{
		StatusChanges: []ports.TransactionStatusChange{{PlatformID: recPlatform, TransactionID: id,
			From: []string{"PENDING"}, Status: "COMPLETED", UpdatedAt: now, SettledAt: &now}},
		CompletedJobs: []string{job.ID},
	})
	require.Error(t, err)
	st, settled, _ := f.status(id)
	assert.Equal(t, "PENDING", st)
	assert.Nil(t, settled)
	assert.True(t, f.queued(job.ID), "the job stays queued")
}

func testRecordsWithoutEntry(f *recFixture) {
	t := f.t
	w, ok := f.s.(ports.RecordsWriter)
	if !ok {
		t.Skip("the store does not write records without an entry")
	}
	f.fund("fund", alice, 1_000)
	id := "Transaction:rec-alone"
	_, err := f.s.PostWith(f.ctx, holdFor(id, alice, 300), f.recs(id, 300))
	require.NoError(t, err)
	job := f.jobs()["ledgertest.submit:"+id]
	now := f.clock.Now().UTC()
	next := ports.Job{Kind: "ledgertest.check", Key: "ledgertest.check:" + id, Payload: []byte(`{}`), RunAt: now}
	before := f.journal(100)
	require.NoError(t, w.WriteRecords(f.ctx, ports.Records{
		StatusChanges: []ports.TransactionStatusChange{{PlatformID: recPlatform, TransactionID: id,
			From: []string{"PENDING"}, Status: "PROCESSING", UpdatedAt: now}},
		Jobs:          []ports.Job{next},
		CompletedJobs: []string{job.ID},
	}))
	st, _, _ := f.status(id)
	assert.Equal(t, "PROCESSING", st)
	assert.False(t, f.queued(job.ID), "the completed job is gone")
	assert.Contains(t, f.jobs(), "ledgertest.check:"+id)
	assert.Len(t, f.journal(100), len(before), "no entry is written")
	require.NoError(t, w.WriteRecords(f.ctx, ports.Records{}), "nothing to write")

	// A transaction id already stored fails the call and writes nothing.
	err = w.WriteRecords(f.ctx, ports.Records{Transactions: []ports.Transaction{f.txn(id, 1)},
		Jobs: []ports.Job{{Kind: "ledgertest.other", Key: "ledgertest.other:" + id, RunAt: now}}})
	require.ErrorIs(t, err, ports.ErrConflict)
	assert.NotContains(t, f.jobs(), "ledgertest.other:"+id)
}
