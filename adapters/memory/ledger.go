package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Ledger is the in-memory ports.LedgerStore: one ledger.Book behind a mutex
// and an append-only journal. Values are copied on the way in and out, so
// callers never share its state. The zero value is not usable; call
// NewLedger.
type Ledger struct {
	clock ports.Clock

	mu      sync.Mutex
	book    *ledger.Book
	journal []ledger.JournalEntry // journal[i].Seq == i+1
	byID    map[string]int        // entry id -> index in journal

	// store receives PostWith's records; NewStore attaches itself.
	store *Store
}

var (
	_ ports.LedgerStore = (*Ledger)(nil)
)

// NewLedger returns an empty ledger whose times come from clock.
func NewLedger(clock ports.Clock) *Ledger {
	return &Ledger{clock: clock, book: ledger.NewBook(), byID: map[string]int{}}
}

// CreateAccounts creates accounts, all or none. An account that already
// exists is left as it is when its currency, kind and flags match; otherwise
// nothing is created and the error matches ledger.ErrExistsDifferent.
// Counters always start at zero; CreatedAt defaults to the clock's time.
func (l *Ledger) CreateAccounts(ctx context.Context, accts ...ledger.Account) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory ledger: create accounts: %w", err)
	}
	now := l.clock.Now().UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	fresh := make(map[string]ledger.Account, len(accts))
	for _, a := range accts {
		if a.ID == "" {
			return fmt.Errorf("memory ledger: create accounts: %w", &ledger.Error{Code: ledger.CodeIDMissing})
		}
		if a.Currency == "" {
			return fmt.Errorf("memory ledger: create account %s: currency missing", a.ID)
		}
		prev, ok := l.book.Account(a.ID)
		if !ok {
			prev, ok = fresh[a.ID]
		}
		if ok {
			if prev.Currency != a.Currency || prev.Kind != a.Kind || prev.Flags != a.Flags {
				return fmt.Errorf("memory ledger: account %s exists as %s %s flags=%d, asked for %s %s flags=%d: %w",
					a.ID, prev.Currency, prev.Kind, prev.Flags, a.Currency, a.Kind, a.Flags,
					&ledger.Error{Code: ledger.CodeExistsWithDifferentFields, AccountID: a.ID})
			}
			continue
		}
		a.DebitsPending, a.DebitsPosted, a.CreditsPending, a.CreditsPosted = 0, 0, 0, 0
		if a.CreatedAt.IsZero() {
			a.CreatedAt = now
		}
		fresh[a.ID] = a
	}
	for _, a := range fresh {
		l.book.PutAccount(a)
	}
	return nil
}

// Post records e atomically at the clock's time. When an entry with e.ID
// already exists it returns the stored entry and an error matching
// ledger.ErrExists (same request) or ledger.ErrExistsDifferent; any other
// refusal is a *ledger.Error and changes nothing.
func (l *Ledger) Post(ctx context.Context, e ledger.Entry) (ledger.JournalEntry, error) {
	if err := ctx.Err(); err != nil {
		return ledger.JournalEntry{}, fmt.Errorf("memory ledger: post %s: %w", e.ID, err)
	}
	e = e.Clone()
	now := l.clock.Now().UTC()
	changed := map[string]ledger.Account{}
	l.mu.Lock()
	je, err := l.postLocked(e, now, changed)
	l.mu.Unlock()
	if err != nil {
		return je, err
	}
	return je, l.recordBalances(context.WithoutCancel(ctx), changed, now)
}

