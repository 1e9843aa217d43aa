package ports

import (
	"context"
	"errors"
	"slices"
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
	// WriteRecords writes recs without an entry, in the same group commit
	// as entries, with the semantics of PostWith's records.
	WriteRecords(ctx context.Context, recs Records) error
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
// LedgerStore.PostWith). Transactions and jobs are created; status changes
// and job completions are conditional writes that never fail the post (a
// transaction already moved on, or a job already gone, is left as it is).
// A caller must not hold a lock on a row its records name while it waits
// for PostWith: the store's transaction would wait for that lock.
type Records struct {
	// Quotes are created (QuoteRepo.Create), before Transactions.
	Quotes []Quote
	// QuoteChanges move existing quotes to a new status (see
	// QuoteStatusChange), before StatusChanges.
	QuoteChanges []QuoteStatusChange
	// Transactions are created (TransactionRepo.Create).
	Transactions []Transaction
	// Jobs are enqueued (JobQueue.Enqueue: a job whose ID or Key is already
	// queued is a no-op).
	Jobs []Job
	// StatusChanges move existing transactions to a new status (see
	// TransactionStatusChange), after Transactions are created.
	StatusChanges []TransactionStatusChange
	// Events are recorded (EventRepo.Append: with their delivery jobs).
	Events []Event
	// CompletedJobs are the ids of jobs removed (JobQueue.Complete); an id
	// no longer queued is ignored. A job handler completes its own job with
	// the entry that finishes its work, so the job disappears if and only if
	// that work is recorded.
	CompletedJobs []string
}

// TransactionStatusChange sets a transaction's status and the fields that
// come with it, only while its stored status is one of From (checked under
// the row's lock when the records are written; otherwise nothing changes).
// A Required change is a precondition of the whole call, as
// QuoteStatusChange.Required is: when the transaction is missing or its
// stored status is not one of From, the call fails with ErrPrecondition and
// nothing of it is written, the entry included. This is how two calls that
// both move money and settle one transaction (a cancel and the rail's
// settlement of a transfer-in) cannot both win.
type TransactionStatusChange struct {
	PlatformID    string
	TransactionID string
	// From lists the statuses the transaction may leave (required).
	From          []string
	Status        string
	UpdatedAt     time.Time
	SettledAt     *time.Time // written when set
	FailureReason string     // written when not empty
	// Approval and Refund, when set, are written into the transaction's
	// details with its status: an incoming payment that starts waiting
	// for the platform's decision (core/approvals), the refund of one
	// that did not complete.
	Approval *Approval
	Refund   *Refund
	// RequestKey, when not empty, is written into the details
	// (TransactionDetails.RequestKey).
	RequestKey string
	Required   bool
}

// Holds reports whether c may move a quote whose stored status and expiry
// are status and expiresAt.
func (c QuoteStatusChange) Holds(status string, expiresAt time.Time) bool {
	if !slices.Contains(c.From, status) {
		return false
	}
	return c.NotExpiredAt == nil || expiresAt.After(*c.NotExpiredAt)
}

// Empty reports whether r writes nothing.
func (r Records) Empty() bool {
	return len(r.Quotes) == 0 && len(r.QuoteChanges) == 0 && len(r.Transactions) == 0 &&
		len(r.Jobs) == 0 && len(r.StatusChanges) == 0 && len(r.CompletedJobs) == 0
}

// ErrPrecondition is returned by PostWith (and WriteRecords) when a
// Required QuoteStatusChange or TransactionStatusChange does not hold: nothing of that call is
// written, the entry included; neighbours in the same group commit are
// unaffected.
var ErrPrecondition = errors.New("precondition failed")

// QuoteStatusChange sets a quote's status (and ExecutedAt when set) only
// while its stored status is one of From and, when NotExpiredAt is set,
// its ExpiresAt is after NotExpiredAt — checked under the quote row's lock.
// A Required change is a precondition of the whole call: when it does not
// hold the entry is refused with ErrPrecondition (this is how a quote's
// execution and its holds stand or fall together with the quote still
// being executable). A change that is not Required is skipped silently.
type QuoteStatusChange struct {
	PlatformID   string
	QuoteID      string
	From         []string
	Status       string
	UpdatedAt    time.Time
	ExecutedAt   *time.Time
	NotExpiredAt *time.Time
	Required     bool
}
