package ports

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/corridorpay/corridor/ledger"
)

// LedgerReports reads the ledger for finance teams: accounts, trial
// balances, point-in-time balances, statements, the journal with its links,
// the reconciliation export of a rail's settlement account, and the
// verification of the journal's hash chain and counters. It only reads.
//
// Time windows are half-open, [From, To): a statement's opening balance is
// the balance just before From and its closing balance the balance just
// before To, so consecutive windows tile. A point-in-time balance (AsOf) is
// inclusive: it counts every posting at or before AsOf.
//
// Point-in-time answers come from the postings index (each posting stores
// its account's four counters right after it), never from a replay.
type LedgerReports interface {
	// Accounts returns up to f.Limit+1 accounts in f.Scope, by id, after
	// f.AfterID.
	Accounts(ctx context.Context, f LedgerAccountFilter) ([]ledger.Account, error)
	// Account returns one account (any scope; callers check it) or
	// ErrNotFound.
	Account(ctx context.Context, id string) (ledger.Account, error)
	// TrialBalance returns the accounts in scope with their counters as of
	// asOf (nil: now), ordered by currency then id, and each currency's
	// totals over every account of the ledger.
	TrialBalance(ctx context.Context, scope AccountScope, asOf *time.Time) (TrialBalance, error)
	// BalanceAt returns an account with its counters as of asOf (inclusive)
	// and the posting that set them, or ErrNotFound for an unknown account.
	BalanceAt(ctx context.Context, accountID string, asOf time.Time) (PointBalance, error)
	// Statement returns an account's postings in [q.From, q.To) by time,
	// up to q.Limit+1 after q.After, with the opening and closing balances
	// of the window.
	Statement(ctx context.Context, q StatementQuery) (Statement, error)
	// Entries returns up to f.Limit+1 journal entries matching f, by
	// (PostedAt, Seq), after f.After.
	Entries(ctx context.Context, f EntryFilter) ([]ReportEntry, error)
	// Entry returns one journal entry with its links, or ErrNotFound.
	Entry(ctx context.Context, id string) (ReportEntry, error)
	// ExportSettlement calls fn with one row per posting of the rail's
	// settlement account in [f.From, f.To), in time order, streaming: the
	// store holds one row at a time. An error from fn stops the export and
	// is returned.
	ExportSettlement(ctx context.Context, f SettlementExport, fn func(SettlementRow) error) error
	// VerifyJournal walks the whole journal in seq order, recomputing the
	// hash chain and every account's counters (and, where the store keeps
	// them, the counters after every posting), and reports what it found;
	// progress (optional) is called as entries are checked. A broken ledger
	// is a result (Breaks), not an error. anchors (from signed
	// checkpoints) pin the hash the entry at a seq must have.
	VerifyJournal(ctx context.Context, progress func(done, total int64), anchors ...ledger.Anchor) (JournalVerification, error)
}

// AccountScope is which ledger accounts a reader sees.
type AccountScope struct {
	// All sees every account: the platform operator.
	All bool
	// PlatformID sees that platform's accounts.
	PlatformID string
	// System adds the system accounts (settlement, FX position, fee revenue,
	// sandbox funding: no platform).
	System bool
}

// Sees reports whether a is within s.
func (s AccountScope) Sees(a ledger.Account) bool {
	switch {
	case s.All:
		return true
	case a.PlatformID == "":
		return s.System
	default:
		return a.PlatformID == s.PlatformID
	}
}

// LedgerAccountFilter narrows LedgerReports.Accounts.
type LedgerAccountFilter struct {
	Scope    AccountScope
	Currency string // empty: every currency
	Kind     string // empty: every kind
	AfterID  string
	Limit    int
}

// TrialBalance is the ledger's balances at one instant.
type TrialBalance struct {
	// Accounts are the accounts in scope, their counters as of the instant.
	Accounts []ledger.Account
	// Totals sums, per currency, the counters of every account of the
	// ledger (in scope or not): posted and pending credits equal debits.
	Totals map[string]ledger.Counters
}

