package postgres

import (
	"cmp"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// journalLock is the advisory lock key a batch holds from inserting its
// entries until it commits, so Seq follows commit order across instances.
const journalLock = 7_042_025_2002

// batchTimeout bounds one attempt at a batch.
const batchTimeout = 30 * time.Second

// metaCacheMax bounds the writer's account-flags cache; it is cleared when
// full (it only saves a lock on accounts it has seen).
const metaCacheMax = 1 << 20

// errLedgerInternal marks a batch the writer itself found inconsistent.
var errLedgerInternal = errors.New("postgres ledger: internal inconsistency")

// outcome is what the Book decided for one queued entry.
type outcome struct {
	entry ledger.Entry // as recorded; the stored entry for ErrExists*
	err   error
}

// postBatch runs one attempt at a batch in one transaction (see Ledger).
// maybe holds the indexes of entries that an earlier attempt of this batch
// may have committed (its COMMIT failed with an unknown outcome): finding
// them recorded now is their success, not ErrExists. postBatch adds to it
// when its own commit fails that way.
func (l *Ledger) postBatch(batch []*postRequest, maybe map[int]bool) ([]postResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	now := l.clock.Now().UTC().Truncate(time.Microsecond)

	keys := newBatchKeys(batch)

	conn, err := l.writerConn(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback()
		}
	}()

	book := ledger.NewBook()

	// 0. Quotes the batch's records change, locked in id order: their
	// changes are decided under these locks.
	quotes, err := loadQuotes(ctx, tx, keys.quotes)
	if err != nil {
		return nil, err
	}

	// 1. Holds the batch opens or resolves, locked in id order.
	loadedPending := map[string]bool{}
	if len(keys.pending) > 0 {
		ps, err := queryPending(ctx, tx, `SELECT `+pendingCols+` FROM ledger_pending
			WHERE id = ANY(?::text[]) ORDER BY id FOR UPDATE`, pgdialect.Array(keys.pending))
		if err != nil {
			return nil, fmt.Errorf("load holds: %w", err)
		}
		for _, p := range ps {
			book.PutPending(p)
			loadedPending[p.ID] = true
			keys.addAccount(p.DebitAccountID)
			keys.addAccount(p.CreditAccountID)
		}
	}

	// 2. Accounts: flagged ones locked in id order, the rest read without a
	// lock. Flags never change, so they are cached; accounts not seen before
	// have their flags read first (without a lock, so the lock order holds).
	var unseen []string
	for _, id := range keys.accounts {
		if _, ok := l.meta[id]; !ok {
			unseen = append(unseen, id)
		}
	}
	if len(unseen) > 0 {
		if err := l.learnFlags(ctx, tx, unseen); err != nil {
			return nil, err
		}
	}
	var lock, plain []string
	for _, id := range keys.accounts {
		f, ok := l.meta[id]
		switch {
		case !ok:
			// Does not exist: the Book refuses entries naming it.
		case f == 0:
			plain = append(plain, id)
		default:
			lock = append(lock, id)
		}
	}
	initial := map[string]ledger.Account{}
	if len(lock)+len(plain) > 0 {
		accts, err := queryAccounts(ctx, tx, `WITH l AS (
				SELECT `+accountCols+` FROM ledger_accounts WHERE id = ANY(?::text[]) ORDER BY id FOR UPDATE)
			SELECT `+accountCols+` FROM l
			UNION ALL
			SELECT `+accountCols+` FROM ledger_accounts WHERE id = ANY(?::text[])`,
			pgdialect.Array(nonNil(lock)), pgdialect.Array(nonNil(plain)))
		if err != nil {
			return nil, fmt.Errorf("load accounts: %w", err)
		}
		for _, a := range accts {
			book.PutAccount(a)
			initial[a.ID] = a
		}
	}

	// 3. Entries the batch re-posts or reverses, and their reversals.
	stored := map[string]ledger.JournalEntry{}
	if len(keys.entries) > 0 {
		es, err := loadEntries(ctx, tx, `WHERE id = ANY(?::text[]) ORDER BY seq`, pgdialect.Array(keys.entries))
		if err != nil {
			return nil, fmt.Errorf("load entries: %w", err)
		}
		if len(keys.reversed) > 0 {
			revs, err := loadEntries(ctx, tx, `WHERE reverses = ANY(?::text[]) ORDER BY seq`, pgdialect.Array(keys.reversed))
			if err != nil {
				return nil, fmt.Errorf("load reversals: %w", err)
			}
			es = append(es, revs...)
		}
		for _, e := range es {
			book.PutEntry(e.Entry)
			stored[e.ID] = e
		}
	}

	seen := map[string]struct{}{} // entries accepted so far
	// 4. The Book decides, entry by entry, in queue order, after the
	// call's quote preconditions (an entry already recorded skips them:
	// its caller learns ErrExists, and none of its records are written).
	outcomes := make([]outcome, len(batch))
	var accepted []ledger.Entry
	recordsOnly := false
	for i, r := range batch {
		_, known := stored[r.entry.ID]
		if !r.recordsOnly && !known {
			_, known = seen[r.entry.ID]
		}
		var next map[string]quoteState
		if r.recordsOnly || !known {
			if next, err = quotes.try(r); err != nil {
				outcomes[i] = outcome{entry: r.entry, err: fmt.Errorf("postgres ledger: post %s: %w", r.entry.ID, err)}
				continue
			}
		}
		if r.recordsOnly {
			recordsOnly = true // outcomes[i] stays "accepted", with no entry
			quotes.commit(next)
			continue
		}
		at := now
		if r.at.After(at) {
			at = r.at
		}
		rec, err := book.Apply(r.entry, at)
		outcomes[i] = outcome{entry: rec, err: err}
		if err == nil {
			accepted = append(accepted, rec)
			seen[rec.ID] = struct{}{}
			quotes.commit(next)
		}
	}

	seqs := map[string]int64{}
	if len(accepted) > 0 {
		w, err := newBatchWrites(book, accepted, initial, loadedPending, now)
		if err != nil {
			return nil, err
		}
		// 5. Journal rows, holds and outbox, under the journal lock.
		if seqs, err = w.insertJournal(ctx, tx); err != nil {
			return nil, err
		}
		// 6. Account deltas and postings.
		if err := w.updateAccounts(ctx, tx); err != nil {
			return nil, err
		}
	}
	// 7. The records of the accepted entries (PostWith) and the records
	// written alone (WriteRecords).
	if len(accepted) > 0 || recordsOnly {
		if err := insertRecords(ctx, tx, batch, outcomes, quotes); err != nil {
			return nil, err
		}
	}

	// 8. Commit (or, when nothing was accepted, just release the locks), then
	// answer.
	done = true
	if len(accepted) == 0 && !recordsOnly {
		if err := tx.Rollback(); err != nil {
			return nil, fmt.Errorf("rollback: %w", err)
		}
	} else if err := tx.Commit(); err != nil {
		var pgErr pgdriver.Error
		if !errors.As(err, &pgErr) {
			for i, o := range outcomes {
				if o.err == nil {
					maybe[i] = true
				}
			}
		}
		return nil, fmt.Errorf("commit: %w", err)
	}

	results := make([]postResult, len(batch))
	for i, o := range outcomes {
		if o.err == nil {
			results[i] = postResult{je: ledger.JournalEntry{Entry: o.entry, Seq: seqs[o.entry.ID], PostedAt: now}}
			continue
		}
		code := ledger.CodeOf(o.err)
		if code != ledger.CodeExists && code != ledger.CodeExistsWithDifferentFields {
			results[i] = postResult{err: o.err}
			continue
		}
		je := ledger.JournalEntry{Entry: o.entry}
		if seq, ok := seqs[o.entry.ID]; ok {
			je.Seq, je.PostedAt = seq, now
		} else if s, ok := stored[o.entry.ID]; ok {
			je = s
		}
		if _, recorded := stored[o.entry.ID]; recorded && code == ledger.CodeExists && maybe[i] {
			// Our own earlier attempt committed it.
			results[i] = postResult{je: je}
			continue
		}
		results[i] = postResult{je: je, err: o.err}
	}
	return results, nil
}

