package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/corridorpay/corridor/ledger"
)

// batchLoad is what a batch reads before the Book decides.
type batchLoad struct {
	quotes   quoteBook
	txns     txnBook
	pending  []ledger.PendingTransfer
	accounts []ledger.Account
	entries  []ledger.JournalEntry
	head     [32]byte // the hash of the shard's last committed entry, or ZeroHash
	// headAt is that entry's posted_at (zero when there is none, or when
	// the batch read nothing): the batch is timed no earlier.
	headAt time.Time
	// xid is the batch transaction's id (txid_current()), which tells
	// whether it committed when the reply to its COMMIT is lost; 0 when
	// not read. A batch of records alone reads nothing: created names a
	// row it inserts instead, if any (see settled).
	xid     int64
	created rowRef
}

// rowRef names a row by its table and id.
type rowRef struct{ table, id string }

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

// loadStmt reads, in one statement, everything a batch's Book needs (the
// batch's transaction is open). Locks are taken in the writer's order:
// quotes the records change, transactions a Required status change names,
// holds the batch opens or resolves, the accounts whose flags make their
// balance decide (FOR UPDATE, in id order each), then the journal lock of
// the writer's shard (ledger_chain_tail, which reads the hash and time of
// that shard's last committed entry after the lock is granted). Each
// locking CTE waits for the ones before it by an uncorrelated count of
// them, which the server evaluates once before the CTE reads a row.
// Unflagged accounts are read without a lock: they never refuse a
// transfer, and the write statement adds deltas to them under a lock held
// only until commit (see "Hot accounts" on Ledger). Keys are matched with
// = ANY(ARRAY(…)) so each read is an index lookup (an IN over a CTE lets
// the planner walk the whole index instead).
//
// Its variants (shapedStatement) leave out the quotes, transactions and
// holds a batch does not lock, and the reversals of entries unless the
// batch reverses one (an OR over two indexes costs the planner more).
// Parameters: $1 quotes, $2 transactions, $3 holds, $4 accounts, $5 the
// journal lock, $6 the writer's shard, $7 entries, $8 reversed entries.
var loadStmt = newShapedStatement("ledger_load", numberParams(loadStatement), "quotes", "txns", "holds", "reversals")

// appendExecute appends "EXECUTE name(args…);", the arguments as
// literals, to b.
func appendExecute(gen schema.QueryGen, b []byte, name string, args []any) []byte {
	b = append(append(append(b, "EXECUTE "...), name...), '(')
	for i, a := range args {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = gen.AppendQuery(b, "?", a)
	}
	return append(b, ");\n"...)
}

// numberParams turns a query's ? placeholders into $1, $2… in order; ?N
// (a ? followed by digits) is $N again, and does not count.
func numberParams(q string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] != '?' {
			b.WriteByte(q[i])
			continue
		}
		j := i + 1
		for j < len(q) && q[j] >= '0' && q[j] <= '9' {
			j++
		}
		if j > i+1 {
			b.WriteString("$" + q[i+1:j])
			i = j - 1
			continue
		}
		n++
		fmt.Fprintf(&b, "$%d", n)
	}
	return b.String()
}

