package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	alice = "InternalAccount:alice"
	bob   = "InternalAccount:bob"
	carol = "InternalAccount:carol"
)

var fundUSD = ledger.SandboxFundingID("USD")

// newLedger gives the test a Ledger on its own scratch database.
func newLedger(t *testing.T, opts postgres.LedgerOptions) (*postgres.Ledger, *bun.DB, *testkit.FakeClock) {
	t.Helper()
	db := pgtest.NewDB(t)
	clock := testkit.NewFakeClock(t0)
	l := postgres.NewLedger(db, clock, opts)
	t.Cleanup(l.Close)
	return l, db, clock
}

func protected(id, cur string) ledger.Account {
	return ledger.Account{ID: id, Currency: cur, Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits, PlatformID: "Platform:p1"}
}

// chart creates the USD funding source and alice, bob and carol (protected).
func chart(t *testing.T, l ports.LedgerStore) {
	t.Helper()
	require.NoError(t, l.CreateAccounts(context.Background(),
		ledger.Account{ID: fundUSD, Currency: "USD", Kind: ledger.KindSandboxFunding},
		protected(alice, "USD"), protected(bob, "USD"), protected(carol, "USD")))
}

func single(id, dr, cr string, amount int64) ledger.Transfer {
	return ledger.Transfer{ID: id, DebitAccountID: dr, CreditAccountID: cr, Amount: amount, Currency: "USD", Kind: ledger.Single}
}

func entry(id string, ts ...ledger.Transfer) ledger.Entry {
	return ledger.Entry{ID: id, Ref: "Test:" + id, Transfers: ts}
}

func fund(t *testing.T, l ports.LedgerStore, id, acct string, amount int64) ledger.JournalEntry {
	t.Helper()
	je, err := l.Post(context.Background(), entry(id, single(id+":0", fundUSD, acct, amount)))
	require.NoError(t, err)
	return je
}

func account(t *testing.T, l ports.LedgerStore, id string) ledger.Account {
	t.Helper()
	a, err := l.Account(context.Background(), id)
	require.NoError(t, err)
	return a
}

// verify checks the whole ledger with ledger.Verify and that every account's
// last posting carries its current counters.
func verify(t *testing.T, l ports.LedgerStore, db *bun.DB) {
	t.Helper()
	ctx := context.Background()
	accts, pend, err := l.Snapshot(ctx)
	require.NoError(t, err)
	var journal []ledger.JournalEntry
	var after int64
	for {
		page, err := l.Journal(ctx, after, 500)
		require.NoError(t, err)
		if len(page) == 0 {
			break
		}
		journal = append(journal, page...)
		after = page[len(page)-1].Seq
	}
	require.Empty(t, ledger.Verify(accts, pend, journal))
	if db == nil {
		return
	}
	var mismatched []string
	require.NoError(t, db.NewRaw(`SELECT a.id FROM ledger_accounts a
		JOIN LATERAL (SELECT * FROM ledger_postings p WHERE p.account_id = a.id ORDER BY p.id DESC LIMIT 1) p ON true
		WHERE (a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted)
			<> (p.debits_pending, p.debits_posted, p.credits_pending, p.credits_posted)`).Scan(ctx, &mismatched))
	require.Empty(t, mismatched, "accounts whose last posting disagrees with their counters")
	var unposted []string
	require.NoError(t, db.NewRaw(`SELECT a.id FROM ledger_accounts a
		WHERE (a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted) <> (0, 0, 0, 0)
		AND NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.account_id = a.id)`).Scan(ctx, &unposted))
	require.Empty(t, unposted, "accounts with counters but no postings")
}

func TestLedgerPostAndRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, db, clock := newLedger(t, postgres.LedgerOptions{})
	chart(t, l)

	je := fund(t, l, "fund-alice", alice, 10_000)
	assert.Equal(t, t0, je.PostedAt)
	assert.Positive(t, je.Seq)
	assert.Equal(t, "Test:fund-alice", je.Ref)

	clock.Advance(time.Second)
	je2, err := l.Post(ctx, ledger.Entry{
		ID: "pay-1", Ref: "Transaction:1",
		Transfers: []ledger.Transfer{single("pay-1:0", alice, bob, 2_500)},
	})
	require.NoError(t, err)
	assert.Greater(t, je2.Seq, je.Seq)
	assert.Equal(t, t0.Add(time.Second), je2.PostedAt)

	a := account(t, l, alice)
	assert.Equal(t, int64(10_000), a.CreditsPosted)
	assert.Equal(t, int64(2_500), a.DebitsPosted)
	assert.Equal(t, int64(7_500), a.Available())
	assert.Equal(t, ledger.DebitsMustNotExceedCredits, a.Flags)
	assert.Equal(t, "Platform:p1", a.PlatformID)
	assert.Equal(t, int64(2_500), account(t, l, bob).Net())
	assert.Equal(t, int64(-10_000), account(t, l, fundUSD).Net())

	_, err = l.Account(ctx, "InternalAccount:nobody")
	require.ErrorIs(t, err, ports.ErrNotFound)
	accts, err := l.Accounts(ctx, bob, "InternalAccount:nobody", alice)
	require.NoError(t, err)
	require.Len(t, accts, 2)
	assert.Equal(t, bob, accts[0].ID)
	assert.Equal(t, alice, accts[1].ID)

	journal, err := l.Journal(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, journal, 2)
	assert.Equal(t, je.Seq, journal[0].Seq)
	assert.Equal(t, je2, journal[1], "the journal returns the entry as Post did")
	later, err := l.Journal(ctx, je.Seq, 10)
	require.NoError(t, err)
	require.Len(t, later, 1)
	assert.Equal(t, "pay-1", later[0].ID)

	// The postings give alice's balance after each posting.
	var available []int64
	require.NoError(t, db.NewRaw(`SELECT credits_posted - debits_posted - debits_pending FROM ledger_postings
		WHERE account_id = ? ORDER BY id`, alice).Scan(ctx, &available))
	assert.Equal(t, []int64{10_000, 7_500}, available)
	// Events live in the one events outbox: the ledger's own outbox table
	// is gone (0024_drop_ledger_outbox.sql).
	var outbox *string
	require.NoError(t, db.NewRaw(`SELECT to_regclass('outbox')::text`).Scan(ctx, &outbox))
	assert.Nil(t, outbox, "the ledger outbox table is dropped")
	verify(t, l, db)
}

