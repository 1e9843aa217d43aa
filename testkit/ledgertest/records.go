package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
		{"StatusChangesWriteApprovalAndRefund", testRecordsStatusDetails},
		{"RefusedEntryChangesNoStatus", testRecordsRefusedStatus},
		{"RecordsWithoutEntry", testRecordsWithoutEntry},
		{"QuoteCreatedWithEntry", testRecordsQuoteCreate},
		{"RequiredQuoteChangeHolds", testRecordsQuoteRequiredHolds},
		{"RequiredQuoteChangeFailsTheCall", testRecordsQuoteRequiredFails},
		{"OptionalQuoteChangeIsSkipped", testRecordsQuoteOptional},
		{"ExistingEntryBeatsQuotePrecondition", testRecordsQuoteExisting},
		{"StoredQuoteFailsThePost", testRecordsQuoteConflict},
		{"ConcurrentQuoteCallsStandAlone", testRecordsQuoteConcurrent},
		{"QuoteRecordsWithoutEntry", testRecordsQuoteWithoutEntry},
		{"RequiredStatusChangeHolds", testRecordsTxnRequiredHolds},
		{"RequiredStatusChangeFailsTheCall", testRecordsTxnRequiredFails},
		{"ConcurrentSettleAndCancelOneWins", testRecordsTxnRequiredConcurrent},
		{"BalanceEvents", testBalanceEvents},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewFakeClock(Epoch)
			l, s := newStores(t, clock)
			require.NotNil(t, l, "newStores returned no ledger store")
			require.NotNil(t, s, "newStores returned no store")
			f := &recFixture{fixture: fixture{t: t, s: l, clock: clock, ctx: context.Background()}, store: s}
			f.chart()
			// The platform has a webhook endpoint: its events get
			// delivery jobs.
			now := clock.Now()
			require.NoError(t, s.InTx(f.ctx, func(tx ports.Tx) error {
				return tx.Platforms().Create(f.ctx, ports.Platform{ID: recPlatform, Name: "ledgertest", Currencies: []string{"USD"},
					WebhookEndpoint: "https://hooks.example/in", CreatedAt: now, UpdatedAt: now})
			}))
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

// recs are the records of transaction txID's hold: the transaction, its
// job and its money-linked event (which brings its delivery job).
func (f *recFixture) recs(txID string, amount int64) ports.Records {
	return ports.Records{Transactions: []ports.Transaction{f.txn(txID, amount)}, Jobs: []ports.Job{f.job(txID)},
		Events: []ports.Event{f.event(txID)}}
}

// eventID is the id of the event recs(txID) carries.
func eventID(txID string) string { return "Webhook:ledgertest-" + txID }

// event is the balance event of transaction txID's hold on alice.
func (f *recFixture) event(txID string) ports.Event {
	return ports.Event{ID: eventID(txID), PlatformID: recPlatform, Type: "INTERNAL_ACCOUNT.BALANCE_UPDATED",
		ResourceID: alice, Resource: []byte(`{"transaction":"` + txID + `"}`), CreatedAt: f.clock.Now().UTC()}
}

