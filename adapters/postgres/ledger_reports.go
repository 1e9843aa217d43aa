package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// LedgerReports is the PostgreSQL ports.LedgerReports: plain reads. Point-in-
// time answers are one probe of ledger_postings_time (account_id, posted_at,
// id) per account: the last posting at or before the instant carries the
// account's four counters right after it. Exports and verification stream
// rows and hold one at a time (verification also holds a few numbers per
// account and open hold).
type LedgerReports struct {
	db *bun.DB
}

var _ ports.LedgerReports = (*LedgerReports)(nil)

// NewLedgerReports returns the reports of the ledger in db.
func NewLedgerReports(db *bun.DB) *LedgerReports { return &LedgerReports{db: db} }

// readOnly runs fn in one repeatable-read, read-only transaction, so every
// statement of a report sees the same committed ledger.
func (r *LedgerReports) readOnly(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return r.db.RunInTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}, fn)
}

// countersCols are a posting's counters; the zero counters when the
// lateral probe found none.
const countersCols = `coalesce(p.debits_pending, 0), coalesce(p.debits_posted, 0), coalesce(p.credits_pending, 0), coalesce(p.credits_posted, 0)`

// lastPostingAt is the lateral probe of an account's last posting at or
// before (<=) or strictly before (<) an instant.
func lastPostingAt(op string) string {
	return `LEFT JOIN LATERAL (SELECT p.entry_id, p.posted_at, p.debits_pending, p.debits_posted, p.credits_pending, p.credits_posted
		FROM ledger_postings p WHERE p.account_id = a.id AND p.posted_at ` + op + ` ?::timestamptz
		ORDER BY p.posted_at DESC, p.id DESC LIMIT 1) p ON true`
}

// Accounts returns up to f.Limit+1 accounts in scope after f.AfterID, by id.
func (r *LedgerReports) Accounts(ctx context.Context, f ports.LedgerAccountFilter) ([]ledger.Account, error) {
	accts, err := queryAccounts(ctx, r.db, `SELECT `+accountCols+` FROM ledger_accounts
		WHERE (?::bool OR platform_id = ? OR (?::bool AND platform_id = ''))
			AND (? = '' OR currency = ?) AND (? = '' OR kind = ?) AND id > ?
		ORDER BY id LIMIT ?`,
		f.Scope.All, f.Scope.PlatformID, f.Scope.System, f.Currency, f.Currency, f.Kind, f.Kind, f.AfterID, f.Limit+1)
	if err != nil {
		return nil, fmt.Errorf("postgres reports: accounts: %w", err)
	}
	return accts, nil
}

// Account returns one account or ports.ErrNotFound.
func (r *LedgerReports) Account(ctx context.Context, id string) (ledger.Account, error) {
	accts, err := queryAccounts(ctx, r.db, `SELECT `+accountCols+` FROM ledger_accounts WHERE id = ?`, id)
	if err != nil {
		return ledger.Account{}, fmt.Errorf("postgres reports: account %s: %w", id, err)
	}
	if len(accts) == 0 {
		return ledger.Account{}, fmt.Errorf("postgres reports: account %s: %w", id, ports.ErrNotFound)
	}
	return accts[0], nil
}

// TrialBalance returns the accounts in scope with non-zero counters as of
// asOf (nil: the accounts' current counters), by currency and id, and
// per-currency totals of every account. As of an instant, every account is
// one index probe.
func (r *LedgerReports) TrialBalance(ctx context.Context, scope ports.AccountScope, asOf *time.Time) (ports.TrialBalance, error) {
	var accts []ledger.Account
	var err error
	if asOf == nil {
		accts, err = queryAccounts(ctx, r.db, `SELECT `+accountCols+` FROM ledger_accounts`)
	} else {
		accts, err = queryAccounts(ctx, r.db, `SELECT a.id, a.currency, a.kind, a.platform_id, a.flags, `+countersCols+`, a.created_at
			FROM ledger_accounts a `+lastPostingAt("<="), asOf.UTC())
	}
	if err != nil {
		return ports.TrialBalance{}, fmt.Errorf("postgres reports: trial balance: %w", err)
	}
	return ports.NewTrialBalance(scope, accts), nil
}