func TestLedgerTwoPhase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, db, clock := newLedger(t, postgres.LedgerOptions{})
	chart(t, l)
	fund(t, l, "fund-alice", alice, 1_000)

	hold := func(id string, amount int64, timeout time.Duration) ledger.Entry {
		return entry(id, ledger.Transfer{ID: id, DebitAccountID: alice, CreditAccountID: bob, Amount: amount,
			Currency: "USD", Kind: ledger.Pending, Timeout: timeout, Code: "transfer_out"})
	}
	_, err := l.Post(ctx, hold("hold-1", 600, time.Minute))
	require.NoError(t, err)
	a := account(t, l, alice)
	assert.Equal(t, int64(600), a.DebitsPending)
	assert.Equal(t, int64(400), a.Available())

	// The hold reserves funds: 500 more does not fit.
	_, err = l.Post(ctx, hold("hold-2", 500, time.Minute))
	require.ErrorIs(t, err, ledger.ErrExceedsCredits)

	p, err := l.Pending(ctx, "hold-1")
	require.NoError(t, err)
	assert.Equal(t, ledger.PendingOpen, p.Status)
	assert.Equal(t, t0.Add(time.Minute), p.ExpiresAt)
	assert.Equal(t, "hold-1", p.EntryID)
	assert.Equal(t, time.Minute, p.Timeout)
	assert.Equal(t, "transfer_out", p.Code)

	// Post part of it: the rest is released.
	je, err := l.Post(ctx, entry("post-1", ledger.Transfer{ID: "post-1", Kind: ledger.PostPending, PendingID: "hold-1", Amount: 450}))
	require.NoError(t, err)
	assert.Equal(t, alice, je.Transfers[0].DebitAccountID, "the recorded post carries the hold's accounts")
	assert.Equal(t, int64(450), je.Transfers[0].Amount)
	p, err = l.Pending(ctx, "hold-1")
	require.NoError(t, err)
	assert.Equal(t, ledger.PendingPosted, p.Status)
	assert.Equal(t, int64(450), p.PostedAmount)
	a = account(t, l, alice)
	assert.Equal(t, int64(0), a.DebitsPending)
	assert.Equal(t, int64(550), a.Available())
	_, err = l.Post(ctx, entry("void-1", ledger.Transfer{ID: "void-1", Kind: ledger.VoidPending, PendingID: "hold-1"}))
	require.ErrorIs(t, err, &ledger.Error{Code: ledger.CodePendingAlreadyPosted})

	// A hold opened and voided in the same batch… and one that expires.
	_, err = l.Post(ctx, hold("hold-3", 100, 0))
	require.NoError(t, err)
	_, err = l.Post(ctx, entry("void-3", ledger.Transfer{ID: "void-3", Kind: ledger.VoidPending, PendingID: "hold-3"}))
	require.NoError(t, err)
	_, err = l.Post(ctx, hold("hold-4", 200, 30*time.Second))
	require.NoError(t, err)

	n, err := l.ExpireDue(ctx, clock.Now(), 10)
	require.NoError(t, err)
	assert.Equal(t, 0, n, "nothing is due yet")
	clock.Advance(30 * time.Second)
	n, err = l.ExpireDue(ctx, clock.Now(), 10)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	p, err = l.Pending(ctx, "hold-4")
	require.NoError(t, err)
	assert.Equal(t, ledger.PendingExpired, p.Status)
	n, err = l.ExpireDue(ctx, clock.Now(), 10)
	require.NoError(t, err)
	assert.Equal(t, 0, n, "an expired hold expires once")
	assert.Equal(t, int64(0), account(t, l, alice).DebitsPending)

	_, err = l.Pending(ctx, "nope")
	require.ErrorIs(t, err, ports.ErrNotFound)

	var resolvedBy string
	require.NoError(t, db.NewRaw(`SELECT resolved_by FROM ledger_pending WHERE id = 'hold-4'`).Scan(ctx, &resolvedBy))
	assert.Equal(t, "expiry:hold-4", resolvedBy)
	verify(t, l, db)
}

// Mirrors pgledger's TestMultipleTransfersRollsBackIfOneIsBad: an entry is
// all or nothing.
func TestLedgerMultipleTransfersRollsBackIfOneIsBad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, db, _ := newLedger(t, postgres.LedgerOptions{})
	chart(t, l)
	fund(t, l, "fund-alice", alice, 100)

	_, err := l.Post(ctx, entry("multi",
		single("multi:0", alice, bob, 60),
		single("multi:1", alice, carol, 60), // 120 > 100
	))
	require.ErrorIs(t, err, ledger.ErrExceedsCredits)
	var le *ledger.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "multi:1", le.TransferID)
	assert.Equal(t, alice, le.AccountID)

	assert.Equal(t, int64(100), account(t, l, alice).Available())
	assert.Equal(t, int64(0), account(t, l, bob).CreditsPosted)
	journal, err := l.Journal(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, journal, 1, "the refused entry left no journal row")
	var transfers int
	require.NoError(t, db.NewRaw(`SELECT count(*) FROM ledger_transfers WHERE entry_id = 'multi'`).Scan(ctx, &transfers))
	assert.Zero(t, transfers)

	_, err = l.Post(ctx, entry("multi-2", single("multi-2:0", alice, bob, 60), single("multi-2:1", alice, carol, 40)))
	require.NoError(t, err)
	assert.Equal(t, int64(0), account(t, l, alice).Available())
	verify(t, l, db)
}

func TestLedgerIdempotentAcrossBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, db, clock := newLedger(t, postgres.LedgerOptions{})
	chart(t, l)
	first := fund(t, l, "fund-alice", alice, 100)

	clock.Advance(time.Minute)
	again, err := l.Post(ctx, entry("fund-alice", single("fund-alice:0", fundUSD, alice, 100)))
	require.ErrorIs(t, err, ledger.ErrExists)
	assert.Equal(t, first, again, "a re-post returns the stored entry")

	_, err = l.Post(ctx, entry("fund-alice", single("fund-alice:0", fundUSD, alice, 999)))
	require.ErrorIs(t, err, ledger.ErrExistsDifferent)
	assert.Equal(t, int64(100), account(t, l, alice).CreditsPosted, "money moved once")
	verify(t, l, db)
}

