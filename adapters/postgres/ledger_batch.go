package postgres

import (
	"cmp"
	"context"
	"database/sql"
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
	"github.com/uptrace/bun/schema"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// journalLock is the advisory lock key a batch holds from its load
// statement (ledger_chain_head takes it) until it commits, so Seq follows
// commit order across instances and each batch chains to the last.
const journalLock = 7_042_025_2002

// batchTimeout bounds one attempt at a batch.
const batchTimeout = 30 * time.Second

// errLedgerInternal marks a batch the writer itself found inconsistent.
var errLedgerInternal = errors.New("postgres ledger: internal inconsistency")

// outcome is what the Book decided for one queued entry.
type outcome struct {
	entry ledger.Entry // as recorded; the stored entry for ErrExists*
	err   error
}

// postBatch runs one attempt at a batch in one transaction (see Ledger):
// two round trips open the transaction and load (and lock) what the batch
// reads, the Book decides in Go, and one more round trip writes everything
// and commits. maybe holds the indexes of entries that an
// earlier attempt of this batch may have committed (the round trip that
// commits failed with an unknown outcome): finding them recorded now is
// their success, not ErrExists. postBatch adds to it when its own write
// fails that way.
func (l *Ledger) postBatch(batch []*postRequest, maybe map[int]bool) ([]postResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	now := l.clock.Now().UTC().Truncate(time.Microsecond)

	keys := newBatchKeys(batch)

	conn, err := l.writerConn(ctx)
	if err != nil {
		return nil, err
	}
	open := true // a transaction may be open on conn
	defer func() {
		if !open {
			return
		}
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		if _, err := conn.ExecContext(rctx, "ROLLBACK"); err != nil {
			l.dropConn()
		}
	}()

	// 1. BEGIN and the load statement. A batch of records alone that
	// changes no quote reads nothing: its BEGIN goes with its writes, and
	// the whole batch is one round trip.
	ld := &batchLoad{quotes: quoteBook{}}
	var q []byte
	switch {
	case len(keys.entries) > 0 || len(keys.quotes) > 0:
		if ld, err = l.load(ctx, conn, keys); err != nil {
			return nil, err
		}
	case createsRows(batch):
		// Rows a retry could not write again: know the transaction, to
		// ask after it if the reply to its COMMIT is lost.
		if err := conn.QueryRowContext(ctx, "BEGIN; SELECT txid_current()").Scan(&ld.xid); err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
	default:
		q = append(q, "BEGIN;\n"...)
	}
	book := ledger.NewBook()
	loadedPending := map[string]bool{}
	for _, p := range ld.pending {
		book.PutPending(p)
		loadedPending[p.ID] = true
	}
	initial := map[string]ledger.Account{}
	for _, a := range ld.accounts {
		book.PutAccount(a)
		initial[a.ID] = a
	}
	stored := map[string]ledger.JournalEntry{}
	for _, e := range ld.entries {
		book.PutEntry(e.Entry)
		stored[e.ID] = e
	}
	quotes := ld.quotes

	// 2. The Book decides, entry by entry, in queue order, after the
	// call's quote preconditions (an entry already recorded skips them:
	// its caller learns ErrExists, and none of its records are written).
	outcomes := make([]outcome, len(batch))
	var accepted []ledger.Entry
	recordsOnly := false
	for i, r := range batch {
		var next map[string]quoteState
		// known: loaded, or accepted earlier in this batch (records alone
		// have no entry).
		if _, known := book.Entry(r.entry.ID); r.recordsOnly || !known {
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
			quotes.commit(next)
		}
	}

	// 3. Nothing accepted: release the locks.
	if len(accepted) == 0 && !recordsOnly {
		open = false
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			l.dropConn()
			return nil, fmt.Errorf("rollback: %w", err)
		}
		return answers(batch, outcomes, stored, nil, nil, maybe), nil
	}

	// 4. Everything the batch writes, then COMMIT, in one round trip (see
	// writeBatch).
	var chained map[string]ledger.JournalEntry
	var w *batchWrites
	if len(accepted) > 0 {
		if w, err = newBatchWrites(book, accepted, initial, loadedPending, now); err != nil {
			return nil, err
		}
		chained = w.chain(ld.head)
		q = w.appendJournal(l.db.QueryGen(), q)
	}
	if q, err = appendRecords(l.db, q, batch, outcomes, quotes); err != nil {
		return nil, err
	}
	var rollBack, lose bool
	if l.writeFault != nil {
		rollBack, lose = l.writeFault()
	}
	if rollBack {
		q = append(q, "ROLLBACK"...)
	} else {
		q = append(q, "COMMIT"...)
	}
	seqs, err := writeBatch(ctx, conn, string(q), w)
	if err == nil && lose {
		err = fmt.Errorf("write: reply lost (test fault): %w", io.ErrUnexpectedEOF)
	}
	open = false
	if err != nil {
		var pgErr pgdriver.Error
		if errors.As(err, &pgErr) {
			// Refused by the server: the transaction did not commit.
			open = true
			return nil, err
		}
		// The reply never came: the batch may or may not have committed.
		l.dropConn()
		switch l.settled(ld.xid) {
		case "committed":
			if seqs, rerr := l.entrySeqs(accepted); rerr == nil {
				return answers(batch, outcomes, stored, chained, seqs, maybe), nil
			}
		case "aborted":
			return nil, err // nothing was written: a retry starts afresh
		}
		// Unknown: a retry finds what was recorded (see maybe).
		for i, o := range outcomes {
			if o.err == nil {
				maybe[i] = true
			}
		}
		return nil, err
	}
	return answers(batch, outcomes, stored, chained, seqs, maybe), nil
}