// recorded reports whether the event of transaction txID is stored, and
// requires its delivery job to be queued exactly when it is: the outbox
// holds an event if and only if it will be delivered.
func (f *recFixture) recorded(txID string) bool {
	f.t.Helper()
	_, err := f.store.Read().Events().Get(f.ctx, recPlatform, eventID(txID))
	if errors.Is(err, ports.ErrNotFound) {
		_, queued := f.delivery(eventID(txID))
		require.False(f.t, queued, "event of %s not recorded, but its delivery is queued", txID)
		return false
	}
	require.NoError(f.t, err, "get event of %s", txID)
	_, queued := f.delivery(eventID(txID))
	require.True(f.t, queued, "event of %s recorded without its delivery job", txID)
	return true
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
	// Webhook deliveries (of the transactions' events) are not the
	// records' jobs.
	js, err := f.store.Read().Jobs().Claim(f.ctx, f.clock.Now().Add(365*24*time.Hour), 10_000, time.Hour,
		ports.JobKinds{Except: []string{ports.EventDeliveryJob}})
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
	ev := f.event(want.ID)
	je, err := f.s.PostWith(f.ctx, holdFor(want.ID, alice, 300), ports.Records{
		Transactions: []ports.Transaction{want}, Jobs: []ports.Job{f.job(want.ID)}, Events: []ports.Event{ev}})
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

	// The event is in the outbox, pending, with its delivery job: written
	// with the money movement, in the same commit.
	gotEv, err := f.store.Read().Events().Get(f.ctx, recPlatform, ev.ID)
	require.NoError(t, err)
	assert.Equal(t, ev.Type, gotEv.Type)
	assert.Equal(t, ev.ResourceID, gotEv.ResourceID)
	assert.JSONEq(t, string(ev.Resource), string(gotEv.Resource))
	assert.True(t, ev.CreatedAt.Equal(gotEv.CreatedAt), "CreatedAt %v, want %v", gotEv.CreatedAt, ev.CreatedAt)
	assert.Equal(t, ports.EventPending, gotEv.Status)
	assert.Zero(t, gotEv.Attempts)
	delivery, ok := f.delivery(ev.ID)
	require.True(t, ok, "the event's delivery job is queued with it")
	platformID, _, err := ports.EventDeliveryRefs(delivery)
	require.NoError(t, err)
	assert.Equal(t, recPlatform, platformID)

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
	assert.False(t, f.recorded("Transaction:rec-big"), "a refused entry records no event")
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
	assert.True(t, f.recorded("Transaction:rec-1"))
	assert.False(t, f.recorded("Transaction:rec-other"), "an entry that already exists records no event")
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
		Jobs:         []ports.Job{f.job("Transaction:rec-new")}, Events: []ports.Event{f.event("Transaction:rec-new")}})
	require.ErrorIs(t, err, ports.ErrConflict)
	assert.False(t, f.stored("Transaction:rec-new"), "nothing of a failed post is written")
	assert.Empty(t, f.jobs())
	assert.False(t, f.recorded("Transaction:rec-new"), "a failed post records no event")
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
	assert.True(t, f.recorded("Transaction:rec-new"))
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
// accepted holds have their transaction, job and event (with its delivery).
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
			assert.False(t, f.recorded(id), "refused %s has no event", id)
			continue
		}
		accepted++
		assert.True(t, f.stored(id), "accepted %s has its transaction", id)
		assert.Contains(t, js, "ledgertest.submit:"+id)
		assert.True(t, f.recorded(id), "accepted %s has its event", id)
	}
	assert.Equal(t, 15, accepted)
	assert.Len(t, js, 15)
	_, total, err := f.store.Read().Events().List(f.ctx, ports.EventFilter{PlatformID: recPlatform, Type: "INTERNAL_ACCOUNT.BALANCE_UPDATED"}, ports.Page{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, 15, total, "exactly the accepted holds' events are recorded")
	assert.Equal(t, int64(0), f.account(alice).Available())
	// The list's counts follow transactions written many to a statement.
	for _, filter := range []ports.TransactionFilter{
		{PlatformID: recPlatform},
		{PlatformID: recPlatform, CustomerID: "Customer:ledgertest"},
		{PlatformID: recPlatform, CustomerID: "Customer:ledgertest", Status: "PENDING", Type: "OUTGOING"},
	} {
		f.requireCount(filter, 15)
	}
	// And status changes applied many to a statement: ten of them
	// complete, in one post.
	var changes []ports.TransactionStatusChange
	now := f.clock.Now().UTC()
	for i, err := range errs {
		if err == nil && len(changes) < 10 {
			changes = append(changes, ports.TransactionStatusChange{PlatformID: recPlatform,
				TransactionID: fmt.Sprintf("Transaction:rec-%02d", i), From: []string{"PENDING"}, Status: "COMPLETED", UpdatedAt: now})
		}
	}
	f.fund("fund-bulk", bob, 1)
	_, err = f.s.PostWith(f.ctx, entry("bulk-status", single("bulk-status", bob, alice, 1)), ports.Records{StatusChanges: changes})
	require.NoError(t, err)
	f.requireCount(ports.TransactionFilter{PlatformID: recPlatform, Status: "COMPLETED"}, 10)
	f.requireCount(ports.TransactionFilter{PlatformID: recPlatform, CustomerID: "Customer:ledgertest", Status: "PENDING"}, 5)
	f.requireCount(ports.TransactionFilter{PlatformID: recPlatform}, 15)
	f.verify()
}