func TestLedgerIdempotentWithinBatch(t *testing.T) {
	t.Parallel()
	// MinBatch 2 with a long MaxDelay: the two posts share one transaction.
	l, db, _ := batchedLedger(t, 2)

	e := entry("dup", single("dup:0", alice, bob, 10))
	res := postConcurrently(l, e, e)
	var ok, exists int
	for _, r := range res {
		switch {
		case r.err == nil:
			ok++
		case errors.Is(r.err, ledger.ErrExists):
			exists++
		default:
			t.Fatalf("unexpected error: %v", r.err)
		}
	}
	assert.Equal(t, 1, ok)
	assert.Equal(t, 1, exists)
	assert.Equal(t, res[0].je, res[1].je, "the second post gets the first one's entry, Seq included")
	assert.Positive(t, res[0].je.Seq)
	assert.Equal(t, int64(10), account(t, l, alice).DebitsPosted)
	verify(t, l, db)
}

// batchedLedger is a Ledger whose batches wait (up to a minute) until they
// hold minBatch entries, on a chart where alice and bob hold 1,000 each.
func batchedLedger(t *testing.T, minBatch int) (*postgres.Ledger, *bun.DB, *testkit.FakeClock) {
	t.Helper()
	setup, db, clock := newLedger(t, postgres.LedgerOptions{})
	chart(t, setup)
	fund(t, setup, "fund-alice", alice, 1_000)
	fund(t, setup, "fund-bob", bob, 1_000)
	setup.Close()
	l := postgres.NewLedger(db, clock, postgres.LedgerOptions{MinBatch: minBatch, MaxDelay: time.Minute})
	t.Cleanup(l.Close)
	return l, db, clock
}

type postRes struct {
	je  ledger.JournalEntry
	err error
}

// postConcurrently posts each entry from its own goroutine.
func postConcurrently(l ports.LedgerStore, es ...ledger.Entry) []postRes {
	out := make([]postRes, len(es))
	var wg sync.WaitGroup
	for i, e := range es {
		wg.Go(func() {
			je, err := l.Post(context.Background(), e)
			out[i] = postRes{je, err}
		})
	}
	wg.Wait()
	return out
}

func TestLedgerRefusedEntryDoesNotFailNeighbours(t *testing.T) {
	t.Parallel()
	l, db, _ := batchedLedger(t, 4)
	res := postConcurrently(l,
		entry("ok-1", single("ok-1:0", alice, carol, 300)),
		entry("too-much", single("too-much:0", bob, carol, 5_000)),
		entry("ghost", single("ghost:0", alice, "InternalAccount:ghost", 1)),
		entry("ok-2", single("ok-2:0", bob, carol, 700)),
	)
	require.NoError(t, res[0].err)
	require.ErrorIs(t, res[1].err, ledger.ErrExceedsCredits)
	require.Equal(t, ledger.CodeAccountNotFound, ledger.CodeOf(res[2].err))
	require.NoError(t, res[3].err)
	assert.Equal(t, res[0].je.PostedAt, res[3].je.PostedAt)
	assert.Equal(t, int64(1_000), account(t, l, carol).CreditsPosted)
	assert.Equal(t, int64(300), account(t, l, bob).Available())
	verify(t, l, db)
}

// Two entries the Book accepts but the database refuses together (they reuse
// one transfer id): the batch falls back to one-by-one, the first to commit
// wins and the other fails alone, without failing anything else.
func TestLedgerPoisonedEntryFailsAlone(t *testing.T) {
	t.Parallel()
	l, db, _ := batchedLedger(t, 3)
	res := postConcurrently(l,
		entry("a", single("shared-transfer-id", alice, carol, 10)),
		entry("b", single("shared-transfer-id", bob, carol, 20)),
		entry("c", single("c:0", bob, alice, 30)),
	)
	require.NoError(t, res[2].err)
	okA, okB := res[0].err == nil, res[1].err == nil
	require.True(t, okA != okB, "exactly one of the two clashing entries commits: %v / %v", res[0].err, res[1].err)
	failed := res[0].err
	if okA {
		failed = res[1].err
	}
	require.ErrorIs(t, failed, ledger.ErrTransferIDExists)
	want := int64(30)
	if okA {
		want += 10
	} else {
		want += 20
	}
	assert.Equal(t, want, account(t, l, carol).CreditsPosted+account(t, l, alice).CreditsPosted-1_000)
	verify(t, l, db)
}