// insertRecords writes the records that came with the accepted entries
// (and with WriteRecords): transactions and jobs inserted and jobs
// completed in one statement of multi-row CTEs, then the status changes in
// one more. Transactions are inserted by platform and customer so
// concurrent writers take the list counters' row locks (the insert
// trigger's) in one order. A transaction id
// already stored fails the batch (not retryable), so its entries are then
// posted one by one and only the culprit fails; a queued job key is
// skipped, as Enqueue does.
func insertRecords(ctx context.Context, tx bun.Tx, batch []*postRequest, outcomes []outcome, quotes quoteBook) error {
	var quoteRows []storeQuoteRow
	var txns []storeTxnRow
	var jobs []storeJobRow
	var changes []ports.TransactionStatusChange
	var doneJobs []string
	for i, r := range batch {
		if outcomes[i].err == nil {
			quoteRows = append(quoteRows, r.quotes...)
			txns = append(txns, r.txns...)
			jobs = append(jobs, r.jobs...)
			changes = append(changes, r.changes...)
			doneJobs = append(doneJobs, r.doneJobs...)
		}
	}
	// The inserts and the job completions go in one statement (as
	// data-modifying CTEs): on a busy machine each round trip of the
	// writer costs milliseconds, and the batch's commit waits for all of
	// them. A completed job was queued (and claimed) before this batch, so
	// the delete need not see the jobs inserted beside it.
	q := tx.NewSelect().ColumnExpr("1")
	writes := 0
	if len(quoteRows) > 0 {
		slices.SortStableFunc(quoteRows, func(a, b storeQuoteRow) int { return cmp.Compare(a.ID, b.ID) })
		q = q.With("quotes_in", tx.NewInsert().Model(&quoteRows))
		writes++
	}
	if len(txns) > 0 {
		slices.SortStableFunc(txns, func(a, b storeTxnRow) int {
			return cmp.Or(cmp.Compare(a.PlatformID, b.PlatformID), cmp.Compare(a.CustomerID, b.CustomerID))
		})
		q = q.With("txns", tx.NewInsert().Model(&txns))
		writes++
	}
	if len(jobs) > 0 {
		q = q.With("jobs_in", tx.NewInsert().Model(&jobs).On("CONFLICT DO NOTHING"))
		writes++
	}
	if len(doneJobs) > 0 {
		q = q.With("jobs_done", tx.NewDelete().Model((*storeJobRow)(nil)).Where("id = ANY(?::text[])", pgdialect.Array(doneJobs)))
		writes++
	}
	if writes > 0 {
		if _, err := q.Exec(ctx); err != nil {
			return fmt.Errorf("write transactions and jobs: %w", err)
		}
	}
	// Status changes follow, so they see the quotes and transactions just
	// created.
	if err := quotes.write(ctx, tx); err != nil {
		return err
	}
	return changeStatuses(ctx, tx, changes)
}