// loadStatement is loadStmt's text, its optional parts marked.
var loadStatement = `WITH {{quotes}}q AS MATERIALIZED (
	SELECT id, platform_id, status, expires_at FROM quotes WHERE id = ANY(?::text[]) ORDER BY id FOR UPDATE),
{{end}}{{txns}}tr AS MATERIALIZED (
	SELECT id, platform_id, status FROM transactions
	WHERE id = ANY(?::text[]){{quotes}} AND (SELECT count(*) FROM q) >= 0{{end}} ORDER BY id FOR UPDATE),
{{end}}{{holds}}p AS MATERIALIZED (
	SELECT ` + pendingCols + ` FROM ledger_pending
	WHERE id = ANY(?::text[]){{quotes}} AND (SELECT count(*) FROM q) >= 0{{end}}{{txns}} AND (SELECT count(*) FROM tr) >= 0{{end}}
	ORDER BY id FOR UPDATE),
{{end}}ids AS MATERIALIZED (
	SELECT unnest(?::text[]) AS id{{holds}} UNION SELECT debit_account_id FROM p UNION SELECT credit_account_id FROM p{{end}}),
fa AS MATERIALIZED (
	SELECT ` + accountCols + ` FROM ledger_accounts WHERE id = ANY(ARRAY(SELECT id FROM ids)) AND flags <> 0` +
	`{{quotes}} AND (SELECT count(*) FROM q) >= 0{{end}}{{txns}} AND (SELECT count(*) FROM tr) >= 0{{end}} ORDER BY id FOR UPDATE),
h AS MATERIALIZED (
	SELECT ledger_chain_tail(?::bigint, ?::smallint) AS tail FROM (SELECT count(*) FROM fa) c),
e AS MATERIALIZED (
	SELECT id, seq, shard, ref, reverses, posted_at, hash, prev_hash FROM ledger_entries WHERE id = ANY(?::text[]){{reversals}}
	UNION SELECT id, seq, shard, ref, reverses, posted_at, hash, prev_hash FROM ledger_entries WHERE reverses = ANY(?::text[]){{end}})
{{quotes}}` + loadSelect("q", map[string]string{"s1": "id", "s2": "platform_id", "s3": "status", "t1": "expires_at"}, "FROM q") + `
UNION ALL {{end}}{{txns}}` + loadSelect("r", map[string]string{"s1": "id", "s2": "platform_id", "s3": "status"}, "FROM tr") + `
UNION ALL {{end}}{{holds}}` + loadSelect("p", map[string]string{"s1": "id", "s2": "entry_id", "s3": "debit_account_id", "s4": "credit_account_id",
	"s5": "currency", "s6": "code", "s7": "status", "n1": "amount", "n2": "timeout_ns", "n3": "posted_amount", "t1": "expires_at"}, "FROM p") + `
UNION ALL {{end}}` + loadSelect("a", loadAccountCols, "FROM fa") + `
UNION ALL ` + loadSelect("h", map[string]string{"b1": "(tail).hash", "t1": "(tail).posted_at"}, "FROM h") + `
UNION ALL ` + loadSelect("x", map[string]string{"n1": "txid_current()"}, "") + `
UNION ALL ` + loadSelect("a", loadAccountCols, "FROM ledger_accounts WHERE id = ANY(ARRAY(SELECT id FROM ids EXCEPT SELECT id FROM fa)) AND flags = 0") + `
UNION ALL ` + loadSelect("e", map[string]string{"s1": "id", "s2": "ref", "s3": "COALESCE(reverses, '')", "n1": "seq", "n2": "shard", "t1": "posted_at",
	"b1": "hash", "b2": "prev_hash"}, "FROM e") + `
UNION ALL ` + loadSelect("t", map[string]string{"s1": "entry_id", "s2": "id", "s3": "kind", "s4": "debit_account_id",
	"s5": "credit_account_id", "s6": "currency", "s7": "pending_id", "s8": "code", "n1": "idx", "n2": "amount", "n3": "timeout_ns"},
	"FROM ledger_transfers WHERE entry_id = ANY(ARRAY(SELECT id FROM e))")

// loadShape is the variant of loadStmt that keys need.
func (keys *batchKeys) loadShape() stmtShape {
	return loadStmt.shapeOf(len(keys.quotes) > 0, len(keys.txns) > 0, len(keys.pending) > 0, len(keys.reversed) > 0)
}

var loadAccountCols = map[string]string{"s1": "id", "s2": "currency", "s3": "kind", "s4": "platform_id",
	"n1": "flags", "n2": "debits_pending", "n3": "debits_posted", "n4": "credits_pending", "n5": "credits_posted", "t1": "created_at"}