// BalanceAt returns an account's counters as of asOf (inclusive): one probe.
func (r *LedgerReports) BalanceAt(ctx context.Context, accountID string, asOf time.Time) (ports.PointBalance, error) {
	var pb ports.PointBalance
	var flags int64
	var lastEntry sql.NullString
	var lastAt sql.NullTime
	a := &pb.Account
	err := r.db.QueryRowContext(ctx, `SELECT a.id, a.currency, a.kind, a.platform_id, a.flags, `+countersCols+`, a.created_at,
			p.entry_id, p.posted_at
		FROM ledger_accounts a `+lastPostingAt("<=")+` WHERE a.id = ?`, asOf.UTC(), accountID).
		Scan(&a.ID, &a.Currency, &a.Kind, &a.PlatformID, &flags, &a.DebitsPending, &a.DebitsPosted,
			&a.CreditsPending, &a.CreditsPosted, &a.CreatedAt, &lastEntry, &lastAt)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.PointBalance{}, fmt.Errorf("postgres reports: balance of %s: %w", accountID, ports.ErrNotFound)
	}
	if err != nil {
		return ports.PointBalance{}, fmt.Errorf("postgres reports: balance of %s: %w", accountID, err)
	}
	a.Flags, a.CreatedAt = ledger.AccountFlags(flags), a.CreatedAt.UTC()
	if lastEntry.Valid {
		pb.LastEntryID, pb.LastPostedAt = lastEntry.String, lastAt.Time.UTC()
	}
	return pb, nil
}

// statementCols are a statement line's columns over postings p, entries e
// and transfers t.
const statementCols = `p.id, p.posted_at, p.entry_id, p.debits_pending, p.debits_posted, p.credits_pending, p.credits_posted,
	e.seq, e.ref, coalesce(e.reverses, ''),
	t.idx, t.id, t.kind, t.debit_account_id, t.credit_account_id, t.amount, t.currency, t.pending_id, t.timeout_ns, t.code`

func scanStatementLine(rows *sql.Rows, accountID string) (ports.StatementLine, error) {
	var l ports.StatementLine
	var kind string
	var timeout int64
	t := &l.Transfer
	if err := rows.Scan(&l.Key.ID, &l.Key.PostedAt, &l.EntryID,
		&l.After.DebitsPending, &l.After.DebitsPosted, &l.After.CreditsPending, &l.After.CreditsPosted,
		&l.Seq, &l.Ref, &l.Reverses,
		&l.TransferIndex, &t.ID, &kind, &t.DebitAccountID, &t.CreditAccountID, &t.Amount, &t.Currency, &t.PendingID,
		&timeout, &t.Code); err != nil {
		return l, err
	}
	var err error
	if t.Kind, err = parseTransferKind(kind); err != nil {
		return l, err
	}
	t.Timeout = time.Duration(timeout)
	l.Key.PostedAt = l.Key.PostedAt.UTC()
	l.PostedAt, l.AccountID, l.Debit = l.Key.PostedAt, accountID, t.DebitAccountID == accountID
	return l, nil
}

