package postgres

import (
	"bytes"
	"context"
	"database/sql/driver"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Verification reads the whole ledger as of one snapshot, with rows
// streamed by COPY … TO STDOUT (parsed here, far cheaper than one driver
// value per column):
//
//   - the journal in seq ranges: per range, entries joined with their
//     transfers and sorted by (seq, idx) on the server; the next range's
//     query runs on a second connection while this one is checked, so the
//     server's join and sort overlap the checking;
//   - the postings in one sequential scan, on a third connection, at the
//     same time.
//
// Every connection runs a repeatable-read, read-only transaction that
// imports the first one's snapshot (pg_export_snapshot), so all of them
// see one committed ledger.
const (
	// verifySeqChunk is a range's size: the server sorts this many rows at
	// once, and the first row comes when the sort is done.
	verifySeqChunk = 250_000
	// verifyWorkMem lets a range's hash join and sort stay in memory.
	verifyWorkMem = "256MB"
	// verifyProgressEvery is how many rows are read between progress calls.
	verifyProgressEvery = 50_000
	// verifyDrillMax bounds how many accounts whose postings disagree with
	// the journal are examined posting by posting.
	verifyDrillMax = 10
)

// VerifyJournal checks the whole ledger:
//
//  1. the journal in seq order: the hash chain, and a replay into every
//     account's counters, holds, and the postings the journal implies,
//     folded into a keyed digest per account (ledger.JournalCheck);
//  2. meanwhile, every stored posting, folded into the same digests; then
//     compared per account, and an account whose postings disagree is
//     examined posting by posting (each posting's change against its
//     transfer, in the account's order) to name the first entry that
//     breaks;
//  3. every account's counters and the open holds against the replay.
//
// progress counts entries and postings read.
func (r *LedgerReports) VerifyJournal(ctx context.Context, progress func(done, total int64), anchors ...ledger.Anchor) (ports.JournalVerification, error) {
	v, err := r.verifyJournal(ctx, progress, anchors)
	if err != nil {
		return ports.JournalVerification{}, fmt.Errorf("postgres reports: verify journal: %w", err)
	}
	return v, nil
}

// snapshotConn is a connection in a read-only transaction on a shared
// snapshot (raw BEGIN/ROLLBACK: COPY needs the bare connection).
type snapshotConn struct{ bun.Conn }

func (r *LedgerReports) openSnapshotConn(ctx context.Context, snapshot string) (snapshotConn, error) {
	conn, err := r.db.Conn(ctx)
	if err != nil {
		return snapshotConn{}, err
	}
	stmts := []string{`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`}
	if snapshot != "" {
		if strings.Trim(snapshot, "0123456789ABCDEFabcdef-") != "" {
			_ = conn.Close()
			return snapshotConn{}, fmt.Errorf("%w: unexpected snapshot id %q", errLedgerInternal, snapshot)
		}
		stmts = append(stmts, `SET TRANSACTION SNAPSHOT '`+snapshot+`'`)
	}
	stmts = append(stmts, `SET LOCAL work_mem = '`+verifyWorkMem+`'`, `SET LOCAL jit = off`)
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
			_ = conn.Close()
			return snapshotConn{}, err
		}
	}
	return snapshotConn{conn}, nil
}

