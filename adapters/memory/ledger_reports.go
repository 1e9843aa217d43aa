package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// LedgerReports is the in-memory ports.LedgerReports over a *Ledger. It
// keeps its own postings index, as the PostgreSQL writer keeps
// ledger_postings: per account, every posting with the account's counters
// right after it. The index is extended from the journal (only the entries
// recorded since the last call) before each read, so point-in-time answers
// are binary searches in it, never replays. The *Store, when given, supplies
// the transaction columns of the reconciliation export.
type LedgerReports struct {
	l *Ledger
	s *Store

	mu         sync.Mutex
	indexed    int // journal entries indexed so far
	replay     *ledger.PostingReplay
	postings   map[string][]memPosting
	reversedBy map[string]string
	nextID     int64
}

// memPosting is one indexed posting; id numbers postings in journal order,
// like ledger_postings.id.
type memPosting struct {
	id int64
	ledger.Posting
}

func (p memPosting) key() ports.PostingKey { return ports.PostingKey{PostedAt: p.PostedAt, ID: p.id} }

var _ ports.LedgerReports = (*LedgerReports)(nil)

// NewLedgerReports returns the reports of l; s may be nil (export rows then
// carry no transaction columns).
func NewLedgerReports(l *Ledger, s *Store) *LedgerReports {
	return &LedgerReports{l: l, s: s, replay: ledger.NewPostingReplay(),
		postings: map[string][]memPosting{}, reversedBy: map[string]string{}}
}

// reportState returns, under one lock, the journal recorded so far and a
// snapshot of the accounts and holds consistent with it. Journal entries
// are never changed once appended and the returned slice's capacity is
// capped, so it stays readable after the lock is released.
func (l *Ledger) reportState() ([]ledger.JournalEntry, []ledger.Account, []ledger.PendingTransfer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.journal)
	return l.journal[:n:n], l.book.Accounts(), l.book.PendingTransfers()
}

// reportEntry returns the recorded entry with id (shared: read only).
func (l *Ledger) reportEntry(id string) (ledger.JournalEntry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.byID[id]
	if !ok {
		return ledger.JournalEntry{}, false
	}
	return l.journal[i], true
}

// reportTransaction returns a stored transaction by id (read only).
func (s *Store) reportTransaction(id string) (ports.Transaction, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.state.txns[id]
	return t, ok
}

// sync extends the index to the whole journal and returns the journal and
// the account snapshot it was extended to.
func (r *LedgerReports) sync(ctx context.Context) ([]ledger.JournalEntry, []ledger.Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	journal, accts, _ := r.l.reportState()
	r.mu.Lock()
	defer r.mu.Unlock()
	for ; r.indexed < len(journal); r.indexed++ {
		e := journal[r.indexed]
		if e.Reverses != "" {
			r.reversedBy[e.Reverses] = e.ID
		}
		r.replay.Add(e, func(p ledger.Posting) {
			r.nextID++
			r.postings[p.AccountID] = append(r.postings[p.AccountID], memPosting{id: r.nextID, Posting: p})
		})
	}
	return journal, accts, nil
}

// accountPostings returns an account's indexed postings (shared, read
// only: later postings are appended beyond the returned length).
func (r *LedgerReports) accountPostings(id string) []memPosting {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.postings[id]
}

// before returns the counters after the last posting of ps strictly before
// t (inclusive: at or before t), and that posting's index (-1 when none).
// ps is in journal order, whose times do not decrease.
func before(ps []memPosting, t time.Time, inclusive bool) (ledger.Counters, int) {
	i := sort.Search(len(ps), func(i int) bool {
		if inclusive {
			return ps[i].PostedAt.After(t)
		}
		return !ps[i].PostedAt.Before(t)
	}) - 1
	if i < 0 {
		return ledger.Counters{}, -1
	}
	return ps[i].After, i
}

// Accounts returns up to f.Limit+1 accounts in scope after f.AfterID, by id.
func (r *LedgerReports) Accounts(ctx context.Context, f ports.LedgerAccountFilter) ([]ledger.Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	_, accts, _ := r.l.reportState()
	var out []ledger.Account
	for _, a := range accts { // by id
		if a.ID <= f.AfterID || !f.Scope.Sees(a) || (f.Currency != "" && a.Currency != f.Currency) || (f.Kind != "" && a.Kind != f.Kind) {
			continue
		}
		out = append(out, a)
		if len(out) > f.Limit {
			break
		}
	}
	return out, nil
}

// Account returns one account or ports.ErrNotFound.
func (r *LedgerReports) Account(ctx context.Context, id string) (ledger.Account, error) {
	return r.l.Account(ctx, id)
}