func TestLedgerReversal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, db, _ := newLedger(t, postgres.LedgerOptions{})
	chart(t, l)
	fund(t, l, "fund-alice", alice, 500)
	pay, err := l.Post(ctx, entry("pay", single("pay:0", alice, bob, 200)))
	require.NoError(t, err)

	rev, err := ledger.Reversal(pay.Entry, "pay-rev", "Correction:1")
	require.NoError(t, err)
	je, err := l.Post(ctx, rev)
	require.NoError(t, err)
	assert.Equal(t, "pay", je.Reverses)
	assert.Equal(t, int64(500), account(t, l, alice).Available())

	rev2, err := ledger.Reversal(pay.Entry, "pay-rev-2", "Correction:2")
	require.NoError(t, err)
	_, err = l.Post(ctx, rev2)
	require.Equal(t, ledger.CodeAlreadyReversed, ledger.CodeOf(err))
	_, err = l.Post(ctx, ledger.Entry{ID: "rev-ghost", Reverses: "ghost", Transfers: rev.Transfers})
	require.Equal(t, ledger.CodeReversalNotAllowed, ledger.CodeOf(err))
	verify(t, l, db)
}

func TestLedgerCreateAccounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, _, _ := newLedger(t, postgres.LedgerOptions{})
	chart(t, l)
	// The same account again is a no-op, even after it moved money.
	fund(t, l, "fund-alice", alice, 5)
	require.NoError(t, l.CreateAccounts(ctx, protected(alice, "USD")))
	assert.Equal(t, int64(5), account(t, l, alice).CreditsPosted)

	err := l.CreateAccounts(ctx, protected("InternalAccount:new", "USD"), protected(alice, "EUR"))
	require.ErrorIs(t, err, ledger.ErrExistsDifferent)
	_, err = l.Account(ctx, "InternalAccount:new")
	require.ErrorIs(t, err, ports.ErrNotFound, "a refused call creates nothing")

	unflagged := protected(bob, "USD")
	unflagged.Flags = 0
	require.ErrorIs(t, l.CreateAccounts(ctx, unflagged), ledger.ErrExistsDifferent)
	require.Error(t, l.CreateAccounts(ctx, ledger.Account{Currency: "USD"}))

	created := account(t, l, carol)
	assert.Equal(t, t0, created.CreatedAt)
	assert.Equal(t, ledger.KindInternal, created.Kind)
}