func (c snapshotConn) close() {
	if _, err := c.ExecContext(context.Background(), `ROLLBACK`); err != nil {
		// A connection in an unknown state goes back to no pool.
		_ = c.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = c.Close()
}

func (r *LedgerReports) verifyJournal(ctx context.Context, progress func(done, total int64), anchors []ledger.Anchor) (ports.JournalVerification, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	main, err := r.openSnapshotConn(ctx, "")
	if err != nil {
		return ports.JournalVerification{}, err
	}
	defer main.close()
	var entries, maxSeq, postings int64
	var snapshot string
	if err := main.QueryRowContext(ctx, `SELECT count(*), coalesce(max(seq), 0), pg_export_snapshot() FROM ledger_entries`).
		Scan(&entries, &maxSeq, &snapshot); err != nil {
		return ports.JournalVerification{}, err
	}
	if err := main.QueryRowContext(ctx, `SELECT count(*) FROM ledger_postings`).Scan(&postings); err != nil {
		return ports.JournalVerification{}, err
	}
	total := entries + postings
	var done atomic.Int64
	var mu sync.Mutex
	report := func(n int64) {
		d := done.Add(n)
		if progress != nil {
			mu.Lock()
			progress(min(d, total), total)
			mu.Unlock()
		}
	}
	report(0)

	c := ledger.NewJournalCheck(anchors...)

	// Pass 2 runs alongside pass 1; it only reads c's digest key.
	type scan struct {
		stored  map[string]*ledger.PostingDigest
		scanned int64
		err     error
	}
	scanned := make(chan scan, 1)
	go func() {
		var s scan
		s.stored, s.scanned, s.err = r.scanPostings(ctx, snapshot, c, report)
		if s.err != nil {
			cancel()
		}
		scanned <- s
	}()
	err = r.checkJournal(ctx, snapshot, maxSeq, c, report)
	if err != nil {
		cancel()
	}
	s := <-scanned
	if err != nil {
		return ports.JournalVerification{}, err
	}
	if s.err != nil {
		return ports.JournalVerification{}, s.err
	}

	// Accounts whose stored postings disagree with the journal.
	type mismatch struct {
		account   string
		want, got ledger.PostingDigest
	}
	var mismatches []mismatch
	for account, d := range s.stored {
		if want := c.Expected(account); want != *d {
			mismatches = append(mismatches, mismatch{account, want, *d})
		}
	}
	for _, account := range c.Accounts() {
		if _, ok := s.stored[account]; !ok {
			mismatches = append(mismatches, mismatch{account, c.Expected(account), ledger.PostingDigest{}})
		}
	}
	slices.SortFunc(mismatches, func(a, b mismatch) int { return strings.Compare(a.account, b.account) })
	var extra []ports.JournalBreak
	for i, m := range mismatches {
		b, err := verifyAccountPostings(ctx, main, m.account, m.want, m.got, i < verifyDrillMax)
		if err != nil {
			return ports.JournalVerification{}, err
		}
		extra = append(extra, b)
	}

	accts, err := queryAccounts(ctx, main, `SELECT `+accountCols+` FROM ledger_accounts ORDER BY id`)
	if err != nil {
		return ports.JournalVerification{}, err
	}
	open, err := queryPending(ctx, main, `SELECT `+pendingCols+` FROM ledger_pending WHERE status = 'open' ORDER BY id`)
	if err != nil {
		return ports.JournalVerification{}, err
	}
	return ports.SummarizeJournalCheck(c, accts, open, s.scanned, extra), nil
}

// checkJournal feeds the journal to c in seq order, range by range. Two
// connections take turns: while c checks range k from one, the other's
// server already joins and sorts range k+1. Each range is parsed in its
// own goroutine into a channel, which the checker drains in range order.
func (r *LedgerReports) checkJournal(ctx context.Context, snapshot string, maxSeq int64, c *ledger.JournalCheck, report func(int64)) error {
	var conns [2]snapshotConn
	for i := range conns {
		conn, err := r.openSnapshotConn(ctx, snapshot)
		if err != nil {
			for _, c := range conns[:i] {
				c.close()
			}
			return err
		}
		conns[i] = conn
	}
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	type rangeStream struct {
		entries chan ledger.JournalEntry
		err     chan error
	}
	start := func(k int64) rangeStream {
		s := rangeStream{entries: make(chan ledger.JournalEntry, 4096), err: make(chan error, 1)}
		lo := k * verifySeqChunk
		go func() {
			defer close(s.entries)
			s.err <- streamJournalRange(ctx, conns[k%2], lo, lo+verifySeqChunk, s.entries)
		}()
		return s
	}
	ranges := (maxSeq + verifySeqChunk - 1) / verifySeqChunk
	var inflight []rangeStream
	for k := int64(0); k < min(2, ranges); k++ {
		inflight = append(inflight, start(k))
	}
	for k := int64(0); k < ranges; k++ {
		s := inflight[0]
		n := int64(0)
		for e := range s.entries {
			c.Add(e)
			if n++; n%verifyProgressEvery == 0 {
				report(verifyProgressEvery)
			}
		}
		report(n % verifyProgressEvery)
		if err := <-s.err; err != nil {
			return err
		}
		inflight = inflight[1:]
		if k+2 < ranges {
			// Range k's connection is free again.
			inflight = append(inflight, start(k+2))
		}
	}
	return nil
}

// streamJournalRange sends the entries with lo < seq <= hi, with their
// transfers, in seq order.
func streamJournalRange(ctx context.Context, conn snapshotConn, lo, hi int64, out chan<- ledger.JournalEntry) error {
	var e ledger.JournalEntry
	have := false
	send := func() error {
		select {
		case out <- e:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := copyRows(ctx, conn.Conn, fmt.Sprintf(`COPY (
		SELECT e.seq, e.id, e.ref, coalesce(e.reverses, ''), (extract(epoch FROM e.posted_at) * 1000000)::bigint,
			encode(e.hash, 'hex'), encode(e.prev_hash, 'hex'),
			t.id, t.kind, t.debit_account_id, t.credit_account_id, t.amount, t.currency, t.pending_id, t.timeout_ns, t.code,
			e.shard
		FROM ledger_entries e LEFT JOIN ledger_transfers t ON t.entry_id = e.id
		WHERE e.seq > %d AND e.seq <= %d ORDER BY e.seq, t.idx) TO STDOUT`, lo, hi), 17,
		func(f [][]byte) error {
			seq, err := parseInt(f[0])
			if err != nil {
				return err
			}
			if !have || seq != e.Seq {
				if have {
					if err := send(); err != nil {
						return err
					}
				}
				micros, err := parseInt(f[4])
				if err != nil {
					return err
				}
				shard, err := parseInt(f[16])
				if err != nil {
					return err
				}
				e = ledger.JournalEntry{Entry: ledger.Entry{ID: string(f[1]), Ref: string(f[2]), Reverses: string(f[3])},
					Seq: seq, Shard: int16(shard), PostedAt: time.UnixMicro(micros).UTC()}
				if err := parseHash(&e.Hash, f[5]); err != nil {
					return err
				}
				if err := parseHash(&e.PrevHash, f[6]); err != nil {
					return err
				}
				have = true
			}
			if f[7] == nil {
				return nil // an entry without transfers: the replay reports it
			}
			t := ledger.Transfer{ID: string(f[7]), DebitAccountID: string(f[9]), CreditAccountID: string(f[10]),
				Currency: string(f[12]), PendingID: string(f[13]), Code: string(f[15])}
			if t.Kind, err = parseTransferKind(string(f[8])); err != nil {
				return err
			}
			if t.Amount, err = parseInt(f[11]); err != nil {
				return err
			}
			timeout, err := parseInt(f[14])
			if err != nil {
				return err
			}
			t.Timeout = time.Duration(timeout)
			e.Transfers = append(e.Transfers, t)
			return nil
		})
	if err != nil {
		return err
	}
	if have {
		return send()
	}
	return nil
}

// scanPostings folds every stored posting into a digest per account.
func (r *LedgerReports) scanPostings(ctx context.Context, snapshot string, c *ledger.JournalCheck, report func(int64)) (map[string]*ledger.PostingDigest, int64, error) {
	conn, err := r.openSnapshotConn(ctx, snapshot)
	if err != nil {
		return nil, 0, err
	}
	defer conn.close()
	stored := map[string]*ledger.PostingDigest{}
	var n int64
	var after ledger.Counters
	err = copyRows(ctx, conn.Conn, `COPY (SELECT account_id, transfer_id,
			debits_pending, debits_posted, credits_pending, credits_posted FROM ledger_postings) TO STDOUT`, 6,
		func(f [][]byte) error {
			var err error
			for i, p := range []*int64{&after.DebitsPending, &after.DebitsPosted, &after.CreditsPending, &after.CreditsPosted} {
				if *p, err = parseInt(f[2+i]); err != nil {
					return err
				}
			}
			d, ok := stored[string(f[0])] // no allocation for the lookup
			if !ok {
				d = &ledger.PostingDigest{}
				stored[string(f[0])] = d
			}
			c.AddStoredBytes(d, f[1], after)
			if n++; n%verifyProgressEvery == 0 {
				report(verifyProgressEvery)
			}
			return nil
		})
	report(n % verifyProgressEvery)
	return stored, n, err
}

// copyRows runs a COPY … TO STDOUT (text format) on conn and calls fn with
// each row's fields, unescaped; a NULL field is nil. The slices are only
// valid during the call.
func copyRows(ctx context.Context, conn bun.Conn, query string, columns int, fn func(fields [][]byte) error) error {
	w := &copyRowWriter{fn: fn, fields: make([][]byte, columns)}
	if _, err := pgdriver.CopyTo(ctx, conn, w, query); err != nil {
		if w.err != nil {
			return w.err
		}
		return err
	}
	if w.err == nil && len(w.partial) > 0 {
		w.err = fmt.Errorf("%w: COPY output ends mid-row", errLedgerInternal)
	}
	return w.err
}

// copyRowWriter splits COPY text output into rows and fields.
type copyRowWriter struct {
	fn      func([][]byte) error
	fields  [][]byte
	partial []byte
	err     error
}

func (w *copyRowWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := len(p)
	if len(w.partial) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			return n, nil
		}
		w.partial = append(w.partial, p[:i]...)
		if w.err = w.row(w.partial); w.err != nil {
			return 0, w.err
		}
		w.partial = w.partial[:0]
		p = p[i+1:]
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			break
		}
		if w.err = w.row(p[:i]); w.err != nil {
			return 0, w.err
		}
		p = p[i+1:]
	}
	return n, nil
}