// PostWith is Post that also writes recs when it records e (see
// ports.LedgerStore). The records go through one unit of work of the
// attached Store (NewStore attaches itself to its *Ledger), and the entry
// is posted by that unit's commit, under the store's writer lock: the
// entry is recorded if and only if the unit commits (a refusal rolls the
// records back), and nothing else commits in between. The unit ignores the
// caller's cancellation, so it cannot record the entry and drop its
// records.
func (l *Ledger) PostWith(ctx context.Context, e ledger.Entry, recs ports.Records) (ledger.JournalEntry, error) {
	if recs.Empty() {
		return l.Post(ctx, e)
	}
	l.mu.Lock()
	st := l.store
	l.mu.Unlock()
	if st == nil {
		return ledger.JournalEntry{}, fmt.Errorf("memory ledger: post %s: records need a store (memory.NewStore(ledger))", e.ID)
	}
	if err := ctx.Err(); err != nil {
		return ledger.JournalEntry{}, fmt.Errorf("memory ledger: post %s: %w", e.ID, err)
	}
	var je ledger.JournalEntry
	var postErr error
	err := st.InTx(context.WithoutCancel(ctx), func(tx ports.Tx) error {
		if l.recorded(e.ID) {
			// An entry already recorded writes no records, and its caller
			// learns that (ErrExists) rather than that a precondition its
			// first post consumed no longer holds. (Entries are never
			// removed, so Post refuses it.)
			je, postErr = l.Post(context.WithoutCancel(ctx), e)
			return postErr
		}
		if err := ledgerWriteRecords(ctx, tx, recs); err != nil {
			return fmt.Errorf("memory ledger: post %s: %w", e.ID, err)
		}
		tx.(*storeTx).w.post = func() error {
			je, postErr = l.Post(context.WithoutCancel(ctx), e)
			return postErr // a refusal fails the commit: the records roll back
		}
		return nil
	})
	if postErr != nil {
		return je, postErr
	}
	return je, err
}

// WriteRecords writes recs without an entry, in one unit of work of the
// attached Store (see ports.LedgerStore.WriteRecords).
func (l *Ledger) WriteRecords(ctx context.Context, recs ports.Records) error {
	if recs.Empty() {
		return nil
	}
	l.mu.Lock()
	st := l.store
	l.mu.Unlock()
	if st == nil {
		return fmt.Errorf("memory ledger: records need a store (memory.NewStore(ledger))")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory ledger: write records: %w", err)
	}
	return st.InTx(context.WithoutCancel(ctx), func(tx ports.Tx) error {
		if err := ledgerWriteRecords(ctx, tx, recs); err != nil {
			return fmt.Errorf("memory ledger: write records: %w", err)
		}
		return nil
	})
}

// recorded reports whether an entry with id is in the journal.
func (l *Ledger) recorded(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.byID[id]
	return ok
}

// ledgerWriteRecords writes recs in tx (see ports.Records). A Required
// quote or transaction change that does not hold fails it with ports.ErrPrecondition, and
// the caller's unit of work rolls back whatever it wrote.
func ledgerWriteRecords(ctx context.Context, tx ports.Tx, recs ports.Records) error {
	for _, q := range recs.Quotes {
		if err := tx.Quotes().Create(ctx, q); err != nil {
			return err
		}
	}
	for _, t := range recs.Transactions {
		if err := tx.Transactions().Create(ctx, t); err != nil {
			return err
		}
	}
	for _, j := range recs.Jobs {
		if err := tx.Jobs().Enqueue(ctx, j); err != nil {
			return err
		}
	}
	for _, c := range recs.QuoteChanges {
		if err := ledgerChangeQuote(ctx, tx, c); err != nil {
			return err
		}
	}
	for _, e := range recs.Events {
		if err := tx.Events().Append(ctx, e); err != nil {
			return err
		}
	}
	for _, c := range recs.StatusChanges {
		if err := ledgerChangeStatus(ctx, tx, c); err != nil {
			return err
		}
	}
	for _, id := range recs.CompletedJobs {
		if err := tx.Jobs().Complete(ctx, id); err != nil && !errors.Is(err, ports.ErrNotFound) {
			return err
		}
	}
	return nil
}

