package ports

import (
	"context"
	"time"

	"github.com/corridorpay/corridor/ledger"
)

// LedgerStore persists the ledger. Post is the money path: concurrent calls
// may be group-committed into one database transaction, but each caller gets
// its own result and a refused entry never fails its neighbours. Times come
// from the store's Clock.
type LedgerStore interface {
	// CreateAccounts creates accounts; an existing account with the same
	// currency, kind and flags is left as it is.
	CreateAccounts(ctx context.Context, accts ...ledger.Account) error
	// Post records e atomically (all transfers or none). When an entry with
	// e.ID already exists it returns the stored entry with an error matching
	// ledger.ErrExists (same request) or ledger.ErrExistsDifferent.
	Post(ctx context.Context, e ledger.Entry) (ledger.JournalEntry, error)
	// PostWith is Post that also writes recs in the same database
	// transaction, if and only if this call records e: a refused entry, or
	// one that already exists (ErrExists, ErrExistsDifferent), writes none
	// of them. A transaction in recs whose id is already stored fails the
	// call with an error matching ErrConflict, and e is not recorded. Group
	// committing stores share one commit among many callers' entries and
	// records, so a use case that moves money and records why (a
	// transaction and the job that continues it) pays no unit of work of
	// its own.
	PostWith(ctx context.Context, e ledger.Entry, recs Records) (ledger.JournalEntry, error)
	// Account returns one account or ErrNotFound.
	Account(ctx context.Context, id string) (ledger.Account, error)
	// Accounts returns the accounts that exist among ids, in ids order.
	Accounts(ctx context.Context, ids ...string) ([]ledger.Account, error)
	// Pending returns a two-phase transfer or ErrNotFound.
	Pending(ctx context.Context, id string) (ledger.PendingTransfer, error)
	// ExpireDue posts the expiry entry of up to limit open holds whose
	// timeout is at or before now and returns how many expired.
	ExpireDue(ctx context.Context, now time.Time, limit int) (int, error)
	// OpenHolds returns up to limit open pending transfers created at or
	// before createdBefore whose id sorts after afterID, by id: a sweep
	// for holds whose business object never came to exist.
	OpenHolds(ctx context.Context, createdBefore time.Time, afterID string, limit int) ([]ledger.PendingTransfer, error)
	// Journal returns up to limit entries with Seq > afterSeq, by Seq.
	Journal(ctx context.Context, afterSeq int64, limit int) ([]ledger.JournalEntry, error)
	// Snapshot returns every account and pending transfer, for the verifier.
	Snapshot(ctx context.Context) ([]ledger.Account, []ledger.PendingTransfer, error)
}

// Records are business rows written atomically with a ledger entry (see
// LedgerStore.PostWith). They are created, never updated, so writing them
// cannot depend on rows another writer changes.
type Records struct {
	// Transactions are created (TransactionRepo.Create).
	Transactions []Transaction
	// Jobs are enqueued (JobQueue.Enqueue: a job whose ID or Key is already
	// queued is a no-op).
	Jobs []Job
}

// Empty reports whether r writes nothing.
func (r Records) Empty() bool { return len(r.Transactions) == 0 && len(r.Jobs) == 0 }