// NewTrialBalance is the trial balance of every account of the ledger
// (accts, counters as of the instant) as scope sees it: each currency's
// totals over all of them, and the accounts in scope that have moved,
// ordered by currency then id. Both stores build theirs with it.
func NewTrialBalance(scope AccountScope, accts []ledger.Account) TrialBalance {
	tb := TrialBalance{Totals: map[string]ledger.Counters{}}
	for _, a := range accts {
		tb.Totals[a.Currency] = tb.Totals[a.Currency].Add(a.Counters())
		if scope.Sees(a) && a.Counters() != (ledger.Counters{}) {
			tb.Accounts = append(tb.Accounts, a)
		}
	}
	slices.SortFunc(tb.Accounts, func(a, b ledger.Account) int {
		return cmp.Or(cmp.Compare(a.Currency, b.Currency), cmp.Compare(a.ID, b.ID))
	})
	return tb
}

// PointBalance is an account's balance at an instant.
type PointBalance struct {
	// Account carries the counters as of the instant.
	Account ledger.Account
	// LastEntryID and LastPostedAt name the posting that set them (empty
	// and zero when the account had no posting yet).
	LastEntryID  string
	LastPostedAt time.Time
}

// PostingKey orders an account's postings: by time, then by the store's
// posting id (commit order).
type PostingKey struct {
	PostedAt time.Time
	ID       int64
}

// StatementQuery asks for a page of an account's statement.
type StatementQuery struct {
	AccountID string
	From, To  time.Time
	After     *PostingKey
	Limit     int
}

// StatementLine is one posting on the statement's account and why it
// happened.
type StatementLine struct {
	Key PostingKey
	ledger.Posting
	// Ref is the business object that caused the entry (Transaction:…,
	// Quote:…, InternalAccount:… for sandbox funding); Reverses is the
	// entry the posting's entry reverses, if any.
	Ref, Reverses string
}

// Statement is one page of an account's postings over a window.
type Statement struct {
	Account ledger.Account
	// Opening is the account's counters just before From, Closing just
	// before To (whatever the page).
	Opening, Closing ledger.Counters
	Lines            []StatementLine
}

// EntryKey orders the journal for listing: by time, then by seq.
type EntryKey struct {
	PostedAt time.Time
	Seq      int64
}

// EntryFilter narrows LedgerReports.Entries. Zero values do not filter.
type EntryFilter struct {
	// Scope keeps the entries with at least one leg on an account in it.
	Scope     AccountScope
	AccountID string
	Ref       string
	// Shard, when set, keeps one shard's entries: within a shard
	// (posted_at, seq) follows commit order, so a reader paging one shard
	// never misses an entry committed behind its cursor.
	Shard    *int16
	From, To *time.Time
	After    *EntryKey
	Limit    int
}

// ReportEntry is a journal entry with its links.
type ReportEntry struct {
	ledger.JournalEntry
	// ReversedBy is the entry that reverses this one, if any.
	ReversedBy string
	// Owners maps every account of the entry's legs to its platform (""
	// for system accounts).
	Owners map[string]string
}

// Key is the entry's list position.
func (e ReportEntry) Key() EntryKey { return EntryKey{PostedAt: e.PostedAt, Seq: e.Seq} }

// SettlementExport selects a reconciliation export.
type SettlementExport struct {
	Rail, Currency string
	From, To       time.Time
	// PlatformID, when set, keeps that platform's rows: those whose
	// transaction is the platform's (its own payments on the rail, quotes
	// included), or, without a transaction, whose counterparty account is.
	PlatformID string
}

// SettlementRow is one posting of a rail's settlement account.
type SettlementRow struct {
	Key                 PostingKey
	AccountID           string // the settlement account
	Rail, Currency      string
	EntryID, TransferID string
	Seq                 int64
	Kind                ledger.TransferKind
	Code                string
	// Amount is the transfer's amount; Counterparty is its other account.
	Amount       int64
	Counterparty string
	// Posted and Pending are the signed changes of the settlement account's
	// posted (credits minus debits) and pending balances. Over a window they
	// sum to the account's movement.
	Posted, Pending int64
	// Ref is the entry's business object; TransactionID, RailReference and
	// Status come from the transaction it names (empty when it names none).
	Ref, TransactionID, RailReference, Status string
}