// quoteState is what a batch knows of a quote its records change: as
// loaded (locked) or created, then as the accepted changes leave it.
type quoteState struct {
	platform, status string
	expires          time.Time
	updated          time.Time
	executed         *time.Time
	changed          bool // by an accepted call's change: to be written
}

// quoteBook decides a batch's quote changes in queue order, as if each
// call ran alone: a call sees the quotes created and changed by the calls
// accepted before it.
type quoteBook map[string]quoteState

// loadQuotes locks and reads the quotes among ids (in id order).
func loadQuotes(ctx context.Context, tx bun.Tx, ids []string) (quoteBook, error) {
	qb := quoteBook{}
	if len(ids) == 0 {
		return qb, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, platform_id, status, expires_at FROM quotes
		WHERE id = ANY(?::text[]) ORDER BY id FOR UPDATE`, pgdialect.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("load quotes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var s quoteState
		if err := rows.Scan(&id, &s.platform, &s.status, &s.expires); err != nil {
			return nil, fmt.Errorf("load quotes: %w", err)
		}
		qb[id] = s
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load quotes: %w", err)
	}
	return qb, nil
}

// try evaluates r's quote records against qb without changing it and
// returns the states they leave, or an error matching ports.ErrPrecondition
// when a Required change does not hold. A change that does not hold and is
// not required is skipped.
func (qb quoteBook) try(r *postRequest) (map[string]quoteState, error) {
	if len(r.quoteChanges) == 0 && len(r.quotes) == 0 {
		return nil, nil
	}
	next := map[string]quoteState{}
	get := func(id string) (quoteState, bool) {
		if s, ok := next[id]; ok {
			return s, true
		}
		s, ok := qb[id]
		return s, ok
	}
	for _, q := range r.quotes {
		if _, ok := get(q.ID); !ok {
			next[q.ID] = quoteState{platform: q.PlatformID, status: q.Status, expires: q.ExpiresAt}
		}
	}
	for _, c := range r.quoteChanges {
		s, ok := get(c.QuoteID)
		if !ok || s.platform != c.PlatformID || !c.Holds(s.status, s.expires) {
			if c.Required {
				return nil, fmt.Errorf("quote %s: %w", c.QuoteID, ports.ErrPrecondition)
			}
			continue
		}
		s.status, s.updated, s.changed = c.Status, c.UpdatedAt, true
		if c.ExecutedAt != nil {
			s.executed = c.ExecutedAt
		}
		next[c.QuoteID] = s
	}
	return next, nil
}

// commit makes the states try returned for an accepted call qb's.
func (qb quoteBook) commit(next map[string]quoteState) {
	maps.Copy(qb, next)
}

// write stores the changed quotes' final states in one statement. Their
// rows are locked (loaded FOR UPDATE) or created by this batch.
func (qb quoteBook) write(ctx context.Context, tx bun.Tx) error {
	var ids []string
	for id, s := range qb {
		if s.changed {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	status, updated, executed := make([]string, len(ids)), make([]string, len(ids)), make([]string, len(ids))
	for i, id := range ids {
		s := qb[id]
		status[i], updated[i] = s.status, formatTime(s.updated)
		if s.executed != nil {
			executed[i] = formatTime(*s.executed)
		}
	}
	_, err := tx.ExecContext(ctx, `UPDATE quotes q SET status = u.status, updated_at = coalesce(NULLIF(u.updated_at, '')::timestamptz, q.updated_at),
	executed_at = coalesce(NULLIF(u.executed_at, '')::timestamptz, q.executed_at)
FROM unnest(?::text[], ?::text[], ?::text[], ?::text[]) AS u(id, status, updated_at, executed_at)
WHERE q.id = u.id`, pgdialect.Array(ids), pgdialect.Array(status), pgdialect.Array(updated), pgdialect.Array(executed))
	if err != nil {
		return fmt.Errorf("change quote statuses: %w", err)
	}
	return nil
}

// changeStatuses applies the status changes of a batch in one statement,
// each only while the stored status is one of its From (statuses are
// upper-case words, so From travels as one comma-separated text). Rows are
// locked in id order, the order every batch uses.
func changeStatuses(ctx context.Context, tx bun.Tx, changes []ports.TransactionStatusChange) error {
	if len(changes) == 0 {
		return nil
	}
	slices.SortStableFunc(changes, func(a, b ports.TransactionStatusChange) int {
		return cmp.Compare(a.TransactionID, b.TransactionID)
	})
	n := len(changes)
	platform, id, from, status, updated, settled, reason := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, c := range changes {
		platform[i], id[i], from[i], status[i], reason[i] = c.PlatformID, c.TransactionID, strings.Join(c.From, ","), c.Status, c.FailureReason
		updated[i] = storeTime(c.UpdatedAt).Format(pgTimeLayout)
		if c.SettledAt != nil {
			settled[i] = storeTime(*c.SettledAt).Format(pgTimeLayout)
		}
	}
	_, err := tx.ExecContext(ctx, `WITH u AS (
	SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
		AS u(platform_id, id, from_statuses, status, updated_at, settled_at, failure_reason)),
l AS MATERIALIZED (
	SELECT t.id FROM transactions t JOIN u ON t.id = u.id AND t.platform_id = u.platform_id
	WHERE t.status = ANY(string_to_array(u.from_statuses, ','))
	ORDER BY t.id FOR UPDATE OF t)
UPDATE transactions t SET status = u.status, updated_at = u.updated_at::timestamptz,
	settled_at = coalesce(NULLIF(u.settled_at, '')::timestamptz, t.settled_at),
	failure_reason = coalesce(NULLIF(u.failure_reason, ''), t.failure_reason)
FROM u JOIN l ON l.id = u.id
WHERE t.id = u.id AND t.platform_id = u.platform_id AND t.status = ANY(string_to_array(u.from_statuses, ','))`,
		pgdialect.Array(platform), pgdialect.Array(id), pgdialect.Array(from), pgdialect.Array(status),
		pgdialect.Array(updated), pgdialect.Array(settled), pgdialect.Array(reason))
	if err != nil {
		return fmt.Errorf("change transaction statuses: %w", err)
	}
	return nil
}

// learnFlags caches the flags of the accounts among ids that exist.
func (l *Ledger) learnFlags(ctx context.Context, tx bun.Tx, ids []string) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, flags FROM ledger_accounts WHERE id = ANY(?::text[])`, pgdialect.Array(ids))
	if err != nil {
		return fmt.Errorf("load account flags: %w", err)
	}
	defer rows.Close()
	if len(l.meta)+len(ids) > metaCacheMax {
		clear(l.meta)
	}
	for rows.Next() {
		var id string
		var flags int64
		if err := rows.Scan(&id, &flags); err != nil {
			return fmt.Errorf("load account flags: %w", err)
		}
		l.meta[id] = ledger.AccountFlags(flags)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load account flags: %w", err)
	}
	return nil
}