// load opens the batch's transaction and runs the load statement for
// keys, in one round trip: "BEGIN; EXECUTE ledger_load…(…)" as one simple
// query. The statement is prepared on the writer's session (the variant
// for keys, see loadStmt), so the server plans it once per session (preferring index scans) rather
// than once per batch: at concurrency 1 that took a transfer-out from 7.4
// to 4.8 ms (p50), and sending the BEGIN with it instead of on its own
// saved one more round trip.
func (l *Ledger) load(ctx context.Context, conn bun.Conn, keys *batchKeys) (*batchLoad, error) {
	sh := keys.loadShape()
	if err := l.prepare(ctx, conn, loadStmt, sh); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	args := []any{textArray(keys.quotes), textArray(keys.txns), textArray(keys.pending), textArray(keys.accounts), int64(journalLock),
		l.opts.Shard, textArray(keys.entries), textArray(keys.reversed)}
	q := appendExecute(l.db.QueryGen(), []byte("BEGIN; "), loadStmt.stmtName(sh), args)
	rows, err := conn.QueryContext(ctx, string(q))
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	defer rows.Close()
	r := loadReader{ld: &batchLoad{quotes: quoteBook{}}}
	if len(keys.txns) > 0 {
		r.ld.txns = txnBook{}
	}
	dest := []any{&r.kind, &r.s[0], &r.s[1], &r.s[2], &r.s[3], &r.s[4], &r.s[5], &r.s[6], &r.s[7],
		&r.n[0], &r.n[1], &r.n[2], &r.n[3], &r.n[4], &r.t, &r.b1, &r.b2}
	for rows.Next() {
		r.b1, r.b2 = nil, nil
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		if err := r.row(); err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return r.assemble(), nil
}

// loadReader reads the load statement's rows (loadCols) into a batchLoad;
// an entry's transfers come as rows of their own and are attached to it
// at the end.
type loadReader struct {
	ld        *batchLoad
	transfers []loadTransfer

	kind   string
	s      [8]sql.NullString
	n      [5]sql.NullInt64
	t      sql.NullTime
	b1, b2 []byte
}

type loadTransfer struct {
	entry string
	idx   int64
	t     ledger.Transfer
}

// row reads the current row by its kind.
func (r *loadReader) row() error {
	s, n, t := &r.s, &r.n, r.t
	var err error
	switch r.kind {
	case "q":
		r.ld.quotes[s[0].String] = quoteState{platform: s[1].String, status: s[2].String, expires: t.Time}
	case "r":
		r.ld.txns[s[0].String] = txnState{platform: s[1].String, status: s[2].String}
	case "p":
		p := ledger.PendingTransfer{Transfer: ledger.Transfer{Kind: ledger.Pending, ID: s[0].String,
			DebitAccountID: s[2].String, CreditAccountID: s[3].String, Currency: s[4].String, Code: s[5].String,
			Amount: n[0].Int64, Timeout: time.Duration(n[1].Int64)}, EntryID: s[1].String, PostedAmount: n[2].Int64}
		if p.Status, err = parsePendingStatus(s[6].String); err != nil {
			return fmt.Errorf("hold %s: %w", p.ID, err)
		}
		if t.Valid {
			p.ExpiresAt = t.Time.UTC()
		}
		r.ld.pending = append(r.ld.pending, p)
	case "a":
		r.ld.accounts = append(r.ld.accounts, ledger.Account{ID: s[0].String, Currency: s[1].String, Kind: s[2].String,
			PlatformID: s[3].String, Flags: ledger.AccountFlags(n[0].Int64), DebitsPending: n[1].Int64,
			DebitsPosted: n[2].Int64, CreditsPending: n[3].Int64, CreditsPosted: n[4].Int64, CreatedAt: t.Time.UTC()})
	case "x":
		r.ld.xid = n[0].Int64
	case "h":
		if err := readHash(&r.ld.head, r.b1); err != nil {
			return fmt.Errorf("chain head: %w", err)
		}
		if r.t.Valid {
			r.ld.headAt = r.t.Time.UTC()
		}
	case "e":
		return r.entry()
	case "t":
		tr := ledger.Transfer{ID: s[1].String, DebitAccountID: s[3].String, CreditAccountID: s[4].String,
			Currency: s[5].String, PendingID: s[6].String, Code: s[7].String, Amount: n[1].Int64, Timeout: time.Duration(n[2].Int64)}
		if tr.Kind, err = parseTransferKind(s[2].String); err != nil {
			return fmt.Errorf("transfer %s: %w", tr.ID, err)
		}
		r.transfers = append(r.transfers, loadTransfer{entry: s[0].String, idx: n[0].Int64, t: tr})
	default:
		return fmt.Errorf("%w: load row of kind %q", errLedgerInternal, r.kind)
	}
	return nil
}

func (r *loadReader) entry() error {
	e := ledger.JournalEntry{Entry: ledger.Entry{ID: r.s[0].String, Ref: r.s[1].String, Reverses: r.s[2].String},
		Seq: r.n[0].Int64, Shard: int16(r.n[1].Int64), PostedAt: r.t.Time.UTC()}
	if err := readHash(&e.Hash, r.b1); err != nil {
		return fmt.Errorf("entry %s: %w", e.ID, err)
	}
	if err := readHash(&e.PrevHash, r.b2); err != nil {
		return fmt.Errorf("entry %s: %w", e.ID, err)
	}
	r.ld.entries = append(r.ld.entries, e)
	return nil
}

// assemble orders the entries by seq and attaches their transfers (by
// index).
func (r *loadReader) assemble() *batchLoad {
	ld := r.ld
	slices.SortFunc(ld.entries, func(a, b ledger.JournalEntry) int { return cmp.Compare(a.Seq, b.Seq) })
	entryAt := map[string]int{}
	for i, e := range ld.entries {
		entryAt[e.ID] = i
	}
	slices.SortFunc(r.transfers, func(a, b loadTransfer) int {
		return cmp.Or(strings.Compare(a.entry, b.entry), cmp.Compare(a.idx, b.idx))
	})
	for _, tr := range r.transfers {
		e := &ld.entries[entryAt[tr.entry]]
		e.Transfers = append(e.Transfers, tr.t)
	}
	return ld
}

// readHash copies a stored hash into h; NULL (a hash removed, which
// verification reports as a break, or an empty journal) leaves ZeroHash.
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

// batchKeys are the rows a batch needs, each id once, in first-seen order.
type batchKeys struct {
	entries, reversed, pending, accounts, quotes, txns []string
	seen                                               map[string]struct{}
}

func newBatchKeys(batch []*postRequest) *batchKeys {
	k := &batchKeys{seen: map[string]struct{}{}}
	for _, r := range batch {
		for _, c := range r.quoteChanges {
			k.add(&k.quotes, "q", c.QuoteID)
		}
		for _, c := range r.changes {
			if c.Required {
				k.add(&k.txns, "t", c.TransactionID)
			}
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

// loads reports whether a batch with these keys reads before it writes:
// entries to decide, or quote and Required transaction changes whose
// preconditions are checked under the load's row locks. A call whose keys
// load nothing goes to the records writer (see "Two writers" on Ledger).
func (k *batchKeys) loads() bool {
	return len(k.entries) > 0 || len(k.quotes) > 0 || len(k.txns) > 0
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