// The CHECK constraints refuse what the Book would never write.
func TestLedgerCheckConstraints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, db, _ := newLedger(t, postgres.LedgerOptions{})
	chart(t, l)
	fund(t, l, "fund-alice", alice, 100)
	require.NoError(t, l.CreateAccounts(ctx, ledger.Account{ID: "sys:limit", Currency: "USD", Kind: "test",
		Flags: ledger.CreditsMustNotExceedDebits}))

	for _, tc := range []struct {
		name, sql, constraint string
	}{
		{"protected account overdrawn", `UPDATE ledger_accounts SET debits_posted = 101 WHERE id = '` + alice + `'`, "ledger_accounts_debits_within_credits"},
		{"hold beyond credits", `UPDATE ledger_accounts SET debits_pending = 1 WHERE id = '` + bob + `'`, "ledger_accounts_debits_within_credits"},
		{"debit-normal account over-credited", `UPDATE ledger_accounts SET credits_posted = 1 WHERE id = 'sys:limit'`, "ledger_accounts_credits_within_debits"},
		{"negative counter", `UPDATE ledger_accounts SET credits_pending = -1 WHERE id = '` + fundUSD + `'`, "ledger_accounts_counters_nonnegative"},
		{"zero-amount transfer", `INSERT INTO ledger_transfers (entry_id, idx, id, kind, debit_account_id, credit_account_id, amount, currency)
			VALUES ('x', 0, 'x:0', 'single', 'a', 'b', 0, 'USD')`, "ledger_transfers_amount_positive"},
		{"transfer to itself", `INSERT INTO ledger_transfers (entry_id, idx, id, kind, debit_account_id, credit_account_id, amount, currency)
			VALUES ('x', 0, 'x:0', 'single', 'a', 'a', 5, 'USD')`, "ledger_transfers_distinct_accounts"},
		{"unknown transfer kind", `INSERT INTO ledger_transfers (entry_id, idx, id, kind, debit_account_id, credit_account_id, amount, currency)
			VALUES ('x', 0, 'x:0', 'teleport', 'a', 'b', 5, 'USD')`, "ledger_transfers_kind_valid"},
		{"post beyond the hold", `INSERT INTO ledger_pending (id, entry_id, debit_account_id, credit_account_id, amount, currency, status, posted_amount, resolved_by, created_at)
			VALUES ('h', 'x', 'a', 'b', 5, 'USD', 'posted', 6, 'y', now())`, "ledger_pending_posted_amount_valid"},
		{"resolved hold without resolver", `INSERT INTO ledger_pending (id, entry_id, debit_account_id, credit_account_id, amount, currency, status, created_at)
			VALUES ('h', 'x', 'a', 'b', 5, 'USD', 'voided', now())`, "ledger_pending_resolution"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := db.ExecContext(ctx, tc.sql)
			require.Error(t, err)
			var pgErr pgdriver.Error
			require.ErrorAs(t, err, &pgErr)
			assert.Equal(t, "23514", pgErr.Field('C'), "check_violation")
			assert.Equal(t, tc.constraint, pgErr.Field('n'))
		})
	}
	_, err := db.ExecContext(ctx, `INSERT INTO ledger_entries (id, reverses, posted_at) VALUES ('r1', 'e', now()), ('r2', 'e', now())`)
	var pgErr pgdriver.Error
	require.ErrorAs(t, err, &pgErr)
	assert.Equal(t, "ledger_entries_reverses_key", pgErr.Field('n'), "an entry is reversed at most once")
	assert.Equal(t, int64(100), account(t, l, alice).Available())
	verify(t, l, db)
}

// A caller that stops waiting does not stop its entry: it commits with its
// batch, and posting it again tells the outcome.
func TestLedgerCallerCancelledAfterEnqueue(t *testing.T) {
	t.Parallel()
	l, db, clock := batchedLedger(t, 2)

	// The batch waits for a second entry, so the impatient one is still
	// queued when its caller's deadline passes.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	e := entry("impatient", single("impatient:0", alice, carol, 42))
	_, err := l.Post(ctx, e)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	_, err = l.Post(context.Background(), entry("patient", single("patient:0", bob, carol, 1)))
	require.NoError(t, err)
	l.Close()
	// The impatient entry was committed with the patient one's batch.
	l = postgres.NewLedger(db, clock, postgres.LedgerOptions{})
	t.Cleanup(l.Close)
	_, err = l.Post(context.Background(), e)
	require.ErrorIs(t, err, ledger.ErrExists)
	assert.Equal(t, int64(43), account(t, l, carol).CreditsPosted, "the entry moved money exactly once")
	verify(t, l, db)
}

func TestLedgerClosed(t *testing.T) {
	t.Parallel()
	l, _, _ := newLedger(t, postgres.LedgerOptions{})
	chart(t, l)
	l.Close()
	_, err := l.Post(context.Background(), entry("late", single("late:0", fundUSD, alice, 1)))
	require.ErrorIs(t, err, postgres.ErrLedgerClosed)
	l.Close() // idempotent
}

func TestLedgerJournalPaging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, _, _ := newLedger(t, postgres.LedgerOptions{})
	chart(t, l)
	var es []ledger.Entry
	for i := range 30 {
		id := fmt.Sprintf("f%02d", i)
		es = append(es, entry(id, single(id+":0", fundUSD, alice, int64(i+1))))
	}
	for _, r := range postConcurrently(l, es...) {
		require.NoError(t, r.err)
	}
	var seen []int64
	var after int64
	for {
		page, err := l.Journal(ctx, after, 7)
		require.NoError(t, err)
		if len(page) == 0 {
			break
		}
		assert.LessOrEqual(t, len(page), 7)
		for _, e := range page {
			seen = append(seen, e.Seq)
		}
		after = page[len(page)-1].Seq
	}
	require.Len(t, seen, 30)
	for i := 1; i < len(seen); i++ {
		assert.Greater(t, seen[i], seen[i-1])
	}
	none, err := l.Journal(ctx, 0, 0)
	require.NoError(t, err)
	assert.Empty(t, none)
}