func (w *copyRowWriter) row(line []byte) error {
	for i := range w.fields {
		end := bytes.IndexByte(line, '\t')
		last := i == len(w.fields)-1
		if (end < 0) != last {
			return fmt.Errorf("%w: a COPY row has not %d fields", errLedgerInternal, len(w.fields))
		}
		field := line
		if !last {
			field, line = line[:end], line[end+1:]
		}
		switch {
		case len(field) == 2 && field[0] == '\\' && field[1] == 'N':
			w.fields[i] = nil
		case bytes.IndexByte(field, '\\') >= 0:
			w.fields[i] = unescapeCopy(field)
		default:
			w.fields[i] = field[:len(field):len(field)]
		}
	}
	return w.fn(w.fields)
}

// unescapeCopy undoes COPY's text-format escapes (backslash sequences).
func unescapeCopy(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		i++
		switch c := b[i]; c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'v':
			out = append(out, '\v')
		case 'x':
			j := i + 1
			for j < len(b) && j < i+3 && isHex(b[j]) {
				j++
			}
			v, _ := strconv.ParseUint(string(b[i+1:j]), 16, 8)
			out = append(out, byte(v))
			i = j - 1
		default:
			if c >= '0' && c <= '7' {
				j := i
				for j < len(b) && j < i+3 && b[j] >= '0' && b[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(string(b[i:j]), 8, 8)
				out = append(out, byte(v))
				i = j - 1
				continue
			}
			out = append(out, c)
		}
	}
	return out
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func parseInt(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("%w: empty integer in COPY output", errLedgerInternal)
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' || n > (1<<63-1-9)/10 {
			return 0, fmt.Errorf("%w: bad integer %q in COPY output", errLedgerInternal, b)
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// parseHash reads a hex hash; nil (SQL NULL) leaves h zero.
func parseHash(h *[32]byte, b []byte) error {
	if b == nil {
		return nil
	}
	if len(b) != 64 {
		return fmt.Errorf("%w: a stored hash has %d hex digits", errLedgerInternal, len(b))
	}
	for i := range h {
		hi, lo := unhex(b[2*i]), unhex(b[2*i+1])
		if hi > 15 || lo > 15 {
			return fmt.Errorf("%w: a stored hash is not hex", errLedgerInternal)
		}
		h[i] = hi<<4 | lo
	}
	return nil
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}

// verifyAccountPostings explains why an account's stored postings do not
// fold to the digest its journal implies. When drill is set it walks the
// account's postings in order and names the first whose change from the
// posting before it is not what its transfer does (an edited, deleted or
// re-pointed posting); otherwise, or when every posting is consistent with
// its transfer, the break names the account alone.
func verifyAccountPostings(ctx context.Context, db bun.IDB, account string, want, got ledger.PostingDigest, drill bool) (ports.JournalBreak, error) {
	b := ports.JournalBreak{Kind: ports.BreakPosting, AccountID: account,
		Message: fmt.Sprintf("account %s: its %d stored postings disagree with the %d the journal implies", account, got.N, want.N)}
	if !drill {
		return b, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT p.id, p.entry_id, p.transfer_id,
			p.debits_pending, p.debits_posted, p.credits_pending, p.credits_posted,
			coalesce(e.seq, 0), coalesce(t.kind, ''), coalesce(t.debit_account_id, ''), coalesce(t.amount, 0),
			coalesce(h.amount, 0)
		FROM ledger_postings p
		LEFT JOIN ledger_entries e ON e.id = p.entry_id
		LEFT JOIN ledger_transfers t ON t.id = p.transfer_id AND t.entry_id = p.entry_id
		LEFT JOIN ledger_transfers h ON h.id = t.pending_id AND h.kind = 'pending'
		WHERE p.account_id = ? ORDER BY p.id`, account)
	if err != nil {
		return b, err
	}
	defer rows.Close()
	var prev ledger.Counters
	for rows.Next() {
		var id, seq, amount, held int64
		var entryID, transferID, kind, debit string
		var after ledger.Counters
		if err := rows.Scan(&id, &entryID, &transferID, &after.DebitsPending, &after.DebitsPosted,
			&after.CreditsPending, &after.CreditsPosted, &seq, &kind, &debit, &amount, &held); err != nil {
			return b, err
		}
		delta := after.Sub(prev)
		prev = after
		if kind == "" {
			return ports.JournalBreak{Kind: ports.BreakPosting, Seq: seq, EntryID: entryID, AccountID: account,
				Message: fmt.Sprintf("posting %d of account %s names transfer %s of entry %s, which the journal does not have",
					id, account, transferID, entryID)}, nil
		}
		k, err := parseTransferKind(kind)
		if err != nil {
			return b, err
		}
		dr, cr := ledger.TransferEffect(ledger.Transfer{Kind: k, Amount: amount}, held)
		wantDelta := cr
		if debit == account {
			wantDelta = dr
		}
		if delta != wantDelta {
			return ports.JournalBreak{Kind: ports.BreakPosting, Seq: seq, EntryID: entryID, AccountID: account,
				Message: fmt.Sprintf("entry %s (seq %d): posting %d of account %s changes its counters by %+v, its transfer %s does %+v",
					entryID, seq, id, account, delta, transferID, wantDelta)}, nil
		}
	}
	return b, rows.Err()
}