// batchKeys are the rows a batch needs, each id once, in first-seen order.
type batchKeys struct {
	entries, reversed, pending, accounts, quotes []string
	seen                                 map[string]struct{}
}

func newBatchKeys(batch []*postRequest) *batchKeys {
	k := &batchKeys{seen: map[string]struct{}{}}
	for _, r := range batch {
		for _, c := range r.quoteChanges {
			k.add(&k.quotes, "q", c.QuoteID)
		}
		if r.recordsOnly {
			continue
		}
		e := r.entry
		k.add(&k.entries, "e", e.ID)
		if e.Reverses != "" {
			k.add(&k.entries, "e", e.Reverses)
			k.add(&k.reversed, "r", e.Reverses)
		}
		for _, t := range e.Transfers {
			switch t.Kind {
			case ledger.Pending:
				k.add(&k.pending, "p", t.ID)
			case ledger.PostPending, ledger.VoidPending:
				k.add(&k.pending, "p", t.PendingID)
			}
			k.addAccount(t.DebitAccountID)
			k.addAccount(t.CreditAccountID)
		}
	}
	return k
}

func (k *batchKeys) addAccount(id string) { k.add(&k.accounts, "a", id) }

func (k *batchKeys) add(list *[]string, kind, id string) {
	if id == "" {
		return
	}
	key := kind + "\x00" + id
	if _, ok := k.seen[key]; ok {
		return
	}
	k.seen[key] = struct{}{}
	*list = append(*list, id)
}