// TrialBalance returns the accounts in scope with non-zero counters as of
// asOf (nil: now) by currency and id, and per-currency totals of every
// account.
func (r *LedgerReports) TrialBalance(ctx context.Context, scope ports.AccountScope, asOf *time.Time) (ports.TrialBalance, error) {
	_, accts, err := r.sync(ctx)
	if err != nil {
		return ports.TrialBalance{}, fmt.Errorf("memory reports: trial balance: %w", err)
	}
	if asOf != nil {
		at := make([]ledger.Account, len(accts))
		for i, a := range accts {
			c, _ := before(r.accountPostings(a.ID), *asOf, true)
			at[i] = a.WithCounters(c)
		}
		accts = at
	}
	return ports.NewTrialBalance(scope, accts), nil
}

// BalanceAt returns an account's counters as of asOf (inclusive).
func (r *LedgerReports) BalanceAt(ctx context.Context, accountID string, asOf time.Time) (ports.PointBalance, error) {
	if _, _, err := r.sync(ctx); err != nil {
		return ports.PointBalance{}, fmt.Errorf("memory reports: balance: %w", err)
	}
	a, err := r.l.Account(ctx, accountID)
	if err != nil {
		return ports.PointBalance{}, err
	}
	ps := r.accountPostings(accountID)
	c, i := before(ps, asOf, true)
	pb := ports.PointBalance{Account: a.WithCounters(c)}
	if i >= 0 {
		pb.LastEntryID, pb.LastPostedAt = ps[i].EntryID, ps[i].PostedAt
	}
	return pb, nil
}

// Statement returns a page of an account's postings in [q.From, q.To).
func (r *LedgerReports) Statement(ctx context.Context, q ports.StatementQuery) (ports.Statement, error) {
	journal, _, err := r.sync(ctx)
	if err != nil {
		return ports.Statement{}, fmt.Errorf("memory reports: statement: %w", err)
	}
	a, err := r.l.Account(ctx, q.AccountID)
	if err != nil {
		return ports.Statement{}, err
	}
	ps := r.accountPostings(q.AccountID)
	st := ports.Statement{Account: a}
	st.Opening, _ = before(ps, q.From, false)
	st.Closing, _ = before(ps, q.To, false)
	_, i := before(ps, q.From, false)
	for i++; i < len(ps) && ps[i].PostedAt.Before(q.To) && len(st.Lines) <= q.Limit; i++ {
		p := ps[i]
		if q.After != nil && postingKeyCompare(p.key(), *q.After) <= 0 {
			continue
		}
		e := journal[p.Seq-1]
		st.Lines = append(st.Lines, ports.StatementLine{Key: p.key(), Posting: p.Posting, Ref: e.Ref, Reverses: e.Reverses})
	}
	return st, nil
}

func postingKeyCompare(a, b ports.PostingKey) int {
	return cmp.Or(a.PostedAt.Compare(b.PostedAt), cmp.Compare(a.ID, b.ID))
}

func entryKeyCompare(a, b ports.EntryKey) int {
	return cmp.Or(a.PostedAt.Compare(b.PostedAt), cmp.Compare(a.Seq, b.Seq))
}

// Entries returns up to f.Limit+1 entries matching f by (PostedAt, Seq).
func (r *LedgerReports) Entries(ctx context.Context, f ports.EntryFilter) ([]ports.ReportEntry, error) {
	journal, accts, err := r.sync(ctx)
	if err != nil {
		return nil, fmt.Errorf("memory reports: entries: %w", err)
	}
	owners := make(map[string]ledger.Account, len(accts))
	for _, a := range accts {
		owners[a.ID] = a
	}
	touches := func(e ledger.JournalEntry, keep func(string) bool) bool {
		for _, t := range e.Transfers {
			if keep(t.DebitAccountID) || keep(t.CreditAccountID) {
				return true
			}
		}
		return false
	}
	var out []ports.ReportEntry
	for _, e := range journal {
		key := ports.EntryKey{PostedAt: e.PostedAt, Seq: e.Seq}
		switch {
		case f.After != nil && entryKeyCompare(key, *f.After) <= 0,
			f.Ref != "" && e.Ref != f.Ref,
			f.Shard != nil && e.Shard != *f.Shard,
			f.From != nil && e.PostedAt.Before(*f.From),
			f.To != nil && !e.PostedAt.Before(*f.To),
			f.AccountID != "" && !touches(e, func(id string) bool { return id == f.AccountID }),
			f.AccountID == "" && !touches(e, func(id string) bool { return f.Scope.Sees(owners[id]) }):
			continue
		}
		out = append(out, r.reportEntry(e, owners))
	}
	slices.SortStableFunc(out, func(a, b ports.ReportEntry) int { return entryKeyCompare(a.Key(), b.Key()) })
	if len(out) > f.Limit+1 {
		out = out[:f.Limit+1]
	}
	return out, nil
}