// Statement returns a page of an account's postings in [q.From, q.To), the
// balances just before From and To, and each line's change from the
// posting before it.
func (r *LedgerReports) Statement(ctx context.Context, q ports.StatementQuery) (ports.Statement, error) {
	var st ports.Statement
	err := r.readOnly(ctx, func(ctx context.Context, tx bun.Tx) error {
		a := &st.Account
		var flags int64
		err := tx.QueryRowContext(ctx, `SELECT `+qualified("a", accountCols)+`,
				coalesce(o.debits_pending, 0), coalesce(o.debits_posted, 0), coalesce(o.credits_pending, 0), coalesce(o.credits_posted, 0),
				coalesce(c.debits_pending, 0), coalesce(c.debits_posted, 0), coalesce(c.credits_pending, 0), coalesce(c.credits_posted, 0)
			FROM ledger_accounts a
			LEFT JOIN LATERAL (SELECT * FROM ledger_postings p WHERE p.account_id = a.id AND p.posted_at < ?::timestamptz
				ORDER BY p.posted_at DESC, p.id DESC LIMIT 1) o ON true
			LEFT JOIN LATERAL (SELECT * FROM ledger_postings p WHERE p.account_id = a.id AND p.posted_at < ?::timestamptz
				ORDER BY p.posted_at DESC, p.id DESC LIMIT 1) c ON true
			WHERE a.id = ?`, q.From.UTC(), q.To.UTC(), q.AccountID).
			Scan(&a.ID, &a.Currency, &a.Kind, &a.PlatformID, &flags, &a.DebitsPending, &a.DebitsPosted,
				&a.CreditsPending, &a.CreditsPosted, &a.CreatedAt,
				&st.Opening.DebitsPending, &st.Opening.DebitsPosted, &st.Opening.CreditsPending, &st.Opening.CreditsPosted,
				&st.Closing.DebitsPending, &st.Closing.DebitsPosted, &st.Closing.CreditsPending, &st.Closing.CreditsPosted)
		if errors.Is(err, sql.ErrNoRows) {
			return ports.ErrNotFound
		}
		if err != nil {
			return err
		}
		a.Flags, a.CreatedAt = ledger.AccountFlags(flags), a.CreatedAt.UTC()

		// The page starts after the cursor, or at From.
		after := ports.PostingKey{PostedAt: q.From, ID: -1}
		if q.After != nil && !q.After.PostedAt.Before(q.From) {
			after = *q.After
		}
		rows, err := tx.QueryContext(ctx, `WITH p AS (
				SELECT * FROM ledger_postings p
				WHERE p.account_id = ? AND (p.posted_at, p.id) > (?::timestamptz, ?) AND p.posted_at < ?::timestamptz
				ORDER BY p.posted_at, p.id LIMIT ?)
			SELECT `+statementCols+`
			FROM p JOIN ledger_entries e ON e.id = p.entry_id JOIN ledger_transfers t ON t.id = p.transfer_id
			ORDER BY p.posted_at, p.id`, q.AccountID, after.PostedAt.UTC(), after.ID, q.To.UTC(), q.Limit+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			l, err := scanStatementLine(rows, q.AccountID)
			if err != nil {
				return err
			}
			st.Lines = append(st.Lines, l)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(st.Lines) == 0 {
			return nil
		}
		// Each line's change is its counters minus those of the posting
		// before it: the opening balance on a first page, else one probe.
		prev := st.Opening
		if after.ID >= 0 {
			err := tx.QueryRowContext(ctx, `SELECT `+countersCols+` FROM (SELECT 1) x LEFT JOIN LATERAL (
					SELECT * FROM ledger_postings p WHERE p.account_id = ? AND (p.posted_at, p.id) < (?::timestamptz, ?)
					ORDER BY p.posted_at DESC, p.id DESC LIMIT 1) p ON true`,
				q.AccountID, st.Lines[0].Key.PostedAt, st.Lines[0].Key.ID).
				Scan(&prev.DebitsPending, &prev.DebitsPosted, &prev.CreditsPending, &prev.CreditsPosted)
			if err != nil {
				return err
			}
		}
		for i := range st.Lines {
			st.Lines[i].Delta = st.Lines[i].After.Sub(prev)
			prev = st.Lines[i].After
		}
		return nil
	})
	if err != nil {
		return ports.Statement{}, fmt.Errorf("postgres reports: statement of %s: %w", q.AccountID, err)
	}
	return st, nil
}

// qualified prefixes each of cols (comma-separated names) with table.
func qualified(table, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = table + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// entryCols are a journal entry's columns over ledger_entries e.
const entryCols = `e.id, e.seq, e.shard, e.ref, coalesce(e.reverses, ''), e.posted_at, e.hash, e.prev_hash`

// Entries returns up to f.Limit+1 entries matching f by (PostedAt, Seq).
func (r *LedgerReports) Entries(ctx context.Context, f ports.EntryFilter) ([]ports.ReportEntry, error) {
	var out []ports.ReportEntry
	err := r.readOnly(ctx, func(ctx context.Context, tx bun.Tx) error {
		var ids []string
		var err error
		if f.AccountID != "" {
			ids, err = r.entryIDsOfAccount(ctx, tx, f)
		} else {
			ids, err = r.entryIDs(ctx, tx, f)
		}
		if err != nil {
			return err
		}
		out, err = r.loadReportEntries(ctx, tx, ids)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres reports: entries: %w", err)
	}
	slices.SortFunc(out, func(a, b ports.ReportEntry) int {
		return cmp.Or(a.PostedAt.Compare(b.PostedAt), cmp.Compare(a.Seq, b.Seq))
	})
	return out, nil
}

// entryIDs pages ledger_entries_time, keeping the entries in scope.
func (r *LedgerReports) entryIDs(ctx context.Context, tx bun.Tx, f ports.EntryFilter) ([]string, error) {
	var where []string
	var args []any
	if f.After != nil {
		where = append(where, `(e.posted_at, e.seq) > (?::timestamptz, ?)`)
		args = append(args, f.After.PostedAt.UTC(), f.After.Seq)
	}
	if f.From != nil {
		where = append(where, `e.posted_at >= ?::timestamptz`)
		args = append(args, f.From.UTC())
	}
	if f.To != nil {
		where = append(where, `e.posted_at < ?::timestamptz`)
		args = append(args, f.To.UTC())
	}
	if f.Ref != "" {
		where = append(where, `e.ref = ?`)
		args = append(args, f.Ref)
	}
	if f.Shard != nil {
		where = append(where, `e.shard = ?`)
		args = append(args, *f.Shard)
	}
	if !f.Scope.All {
		where = append(where, `EXISTS (SELECT 1 FROM ledger_transfers t
			JOIN ledger_accounts a ON a.id = t.debit_account_id OR a.id = t.credit_account_id
			WHERE t.entry_id = e.id AND (a.platform_id = ? OR (?::bool AND a.platform_id = '')))`)
		args = append(args, f.Scope.PlatformID, f.Scope.System)
	}
	q := `SELECT e.id FROM ledger_entries e`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY e.posted_at, e.seq LIMIT ?`
	args = append(args, f.Limit+1)
	var ids []string
	if err := tx.NewRaw(q, args...).Scan(ctx, &ids); err != nil {
		return nil, err
	}
	return ids, nil
}

// entryIDsOfAccount walks the account's postings (ledger_postings_time) in
// order, keeping each entry once. Postings of one account follow its
// entries' (posted_at, seq) order, so the walk is the page's order.
func (r *LedgerReports) entryIDsOfAccount(ctx context.Context, tx bun.Tx, f ports.EntryFilter) ([]string, error) {
	pos := ports.PostingKey{PostedAt: time.Unix(0, 0).UTC(), ID: -1}
	if f.From != nil {
		pos.PostedAt = *f.From
	}
	if f.After != nil && f.After.PostedAt.After(pos.PostedAt) {
		pos.PostedAt = f.After.PostedAt
	}
	to := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	if f.To != nil {
		to = *f.To
	}
	chunk := 2*(f.Limit+1) + 8
	seen := map[string]bool{}
	var ids []string
	for {
		rows, err := tx.QueryContext(ctx, `SELECT p.posted_at, p.id, p.entry_id, e.seq
			FROM ledger_postings p JOIN ledger_entries e ON e.id = p.entry_id
			WHERE p.account_id = ? AND (p.posted_at, p.id) > (?::timestamptz, ?) AND p.posted_at < ?::timestamptz
				AND (? = '' OR e.ref = ?) AND (?::smallint IS NULL OR e.shard = ?)
			ORDER BY p.posted_at, p.id LIMIT ?`,
			f.AccountID, pos.PostedAt.UTC(), pos.ID, to.UTC(), f.Ref, f.Ref, f.Shard, f.Shard, chunk)
		if err != nil {
			return nil, err
		}
		n := 0
		for rows.Next() {
			n++
			var id string
			var seq int64
			if err := rows.Scan(&pos.PostedAt, &pos.ID, &id, &seq); err != nil {
				rows.Close()
				return nil, err
			}
			if f.After != nil && cmp.Or(pos.PostedAt.Compare(f.After.PostedAt), cmp.Compare(seq, f.After.Seq)) <= 0 {
				continue
			}
			if !seen[id] && len(ids) <= f.Limit {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if n < chunk || len(ids) > f.Limit {
			return ids, nil
		}
	}
}

// loadReportEntries reads the entries with ids, their transfers, what
// reverses them and who owns their accounts.
func (r *LedgerReports) loadReportEntries(ctx context.Context, tx bun.Tx, ids []string) ([]ports.ReportEntry, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+entryCols+`, coalesce(rv.id, '')
		FROM ledger_entries e LEFT JOIN ledger_entries rv ON rv.reverses = e.id
		WHERE e.id = ANY(?::text[])`, pgdialect.Array(ids))
	if err != nil {
		return nil, err
	}
	out := make([]ports.ReportEntry, 0, len(ids))
	index := map[string]int{}
	for rows.Next() {
		var re ports.ReportEntry
		var hash, prev []byte
		e := &re.JournalEntry
		if err := rows.Scan(&e.ID, &e.Seq, &e.Shard, &e.Ref, &e.Reverses, &e.PostedAt, &hash, &prev, &re.ReversedBy); err != nil {
			rows.Close()
			return nil, err
		}
		e.PostedAt = e.PostedAt.UTC()
		copy(e.Hash[:], hash)
		copy(e.PrevHash[:], prev)
		re.Owners = map[string]string{}
		index[e.ID] = len(out)
		out = append(out, re)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = tx.QueryContext(ctx, `SELECT `+qualified("t", transferCols)+`, coalesce(d.platform_id, ''), coalesce(c.platform_id, '')
		FROM ledger_transfers t
		LEFT JOIN ledger_accounts d ON d.id = t.debit_account_id
		LEFT JOIN ledger_accounts c ON c.id = t.credit_account_id
		WHERE t.entry_id = ANY(?::text[]) ORDER BY t.entry_id, t.idx`, pgdialect.Array(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var entryID, kind, drOwner, crOwner string
		var idx int
		var timeout int64
		var t ledger.Transfer
		if err := rows.Scan(&entryID, &idx, &t.ID, &kind, &t.DebitAccountID, &t.CreditAccountID, &t.Amount,
			&t.Currency, &t.PendingID, &timeout, &t.Code, &drOwner, &crOwner); err != nil {
			return nil, err
		}
		if t.Kind, err = parseTransferKind(kind); err != nil {
			return nil, err
		}
		t.Timeout = time.Duration(timeout)
		re := &out[index[entryID]]
		re.Transfers = append(re.Transfers, t)
		re.Owners[t.DebitAccountID], re.Owners[t.CreditAccountID] = drOwner, crOwner
	}
	return out, rows.Err()
}

// Entry returns one entry with its links or ports.ErrNotFound.
func (r *LedgerReports) Entry(ctx context.Context, id string) (ports.ReportEntry, error) {
	var out []ports.ReportEntry
	err := r.readOnly(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = r.loadReportEntries(ctx, tx, []string{id})
		return err
	})
	if err != nil {
		return ports.ReportEntry{}, fmt.Errorf("postgres reports: entry %s: %w", id, err)
	}
	if len(out) == 0 {
		return ports.ReportEntry{}, fmt.Errorf("postgres reports: entry %s: %w", id, ports.ErrNotFound)
	}
	return out[0], nil
}

// ExportSettlement streams the settlement account's postings in
// [f.From, f.To) with their transfer, entry and transaction, one row at a
// time: the rows come from one ordered index scan of ledger_postings_time
// with a lookup per row, and are handed to fn as they are read.
func (r *LedgerReports) ExportSettlement(ctx context.Context, f ports.SettlementExport, fn func(ports.SettlementRow) error) error {
	acct := ledger.RailSettlementID(f.Rail, f.Currency)
	err := r.readOnly(ctx, func(ctx context.Context, tx bun.Tx) error {
		var prev ledger.Counters
		if err := tx.QueryRowContext(ctx, `SELECT `+countersCols+` FROM (SELECT 1) x LEFT JOIN LATERAL (
				SELECT * FROM ledger_postings p WHERE p.account_id = ? AND p.posted_at < ?::timestamptz
				ORDER BY p.posted_at DESC, p.id DESC LIMIT 1) p ON true`, acct, f.From.UTC()).
			Scan(&prev.DebitsPending, &prev.DebitsPosted, &prev.CreditsPending, &prev.CreditsPosted); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT p.id, p.posted_at, p.entry_id,
				p.debits_pending, p.debits_posted, p.credits_pending, p.credits_posted,
				e.seq, e.ref, t.id, t.kind, t.code, t.amount, t.debit_account_id, t.credit_account_id,
				coalesce(x.reference, ''), coalesce(x.status, ''),
				-- the transaction's platform (a quote's payout leg has a
				-- system account as counterparty), else the counterparty's
				coalesce(x.platform_id, c.platform_id, '')
			FROM ledger_postings p
			JOIN ledger_entries e ON e.id = p.entry_id
			JOIN ledger_transfers t ON t.id = p.transfer_id
			LEFT JOIN transactions x ON x.id = e.ref
			LEFT JOIN ledger_accounts c ON c.id = CASE WHEN t.debit_account_id = p.account_id
				THEN t.credit_account_id ELSE t.debit_account_id END
			WHERE p.account_id = ? AND p.posted_at >= ?::timestamptz AND p.posted_at < ?::timestamptz
			ORDER BY p.posted_at, p.id`, acct, f.From.UTC(), f.To.UTC())
		if err != nil {
			return err
		}
		defer rows.Close()
		row := ports.SettlementRow{AccountID: acct, Rail: f.Rail, Currency: f.Currency}
		for rows.Next() {
			var after ledger.Counters
			var kind, debit, credit, owner string
			if err := rows.Scan(&row.Key.ID, &row.Key.PostedAt, &row.EntryID,
				&after.DebitsPending, &after.DebitsPosted, &after.CreditsPending, &after.CreditsPosted,
				&row.Seq, &row.Ref, &row.TransferID, &kind, &row.Code, &row.Amount, &debit, &credit,
				&row.RailReference, &row.Status, &owner); err != nil {
				return err
			}
			d := after.Sub(prev)
			prev = after
			row.Counterparty = credit
			if credit == acct {
				row.Counterparty = debit
			}
			if f.PlatformID != "" && owner != f.PlatformID {
				continue
			}
			if row.Kind, err = parseTransferKind(kind); err != nil {
				return err
			}
			row.Key.PostedAt = row.Key.PostedAt.UTC()
			row.Posted, row.Pending = d.Net(), d.PendingNet()
			row.TransactionID = ""
			if strings.HasPrefix(row.Ref, "Transaction:") {
				row.TransactionID = row.Ref
			}
			if err := fn(row); err != nil {
				return errExportStopped{err}
			}
		}
		return rows.Err()
	})
	var stopped errExportStopped
	if errors.As(err, &stopped) {
		return stopped.err
	}
	if err != nil {
		return fmt.Errorf("postgres reports: export %s: %w", acct, err)
	}
	return nil
}

// errExportStopped carries fn's error out of the export's transaction
// unwrapped.
type errExportStopped struct{ err error }

func (e errExportStopped) Error() string { return e.err.Error() }