// batchWrites are the rows an accepted batch writes, as column arrays.
type batchWrites struct {
	now time.Time

	entryID, entryRef, entryReverses []string

	trEntry, trID, trKind, trDebit, trCredit, trCurrency, trPending, trCode []string
	trIdx                                                                   []int64
	trAmount, trTimeout                                                     []int64

	newPending, updPending []ledger.PendingTransfer
	resolvedBy             map[string]string

	obTopic, obKey, obEntry []string
	obPayload               [][]byte

	// Account deltas, by account id (sorted), the unflagged accounts among
	// them (not locked yet), and the postings in batch order.
	deltaIDs []string
	unlocked []string
	deltas   [][4]int64
	postings []posting
}

// posting is one transfer's effect on one account. after holds, once
// computed, what the batch adds to the account after this posting (the
// suffix sum), so the counters after it are the final counters minus after.
type posting struct {
	account, entryID, transferID string
	delta, after                 [4]int64
}

func newBatchWrites(book *ledger.Book, accepted []ledger.Entry, initial map[string]ledger.Account,
	loadedPending map[string]bool, now time.Time) (*batchWrites, error) {
	w := &batchWrites{now: now, resolvedBy: map[string]string{}}
	sum := map[string]*[4]int64{}
	post := func(account, entryID, transferID string, d [4]int64) {
		w.postings = append(w.postings, posting{account: account, entryID: entryID, transferID: transferID, delta: d})
		s, ok := sum[account]
		if !ok {
			s = &[4]int64{}
			sum[account] = s
		}
		for i := range d {
			s[i] += d[i]
		}
	}
	for _, e := range accepted {
		w.entryID = append(w.entryID, e.ID)
		w.entryRef = append(w.entryRef, e.Ref)
		w.entryReverses = append(w.entryReverses, e.Reverses)
		for i, t := range e.Transfers {
			w.trEntry = append(w.trEntry, e.ID)
			w.trIdx = append(w.trIdx, int64(i))
			w.trID = append(w.trID, t.ID)
			w.trKind = append(w.trKind, t.Kind.String())
			w.trDebit = append(w.trDebit, t.DebitAccountID)
			w.trCredit = append(w.trCredit, t.CreditAccountID)
			w.trAmount = append(w.trAmount, t.Amount)
			w.trCurrency = append(w.trCurrency, t.Currency)
			w.trPending = append(w.trPending, t.PendingID)
			w.trTimeout = append(w.trTimeout, int64(t.Timeout))
			w.trCode = append(w.trCode, t.Code)
			// Counter order: debits pending, debits posted, credits pending,
			// credits posted.
			a := t.Amount
			switch t.Kind {
			case ledger.Single:
				post(t.DebitAccountID, e.ID, t.ID, [4]int64{0, a, 0, 0})
				post(t.CreditAccountID, e.ID, t.ID, [4]int64{0, 0, 0, a})
			case ledger.Pending:
				post(t.DebitAccountID, e.ID, t.ID, [4]int64{a, 0, 0, 0})
				post(t.CreditAccountID, e.ID, t.ID, [4]int64{0, 0, a, 0})
			case ledger.PostPending, ledger.VoidPending:
				p, ok := book.Pending(t.PendingID)
				if !ok {
					return nil, fmt.Errorf("%w: entry %s resolves unknown hold %s", errLedgerInternal, e.ID, t.PendingID)
				}
				w.resolvedBy[p.ID] = e.ID
				posted := int64(0)
				if t.Kind == ledger.PostPending {
					posted = a
				}
				post(t.DebitAccountID, e.ID, t.ID, [4]int64{-p.Amount, posted, 0, 0})
				post(t.CreditAccountID, e.ID, t.ID, [4]int64{0, 0, -p.Amount, posted})
			}
		}
		for _, m := range e.Outbox {
			w.obTopic = append(w.obTopic, m.Topic)
			w.obKey = append(w.obKey, m.Key)
			w.obPayload = append(w.obPayload, nonNilBytes(m.Payload))
			w.obEntry = append(w.obEntry, e.ID)
		}
	}

	// The Book's final counters minus the loaded ones must be exactly what
	// the postings add up to.
	changed, pend := book.Changes()
	if len(changed) != len(sum) {
		return nil, fmt.Errorf("%w: %d accounts changed, postings touch %d", errLedgerInternal, len(changed), len(sum))
	}
	for _, a := range changed {
		s, ok := sum[a.ID]
		b, loaded := initial[a.ID]
		if !ok || !loaded {
			return nil, fmt.Errorf("%w: account %s changed without postings", errLedgerInternal, a.ID)
		}
		d := [4]int64{a.DebitsPending - b.DebitsPending, a.DebitsPosted - b.DebitsPosted,
			a.CreditsPending - b.CreditsPending, a.CreditsPosted - b.CreditsPosted}
		if d != *s {
			return nil, fmt.Errorf("%w: account %s: book delta %v, postings %v", errLedgerInternal, a.ID, d, *s)
		}
		w.deltaIDs = append(w.deltaIDs, a.ID) // Changes is ordered by id
		w.deltas = append(w.deltas, d)
		if b.Flags == 0 {
			w.unlocked = append(w.unlocked, a.ID)
		}
	}
	running := map[string][4]int64{}
	for i := len(w.postings) - 1; i >= 0; i-- {
		p := &w.postings[i]
		p.after = running[p.account]
		r := p.after
		for j := range r {
			r[j] += p.delta[j]
		}
		running[p.account] = r
	}
	for _, p := range pend {
		if loadedPending[p.ID] {
			w.updPending = append(w.updPending, p)
		} else {
			w.newPending = append(w.newPending, p)
		}
	}
	return w, nil
}