// Journal break kinds beyond the chain's (ledger.BreakHash, BreakLink,
// BreakUnhashed, BreakCheckpoint).
const (
	// BreakPosting: a stored posting's counters disagree with the journal.
	BreakPosting = "posting"
	// BreakCounter: an account's counters disagree with the journal.
	BreakCounter = "counter"
	// BreakJournal: the journal itself is malformed (ledger.Verify's
	// journal, zero-sum, bound and hold rules).
	BreakJournal = "journal"
)

// JournalBreak is one place the journal does not verify.
type JournalBreak struct {
	Kind string
	// Seq and EntryID name the entry (zero and empty when the break is an
	// account's alone); AccountID names the account, when one is involved.
	Seq       int64
	EntryID   string
	AccountID string
	Message   string
}

// JournalVerification is what VerifyJournal found.
type JournalVerification struct {
	// Unhashed entries are breaks (their hash was removed).
	Entries, Hashed, Unhashed int64
	Accounts                  int64
	// Postings is how many stored postings were checked (0 on stores that
	// keep no postings of their own).
	Postings int64
	// Head is the stored hash of the last entry, HeadSeq and HeadID its
	// seq and id: what a checkpoint signs.
	Head    [32]byte
	HeadSeq int64
	HeadID  string
	// Chains is the head of each shard's chain, by shard (one, shard 0,
	// unless writers run on shards of their own): a checkpoint signs each.
	Chains []ledger.ChainHead
	// Breaks lists what does not verify, the first break (lowest seq, then
	// account-level breaks) first; capped at MaxJournalBreaks.
	Breaks []JournalBreak
}

// MaxJournalBreaks bounds JournalVerification.Breaks.
const MaxJournalBreaks = 50

// OK reports whether the journal verified.
func (v JournalVerification) OK() bool { return len(v.Breaks) == 0 }

// OrderJournalBreaks sorts breaks the way JournalVerification.Breaks lists
// them (entry breaks by seq, then account-level ones, each group stably)
// and caps them at MaxJournalBreaks.
func OrderJournalBreaks(bs []JournalBreak) []JournalBreak {
	slices.SortStableFunc(bs, func(a, b JournalBreak) int {
		switch {
		case a.Seq == 0 && b.Seq == 0:
			return 0
		case a.Seq == 0:
			return 1
		case b.Seq == 0:
			return -1
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	if len(bs) > MaxJournalBreaks {
		bs = bs[:MaxJournalBreaks]
	}
	return bs
}

// SummarizeJournalCheck turns a finished ledger.JournalCheck into a
// JournalVerification: the chain counts and breaks, every account's
// counters against the replay, the replay's own violations (zero sum,
// bounds, holds, malformed journal), and the store's extra breaks (its
// postings). accounts and pendings are a snapshot consistent with the
// journal the check read.
func SummarizeJournalCheck(c *ledger.JournalCheck, accounts []ledger.Account, pendings []ledger.PendingTransfer,
	postings int64, extra []JournalBreak) JournalVerification {
	v := JournalVerification{
		Entries: c.Chain.Entries, Hashed: c.Chain.Hashed, Unhashed: c.Chain.Unhashed,
		Accounts: int64(len(accounts)), Postings: postings,
		Head: c.Chain.Head, HeadSeq: c.Chain.HeadSeq, HeadID: c.Chain.HeadID, Chains: c.Chain.Heads(),
	}
	for _, b := range c.ChainBreaks() {
		v.Breaks = append(v.Breaks, JournalBreak{Kind: b.Kind, Seq: b.Seq, EntryID: b.EntryID, Message: b.Message})
	}
	v.Breaks = append(v.Breaks, extra...)
	for _, a := range accounts {
		if want := c.Counters(a.ID); want != a.Counters() {
			v.Breaks = append(v.Breaks, JournalBreak{Kind: BreakCounter, AccountID: a.ID,
				Message: fmt.Sprintf("account %s has counters %+v, the journal replays to %+v", a.ID, a.Counters(), want)})
		}
	}
	for _, viol := range c.Violations(accounts, pendings) {
		if viol.Kind == ledger.ViolationCounter {
			continue // reported above, with the account
		}
		v.Breaks = append(v.Breaks, JournalBreak{Kind: BreakJournal, Message: viol.String()})
	}
	v.Breaks = OrderJournalBreaks(v.Breaks)
	return v
}
