package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/corridorpay/corridor/ledger"
)

// settledTimeout bounds how long the writer waits for a transaction whose
// COMMIT reply was lost to finish on the server.
const settledTimeout = 5 * time.Second

// settled asks the server, on a new connection, how a batch whose COMMIT
// reply was lost ended: "committed" or "aborted", or "" when it cannot be
// told, or the batch may still be running after settledTimeout (its
// session may still be running the COMMIT). A batch that loaded knows its
// transaction id (txid_status); a batch of records alone that creates
// rows knows one of them and its session's server process: once that
// process has gone (a session's transaction ends before its process
// does), the row is there if and only if the batch committed. The process
// is known by its pid and start, so a later session given the same pid is
// not waited for. Anything else cannot be told.
func (l *Ledger) settled(ld *batchLoad, s session) string {
	var query string
	var args []any
	switch {
	case ld.xid != 0:
		query, args = "SELECT txid_status(?)", []any{ld.xid}
	case ld.created.id != "" && s.pid != 0:
		query, args = "SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = ? AND "+
			sessionStart+" = ?) THEN 'in progress' END", []any{s.pid, s.start}
	default:
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), settledTimeout)
	defer cancel()
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		var status sql.NullString
		if err := l.db.QueryRowContext(ctx, query, args...).Scan(&status); err != nil {
			l.opts.Logger.Warn("ledger batch: commit outcome unknown", "xid", ld.xid, "pid", s.pid, "err", err)
			return ""
		}
		if status.String != "in progress" {
			if ld.xid != 0 {
				return status.String
			}
			return l.created(ctx, ld.created)
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(wait):
		}
	}
}

// created reports "committed" when row is stored, "aborted" when not, and
// "" when that cannot be read. The query is a statement of its own, so
// its snapshot is taken after the batch's session was seen gone.
func (l *Ledger) created(ctx context.Context, row rowRef) string {
	var found bool
	if err := l.db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM ? WHERE id = ?)", bun.Ident(row.table), row.id).Scan(&found); err != nil {
		l.opts.Logger.Warn("ledger batch: commit outcome unknown", "row", row.id, "err", err)
		return ""
	}
	if found {
		return "committed"
	}
	return "aborted"
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

// commit sends the statement text q ending in COMMIT (ROLLBACK under a
// test fault) in one round trip and turns the outcome into each caller's
// result. A reply that never came leaves the batch committed or not:
// settled asks the server, and when even that is unknown the accepted
// entries go into maybe for the retry to find.
func (t *batchTx) commit(ctx context.Context, q []byte, w *batchWrites, ld *batchLoad, batch []*postRequest, d *decision,
	chained map[string]ledger.JournalEntry, maybe map[int]bool) ([]postResult, error) {
	var rollBack, lose bool
	if t.l.writeFault != nil {
		rollBack, lose = t.l.writeFault()
	}
	if rollBack {
		q = append(q, "ROLLBACK"...)
	} else {
		q = append(q, "COMMIT"...)
	}
	seqs, err := writeBatch(ctx, t.conn, string(q), w)
	if err == nil && lose {
		err = fmt.Errorf("write: reply lost (test fault): %w", io.ErrUnexpectedEOF)
	}
	t.open = false
	if err == nil {
		return answers(batch, d.outcomes, d.stored, chained, seqs, maybe), nil
	}
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		// Refused by the server: the transaction did not commit.
		t.open = true
		return nil, err
	}
	// The reply never came: the batch may or may not have committed.
	t.l.dropConn()
	switch t.l.settled(ld, t.session) {
	case "committed":
		if seqs, rerr := t.l.entrySeqs(d.accepted); rerr == nil {
			return answers(batch, d.outcomes, d.stored, chained, seqs, maybe), nil
		}
	case "aborted":
		return nil, err // nothing was written: a retry starts afresh
	}
	// Unknown: a retry finds what was recorded (see maybe).
	for i, o := range d.outcomes {
		if o.err == nil {
			maybe[i] = true
		}
	}
	return nil, err
}