// Two instances decide the same entry id, reversal and hold at the same
// time: the test holds the journal lock until both writers wait on it, so
// both have loaded and decided before either writes (the accounts are
// unflagged, so neither batch locks them before the journal lock). The
// loser's insert breaks a unique constraint; its batch is re-run against the
// winner's rows, so its callers get the ledger's answer (ErrExists,
// ErrAlreadyReversed) and its other entry still commits.
func TestLedgerRetriesRacesBetweenInstances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const (
		srcA = "sys:test:source-a"
		srcB = "sys:test:source-b"
		sink = "sys:test:sink"
	)
	a, db, clock := newLedger(t, postgres.LedgerOptions{MinBatch: 4, MaxDelay: time.Minute})
	b := postgres.NewLedger(db, clock, postgres.LedgerOptions{MinBatch: 4, MaxDelay: time.Minute})
	t.Cleanup(b.Close)
	var sys []ledger.Account
	for _, id := range []string{srcA, srcB, sink} {
		sys = append(sys, ledger.Account{ID: id, Currency: "USD", Kind: "test"})
	}
	require.NoError(t, a.CreateAccounts(ctx, sys...))
	setup := postgres.NewLedger(db, clock, postgres.LedgerOptions{})
	pay, err := setup.Post(ctx, entry("pay", single("pay:0", srcA, sink, 100)))
	require.NoError(t, err)
	setup.Close()

	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", postgres.JournalLockKey)
	require.NoError(t, err)
	unlocked := false
	unlock := func() {
		if !unlocked {
			unlocked = true
			_, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock(?)", postgres.JournalLockKey)
			require.NoError(t, err)
		}
	}
	defer func() { unlock(); _ = conn.Close() }()

	batchFor := func(who, from string) []ledger.Entry {
		rev, err := ledger.Reversal(pay.Entry, "pay-reversal-"+who, "Correction:"+who)
		require.NoError(t, err)
		return []ledger.Entry{
			entry("same-id", single("same-id:0", srcA, sink, 5)),
			rev,
			entry("hold-"+who, ledger.Transfer{ID: "same-hold", DebitAccountID: from, CreditAccountID: sink,
				Amount: 7, Currency: "USD", Kind: ledger.Pending}),
			entry("own-"+who, single("own-"+who+":0", from, sink, 1)),
		}
	}
	var resA, resB []postRes
	var wg sync.WaitGroup
	wg.Go(func() { resA = postConcurrently(a, batchFor("a", srcA)...) })
	wg.Go(func() { resB = postConcurrently(b, batchFor("b", srcB)...) })
	require.Eventually(t, func() bool {
		var waiting int
		err := db.NewRaw(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(ctx, &waiting)
		return err == nil && waiting == 2
	}, 10*time.Second, 5*time.Millisecond, "both writers wait for the journal lock")
	unlock()
	wg.Wait()

	// One instance's batch committed whole; the other's was re-run.
	winner, loser := resA, resB
	if resA[0].err != nil {
		winner, loser = resB, resA
	}
	for _, r := range winner {
		require.NoError(t, r.err)
	}
	require.ErrorIs(t, loser[0].err, ledger.ErrExists)
	assert.Equal(t, winner[0].je, loser[0].je, "the loser's caller gets the stored entry")
	require.Equal(t, ledger.CodeAlreadyReversed, ledger.CodeOf(loser[1].err))
	require.ErrorIs(t, loser[2].err, ledger.ErrTransferIDExists, "the hold id is taken")
	require.NoError(t, loser[3].err, "the loser's unrelated entry commits")
	s := account(t, a, sink)
	assert.Equal(t, int64(100+5+1+1), s.CreditsPosted, "pay, same-id once, both own entries")
	assert.Equal(t, int64(100), s.DebitsPosted, "one reversal")
	assert.Equal(t, int64(7), s.CreditsPending, "one hold")
	verify(t, a, db)
}