// createsRows reports whether a batch's records alone insert quotes or
// transactions, which a retry of a batch that did commit could not insert
// again. (Entries are found recorded by the retry's load; status changes
// and job writes can be made twice.)
func createsRows(batch []*postRequest) bool {
	for _, r := range batch {
		if r.recordsOnly && (len(r.txns) > 0 || len(r.quotes) > 0) {
			return true
		}
	}
	return false
}

// settledTimeout bounds how long the writer waits for a transaction whose
// COMMIT reply was lost to finish on the server.
const settledTimeout = 5 * time.Second

// settled asks the server, on a new connection, how the transaction xid
// ended: "committed" or "aborted", or "" when xid is 0, the server cannot
// tell, or it is still in progress after settledTimeout (its session may
// still be running the COMMIT).
func (l *Ledger) settled(xid int64) string {
	if xid == 0 {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), settledTimeout)
	defer cancel()
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		var status sql.NullString
		if err := l.db.QueryRowContext(ctx, "SELECT txid_status(?)", xid).Scan(&status); err != nil {
			l.opts.Logger.Warn("ledger batch: commit outcome unknown", "xid", xid, "err", err)
			return ""
		}
		if status.String != "in progress" {
			return status.String
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(wait):
		}
	}
}

// entrySeqs reads the journal sequence numbers of entries a batch
// committed (their RETURNING was in the lost reply).
func (l *Ledger) entrySeqs(entries []ledger.Entry) (map[string]int64, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	var rows []struct {
		ID  string `bun:"id"`
		Seq int64  `bun:"seq"`
	}
	if err := l.db.NewRaw("SELECT id, seq FROM ledger_entries WHERE id = ANY(?::text[])", pgdialect.Array(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read committed seqs: %w", err)
	}
	if len(rows) != len(ids) {
		return nil, fmt.Errorf("%w: committed batch: %d of %d entries found", errLedgerInternal, len(rows), len(ids))
	}
	seqs := make(map[string]int64, len(rows))
	for _, r := range rows {
		seqs[r.ID] = r.Seq
	}
	return seqs, nil
}

// answers turns the outcomes into each caller's result. chained holds the
// recorded entries (with their hashes) and seqs their Seq, by id.
func answers(batch []*postRequest, outcomes []outcome, stored, chained map[string]ledger.JournalEntry,
	seqs map[string]int64, maybe map[int]bool) []postResult {
	results := make([]postResult, len(batch))
	for i, o := range outcomes {
		if o.err == nil {
			je := ledger.JournalEntry{Entry: o.entry}
			if c, ok := chained[o.entry.ID]; ok {
				je = c
				je.Seq = seqs[o.entry.ID]
			}
			results[i] = postResult{je: je}
			continue
		}
		code := ledger.CodeOf(o.err)
		if code != ledger.CodeExists && code != ledger.CodeExistsWithDifferentFields {
			results[i] = postResult{err: o.err}
			continue
		}
		je := ledger.JournalEntry{Entry: o.entry}
		if c, ok := chained[o.entry.ID]; ok {
			// Recorded earlier in this batch.
			je = c
			je.Seq = seqs[o.entry.ID]
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
	return results
}

// batchLoad is what a batch reads before the Book decides.
type batchLoad struct {
	quotes   quoteBook
	pending  []ledger.PendingTransfer
	accounts []ledger.Account
	entries  []ledger.JournalEntry
	head     [32]byte // the hash of the last committed entry, or ZeroHash
	// xid is the batch transaction's id (txid_current()), which tells
	// whether it committed when the reply to its COMMIT is lost; 0 when
	// not read.
	xid int64
}

// loadCols are the columns of the load statement's rows: a kind, then
// columns each kind fills as loadSelect maps them (NULL elsewhere).
var loadCols = []string{"k", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "n1", "n2", "n3", "n4", "n5", "t1", "b1", "b2"}

var loadTypes = map[byte]string{'k': "text", 's': "text", 'n': "bigint", 't': "timestamptz", 'b': "bytea"}

// loadSelect is one branch of the load statement: kind and the columns it
// fills (loadCols name → expression), from tail.
func loadSelect(kind string, cols map[string]string, tail string) string {
	var b strings.Builder
	b.WriteString("SELECT '" + kind + "'::text")
	for _, c := range loadCols[1:] {
		b.WriteString(", ")
		if e, ok := cols[c]; ok {
			b.WriteString("(" + e + ")::" + loadTypes[c[0]])
		} else {
			b.WriteString("NULL::" + loadTypes[c[0]])
		}
	}
	b.WriteString(" " + tail)
	return b.String()
}

// loadStatements read, in one statement, everything a batch's Book needs
// (the batch's transaction is open). Locks are taken in the writer's order, each
// branch of the UNION ALL running to its end before the next starts (and
// each locking CTE depending on the one before): quotes the records
// change, holds the batch opens or resolves, the accounts whose flags
// make their balance decide (FOR UPDATE, in id order each), then the
// journal lock (ledger_chain_head, which reads the last committed hash
// after the lock is granted). Unflagged accounts are read without a lock:
// they never refuse a transfer, and the write statement adds deltas to
// them under a lock held only until commit (see "Hot accounts" on Ledger).
// Keys are matched with = ANY(ARRAY(…)) so each read is an index lookup
// (an IN over a CTE lets the planner walk the whole index instead).
//
// loadStatements[1] reads the reversals of the entries the batch reverses
// too; loadStatements[0], for the usual batch that reverses nothing, leaves
// that condition out (an OR over two indexes costs the planner more). They
// are prepared statements: $1 quotes, $2 holds, $3 accounts, $4 the
// journal lock, $5 entries, $6 reversed entries.
var loadStatements = [2]string{numberParams(buildLoadQuery("")), numberParams(buildLoadQuery(`
	UNION SELECT id, seq, ref, reverses, posted_at, hash, prev_hash FROM ledger_entries WHERE reverses = ANY(?::text[])`))}

// numberParams turns a load query's ? placeholders into $1, $2….
func numberParams(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func buildLoadQuery(reversals string) string {
	return `WITH q AS MATERIALIZED (
	SELECT id, platform_id, status, expires_at FROM quotes WHERE id = ANY(?::text[]) ORDER BY id FOR UPDATE),
p AS MATERIALIZED (
	SELECT ` + pendingCols + ` FROM ledger_pending
	WHERE id = ANY(?::text[]) AND (SELECT count(*) FROM q) >= 0 ORDER BY id FOR UPDATE),
ids AS MATERIALIZED (
	SELECT unnest(?::text[]) AS id UNION SELECT debit_account_id FROM p UNION SELECT credit_account_id FROM p),
fa AS MATERIALIZED (
	SELECT ` + accountCols + ` FROM ledger_accounts WHERE id = ANY(ARRAY(SELECT id FROM ids)) AND flags <> 0 ORDER BY id FOR UPDATE),
h AS MATERIALIZED (
	SELECT ledger_chain_head(?) AS hash FROM (SELECT count(*) FROM fa) c),
e AS MATERIALIZED (
	SELECT id, seq, ref, reverses, posted_at, hash, prev_hash FROM ledger_entries WHERE id = ANY(?::text[])` + reversals + `)
` + loadSelect("q", map[string]string{"s1": "id", "s2": "platform_id", "s3": "status", "t1": "expires_at"}, "FROM q") + `
UNION ALL ` + loadSelect("p", map[string]string{"s1": "id", "s2": "entry_id", "s3": "debit_account_id", "s4": "credit_account_id",
		"s5": "currency", "s6": "code", "s7": "status", "n1": "amount", "n2": "timeout_ns", "n3": "posted_amount", "t1": "expires_at"}, "FROM p") + `
UNION ALL ` + loadSelect("a", loadAccountCols, "FROM fa") + `
UNION ALL ` + loadSelect("h", map[string]string{"b1": "hash"}, "FROM h") + `
UNION ALL ` + loadSelect("x", map[string]string{"n1": "txid_current()"}, "") + `
UNION ALL ` + loadSelect("a", loadAccountCols, "FROM ledger_accounts WHERE id = ANY(ARRAY(SELECT id FROM ids EXCEPT SELECT id FROM fa)) AND flags = 0") + `
UNION ALL ` + loadSelect("e", map[string]string{"s1": "id", "s2": "ref", "s3": "COALESCE(reverses, '')", "n1": "seq", "t1": "posted_at",
		"b1": "hash", "b2": "prev_hash"}, "FROM e") + `
UNION ALL ` + loadSelect("t", map[string]string{"s1": "entry_id", "s2": "id", "s3": "kind", "s4": "debit_account_id",
		"s5": "credit_account_id", "s6": "currency", "s7": "pending_id", "s8": "code", "n1": "idx", "n2": "amount", "n3": "timeout_ns"},
		"FROM ledger_transfers WHERE entry_id = ANY(ARRAY(SELECT id FROM e))") + `
UNION ALL ` + loadSelect("o", map[string]string{"s1": "entry_id", "s2": "topic", "s3": "key", "n1": "id", "b1": "payload"},
		"FROM outbox WHERE entry_id = ANY(ARRAY(SELECT id FROM e))")
}

var loadAccountCols = map[string]string{"s1": "id", "s2": "currency", "s3": "kind", "s4": "platform_id",
	"n1": "flags", "n2": "debits_pending", "n3": "debits_posted", "n4": "credits_pending", "n5": "credits_posted", "t1": "created_at"}

// load opens the batch's transaction and runs the load statement for
// keys. The statement is prepared on the writer's connection, so the
// server plans it once per session (which prefers index scans, see
// writerSession) rather than once per batch: at concurrency 1 that took a
// transfer-out from 7.4 to 4.8 ms (p50), the BEGIN's own round trip
// included.
func (l *Ledger) load(ctx context.Context, conn bun.Conn, keys *batchKeys) (*batchLoad, error) {
	which := 0
	args := []any{textArray(keys.quotes), textArray(keys.pending), textArray(keys.accounts), int64(journalLock),
		textArray(keys.entries)}
	if len(keys.reversed) > 0 {
		which, args = 1, append(args, textArray(keys.reversed))
	}
	if l.loads[which] == nil {
		stmt, err := conn.PrepareContext(ctx, loadStatements[which])
		if err != nil {
			return nil, fmt.Errorf("load: prepare: %w", err)
		}
		l.loads[which] = stmt
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return nil, fmt.Errorf("load: begin: %w", err)
	}
	rows, err := l.loads[which].QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	defer rows.Close()
	ld := &batchLoad{quotes: quoteBook{}}
	entryAt := map[string]int{}
	type transferRow struct {
		entry string
		idx   int64
		t     ledger.Transfer
	}
	type outboxRow struct {
		entry string
		id    int64
		m     ledger.OutboxMessage
	}
	var transfers []transferRow
	var outbox []outboxRow
	var kind string
	var s [8]sql.NullString
	var n [5]sql.NullInt64
	var t sql.NullTime
	var b1, b2 []byte
	dest := []any{&kind, &s[0], &s[1], &s[2], &s[3], &s[4], &s[5], &s[6], &s[7], &n[0], &n[1], &n[2], &n[3], &n[4], &t, &b1, &b2}
	for rows.Next() {
		b1, b2 = nil, nil
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		switch kind {
		case "q":
			ld.quotes[s[0].String] = quoteState{platform: s[1].String, status: s[2].String, expires: t.Time}
		case "p":
			p := ledger.PendingTransfer{Transfer: ledger.Transfer{Kind: ledger.Pending, ID: s[0].String,
				DebitAccountID: s[2].String, CreditAccountID: s[3].String, Currency: s[4].String, Code: s[5].String,
				Amount: n[0].Int64, Timeout: time.Duration(n[1].Int64)}, EntryID: s[1].String, PostedAmount: n[2].Int64}
			if p.Status, err = parsePendingStatus(s[6].String); err != nil {
				return nil, fmt.Errorf("load: hold %s: %w", p.ID, err)
			}
			if t.Valid {
				p.ExpiresAt = t.Time.UTC()
			}
			ld.pending = append(ld.pending, p)
		case "a":
			ld.accounts = append(ld.accounts, ledger.Account{ID: s[0].String, Currency: s[1].String, Kind: s[2].String,
				PlatformID: s[3].String, Flags: ledger.AccountFlags(n[0].Int64), DebitsPending: n[1].Int64,
				DebitsPosted: n[2].Int64, CreditsPending: n[3].Int64, CreditsPosted: n[4].Int64, CreatedAt: t.Time.UTC()})
		case "x":
			ld.xid = n[0].Int64
		case "h":
			if err := readHash(&ld.head, b1); err != nil {
				return nil, fmt.Errorf("load: chain head: %w", err)
			}
		case "e":
			e := ledger.JournalEntry{Entry: ledger.Entry{ID: s[0].String, Ref: s[1].String, Reverses: s[2].String},
				Seq: n[0].Int64, PostedAt: t.Time.UTC()}
			if err := readHash(&e.Hash, b1); err != nil {
				return nil, fmt.Errorf("load: entry %s: %w", e.ID, err)
			}
			if err := readHash(&e.PrevHash, b2); err != nil {
				return nil, fmt.Errorf("load: entry %s: %w", e.ID, err)
			}
			ld.entries = append(ld.entries, e)
		case "t":
			tr := ledger.Transfer{ID: s[1].String, DebitAccountID: s[3].String, CreditAccountID: s[4].String,
				Currency: s[5].String, PendingID: s[6].String, Code: s[7].String, Amount: n[1].Int64, Timeout: time.Duration(n[2].Int64)}
			if tr.Kind, err = parseTransferKind(s[2].String); err != nil {
				return nil, fmt.Errorf("load: transfer %s: %w", tr.ID, err)
			}
			transfers = append(transfers, transferRow{entry: s[0].String, idx: n[0].Int64, t: tr})
		case "o":
			outbox = append(outbox, outboxRow{entry: s[0].String, id: n[0].Int64,
				m: ledger.OutboxMessage{Topic: s[1].String, Key: s[2].String, Payload: slices.Clone(b1)}})
		default:
			return nil, fmt.Errorf("%w: load row of kind %q", errLedgerInternal, kind)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	slices.SortFunc(ld.entries, func(a, b ledger.JournalEntry) int { return cmp.Compare(a.Seq, b.Seq) })
	for i, e := range ld.entries {
		entryAt[e.ID] = i
	}
	slices.SortFunc(transfers, func(a, b transferRow) int {
		return cmp.Or(strings.Compare(a.entry, b.entry), cmp.Compare(a.idx, b.idx))
	})
	for _, tr := range transfers {
		e := &ld.entries[entryAt[tr.entry]]
		e.Transfers = append(e.Transfers, tr.t)
	}
	slices.SortFunc(outbox, func(a, b outboxRow) int { return cmp.Compare(a.id, b.id) })
	for _, o := range outbox {
		e := &ld.entries[entryAt[o.entry]]
		e.Outbox = append(e.Outbox, o.m)
	}
	return ld, nil
}

// readHash copies a stored hash into h; NULL (an entry recorded before the
// chain existed, or an empty journal) leaves ZeroHash.
func readHash(h *[32]byte, b []byte) error {
	switch len(b) {
	case 0:
		*h = ledger.ZeroHash
	case len(h):
		copy(h[:], b)
	default:
		return fmt.Errorf("%w: a hash of %d bytes", errLedgerInternal, len(b))
	}
	return nil
}

// writeBatch sends q, the batch's writes and its COMMIT, as one simple
// query (one round trip; the server runs the statements in order and skips
// the rest after an error, the COMMIT included). When the batch records
// entries, the first statement (appendJournal) returns their Seq and the
// counts it checks.
func writeBatch(ctx context.Context, conn bun.Conn, q string, w *batchWrites) (map[string]int64, error) {
	if w == nil {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("write records and commit: %w", err)
		}
		return nil, nil
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("write and commit: %w", err)
	}
	defer rows.Close()
	seqs := make(map[string]int64, len(w.entryID))
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, fmt.Errorf("write and commit: %w", err)
		}
		seqs[id] = seq
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("write and commit: %w", err)
	}
	if len(seqs) != len(w.entryID) {
		// Cannot happen (the insert writes every row or fails), and the
		// batch is committed: report it loudly.
		return nil, fmt.Errorf("%w: committed %d entries, got %d seqs", errLedgerInternal, len(w.entryID), len(seqs))
	}
	return seqs, nil
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

// appendWrite appends the statement that stores the changed quotes' final
// states. Their rows are locked (loaded FOR UPDATE) or created by this
// batch.
func (qb quoteBook) appendWrite(gen schema.QueryGen, b []byte) []byte {
	var ids []string
	for id, s := range qb {
		if s.changed {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return b
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
	b = gen.AppendQuery(b, `UPDATE quotes q SET status = u.status, updated_at = coalesce(NULLIF(u.updated_at, '')::timestamptz, q.updated_at),
	executed_at = coalesce(NULLIF(u.executed_at, '')::timestamptz, q.executed_at)
FROM unnest(?::text[], ?::text[], ?::text[], ?::text[]) AS u(id, status, updated_at, executed_at)
WHERE q.id = u.id`, pgdialect.Array(ids), pgdialect.Array(status), pgdialect.Array(updated), pgdialect.Array(executed))
	return append(b, ";\n"...)
}

// appendStatusChanges appends the statement that applies a batch's status
// changes,
// each only while the stored status is one of its From (statuses are
// upper-case words, so From travels as one comma-separated text). Rows are
// locked in id order, the order every batch uses.
func appendStatusChanges(gen schema.QueryGen, b []byte, changes []ports.TransactionStatusChange) []byte {
	if len(changes) == 0 {
		return b
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
	b = gen.AppendQuery(b, `WITH u AS (
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
	return append(b, ";\n"...)
}

// batchKeys are the rows a batch needs, each id once, in first-seen order.
type batchKeys struct {
	entries, reversed, pending, accounts, quotes []string
	seen                                         map[string]struct{}
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
	deltas   []ledger.Counters
	postings []posting

	// accepted are the entries as the Book recorded them, and entryHash
	// and entryPrev their hashes once chained.
	accepted             []ledger.Entry
	entryHash, entryPrev [][]byte
}

// posting is one transfer's effect on one account. after holds, once
// computed, what the batch adds to the account after this posting (the
// suffix sum), so the counters after it are the final counters minus after.
type posting struct {
	account, entryID, transferID string
	delta, after                 ledger.Counters
}

func newBatchWrites(book *ledger.Book, accepted []ledger.Entry, initial map[string]ledger.Account,
	loadedPending map[string]bool, now time.Time) (*batchWrites, error) {
	w := &batchWrites{now: now, resolvedBy: map[string]string{}, accepted: accepted}
	sum := map[string]ledger.Counters{}
	post := func(account, entryID, transferID string, d ledger.Counters) {
		w.postings = append(w.postings, posting{account: account, entryID: entryID, transferID: transferID, delta: d})
		sum[account] = sum[account].Add(d)
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
			var held int64
			if t.Kind == ledger.PostPending || t.Kind == ledger.VoidPending {
				p, ok := book.Pending(t.PendingID)
				if !ok {
					return nil, fmt.Errorf("%w: entry %s resolves unknown hold %s", errLedgerInternal, e.ID, t.PendingID)
				}
				w.resolvedBy[p.ID] = e.ID
				held = p.Amount
			}
			dr, cr := ledger.TransferEffect(t, held)
			post(t.DebitAccountID, e.ID, t.ID, dr)
			post(t.CreditAccountID, e.ID, t.ID, cr)
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
		d := a.Counters().Sub(b.Counters())
		if d != s {
			return nil, fmt.Errorf("%w: account %s: book delta %v, postings %v", errLedgerInternal, a.ID, d, s)
		}
		w.deltaIDs = append(w.deltaIDs, a.ID) // Changes is ordered by id
		w.deltas = append(w.deltas, d)
		if b.Flags == 0 {
			w.unlocked = append(w.unlocked, a.ID)
		}
	}
	running := map[string]ledger.Counters{}
	for i := len(w.postings) - 1; i >= 0; i-- {
		p := &w.postings[i]
		p.after = running[p.account]
		running[p.account] = p.after.Add(p.delta)
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

// chain links the batch's entries into the journal's hash chain after
// head (ledger.Chain) and returns them, as recorded, by id.
func (w *batchWrites) chain(head [32]byte) map[string]ledger.JournalEntry {
	jes := make([]ledger.JournalEntry, len(w.accepted))
	for i, e := range w.accepted {
		jes[i] = ledger.JournalEntry{Entry: e, PostedAt: w.now}
	}
	ledger.Chain(head, jes)
	out := make(map[string]ledger.JournalEntry, len(jes))
	w.entryHash, w.entryPrev = make([][]byte, len(jes)), make([][]byte, len(jes))
	for i, je := range jes {
		w.entryHash[i], w.entryPrev[i] = slices.Clone(je.Hash[:]), slices.Clone(je.PrevHash[:])
		out[je.ID] = je
	}
	return out
}

// appendJournal appends the statement that writes the accepted entries
// (with their hashes), transfers, holds and outbox messages, then locks
// the touched accounts that are not locked yet (the unflagged ones) in id
// order, adds each touched account's summed delta once, and writes the
// postings with the counters after each; it returns the entries' Seq. The
// journal lock is held since the load. The uncorrelated "(SELECT count(*)
// FROM l)" condition is evaluated once before the UPDATE reads any row, so
// every lock is taken in order first. The final WHERE checks that every
// account and posting was written, failing the statement (a text that is
// not a boolean) and so the batch before its COMMIT otherwise.
func (w *batchWrites) appendJournal(gen schema.QueryGen, b []byte) []byte {
	var q strings.Builder
	args := []any{w.now,
		pgdialect.Array(w.entryID), pgdialect.Array(w.entryRef), pgdialect.Array(w.entryReverses),
		pgdialect.Array(w.entryHash), pgdialect.Array(w.entryPrev),
		pgdialect.Array(w.trEntry), pgdialect.Array(w.trIdx), pgdialect.Array(w.trID), pgdialect.Array(w.trKind),
		pgdialect.Array(w.trDebit), pgdialect.Array(w.trCredit), pgdialect.Array(w.trAmount),
		pgdialect.Array(w.trCurrency), pgdialect.Array(w.trPending), pgdialect.Array(w.trTimeout), pgdialect.Array(w.trCode)}
	q.WriteString(`WITH e AS (
	INSERT INTO ledger_entries (id, ref, reverses, posted_at, hash, prev_hash)
	SELECT u.id, u.ref, NULLIF(u.reverses, ''), ?::timestamptz, u.hash, u.prev_hash
	FROM unnest(?::text[], ?::text[], ?::text[], ?::bytea[], ?::bytea[]) WITH ORDINALITY AS u(id, ref, reverses, hash, prev_hash, ord)
	ORDER BY u.ord
	RETURNING id, seq),
t AS (
	INSERT INTO ledger_transfers (entry_id, idx, id, kind, debit_account_id, credit_account_id, amount, currency, pending_id, timeout_ns, code)
	SELECT u.entry_id, u.idx, u.id, u.kind, u.dr, u.cr, u.amount, u.currency, u.pending_id, u.timeout_ns, u.code
	FROM unnest(?::text[], ?::int[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::text[])
		AS u(entry_id, idx, id, kind, dr, cr, amount, currency, pending_id, timeout_ns, code))`)

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
		AS u(id, entry_id, dr, cr, amount, currency, timeout_ns, code, status, expires_at, posted_amount, resolved_by))`)
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
	UPDATE ledger_pending hp SET status = u.status, posted_amount = u.posted_amount, resolved_by = NULLIF(u.resolved_by, '')
	FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[]) AS u(id, status, posted_amount, resolved_by)
	WHERE hp.id = u.id)`)
		args = append(args, pgdialect.Array(id), pgdialect.Array(status), pgdialect.Array(posted), pgdialect.Array(resolved))
	}
	if len(w.obTopic) > 0 {
		q.WriteString(`,
o AS (
	INSERT INTO outbox (topic, key, payload, entry_id, created_at)
	SELECT u.topic, u.key, u.payload, u.entry_id, ?::timestamptz
	FROM unnest(?::text[], ?::text[], ?::bytea[], ?::text[]) WITH ORDINALITY AS u(topic, key, payload, entry_id, ord)
	ORDER BY u.ord)`)
		args = append(args, w.now, pgdialect.Array(w.obTopic), pgdialect.Array(w.obKey), pgdialect.Array(w.obPayload), pgdialect.Array(w.obEntry))
	}

	n := len(w.deltaIDs)
	dp, dpo, cp, cpo := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	for i, d := range w.deltas {
		dp[i], dpo[i], cp[i], cpo[i] = d.DebitsPending, d.DebitsPosted, d.CreditsPending, d.CreditsPosted
	}
	m := len(w.postings)
	pAcct, pEntry, pTransfer := make([]string, m), make([]string, m), make([]string, m)
	a0, a1, a2, a3 := make([]int64, m), make([]int64, m), make([]int64, m), make([]int64, m)
	for i, p := range w.postings {
		pAcct[i], pEntry[i], pTransfer[i] = p.account, p.entryID, p.transferID
		a0[i], a1[i], a2[i], a3[i] = p.after.DebitsPending, p.after.DebitsPosted, p.after.CreditsPending, p.after.CreditsPosted
	}
	q.WriteString(`,
d AS (
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
po AS (
	INSERT INTO ledger_postings (account_id, entry_id, transfer_id, posted_at, debits_pending, debits_posted, credits_pending, credits_posted)
	SELECT x.account_id, x.entry_id, x.transfer_id, ?::timestamptz,
		u.debits_pending - x.a0, u.debits_posted - x.a1, u.credits_pending - x.a2, u.credits_posted - x.a3
	FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[])
		WITH ORDINALITY AS x(account_id, entry_id, transfer_id, a0, a1, a2, a3, ord)
	JOIN u ON u.id = x.account_id
	ORDER BY x.ord
	RETURNING 1),
c AS (SELECT (SELECT count(*) FROM u) AS updated, (SELECT count(*) FROM po) AS posted)
SELECT e.id, e.seq FROM e, c
WHERE CASE WHEN c.updated = ? AND c.posted = ? THEN true
	ELSE ('ledger batch: updated ' || c.updated || ' accounts of ' || ? || ', wrote ' || c.posted || ' postings of ' || ?)::boolean END;
`)
	args = append(args,
		pgdialect.Array(w.deltaIDs), pgdialect.Array(dp), pgdialect.Array(dpo), pgdialect.Array(cp), pgdialect.Array(cpo),
		pgdialect.Array(nonNil(w.unlocked)), w.now,
		pgdialect.Array(pAcct), pgdialect.Array(pEntry), pgdialect.Array(pTransfer),
		pgdialect.Array(a0), pgdialect.Array(a1), pgdialect.Array(a2), pgdialect.Array(a3),
		n, m, n, m)
	return gen.AppendQuery(b, q.String(), args...)
}

// appendRecords appends the statements that write the records of the
// accepted calls (PostWith) and of the records written alone
// (WriteRecords), each ending in ";": quotes, transactions and jobs
// inserted, jobs completed, then the quote and transaction status changes
// (later statements, so they see the rows just created). Transactions are
// inserted by platform and customer so concurrent writers take the list
// counters' row locks (the insert trigger's) in one order. A quote or
// transaction id already stored fails the batch (not retryable), so its
// calls are then posted one by one and only the culprit fails; a queued
// job key is skipped, as Enqueue does. A completed job was queued (and
// claimed) before this batch, so the delete need not see the jobs inserted
// beside it.
func appendRecords(db *bun.DB, b []byte, batch []*postRequest, outcomes []outcome, quotes quoteBook) ([]byte, error) {
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
	gen := db.QueryGen()
	var err error
	if len(quoteRows) > 0 {
		slices.SortStableFunc(quoteRows, func(a, b storeQuoteRow) int { return cmp.Compare(a.ID, b.ID) })
		if b, err = db.NewInsert().Model(&quoteRows).Returning("NULL").AppendQuery(gen, b); err != nil {
			return nil, fmt.Errorf("write quotes: %w", err)
		}
		b = append(b, ";\n"...)
	}
	if len(txns) > 0 {
		slices.SortStableFunc(txns, func(a, b storeTxnRow) int {
			return cmp.Or(cmp.Compare(a.PlatformID, b.PlatformID), cmp.Compare(a.CustomerID, b.CustomerID))
		})
		if b, err = db.NewInsert().Model(&txns).Returning("NULL").AppendQuery(gen, b); err != nil {
			return nil, fmt.Errorf("write transactions: %w", err)
		}
		b = append(b, ";\n"...)
	}
	if len(jobs) > 0 {
		if b, err = db.NewInsert().Model(&jobs).On("CONFLICT DO NOTHING").Returning("NULL").AppendQuery(gen, b); err != nil {
			return nil, fmt.Errorf("write jobs: %w", err)
		}
		b = append(b, ";\n"...)
	}
	if len(doneJobs) > 0 {
		if b, err = db.NewDelete().Model((*storeJobRow)(nil)).Where("id = ANY(?::text[])", pgdialect.Array(doneJobs)).
			Returning("NULL").AppendQuery(gen, b); err != nil {
			return nil, fmt.Errorf("complete jobs: %w", err)
		}
		b = append(b, ";\n"...)
	}
	b = quotes.appendWrite(gen, b)
	return appendStatusChanges(gen, b, changes), nil
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