func (r *LedgerReports) reportEntry(e ledger.JournalEntry, owners map[string]ledger.Account) ports.ReportEntry {
	re := ports.ReportEntry{JournalEntry: ledgerCopyJournalEntry(e), Owners: map[string]string{}}
	r.mu.Lock()
	re.ReversedBy = r.reversedBy[e.ID]
	r.mu.Unlock()
	for _, t := range e.Transfers {
		re.Owners[t.DebitAccountID] = owners[t.DebitAccountID].PlatformID
		re.Owners[t.CreditAccountID] = owners[t.CreditAccountID].PlatformID
	}
	return re
}

// Entry returns one entry with its links or ports.ErrNotFound.
func (r *LedgerReports) Entry(ctx context.Context, id string) (ports.ReportEntry, error) {
	_, accts, err := r.sync(ctx)
	if err != nil {
		return ports.ReportEntry{}, fmt.Errorf("memory reports: entry: %w", err)
	}
	e, ok := r.l.reportEntry(id)
	if !ok {
		return ports.ReportEntry{}, fmt.Errorf("memory reports: entry %s: %w", id, ports.ErrNotFound)
	}
	owners := make(map[string]ledger.Account, len(accts))
	for _, a := range accts {
		owners[a.ID] = a
	}
	return r.reportEntry(e, owners), nil
}

// ExportSettlement calls fn with each posting of the rail's settlement
// account in [f.From, f.To), in order.
func (r *LedgerReports) ExportSettlement(ctx context.Context, f ports.SettlementExport, fn func(ports.SettlementRow) error) error {
	journal, accts, err := r.sync(ctx)
	if err != nil {
		return fmt.Errorf("memory reports: export: %w", err)
	}
	owner := map[string]string{}
	for _, a := range accts {
		owner[a.ID] = a.PlatformID
	}
	acct := ledger.RailSettlementID(f.Rail, f.Currency)
	ps := r.accountPostings(acct)
	prev, i := before(ps, f.From, false)
	for i++; i < len(ps) && ps[i].PostedAt.Before(f.To); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := ps[i]
		d := p.After.Sub(prev)
		prev = p.After
		counterparty := p.Transfer.CreditAccountID
		if !p.Debit {
			counterparty = p.Transfer.DebitAccountID
		}
		e := journal[p.Seq-1]
		row := ports.SettlementRow{
			Key: p.key(), AccountID: acct, Rail: f.Rail, Currency: f.Currency,
			EntryID: p.EntryID, TransferID: p.Transfer.ID, Seq: p.Seq, Kind: p.Transfer.Kind, Code: p.Transfer.Code,
			Amount: p.Transfer.Amount, Counterparty: counterparty, Posted: d.Net(), Pending: d.PendingNet(), Ref: e.Ref,
		}
		// The row belongs to its transaction's platform; a quote's payout
		// leg has a system account (FX position) as counterparty.
		rowOwner := owner[counterparty]
		if strings.HasPrefix(e.Ref, "Transaction:") {
			row.TransactionID = e.Ref
			if r.s != nil {
				if t, ok := r.s.reportTransaction(e.Ref); ok {
					row.RailReference, row.Status, rowOwner = t.Reference, t.Status, t.PlatformID
				}
			}
		}
		if f.PlatformID != "" && rowOwner != f.PlatformID {
			continue
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}

// VerifyJournal recomputes the hash chain and every account's counters
// from the journal. The memory store keeps no postings of its own (its
// index is derived from the journal), so there are none to compare.
func (r *LedgerReports) VerifyJournal(ctx context.Context, progress func(done, total int64), anchors ...ledger.Anchor) (ports.JournalVerification, error) {
	journal, accts, pend := r.l.reportState()
	c := ledger.NewJournalCheck(anchors...)
	total := int64(len(journal))
	for i, e := range journal {
		if i%verifyProgressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return ports.JournalVerification{}, err
			}
			if progress != nil {
				progress(int64(i), total)
			}
		}
		c.Add(e)
	}
	if progress != nil {
		progress(total, total)
	}
	return ports.SummarizeJournalCheck(c, accts, pend, 0, nil), nil
}

// verifyProgressEvery is how many entries VerifyJournal checks between
// progress calls.
const verifyProgressEvery = 10_000
