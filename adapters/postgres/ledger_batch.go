package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// journalLock is the advisory lock key of shard 0's chain; shard n's is
// journalLock+n. A batch holds its shard's key from its load statement
// (ledger_chain_tail takes it) until it commits, so each batch chains to
// the last one committed on its shard and Seq follows commit order within
// a shard. Writers on different shards (LedgerOptions.Shard) do not wait
// for each other's journal lock.
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

// postBatch runs one attempt at a batch in one transaction (see Ledger),
// in four phases: begin (two round trips open the transaction and load,
// and lock, what the batch reads: ledger_batch_load.go), decide (the Book,
// in Go: ledger_batch_decide.go), write (the statement text:
// ledger_batch_write.go) and commit (one more round trip writes everything
// and commits, and a lost reply is resolved: ledger_batch_commit.go).
// maybe holds the indexes of entries that an earlier attempt of this
// batch may have committed (the round trip that commits failed with an
// unknown outcome): finding them recorded now is their success, not
// ErrExists. postBatch adds to it when its own write fails that way.
func (l *Ledger) postBatch(batch []*postRequest, maybe map[int]bool) ([]postResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	conn, err := l.writerConn(ctx)
	if err != nil {
		return nil, err
	}
	tx := &batchTx{l: l, conn: conn, session: l.session, open: true}
	defer tx.rollbackIfOpen()

	ld, q, err := l.begin(ctx, conn, batch)
	if err != nil {
		return nil, err
	}
	now := batchTime(l.clock, ld)
	d := decide(batch, ld, now)
	if len(d.accepted) == 0 && !d.recordsOnly {
		// Nothing to write: release the locks.
		if err := tx.rollback(ctx); err != nil {
			return nil, err
		}
		return answers(batch, d.outcomes, d.stored, nil, nil, maybe), nil
	}
	w, chained, q, err := l.appendWrites(q, batch, d, ld.head, now)
	if err != nil {
		return nil, err
	}
	if w != nil {
		if err := l.prepare(ctx, conn, journalStmt, w.journalShape()); err != nil {
			return nil, fmt.Errorf("write: %w", err)
		}
	}
	return tx.commit(ctx, q, w, ld, batch, d, chained, maybe)
}

// batchTime is when a batch happens: the clock's time once its load
// statement holds the shard's journal lock, and never before the shard's
// last entry (another instance's clock may run a little ahead). So within
// a shard posted_at never goes back as seq goes up, and a reader paging
// the journal by (posted_at, seq) never finds an entry committed behind
// its cursor.
func batchTime(clock ports.Clock, ld *batchLoad) time.Time {
	now := ports.Stored(clock.Now())
	if now.Before(ld.headAt) {
		return ld.headAt
	}
	return now
}

// batchTx is the transaction of one attempt on the writer's connection.
type batchTx struct {
	l       *Ledger
	conn    bun.Conn
	session session // conn's server process
	open    bool    // a transaction may be open on conn
}

// rollbackIfOpen ends a transaction an attempt left open (deferred).
func (t *batchTx) rollbackIfOpen() {
	if !t.open {
		return
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	if _, err := t.conn.ExecContext(rctx, "ROLLBACK"); err != nil {
		t.l.dropConn()
	}
}

func (t *batchTx) rollback(ctx context.Context) error {
	t.open = false
	if _, err := t.conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.l.dropConn()
		return fmt.Errorf("rollback: %w", err)
	}
	return nil
}

// begin opens the batch's transaction. With entries, quote changes or
// Required transaction changes it runs the load statement; a batch of
// records alone without those reads nothing: its BEGIN goes with its writes (returned
// as the start of the statement text), and the whole batch is one round
// trip.
func (l *Ledger) begin(ctx context.Context, conn bun.Conn, batch []*postRequest) (*batchLoad, []byte, error) {
	keys := newBatchKeys(batch)
	if keys.loads() {
		ld, err := l.load(ctx, conn, keys)
		return ld, nil, err
	}
	// Rows a retry could not write again are named in created, to look
	// for if the reply to the COMMIT is lost (see settled).
	return &batchLoad{quotes: quoteBook{}, created: createdRow(batch)}, []byte("BEGIN;\n"), nil
}

// appendWrites appends everything the batch writes to q: the accepted
// entries chained to head (with their transfers, holds, accounts and
// postings) and the records.
func (l *Ledger) appendWrites(q []byte, batch []*postRequest, d *decision, head [32]byte, now time.Time) (
	*batchWrites, map[string]ledger.JournalEntry, []byte, error) {
	var chained map[string]ledger.JournalEntry
	var w *batchWrites
	if len(d.accepted) > 0 {
		var err error
		if w, err = newBatchWrites(d.book, d.accepted, d.initial, d.loadedPending, now); err != nil {
			return nil, nil, nil, err
		}
		w.shard = l.opts.Shard
		chained = w.chain(head)
		q = w.appendJournal(l.db.QueryGen(), q)
	}
	q, err := appendRecords(l.db, q, batch, d.outcomes, d.quotes)
	return w, chained, q, err
}

// createdRow names a quote or transaction that a batch's records alone
// insert, which a retry of a batch that did commit could not insert again
// (entries are found recorded by the retry's load; status changes and job
// writes can be made twice); the zero row when there is none.
func createdRow(batch []*postRequest) rowRef {
	for _, r := range batch {
		if !r.recordsOnly {
			continue
		}
		if len(r.txns) > 0 {
			return rowRef{table: "transactions", id: r.txns[0].ID}
		}
		if len(r.quotes) > 0 {
			return rowRef{table: "quotes", id: r.quotes[0].ID}
		}
	}
	return rowRef{}
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