// ledgerChangeStatus applies a status change of PostWith's records: only
// while the stored status is one of c.From; a missing transaction is left
// alone like one that moved on, unless the change is Required (then the
// call fails with ports.ErrPrecondition).
func ledgerChangeStatus(ctx context.Context, tx ports.Tx, c ports.TransactionStatusChange) error {
	t, err := tx.Transactions().GetForUpdate(ctx, c.PlatformID, c.TransactionID)
	if err != nil && !errors.Is(err, ports.ErrNotFound) {
		return err
	}
	if err != nil || !slices.Contains(c.From, t.Status) {
		if c.Required {
			return fmt.Errorf("transaction %s: %w", c.TransactionID, ports.ErrPrecondition)
		}
		return nil
	}
	t.Status, t.UpdatedAt = c.Status, c.UpdatedAt
	if c.SettledAt != nil {
		at := *c.SettledAt
		t.SettledAt = &at
	}
	if c.FailureReason != "" {
		t.FailureReason = c.FailureReason
	}
	if c.Approval != nil {
		a := *c.Approval
		t.Details.Approval = &a
	}
	if c.Refund != nil {
		r := *c.Refund
		t.Details.Refund = &r
	}
	if c.RequestKey != "" {
		t.Details.RequestKey = c.RequestKey
	}
	return tx.Transactions().Update(ctx, t)
}

// ledgerChangeQuote applies a quote change of PostWith's records (see
// ports.QuoteStatusChange): a change that does not hold (a missing quote
// included) fails a Required change with ports.ErrPrecondition and is
// skipped otherwise.
func ledgerChangeQuote(ctx context.Context, tx ports.Tx, c ports.QuoteStatusChange) error {
	q, err := tx.Quotes().GetForUpdate(ctx, c.PlatformID, c.QuoteID)
	if err != nil && !errors.Is(err, ports.ErrNotFound) {
		return err
	}
	if err != nil || !c.Holds(q.Status, q.ExpiresAt) {
		if c.Required {
			return fmt.Errorf("quote %s: %w", c.QuoteID, ports.ErrPrecondition)
		}
		return nil
	}
	q.Status, q.UpdatedAt = c.Status, c.UpdatedAt
	if c.ExecutedAt != nil {
		at := *c.ExecutedAt
		q.ExecutedAt = &at
	}
	return tx.Quotes().Update(ctx, q)
}

// attach makes s the store PostWith writes records to.
func (l *Ledger) attach(s *Store) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.store = s
}

// postLocked applies e at time now; l.mu must be held and e owned by l.
// changed receives the internal accounts whose balance or total balance
// it moved, as they now are.
func (l *Ledger) postLocked(e ledger.Entry, now time.Time, changed map[string]ledger.Account) (ledger.JournalEntry, error) {
	before := l.balanceBefore(e)
	rec, err := l.book.Apply(e, now)
	if err != nil {
		switch ledger.CodeOf(err) {
		case ledger.CodeExists, ledger.CodeExistsWithDifferentFields:
			if i, ok := l.byID[e.ID]; ok {
				return ledgerCopyJournalEntry(l.journal[i]), err
			}
		}
		return ledger.JournalEntry{}, err
	}
	// The memory store has nothing to flush; keep the Book's change set from
	// growing.
	l.book.Changes()
	l.balanceChanged(before, changed)
	je := ledger.JournalEntry{Entry: rec, Seq: int64(len(l.journal) + 1), PostedAt: now}
	l.chainLocked(&je)
	l.byID[rec.ID] = len(l.journal)
	l.journal = append(l.journal, je)
	return ledgerCopyJournalEntry(je), nil
}