// insertJournal writes entries, transfers, holds and outbox messages in one
// statement, under the journal lock, and returns the entries' Seq by id.
func (w *batchWrites) insertJournal(ctx context.Context, tx bun.Tx) (map[string]int64, error) {
	var q strings.Builder
	args := []any{journalLock}
	q.WriteString(`WITH j AS (SELECT pg_advisory_xact_lock(?) AS locked),
e AS (
	INSERT INTO ledger_entries (id, ref, reverses, posted_at)
	SELECT u.id, u.ref, NULLIF(u.reverses, ''), ?::timestamptz
	FROM unnest(?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS u(id, ref, reverses, ord) CROSS JOIN j
	ORDER BY u.ord
	RETURNING id, seq),
t AS (
	INSERT INTO ledger_transfers (entry_id, idx, id, kind, debit_account_id, credit_account_id, amount, currency, pending_id, timeout_ns, code)
	SELECT u.entry_id, u.idx, u.id, u.kind, u.dr, u.cr, u.amount, u.currency, u.pending_id, u.timeout_ns, u.code
	FROM unnest(?::text[], ?::int[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::text[])
		AS u(entry_id, idx, id, kind, dr, cr, amount, currency, pending_id, timeout_ns, code) CROSS JOIN j)`)
	args = append(args, w.now,
		pgdialect.Array(w.entryID), pgdialect.Array(w.entryRef), pgdialect.Array(w.entryReverses),
		pgdialect.Array(w.trEntry), pgdialect.Array(w.trIdx), pgdialect.Array(w.trID), pgdialect.Array(w.trKind),
		pgdialect.Array(w.trDebit), pgdialect.Array(w.trCredit), pgdialect.Array(w.trAmount),
		pgdialect.Array(w.trCurrency), pgdialect.Array(w.trPending), pgdialect.Array(w.trTimeout), pgdialect.Array(w.trCode))

	if len(w.newPending) > 0 {
		n := len(w.newPending)
		id, entry, dr, cr, cur, code, status, expires, resolved := make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		amount, timeout, posted := make([]int64, n), make([]int64, n), make([]int64, n)
		for i, p := range w.newPending {
			id[i], entry[i], dr[i], cr[i], cur[i], code[i] = p.ID, p.EntryID, p.DebitAccountID, p.CreditAccountID, p.Currency, p.Code
			status[i], expires[i], resolved[i] = p.Status.String(), formatTime(p.ExpiresAt), w.resolvedBy[p.ID]
			amount[i], timeout[i], posted[i] = p.Amount, int64(p.Timeout), p.PostedAmount
		}
		q.WriteString(`,
pi AS (
	INSERT INTO ledger_pending (id, entry_id, debit_account_id, credit_account_id, amount, currency, timeout_ns, code,
		status, expires_at, posted_amount, resolved_by, created_at)
	SELECT u.id, u.entry_id, u.dr, u.cr, u.amount, u.currency, u.timeout_ns, u.code,
		u.status, NULLIF(u.expires_at, '')::timestamptz, u.posted_amount, NULLIF(u.resolved_by, ''), ?::timestamptz
	FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::bigint[], ?::text[],
		?::text[], ?::text[], ?::bigint[], ?::text[])
		AS u(id, entry_id, dr, cr, amount, currency, timeout_ns, code, status, expires_at, posted_amount, resolved_by) CROSS JOIN j)`)
		args = append(args, w.now, pgdialect.Array(id), pgdialect.Array(entry), pgdialect.Array(dr), pgdialect.Array(cr),
			pgdialect.Array(amount), pgdialect.Array(cur), pgdialect.Array(timeout), pgdialect.Array(code),
			pgdialect.Array(status), pgdialect.Array(expires), pgdialect.Array(posted), pgdialect.Array(resolved))
	}
	if len(w.updPending) > 0 {
		n := len(w.updPending)
		id, status, resolved := make([]string, n), make([]string, n), make([]string, n)
		posted := make([]int64, n)
		for i, p := range w.updPending {
			id[i], status[i], resolved[i], posted[i] = p.ID, p.Status.String(), w.resolvedBy[p.ID], p.PostedAmount
		}
		q.WriteString(`,
pu AS (
	UPDATE ledger_pending p SET status = u.status, posted_amount = u.posted_amount, resolved_by = NULLIF(u.resolved_by, '')
	FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[]) AS u(id, status, posted_amount, resolved_by) CROSS JOIN j
	WHERE p.id = u.id)`)
		args = append(args, pgdialect.Array(id), pgdialect.Array(status), pgdialect.Array(posted), pgdialect.Array(resolved))
	}
	if len(w.obTopic) > 0 {
		q.WriteString(`,
o AS (
	INSERT INTO outbox (topic, key, payload, entry_id, created_at)
	SELECT u.topic, u.key, u.payload, u.entry_id, ?::timestamptz
	FROM unnest(?::text[], ?::text[], ?::bytea[], ?::text[]) WITH ORDINALITY AS u(topic, key, payload, entry_id, ord) CROSS JOIN j
	ORDER BY u.ord)`)
		args = append(args, w.now, pgdialect.Array(w.obTopic), pgdialect.Array(w.obKey), pgdialect.Array(w.obPayload), pgdialect.Array(w.obEntry))
	}
	q.WriteString(`
SELECT id, seq FROM e`)

	rows, err := tx.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("write journal: %w", err)
	}
	defer rows.Close()
	seqs := make(map[string]int64, len(w.entryID))
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, fmt.Errorf("write journal: %w", err)
		}
		seqs[id] = seq
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("write journal: %w", err)
	}
	if len(seqs) != len(w.entryID) {
		return nil, fmt.Errorf("%w: wrote %d entries, got %d seqs", errLedgerInternal, len(w.entryID), len(seqs))
	}
	return seqs, nil
}

