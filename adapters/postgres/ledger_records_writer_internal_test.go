package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Records that load nothing (a quote's creation, the job loop's status
// changes and job hand-offs) are written by the records writer: they
// commit while the entries' writer waits for the journal lock, and a
// Required change, which the load decides, still waits with the entries.
func TestRecordsThatLoadNothingDoNotWaitForTheJournal(t *testing.T) {
	f := newLostReplyFixture(t) // its writes lose no reply unless told to
	ctx := f.ctx
	pending := f.txn("Transaction:rw-pending")
	require.NoError(t, f.l.WriteRecords(ctx, ports.Records{Transactions: []ports.Transaction{pending}}))

	// Another session holds shard 0's journal lock: every batch of the
	// entries' writer waits at its load.
	holder, err := f.db.db.Conn(ctx)
	require.NoError(t, err)
	defer func() { _ = holder.Close() }()
	_, err = holder.ExecContext(ctx, "SELECT pg_advisory_lock(?)", journalLock)
	require.NoError(t, err)
	locked := true
	defer func() {
		if locked {
			_, _ = holder.ExecContext(context.Background(), "SELECT pg_advisory_unlock(?)", journalLock)
		}
	}()

	posted := make(chan error, 1)
	go func() {
		_, err := f.l.Post(ctx, ledger.Entry{ID: "rw:hold", Transfers: []ledger.Transfer{{ID: "rw:hold", Kind: ledger.Pending,
			DebitAccountID: "Acct:a", CreditAccountID: ledger.RailSettlementID("ACH", "USD"), Amount: 10, Currency: "USD"}}})
		posted <- err
	}()
	// The entry's batch waits at the journal lock before the Required
	// change is queued: in one batch with the entry, the change's load
	// would lock its transaction row first (the load locks rows, then the
	// journal), and the records writer's change of that row below would
	// wait for the holder.
	require.Eventually(t, func() bool {
		var waiting int
		err := f.db.db.NewRaw(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`).Scan(ctx, &waiting)
		return err == nil && waiting > 0
	}, 10*time.Second, 5*time.Millisecond, "the entry's batch waits for the journal lock")
	required := make(chan error, 1)
	go func() {
		required <- f.l.WriteRecords(ctx, ports.Records{StatusChanges: []ports.TransactionStatusChange{{PlatformID: "Platform:lost",
			TransactionID: "Transaction:rw-pending", From: []string{"PROCESSING"}, Status: "COMPLETED", UpdatedAt: time.Now().UTC(), Required: true}}})
	}()

	// Meanwhile the records writer creates a transaction, moves another
	// on and queues and completes jobs.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, f.l.WriteRecords(wctx, ports.Records{Transactions: []ports.Transaction{f.txn("Transaction:rw-new")},
		Jobs: []ports.Job{{ID: "Job:rw", Kind: "test.rw", RunAt: time.Now().UTC()}}}))
	require.NoError(t, f.l.WriteRecords(wctx, ports.Records{
		StatusChanges: []ports.TransactionStatusChange{{PlatformID: "Platform:lost", TransactionID: "Transaction:rw-pending",
			From: []string{"PENDING"}, Status: "PROCESSING", UpdatedAt: time.Now().UTC()}},
		CompletedJobs: []string{"Job:rw"}}))
	assert.True(t, f.stored("Transaction:rw-new"))
	got, err := f.db.Read().Transactions().Get(ctx, "Platform:lost", "Transaction:rw-pending")
	require.NoError(t, err)
	assert.Equal(t, "PROCESSING", got.Status)

	select {
	case err := <-posted:
		t.Fatalf("the entry did not wait for the journal lock: %v", err)
	case err := <-required:
		t.Fatalf("the Required change did not wait for the journal lock: %v", err)
	default:
	}
	_, err = holder.ExecContext(ctx, "SELECT pg_advisory_unlock(?)", journalLock)
	require.NoError(t, err)
	locked = false
	require.NoError(t, <-posted)
	require.NoError(t, <-required, "decided after the records writer's change: PROCESSING, so it holds")
	got, err = f.db.Read().Transactions().Get(ctx, "Platform:lost", "Transaction:rw-pending")
	require.NoError(t, err)
	assert.Equal(t, "COMPLETED", got.Status)
}