// Account returns one account or an error matching ports.ErrNotFound.
func (l *Ledger) Account(ctx context.Context, id string) (ledger.Account, error) {
	if err := ctx.Err(); err != nil {
		return ledger.Account{}, fmt.Errorf("memory ledger: account %s: %w", id, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.book.Account(id)
	if !ok {
		return ledger.Account{}, fmt.Errorf("memory ledger: account %s: %w", id, ports.ErrNotFound)
	}
	return a, nil
}

// Accounts returns the accounts that exist among ids, in ids order.
func (l *Ledger) Accounts(ctx context.Context, ids ...string) ([]ledger.Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory ledger: accounts: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ledger.Account, 0, len(ids))
	for _, id := range ids {
		if a, ok := l.book.Account(id); ok {
			out = append(out, a)
		}
	}
	return out, nil
}

// Pending returns a two-phase transfer or an error matching
// ports.ErrNotFound.
func (l *Ledger) Pending(ctx context.Context, id string) (ledger.PendingTransfer, error) {
	if err := ctx.Err(); err != nil {
		return ledger.PendingTransfer{}, fmt.Errorf("memory ledger: pending %s: %w", id, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.book.Pending(id)
	if !ok {
		return ledger.PendingTransfer{}, fmt.Errorf("memory ledger: pending %s: %w", id, ports.ErrNotFound)
	}
	return p, nil
}

// ExpireDue posts the expiry entry of up to limit open holds whose timeout
// is at or before now (earliest first) and returns how many expired. A
// limit <= 0 expires nothing.
func (l *Ledger) ExpireDue(ctx context.Context, now time.Time, limit int) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("memory ledger: expire due: %w", err)
	}
	if limit <= 0 {
		return 0, nil
	}
	now = now.UTC()
	changed := map[string]ledger.Account{}
	n, err := l.expireDueLocked(now, limit, changed)
	if rerr := l.recordBalances(context.WithoutCancel(ctx), changed, now); err == nil {
		err = rerr
	}
	return n, err
}

// expireDueLocked is ExpireDue under l.mu; changed collects the internal
// accounts whose balance moved.
func (l *Ledger) expireDueLocked(now time.Time, limit int, changed map[string]ledger.Account) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	due := l.book.Due(now)
	if len(due) > limit {
		due = due[:limit]
	}
	n := 0
	for _, p := range due {
		if _, err := l.postLocked(ledger.ExpiryEntry(p), now, changed); err != nil {
			return n, fmt.Errorf("memory ledger: expire %s: %w", p.ID, err)
		}
		n++
	}
	return n, nil
}

// OpenHolds returns up to limit open pending transfers posted at or before
// createdBefore whose id sorts after afterID, by id. A limit <= 0 returns
// nothing.
func (l *Ledger) OpenHolds(ctx context.Context, createdBefore time.Time, afterID string, limit int) ([]ledger.PendingTransfer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory ledger: open holds: %w", err)
	}
	if limit <= 0 {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []ledger.PendingTransfer
	for _, p := range l.book.PendingTransfers() {
		if p.Status != ledger.PendingOpen || p.ID <= afterID {
			continue
		}
		if i, ok := l.byID[p.EntryID]; !ok || l.journal[i].PostedAt.After(createdBefore) {
			continue
		}
		out = append(out, p)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// Journal returns up to limit entries with Seq > afterSeq, by Seq. A limit
// <= 0 returns nothing.
func (l *Ledger) Journal(ctx context.Context, afterSeq int64, limit int) ([]ledger.JournalEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory ledger: journal: %w", err)
	}
	if limit <= 0 {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Seq is index+1, but search anyway so the journal may someday start
	// elsewhere.
	start := sort.Search(len(l.journal), func(i int) bool { return l.journal[i].Seq > afterSeq })
	end := min(start+limit, len(l.journal))
	out := make([]ledger.JournalEntry, 0, end-start)
	for _, je := range l.journal[start:end] {
		out = append(out, ledgerCopyJournalEntry(je))
	}
	return out, nil
}

// Snapshot returns every account and pending transfer, ordered by id.
func (l *Ledger) Snapshot(ctx context.Context) ([]ledger.Account, []ledger.PendingTransfer, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("memory ledger: snapshot: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.book.Accounts(), l.book.PendingTransfers(), nil
}

func ledgerCopyJournalEntry(je ledger.JournalEntry) ledger.JournalEntry {
	c := je
	c.Entry = je.Entry.Clone()
	return c
}