// delivery is the queued delivery job that names event id: its own, or
// one of several events (ports.EventDeliveryRefs). The claim that finds it
// leases nothing (a zero lease), so every job stays claimable.
func (f *recFixture) delivery(id string) (ports.Job, bool) {
	f.t.Helper()
	js, err := f.store.Read().Jobs().Claim(f.ctx, f.clock.Now(), 1000, 0, ports.JobKinds{Only: []string{ports.EventDeliveryJob}})
	require.NoError(f.t, err)
	for _, j := range js {
		_, ids, err := ports.EventDeliveryRefs(j)
		require.NoError(f.t, err)
		if slices.Contains(ids, id) {
			return j, true
		}
	}
	return ports.Job{}, false
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

// held posts transaction id's hold of 300 from alice with its records
// (the transaction and its submit job) and returns the job.
func (f *recFixture) held(id string) ports.Job {
	f.t.Helper()
	_, err := f.s.PostWith(f.ctx, holdFor(id, alice, 300), f.recs(id, 300))
	require.NoError(f.t, err)
	job := f.jobs()["ledgertest.submit:"+id]
	require.NotEmpty(f.t, job.ID)
	return job
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
	job := f.held(id)

	f.clock.Advance(time.Minute)
	now := f.clock.Now().UTC()
	_, err := f.s.PostWith(f.ctx, entry("settle:"+id, postHold("settle:"+id, "hold:"+id, 300)), ports.Records{
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
	// The list's counts follow the status the change wrote (and the one
	// that did not hold moved nothing).
	f.requireCount(ports.TransactionFilter{PlatformID: recPlatform, Status: "COMPLETED"}, 1)
	f.requireCount(ports.TransactionFilter{PlatformID: recPlatform, CustomerID: "Customer:ledgertest", Status: "COMPLETED"}, 1)
	f.requireCount(ports.TransactionFilter{PlatformID: recPlatform, Status: "PENDING"}, 0)
	f.requireCount(ports.TransactionFilter{PlatformID: recPlatform, Status: "FAILED"}, 0)
	f.requireCount(ports.TransactionFilter{PlatformID: recPlatform}, 1)
	f.verify()
}

// A status change's approval and refund are written into the
// transaction's details with the status, each kept by the changes that do
// not carry it; the rest of the details stays.
func testRecordsStatusDetails(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	id := "Transaction:rec-details"
	f.held(id)
	before, err := f.store.Read().Transactions().Get(f.ctx, recPlatform, id)
	require.NoError(t, err)

	now := f.clock.Now().UTC().Truncate(time.Microsecond)
	approval := &ports.Approval{Deadline: now.Add(5 * time.Second), HoldIDs: []string{"hold:" + id},
		RequestedFields: []ports.CounterpartyField{{Name: "NATIONALITY", Mandatory: true}}}
	require.NoError(t, f.s.WriteRecords(f.ctx, ports.Records{StatusChanges: []ports.TransactionStatusChange{{
		PlatformID: recPlatform, TransactionID: id, From: []string{"PENDING"}, Status: "PROCESSING", UpdatedAt: now, Approval: approval}}}))
	got, err := f.store.Read().Transactions().Get(f.ctx, recPlatform, id)
	require.NoError(t, err)
	assert.Equal(t, "PROCESSING", got.Status)
	assert.Equal(t, approval, got.Details.Approval)
	got.Details.Approval = nil
	assert.Equal(t, before.Details, got.Details, "the rest of the details stays")

	refund := &ports.Refund{Reference: "R-1", InitiatedAt: now, SettledAt: &now, Status: "COMPLETED", Reason: "TIMEOUT"}
	_, err = f.s.PostWith(f.ctx, entry("void:"+id, voidHold("void:"+id, "hold:"+id)), ports.Records{
		StatusChanges: []ports.TransactionStatusChange{{PlatformID: recPlatform, TransactionID: id,
			From: []string{"PROCESSING"}, Status: "FAILED", UpdatedAt: now, FailureReason: "PAYMENT_APPROVAL_TIMED_OUT", Refund: refund}}})
	require.NoError(t, err)
	got, err = f.store.Read().Transactions().Get(f.ctx, recPlatform, id)
	require.NoError(t, err)
	assert.Equal(t, "FAILED", got.Status)
	assert.Equal(t, refund, got.Details.Refund)
	assert.Equal(t, approval, got.Details.Approval, "kept by a change without one")
	f.verify()
}

// requireCount checks the list's totalCount under filter.
func (f *recFixture) requireCount(filter ports.TransactionFilter, want int) {
	f.t.Helper()
	_, total, err := f.store.Read().Transactions().List(f.ctx, filter, ports.Page{Limit: 1})
	require.NoError(f.t, err)
	assert.Equal(f.t, want, total, "totalCount of %+v", filter)
}

func testRecordsRefusedStatus(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	id := "Transaction:rec-refused-status"
	job := f.held(id)
	now := f.clock.Now().UTC()
	// Posting more than the hold is refused: its records are not written.
	_, err := f.s.PostWith(f.ctx, entry("settle:"+id, postHold("settle:"+id, "hold:"+id, 301)), ports.Records{
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
	w := f.s
	f.fund("fund", alice, 1_000)
	id := "Transaction:rec-alone"
	job := f.held(id)
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
	err := w.WriteRecords(f.ctx, ports.Records{Transactions: []ports.Transaction{f.txn(id, 1)},
		Jobs:   []ports.Job{{Kind: "ledgertest.other", Key: "ledgertest.other:" + id, RunAt: now}},
		Events: []ports.Event{f.event("Transaction:rec-alone-other")}})
	require.ErrorIs(t, err, ports.ErrConflict)
	assert.NotContains(t, f.jobs(), "ledgertest.other:"+id)
	assert.False(t, f.recorded("Transaction:rec-alone-other"), "a failed write records no event")
}

// quote is a PENDING quote of transaction txID expiring in five minutes.
func (f *recFixture) quote(id, txID string) ports.Quote {
	now := f.clock.Now().UTC()
	return ports.Quote{
		ID: id, PlatformID: recPlatform, CustomerID: "Customer:ledgertest", Status: "PENDING", TransactionID: txID,
		SourceType: "ACCOUNT", SourceAccountID: alice, DestinationType: "ACCOUNT", DestinationAccountID: "ExternalAccount:ledgertest",
		PaymentRail: "ACH", SendingCurrency: "USD", ReceivingCurrency: "USD", LockedSide: "SENDING", LockedAmount: 300,
		TotalSendingAmount: 300, TotalReceivingAmount: 300, ExchangeRate: "1",
		SenderCustomerInfo: map[string]any{"FULL_NAME": "Ada"},
		ExpiresAt:          now.Add(5 * time.Minute), CreatedAt: now, UpdatedAt: now,
	}
}

// storeQuote creates q through the business store.
func (f *recFixture) storeQuote(q ports.Quote) {
	f.t.Helper()
	require.NoError(f.t, f.store.InTx(f.ctx, func(tx ports.Tx) error { return tx.Quotes().Create(f.ctx, q) }))
}

// storedQuote returns quote id, or false when it does not exist.
func (f *recFixture) storedQuote(id string) (ports.Quote, bool) {
	f.t.Helper()
	q, err := f.store.Read().Quotes().Get(f.ctx, recPlatform, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Quote{}, false
	}
	require.NoError(f.t, err, "get quote %s", id)
	return q, true
}

// execute is the required change a quote execution makes: PENDING to
// PROCESSING while not expired at the clock's time.
func (f *recFixture) execute(quoteID string) ports.QuoteStatusChange {
	now := f.clock.Now().UTC()
	return ports.QuoteStatusChange{PlatformID: recPlatform, QuoteID: quoteID, From: []string{"PENDING"},
		Status: "PROCESSING", UpdatedAt: now, ExecutedAt: &now, NotExpiredAt: &now, Required: true}
}

// executeRecs are the records of quote quoteID's execution into
// transaction txID: the quote change, the transaction and its job.
func (f *recFixture) executeRecs(quoteID, txID string, amount int64) ports.Records {
	recs := f.recs(txID, amount)
	recs.QuoteChanges = []ports.QuoteStatusChange{f.execute(quoteID)}
	return recs
}

// notRecorded asserts that nothing of hold entry txID's call is stored.
func (f *recFixture) notRecorded(txID string, jobs map[string]ports.Job) {
	f.t.Helper()
	_, err := f.s.Pending(f.ctx, "hold:"+txID)
	require.ErrorIs(f.t, err, ports.ErrNotFound, "the hold of %s is not recorded", txID)
	assert.False(f.t, f.stored(txID), "%s is not written", txID)
	assert.NotContains(f.t, jobs, "ledgertest.submit:"+txID, "the job of %s is not queued", txID)
}

func testRecordsQuoteCreate(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	q := f.quote("Quote:rec-1", "Transaction:rec-1")
	recs := f.recs("Transaction:rec-1", 300)
	recs.Quotes = []ports.Quote{q}
	_, err := f.s.PostWith(f.ctx, holdFor("Transaction:rec-1", alice, 300), recs)
	require.NoError(t, err)
	got, ok := f.storedQuote(q.ID)
	require.True(t, ok, "the quote is created with the entry")
	assert.Equal(t, "PENDING", got.Status)
	assert.Equal(t, q.TransactionID, got.TransactionID)
	assert.Equal(t, q.TotalSendingAmount, got.TotalSendingAmount)
	assert.Equal(t, q.ExchangeRate, got.ExchangeRate)
	assert.Equal(t, "Ada", got.SenderCustomerInfo["FULL_NAME"])
	assert.True(t, q.ExpiresAt.Truncate(time.Microsecond).Equal(got.ExpiresAt), "ExpiresAt %v, want %v", got.ExpiresAt, q.ExpiresAt)
	assert.Nil(t, got.ExecutedAt)
	assert.True(t, f.stored("Transaction:rec-1"))

	// A refused entry creates no quote.
	recs = f.recs("Transaction:rec-big", 5_000)
	recs.Quotes = []ports.Quote{f.quote("Quote:rec-big", "Transaction:rec-big")}
	_, err = f.s.PostWith(f.ctx, holdFor("Transaction:rec-big", alice, 5_000), recs)
	require.ErrorIs(t, err, ledger.ErrExceedsCredits)
	_, ok = f.storedQuote("Quote:rec-big")
	assert.False(t, ok, "a refused entry creates no quote")
	f.verify()
}

func testRecordsQuoteRequiredHolds(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	f.storeQuote(f.quote("Quote:rec-1", "Transaction:rec-1"))
	f.clock.Advance(time.Minute)
	now := f.clock.Now().UTC()
	_, err := f.s.PostWith(f.ctx, holdFor("Transaction:rec-1", alice, 300), f.executeRecs("Quote:rec-1", "Transaction:rec-1", 300))
	require.NoError(t, err)
	got, ok := f.storedQuote("Quote:rec-1")
	require.True(t, ok)
	assert.Equal(t, "PROCESSING", got.Status)
	require.NotNil(t, got.ExecutedAt, "ExecutedAt is written")
	assert.True(t, now.Truncate(time.Microsecond).Equal(*got.ExecutedAt), "ExecutedAt %v, want %v", *got.ExecutedAt, now)
	assert.True(t, now.Truncate(time.Microsecond).Equal(got.UpdatedAt), "UpdatedAt %v, want %v", got.UpdatedAt, now)
	assert.Equal(t, int64(700), f.account(alice).Available())
	assert.True(t, f.stored("Transaction:rec-1"))
	assert.Contains(t, f.jobs(), "ledgertest.submit:Transaction:rec-1")

	// A quote created in the same call may be moved by it (Quotes are
	// created first).
	recs := f.executeRecs("Quote:rec-2", "Transaction:rec-2", 100)
	recs.Quotes = []ports.Quote{f.quote("Quote:rec-2", "Transaction:rec-2")}
	_, err = f.s.PostWith(f.ctx, holdFor("Transaction:rec-2", alice, 100), recs)
	require.NoError(t, err)
	got, ok = f.storedQuote("Quote:rec-2")
	require.True(t, ok)
	assert.Equal(t, "PROCESSING", got.Status)
	f.verify()
}

func testRecordsQuoteRequiredFails(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	// A payout already held: its transaction must not move when a later
	// call that fails its precondition names it.
	_, err := f.s.PostWith(f.ctx, holdFor("Transaction:rec-held", alice, 100), f.recs("Transaction:rec-held", 100))
	require.NoError(t, err)
	heldJob := f.jobs()["ledgertest.submit:Transaction:rec-held"]
	require.NotEmpty(t, heldJob.ID)

	done := f.quote("Quote:rec-done", "Transaction:rec-done")
	done.Status = "COMPLETED"
	f.storeQuote(done)
	f.storeQuote(f.quote("Quote:rec-old", "Transaction:rec-old"))
	f.clock.Advance(5 * time.Minute) // Quote:rec-old expires now (expires_at must be after now)
	now := f.clock.Now().UTC()

	for _, tc := range []struct{ quoteID, txID, why string }{
		{"Quote:rec-done", "Transaction:rec-done", "wrong status"},
		{"Quote:rec-old", "Transaction:rec-old", "expired"},
		{"Quote:rec-missing", "Transaction:rec-missing", "no such quote"},
	} {
		recs := f.executeRecs(tc.quoteID, tc.txID, 300)
		recs.Quotes = []ports.Quote{f.quote(tc.quoteID+"-new", tc.txID)}
		recs.StatusChanges = []ports.TransactionStatusChange{{PlatformID: recPlatform, TransactionID: "Transaction:rec-held",
			From: []string{"PENDING"}, Status: "PROCESSING", UpdatedAt: now}}
		recs.CompletedJobs = []string{heldJob.ID}
		_, err := f.s.PostWith(f.ctx, holdFor(tc.txID, alice, 300), recs)
		require.ErrorIs(t, err, ports.ErrPrecondition, tc.why)
		f.notRecorded(tc.txID, nil)
		_, ok := f.storedQuote(tc.quoteID + "-new")
		assert.False(t, ok, "%s: no quote is created", tc.why)
		st, _, _ := f.status("Transaction:rec-held")
		assert.Equal(t, "PENDING", st, "%s: no transaction changes", tc.why)
		assert.True(t, f.queued(heldJob.ID), "%s: no job is completed", tc.why)
	}
	assert.Len(t, f.journal(100), 2, "only the funding and the first hold are recorded")
	assert.Equal(t, int64(900), f.account(alice).Available())
	got, _ := f.storedQuote("Quote:rec-done")
	assert.Equal(t, "COMPLETED", got.Status)
	got, _ = f.storedQuote("Quote:rec-old")
	assert.Equal(t, "PENDING", got.Status)
	assert.Nil(t, got.ExecutedAt)
	js := f.jobs()
	for _, id := range []string{"Transaction:rec-done", "Transaction:rec-old", "Transaction:rec-missing"} {
		assert.NotContains(t, js, "ledgertest.submit:"+id)
	}
	f.verify()
}

func testRecordsQuoteOptional(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	done := f.quote("Quote:rec-done", "Transaction:rec-1")
	done.Status = "COMPLETED"
	f.storeQuote(done)
	f.storeQuote(f.quote("Quote:rec-open", "Transaction:rec-1"))
	now := f.clock.Now().UTC()
	recs := f.recs("Transaction:rec-1", 300)
	recs.QuoteChanges = []ports.QuoteStatusChange{
		{PlatformID: recPlatform, QuoteID: "Quote:rec-done", From: []string{"PENDING", "PROCESSING"}, Status: "FAILED", UpdatedAt: now},
		{PlatformID: recPlatform, QuoteID: "Quote:rec-missing", From: []string{"PENDING"}, Status: "FAILED", UpdatedAt: now},
		{PlatformID: recPlatform, QuoteID: "Quote:rec-open", From: []string{"PENDING", "PROCESSING"}, Status: "FAILED", UpdatedAt: now},
	}
	_, err := f.s.PostWith(f.ctx, holdFor("Transaction:rec-1", alice, 300), recs)
	require.NoError(t, err, "a change that is not required never fails the post")
	got, _ := f.storedQuote("Quote:rec-done")
	assert.Equal(t, "COMPLETED", got.Status, "a change whose From does not hold is skipped")
	got, _ = f.storedQuote("Quote:rec-open")
	assert.Equal(t, "FAILED", got.Status, "a change that holds is written")
	assert.Nil(t, got.ExecutedAt, "ExecutedAt is written only when set")
	_, ok := f.storedQuote("Quote:rec-missing")
	assert.False(t, ok)
	assert.True(t, f.stored("Transaction:rec-1"))
	f.verify()
}

func testRecordsQuoteExisting(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	f.storeQuote(f.quote("Quote:rec-1", "Transaction:rec-1"))
	e := holdFor("Transaction:rec-1", alice, 300)
	first, err := f.s.PostWith(f.ctx, e, f.executeRecs("Quote:rec-1", "Transaction:rec-1", 300))
	require.NoError(t, err)
	// The same call again (a retry after a lost answer): the quote moved
	// on, but the caller learns that its entry is recorded.
	again, err := f.s.PostWith(f.ctx, e, f.executeRecs("Quote:rec-1", "Transaction:rec-1", 300))
	require.ErrorIs(t, err, ledger.ErrExists)
	assert.Equal(t, first.Seq, again.Seq)
	got, _ := f.storedQuote("Quote:rec-1")
	assert.Equal(t, "PROCESSING", got.Status)
	f.verify()
}

func testRecordsQuoteConflict(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 1_000)
	taken := f.quote("Quote:rec-taken", "Transaction:rec-taken")
	taken.TotalSendingAmount = 50
	f.storeQuote(taken)
	recs := f.recs("Transaction:rec-new", 300)
	recs.Quotes = []ports.Quote{f.quote(taken.ID, "Transaction:rec-new")}
	_, err := f.s.PostWith(f.ctx, holdFor("Transaction:rec-new", alice, 300), recs)
	require.ErrorIs(t, err, ports.ErrConflict)
	f.notRecorded("Transaction:rec-new", f.jobs())
	got, _ := f.storedQuote(taken.ID)
	assert.Equal(t, int64(50), got.TotalSendingAmount, "the stored quote is untouched")
	assert.Equal(t, "Transaction:rec-taken", got.TransactionID)
	f.verify()
}

// testRecordsQuoteConcurrent races calls that group-committing stores put
// into shared batches: executions of open quotes, of a completed and an
// expired one, of one quote by two callers, and a quote created twice.
// Each call stands or falls alone.
func testRecordsQuoteConcurrent(f *recFixture) {
	t := f.t
	f.fund("fund", alice, 10_000)
	const open = 12
	for i := range open {
		f.storeQuote(f.quote(fmt.Sprintf("Quote:rec-%02d", i), fmt.Sprintf("Transaction:rec-%02d", i)))
	}
	done := f.quote("Quote:rec-done", "Transaction:rec-done")
	done.Status = "COMPLETED"
	f.storeQuote(done)
	old := f.quote("Quote:rec-old", "Transaction:rec-old")
	old.ExpiresAt = f.clock.Now().UTC()
	f.storeQuote(old)
	f.storeQuote(f.quote("Quote:rec-twice", ""))
	f.storeQuote(f.quote("Quote:rec-taken", ""))

	type call struct {
		txID string
		recs ports.Records
		ok   bool
	}
	var calls []call
	for i := range open {
		txID := fmt.Sprintf("Transaction:rec-%02d", i)
		calls = append(calls, call{txID, f.executeRecs(fmt.Sprintf("Quote:rec-%02d", i), txID, 100), true})
	}
	calls = append(calls,
		call{"Transaction:rec-done", f.executeRecs("Quote:rec-done", "Transaction:rec-done", 100), false},
		call{"Transaction:rec-old", f.executeRecs("Quote:rec-old", "Transaction:rec-old", 100), false},
		call{"Transaction:rec-twice-a", f.executeRecs("Quote:rec-twice", "Transaction:rec-twice-a", 100), false},
		call{"Transaction:rec-twice-b", f.executeRecs("Quote:rec-twice", "Transaction:rec-twice-b", 100), false})
	dup := f.recs("Transaction:rec-dup", 100)
	dup.Quotes = []ports.Quote{f.quote("Quote:rec-taken", "Transaction:rec-dup")}
	calls = append(calls, call{"Transaction:rec-dup", dup, false})
	fresh := f.recs("Transaction:rec-fresh", 100)
	fresh.Quotes = []ports.Quote{f.quote("Quote:rec-fresh", "Transaction:rec-fresh")}
	calls = append(calls, call{"Transaction:rec-fresh", fresh, true})

	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.s.PostWith(f.ctx, holdFor(c.txID, alice, 100), c.recs)
		}()
	}
	wg.Wait()
	js := f.jobs()
	twiceWon := 0
	for i, c := range calls {
		switch {
		case c.txID == "Transaction:rec-twice-a" || c.txID == "Transaction:rec-twice-b":
			if errs[i] == nil {
				twiceWon++
				assert.True(t, f.stored(c.txID))
				continue
			}
			require.ErrorIs(t, errs[i], ports.ErrPrecondition, c.txID)
			f.notRecorded(c.txID, js)
		case c.ok:
			require.NoError(t, errs[i], c.txID)
			assert.True(t, f.stored(c.txID), c.txID)
			assert.Contains(t, js, "ledgertest.submit:"+c.txID)
		case c.txID == "Transaction:rec-dup":
			require.ErrorIs(t, errs[i], ports.ErrConflict, c.txID)
			f.notRecorded(c.txID, js)
		default:
			require.ErrorIs(t, errs[i], ports.ErrPrecondition, c.txID)
			f.notRecorded(c.txID, js)
		}
	}
	assert.Equal(t, 1, twiceWon, "exactly one of two executions of one quote wins")
	for i := range open {
		got, _ := f.storedQuote(fmt.Sprintf("Quote:rec-%02d", i))
		assert.Equal(t, "PROCESSING", got.Status)
	}
	got, _ := f.storedQuote("Quote:rec-twice")
	assert.Equal(t, "PROCESSING", got.Status)
	got, _ = f.storedQuote("Quote:rec-taken")
	assert.Empty(t, got.TransactionID, "the stored quote is untouched")
	_, ok := f.storedQuote("Quote:rec-fresh")
	assert.True(t, ok)
	assert.Len(t, js, open+2, "the open executions, the winner of the race and the fresh quote queue their jobs")
	assert.Equal(t, int64(10_000-100*(open+2)), f.account(alice).Available())
	f.verify()
}

func testRecordsQuoteWithoutEntry(f *recFixture) {
	t := f.t
	w := f.s
	done := f.quote("Quote:rec-done", "")
	done.Status = "COMPLETED"
	f.storeQuote(done)
	f.storeQuote(f.quote("Quote:rec-1", ""))
	now := f.clock.Now().UTC()
	next := ports.Job{Kind: "ledgertest.check", Key: "ledgertest.check:q", Payload: []byte(`{}`), RunAt: now}

	err := w.WriteRecords(f.ctx, ports.Records{QuoteChanges: []ports.QuoteStatusChange{f.execute("Quote:rec-done")},
		Jobs: []ports.Job{next}, Quotes: []ports.Quote{f.quote("Quote:rec-new", "")}})
	require.ErrorIs(t, err, ports.ErrPrecondition)
	assert.Empty(t, f.jobs(), "nothing of the call is written")
	_, ok := f.storedQuote("Quote:rec-new")
	assert.False(t, ok)

	expire := ports.QuoteStatusChange{PlatformID: recPlatform, QuoteID: "Quote:rec-1", From: []string{"PENDING"},
		Status: "EXPIRED", UpdatedAt: now, Required: true}
	require.NoError(t, w.WriteRecords(f.ctx, ports.Records{QuoteChanges: []ports.QuoteStatusChange{expire}, Jobs: []ports.Job{next}}))
	got, _ := f.storedQuote("Quote:rec-1")
	assert.Equal(t, "EXPIRED", got.Status)
	assert.Contains(t, f.jobs(), next.Key)
	assert.Empty(t, f.journal(100), "no entry is written")
}