// updateAccounts locks the touched accounts that are not locked yet (the
// unflagged ones) in id order, then adds each touched account's summed delta
// once, and writes the postings with the counters after each. The
// uncorrelated "(SELECT count(*) FROM l)" condition is evaluated once before
// the UPDATE reads any row, so every lock is taken in order first.
func (w *batchWrites) updateAccounts(ctx context.Context, tx bun.Tx) error {
	n := len(w.deltaIDs)
	dp, dpo, cp, cpo := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	for i, d := range w.deltas {
		dp[i], dpo[i], cp[i], cpo[i] = d[0], d[1], d[2], d[3]
	}
	m := len(w.postings)
	pAcct, pEntry, pTransfer := make([]string, m), make([]string, m), make([]string, m)
	a0, a1, a2, a3 := make([]int64, m), make([]int64, m), make([]int64, m), make([]int64, m)
	for i, p := range w.postings {
		pAcct[i], pEntry[i], pTransfer[i] = p.account, p.entryID, p.transferID
		a0[i], a1[i], a2[i], a3[i] = p.after[0], p.after[1], p.after[2], p.after[3]
	}
	var updated, posted int
	err := tx.QueryRowContext(ctx, `WITH d AS (
	SELECT * FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[]) AS d(id, dp, dpo, cp, cpo)),
l AS MATERIALIZED (
	SELECT a.id FROM ledger_accounts a WHERE a.id = ANY(?::text[]) ORDER BY a.id FOR UPDATE),
u AS (
	UPDATE ledger_accounts a SET
		debits_pending = a.debits_pending + d.dp,
		debits_posted = a.debits_posted + d.dpo,
		credits_pending = a.credits_pending + d.cp,
		credits_posted = a.credits_posted + d.cpo
	FROM d
	WHERE a.id = d.id AND (SELECT count(*) FROM l) >= 0
	RETURNING a.id, a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted),
p AS (
	INSERT INTO ledger_postings (account_id, entry_id, transfer_id, posted_at, debits_pending, debits_posted, credits_pending, credits_posted)
	SELECT x.account_id, x.entry_id, x.transfer_id, ?::timestamptz,
		u.debits_pending - x.a0, u.debits_posted - x.a1, u.credits_pending - x.a2, u.credits_posted - x.a3
	FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[])
		WITH ORDINALITY AS x(account_id, entry_id, transfer_id, a0, a1, a2, a3, ord)
	JOIN u ON u.id = x.account_id
	ORDER BY x.ord
	RETURNING 1)
SELECT (SELECT count(*) FROM u), (SELECT count(*) FROM p)`,
		pgdialect.Array(w.deltaIDs), pgdialect.Array(dp), pgdialect.Array(dpo), pgdialect.Array(cp), pgdialect.Array(cpo),
		pgdialect.Array(nonNil(w.unlocked)), w.now,
		pgdialect.Array(pAcct), pgdialect.Array(pEntry), pgdialect.Array(pTransfer),
		pgdialect.Array(a0), pgdialect.Array(a1), pgdialect.Array(a2), pgdialect.Array(a3),
	).Scan(&updated, &posted)
	if err != nil {
		return fmt.Errorf("update accounts: %w", err)
	}
	if updated != n || posted != m {
		return fmt.Errorf("%w: updated %d of %d accounts, wrote %d of %d postings", errLedgerInternal, updated, n, posted, m)
	}
	return nil
}

// retryable reports whether re-running a whole batch may succeed: lock
// conflicts between writers, a uniqueness race with another instance that
// the next attempt sees as a stored row, or a connection lost mid-batch.
func retryable(err error) bool {
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		switch pgErr.Field('C') {
		case "40001", "40P01", "55P03": // serialization_failure, deadlock_detected, lock_not_available
			return true
		case "23505": // unique_violation
			switch pgErr.Field('n') {
			case "ledger_entries_pkey", "ledger_entries_reverses_key", "ledger_pending_pkey":
				return true
			}
		case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		}
		return false
	}
	var netErr net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &netErr)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

const pgTimeLayout = "2006-01-02T15:04:05.999999Z07:00"

// formatTime renders t for a text array cast to timestamptz; "" is NULL.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(pgTimeLayout)
}
