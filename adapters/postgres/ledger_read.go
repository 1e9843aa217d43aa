package postgres

import (
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

const accountCols = `id, currency, kind, platform_id, flags, debits_pending, debits_posted, credits_pending, credits_posted, created_at`

const pendingCols = `id, entry_id, debit_account_id, credit_account_id, amount, currency, timeout_ns, code, status, expires_at, posted_amount`

const transferCols = `entry_id, idx, id, kind, debit_account_id, credit_account_id, amount, currency, pending_id, timeout_ns, code`

// CreateAccounts creates accounts in one transaction. An account that
// already exists is left as it is when its currency, kind and flags match;
// otherwise nothing is created and the error matches
// ledger.ErrExistsDifferent. Counters always start at zero; CreatedAt
// defaults to the clock's time.
func (l *Ledger) CreateAccounts(ctx context.Context, accts ...ledger.Account) error {
	if len(accts) == 0 {
		return nil
	}
	now := l.clock.Now().UTC()
	sorted := slices.Clone(accts)
	slices.SortStableFunc(sorted, func(a, b ledger.Account) int { return strings.Compare(a.ID, b.ID) })
	n := len(sorted)
	id, cur, kind, platform, created := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	flags := make([]int64, n)
	for i, a := range sorted {
		if a.ID == "" {
			return &ledger.Error{Code: ledger.CodeIDMissing}
		}
		if a.Currency == "" {
			return fmt.Errorf("postgres ledger: create account %s: currency missing", a.ID)
		}
		at := a.CreatedAt
		if at.IsZero() {
			at = now
		}
		id[i], cur[i], kind[i], platform[i], created[i] = a.ID, a.Currency, a.Kind, a.PlatformID, formatTime(at)
		flags[i] = int64(a.Flags)
	}
	err := l.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_accounts (id, currency, kind, platform_id, flags, created_at)
			SELECT u.id, u.currency, u.kind, u.platform_id, u.flags, u.created_at::timestamptz
			FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::int[], ?::text[]) WITH ORDINALITY
				AS u(id, currency, kind, platform_id, flags, created_at, ord)
			ORDER BY u.ord
			ON CONFLICT (id) DO NOTHING`,
			pgdialect.Array(id), pgdialect.Array(cur), pgdialect.Array(kind), pgdialect.Array(platform),
			pgdialect.Array(flags), pgdialect.Array(created)); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		stored, err := queryAccounts(ctx, tx, `SELECT `+accountCols+` FROM ledger_accounts WHERE id = ANY(?::text[])`, pgdialect.Array(id))
		if err != nil {
			return err
		}
		byID := make(map[string]ledger.Account, len(stored))
		for _, a := range stored {
			byID[a.ID] = a
		}
		for _, a := range sorted {
			s, ok := byID[a.ID]
			if !ok {
				return fmt.Errorf("%w: account %s vanished", errLedgerInternal, a.ID)
			}
			if s.Currency != a.Currency || s.Kind != a.Kind || s.Flags != a.Flags {
				return fmt.Errorf("account %s exists as %s %s flags=%d, asked for %s %s flags=%d: %w",
					a.ID, s.Currency, s.Kind, s.Flags, a.Currency, a.Kind, a.Flags,
					&ledger.Error{Code: ledger.CodeExistsWithDifferentFields, AccountID: a.ID})
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres ledger: create accounts: %w", err)
	}
	return nil
}

// Account returns one account or ports.ErrNotFound.
func (l *Ledger) Account(ctx context.Context, id string) (ledger.Account, error) {
	accts, err := queryAccountsUpdated(ctx, l.db, `WHERE a.id = ?`, id)
	if err != nil {
		return ledger.Account{}, fmt.Errorf("postgres ledger: account %s: %w", id, err)
	}
	if len(accts) == 0 {
		return ledger.Account{}, fmt.Errorf("postgres ledger: account %s: %w", id, ports.ErrNotFound)
	}
	return accts[0], nil
}

// Accounts returns the accounts that exist among ids, in ids order.
func (l *Ledger) Accounts(ctx context.Context, ids ...string) ([]ledger.Account, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	accts, err := queryAccountsUpdated(ctx, l.db, `WHERE a.id = ANY(?::text[])`, pgdialect.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("postgres ledger: accounts: %w", err)
	}
	byID := make(map[string]ledger.Account, len(accts))
	for _, a := range accts {
		byID[a.ID] = a
	}
	out := make([]ledger.Account, 0, len(accts))
	for _, id := range ids {
		if a, ok := byID[id]; ok {
			out = append(out, a)
		}
	}
	return out, nil
}

// Pending returns a two-phase transfer or ports.ErrNotFound.
func (l *Ledger) Pending(ctx context.Context, id string) (ledger.PendingTransfer, error) {
	ps, err := queryPending(ctx, l.db, `SELECT `+pendingCols+` FROM ledger_pending WHERE id = ?`, id)
	if err != nil {
		return ledger.PendingTransfer{}, fmt.Errorf("postgres ledger: pending %s: %w", id, err)
	}
	if len(ps) == 0 {
		return ledger.PendingTransfer{}, fmt.Errorf("postgres ledger: pending %s: %w", id, ports.ErrNotFound)
	}
	return ps[0], nil
}

// ExpireDue posts the expiry entry of up to limit open holds due at now,
// through the group-commit writer (so they share batches with other
// entries), and returns how many it expired. Several instances may run it at
// once: an expiry entry's id is derived from the hold's, so a hold another
// instance (or a racing post or void) resolved first is skipped, not counted.
func (l *Ledger) ExpireDue(ctx context.Context, now time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	due, err := queryPending(ctx, l.db, `SELECT `+pendingCols+` FROM ledger_pending
		WHERE status = 'open' AND expires_at <= ?::timestamptz ORDER BY expires_at, id LIMIT ?`, now.UTC(), limit)
	if err != nil {
		return 0, fmt.Errorf("postgres ledger: expire due: %w", err)
	}
	reqs := make([]*postRequest, 0, len(due))
	for _, p := range due {
		r, err := l.enqueue(ctx, ledger.ExpiryEntry(p), ports.Records{}, now, false)
		if err != nil {
			break
		}
		reqs = append(reqs, r)
	}
	n := 0
	var firstErr error
	for _, r := range reqs {
		_, err := l.wait(ctx, r)
		switch ledger.CodeOf(err) {
		case ledger.CodeOK:
			if err == nil {
				n++
			} else if firstErr == nil {
				firstErr = err
			}
		case ledger.CodeExists, ledger.CodePendingExpired, ledger.CodePendingAlreadyPosted,
			ledger.CodePendingAlreadyVoided, ledger.CodePendingNotFound:
			// Resolved by someone else first.
		default:
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if firstErr == nil && len(reqs) < len(due) {
		if firstErr = ctx.Err(); firstErr == nil {
			firstErr = ErrLedgerClosed
		}
	}
	if firstErr != nil {
		return n, fmt.Errorf("postgres ledger: expire due: %w", firstErr)
	}
	return n, nil
}

// OpenHolds returns up to limit open holds created at or before
// createdBefore whose id sorts after afterID, by id (the partial index on
// open holds keeps this to the open ones).
func (l *Ledger) OpenHolds(ctx context.Context, createdBefore time.Time, afterID string, limit int) ([]ledger.PendingTransfer, error) {
	if limit <= 0 {
		return nil, nil
	}
	ps, err := queryPending(ctx, l.db, `SELECT `+pendingCols+` FROM ledger_pending
		WHERE status = 'open' AND created_at <= ?::timestamptz AND id > ? ORDER BY id LIMIT ?`,
		createdBefore.UTC(), afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres ledger: open holds: %w", err)
	}
	return ps, nil
}

// Journal returns up to limit entries with Seq > afterSeq, by Seq.
func (l *Ledger) Journal(ctx context.Context, afterSeq int64, limit int) ([]ledger.JournalEntry, error) {
	if limit <= 0 {
		return nil, nil
	}
	es, err := loadEntries(ctx, l.db, `WHERE seq > ? ORDER BY seq LIMIT ?`, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres ledger: journal: %w", err)
	}
	return es, nil
}

// Snapshot returns every account and pending transfer as of one moment
// (one repeatable-read transaction).
func (l *Ledger) Snapshot(ctx context.Context) ([]ledger.Account, []ledger.PendingTransfer, error) {
	var accts []ledger.Account
	var pend []ledger.PendingTransfer
	err := l.db.RunInTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true},
		func(ctx context.Context, tx bun.Tx) error {
			var err error
			if accts, err = queryAccounts(ctx, tx, `SELECT `+accountCols+` FROM ledger_accounts ORDER BY id`); err != nil {
				return err
			}
			pend, err = queryPending(ctx, tx, `SELECT `+pendingCols+` FROM ledger_pending ORDER BY id`)
			return err
		})
	if err != nil {
		return nil, nil, fmt.Errorf("postgres ledger: snapshot: %w", err)
	}
	return accts, pend, nil
}

func queryAccounts(ctx context.Context, db bun.IDB, query string, args ...any) ([]ledger.Account, error) {
	return scanAccounts(ctx, db, false, query, args...)
}

// queryAccountsUpdated reads the accounts ledger_accounts a matches by
// where, each with UpdatedAt: the time of its last posting (every change
// of its counters writes one), through ledger_postings_time.
func queryAccountsUpdated(ctx context.Context, db bun.IDB, where string, args ...any) ([]ledger.Account, error) {
	return scanAccounts(ctx, db, true, `SELECT a.id, a.currency, a.kind, a.platform_id, a.flags, a.debits_pending, a.debits_posted,
		a.credits_pending, a.credits_posted, a.created_at,
		(SELECT p.posted_at FROM ledger_postings p WHERE p.account_id = a.id ORDER BY p.posted_at DESC, p.id DESC LIMIT 1)
		FROM ledger_accounts a `+where, args...)
}

// scanAccounts runs query, whose columns are accountCols and, when
// updated, the last posting's time.
func scanAccounts(ctx context.Context, db bun.IDB, updated bool, query string, args ...any) ([]ledger.Account, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ledger.Account
	for rows.Next() {
		var a ledger.Account
		var flags int64
		var at sql.NullTime
		dest := []any{&a.ID, &a.Currency, &a.Kind, &a.PlatformID, &flags,
			&a.DebitsPending, &a.DebitsPosted, &a.CreditsPending, &a.CreditsPosted, &a.CreatedAt}
		if updated {
			dest = append(dest, &at)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		a.Flags = ledger.AccountFlags(flags)
		a.CreatedAt = a.CreatedAt.UTC()
		if at.Valid {
			a.UpdatedAt = at.Time.UTC()
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func queryPending(ctx context.Context, db bun.IDB, query string, args ...any) ([]ledger.PendingTransfer, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ledger.PendingTransfer
	for rows.Next() {
		p := ledger.PendingTransfer{Transfer: ledger.Transfer{Kind: ledger.Pending}}
		var timeout int64
		var status string
		var expires sql.NullTime
		if err := rows.Scan(&p.ID, &p.EntryID, &p.DebitAccountID, &p.CreditAccountID, &p.Amount, &p.Currency,
			&timeout, &p.Code, &status, &expires, &p.PostedAmount); err != nil {
			return nil, err
		}
		p.Timeout = time.Duration(timeout)
		if p.Status, err = parsePendingStatus(status); err != nil {
			return nil, err
		}
		if expires.Valid {
			p.ExpiresAt = expires.Time.UTC()
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// loadEntries reads journal entries (with their transfers) selected by
// tail, a WHERE … ORDER BY … clause over
// ledger_entries.
func loadEntries(ctx context.Context, db bun.IDB, tail string, args ...any) ([]ledger.JournalEntry, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, seq, shard, ref, COALESCE(reverses, ''), posted_at, hash, prev_hash FROM ledger_entries `+tail, args...)
	if err != nil {
		return nil, err
	}
	var out []ledger.JournalEntry
	index := map[string]int{}
	for rows.Next() {
		var e ledger.JournalEntry
		var hash, prev []byte
		if err := rows.Scan(&e.ID, &e.Seq, &e.Shard, &e.Ref, &e.Reverses, &e.PostedAt, &hash, &prev); err != nil {
			rows.Close()
			return nil, err
		}
		if err := errors.Join(readHash(&e.Hash, hash), readHash(&e.PrevHash, prev)); err != nil {
			rows.Close()
			return nil, fmt.Errorf("entry %s: %w", e.ID, err)
		}
		e.PostedAt = e.PostedAt.UTC()
		index[e.ID] = len(out)
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}
	ids := make([]string, len(out))
	for i, e := range out {
		ids[i] = e.ID
	}

	rows, err = db.QueryContext(ctx, `SELECT `+transferCols+` FROM ledger_transfers
		WHERE entry_id = ANY(?::text[]) ORDER BY entry_id, idx`, pgdialect.Array(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var entryID, kind string
		var idx int
		var timeout int64
		var t ledger.Transfer
		if err := rows.Scan(&entryID, &idx, &t.ID, &kind, &t.DebitAccountID, &t.CreditAccountID, &t.Amount,
			&t.Currency, &t.PendingID, &timeout, &t.Code); err != nil {
			return nil, err
		}
		if t.Kind, err = parseTransferKind(kind); err != nil {
			return nil, err
		}
		t.Timeout = time.Duration(timeout)
		e := &out[index[entryID]]
		e.Transfers = append(e.Transfers, t)
	}
	return out, rows.Err()
}

func parseTransferKind(s string) (ledger.TransferKind, error) {
	for _, k := range []ledger.TransferKind{ledger.Single, ledger.Pending, ledger.PostPending, ledger.VoidPending} {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown transfer kind %q", s)
}

func parsePendingStatus(s string) (ledger.PendingStatus, error) {
	for _, st := range []ledger.PendingStatus{ledger.PendingOpen, ledger.PendingPosted, ledger.PendingVoided, ledger.PendingExpired} {
		if st.String() == s {
			return st, nil
		}
	}
	return 0, errors.New("unknown pending status " + s)
}
