// Package ledger is corridor's double-entry engine: accounts with four
// counters, single- and two-phase transfers, atomic multi-leg entries,
// reversals, and the invariant verifier. It is pure Go with no I/O; the store
// adapters persist what it decides.
//
// The model follows TigerBeetle: every account carries debitsPending,
// debitsPosted, creditsPending and creditsPosted for its one currency, and
// flags bound it. Amounts are int64 minor units of the account's currency.
package ledger

import "time"

// AccountFlags bound an account's balance.
type AccountFlags uint16

const (
	// DebitsMustNotExceedCredits protects a credit-normal account (a customer
	// or platform internal account) from going below zero:
	// debitsPending+debitsPosted <= creditsPosted at all times.
	DebitsMustNotExceedCredits AccountFlags = 1 << iota
	// CreditsMustNotExceedDebits protects a debit-normal account.
	CreditsMustNotExceedDebits
)

// Account is one ledger account in one currency.
type Account struct {
	ID       string
	Currency string
	Flags    AccountFlags
	// Kind says what the account models: "internal" (a customer's or a
	// platform's internal account), or a system kind (see System*).
	Kind string
	// PlatformID owns the account; empty for system accounts.
	PlatformID string

	DebitsPending  int64
	DebitsPosted   int64
	CreditsPending int64
	CreditsPosted  int64

	CreatedAt time.Time
	// UpdatedAt is when a transfer last changed the account's counters
	// (zero until one does): the Book sets it as it applies an entry; the
	// stores read it back from the account's last posting.
	UpdatedAt time.Time
}

// Available is what a credit-normal account may spend: credits posted minus
// debits posted minus debits held by pending transfers.
func (a Account) Available() int64 { return a.CreditsPosted - a.DebitsPosted - a.DebitsPending }

// Total is a credit-normal account's balance including pending and held
// funds: credits (posted and pending) minus posted debits.
func (a Account) Total() int64 { return a.CreditsPosted + a.CreditsPending - a.DebitsPosted }

// Net is credits posted minus debits posted: the account's contribution to
// its currency's zero sum.
func (a Account) Net() int64 { return a.CreditsPosted - a.DebitsPosted }

// System account kinds. Their ids are built by the SystemAccountID helpers.
const (
	KindInternal       = "internal"
	KindSandboxFunding = "sandbox_funding"
	KindFeeRevenue     = "fee_revenue"
	KindRailSettlement = "rail_settlement"
	KindFXPosition     = "fx_position"
	// KindAgentHold is the counterpart of the holds of agent actions
	// waiting for the platform's approval (never posted: voided, or
	// replaced by the execution's own holds in one entry).
	KindAgentHold = "agent_hold"
)

// TransferKind says which phase a transfer is.
type TransferKind uint8

const (
	// Single posts at once.
	Single TransferKind = iota
	// Pending reserves (holds) the amount until posted, voided or expired.
	Pending
	// PostPending posts a pending transfer, in full or partially (Amount <=
	// the pending amount; Amount 0 means the full pending amount). The rest is
	// released.
	PostPending
	// VoidPending releases a pending transfer's hold.
	VoidPending
)

func (k TransferKind) String() string {
	switch k {
	case Single:
		return "single"
	case Pending:
		return "pending"
	case PostPending:
		return "post_pending"
	case VoidPending:
		return "void_pending"
	}
	return "unknown"
}

// Transfer is one leg of an entry: Amount moves from the debit account to the
// credit account. For PostPending and VoidPending the accounts and currency
// may be left empty; they are taken from the pending transfer.
type Transfer struct {
	ID              string
	DebitAccountID  string
	CreditAccountID string
	Amount          int64
	Currency        string
	Kind            TransferKind
	// PendingID names the pending transfer a PostPending/VoidPending resolves.
	PendingID string
	// Timeout (Pending only; 0 = never) after which the hold expires.
	Timeout time.Duration
	// Code records why money moved ("sandbox_funding", "transfer_out", "fee"…).
	Code string
}

// Entry is a journal entry request: its transfers are posted atomically (all
// or none). ID makes posting idempotent: posting an entry whose ID exists
// returns ErrExists with the stored entry.
type Entry struct {
	ID string
	// Ref names the business object that caused the entry
	// ("Transaction:<uuid>", "InternalAccount:<uuid>" for sandbox funding…).
	Ref string
	// Reverses is the id of the entry this one reverses (see Reversal).
	Reverses  string
	Transfers []Transfer
}

// Clone returns a copy of e that shares no slice (its transfers) with it.
func (e Entry) Clone() Entry {
	c := e
	c.Transfers = append([]Transfer(nil), e.Transfers...)
	return c
}

// MaxShard is the highest shard a writer may chain on: plenty of chains,
// and each shard's journal lock key (a base plus the shard) stays clear of
// other advisory locks.
const MaxShard = 1023

// JournalEntry is an entry as recorded: immutable, append-only.
type JournalEntry struct {
	Entry
	// Seq orders the journal (assigned by the store, strictly increasing).
	Seq int64
	// Shard is the hash chain the entry is on: every writer chains its
	// entries on its own shard (0 unless configured), under that shard's
	// journal lock, so writers on different shards do not wait for each
	// other's commits. Not part of the hash: the links place an entry.
	Shard    int16
	PostedAt time.Time
	// Hash is the SHA-256 of the entry's canonical form chained to
	// PrevHash, the hash of the entry before it on its shard in Seq order
	// (see Hash in hash.go). Both are zero on entries recorded before the
	// chain existed.
	Hash, PrevHash [32]byte
}

// PendingStatus is the state of a two-phase transfer.
type PendingStatus uint8

const (
	PendingOpen PendingStatus = iota
	PendingPosted
	PendingVoided
	PendingExpired
)

func (s PendingStatus) String() string {
	switch s {
	case PendingOpen:
		return "open"
	case PendingPosted:
		return "posted"
	case PendingVoided:
		return "voided"
	case PendingExpired:
		return "expired"
	}
	return "unknown"
}

// PendingTransfer is a hold: a Pending transfer and its resolution.
type PendingTransfer struct {
	Transfer
	EntryID string
	Status  PendingStatus
	// ExpiresAt is zero when the transfer has no timeout.
	ExpiresAt time.Time
	// PostedAmount is what was posted (0 unless Status is PendingPosted).
	PostedAmount int64
}
