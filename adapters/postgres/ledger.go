package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// LedgerOptions tune the group-commit writer. Zero values take the defaults.
type LedgerOptions struct {
	// MaxBatch is the most entries one transaction commits (default 1000).
	MaxBatch int
	// MaxDelay bounds how long the writer waits for more entries once it has
	// taken what is queued (default 1ms). It waits only while the batch is
	// smaller than MinBatch or than the batch before it (callers answered by
	// the last commit are usually about to post again), so a lone caller is
	// not delayed and a busy writer fills each batch with everyone waiting.
	MaxDelay time.Duration
	// MinBatch makes every batch wait, up to MaxDelay, until it holds at least
	// this many entries (default 1). Tests raise it, with a long MaxDelay, to
	// put chosen entries into one transaction.
	MinBatch int
	// MaxAttempts bounds how often a batch is re-run after a deadlock, a
	// serialization failure, a uniqueness race with another instance or a
	// lost connection (default 50).
	MaxAttempts int
	// Logger receives retries and fallbacks (default slog.Default()).
	Logger *slog.Logger
	// Shard is the journal chain this writer appends to (default 0). Each
	// shard has its own hash chain and journal lock, so instances given
	// different shards commit their batches without waiting for each
	// other's (they still wait on the row locks of accounts both touch).
	// Verification walks every shard's chain; a checkpoint signs each head.
	Shard int16
	// Observe, when set, is told of each batch the writer committed: its
	// entries and how long writing and committing it took (retries
	// included). Metrics hang on it.
	Observe func(entries int, took time.Duration)
}

func (o LedgerOptions) withDefaults() LedgerOptions {
	if o.MaxBatch <= 0 {
		o.MaxBatch = 1000
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = time.Millisecond
	}
	if o.MinBatch <= 0 {
		o.MinBatch = 1
	}
	if o.MinBatch > o.MaxBatch {
		o.MinBatch = o.MaxBatch
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 50
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// ErrLedgerClosed is returned by Post and ExpireDue after Close.
var ErrLedgerClosed = errors.New("postgres ledger: closed")

// Ledger is the PostgreSQL ports.LedgerStore.
//
// # Group commit
//
// PostgreSQL commits about 1,500 small transactions a second on this kind of
// machine (each commit waits for an fsync), so Post does not open a
// transaction per entry. Post queues the entry and waits; one writer
// goroutine takes what is queued as a batch (up to MaxBatch entries, waiting
// at most MaxDelay for more, and not at all when it is alone), and commits
// the whole batch in ONE transaction on its own connection, in three round
// trips (on a busy machine each costs milliseconds, and the writer's pace
// is its round trips and the server's planning, not the server's work):
//
//  1. BEGIN, then one load statement (postBatch, loadStmt; prepared
//     on the writer's session, so it is planned once): lock the quotes
//     the records change, the holds the batch opens or resolves and the
//     accounts whose flags make their balance decide (FOR UPDATE, each in
//     id order), take the journal lock (a transaction-scoped advisory lock)
//     and read the last committed entry's hash, and read the unflagged
//     accounts without a lock (see "Hot accounts") and the entries whose
//     ids the batch re-posts or reverses;
//  2. in Go: load those rows into a ledger.Book and Apply each entry in
//     queue order, after its call's quote preconditions (see "Records"):
//     the Book decides everything, and a refused entry changes nothing and
//     does not affect its neighbours; chain the accepted entries' hashes
//     (ledger.Chain) after the loaded head;
//  3. one simple query of several statements ending in COMMIT: the
//     accepted entries, their transfers and holds, the
//     unflagged accounts locked in id order, each touched account's summed
//     delta added once and the per-account postings (the counters after
//     each posting) from its RETURNING values, all in one statement; then
//     the records (quotes, transactions and jobs inserted, jobs completed,
//     quote and transaction status changes) in a few more. The server runs
//     them in order and skips the rest, COMMIT included, after an error;
//  4. only then answer each caller with its own result.
//
// A batch of records alone (WriteRecords) that changes no quote loads
// nothing: BEGIN, its writes and COMMIT are one round trip.
//
// When the reply to a batch's COMMIT is lost (the connection breaks after
// the write was sent), the batch may or may not have committed. The writer
// knows the batch's transaction id (the load statement reads
// txid_current()) and asks the server on a new connection (txid_status,
// waiting while the old session still runs); a batch of records alone,
// which reads nothing, waits for its old session's process to end and
// looks for a row it creates: committed, every caller gets the
// batch's answer (the entries' sequence numbers read back); aborted, the
// batch runs again from scratch. When the server cannot tell, the retry
// counts entries it finds recorded as its own.
//
// A deadlock, a serialization failure, a lost connection or a uniqueness race
// with another instance (two instances posting the same entry id or opening
// the same hold at once) re-runs the whole batch from step 1 against fresh
// rows, up to MaxAttempts times; such errors never reach a caller. When a
// batch fails for any other reason (a CHECK constraint, a transfer id already
// used by another entry…), its entries are posted one by one, each in its own
// transaction, so one poisoned entry fails alone.
//
// # One writer, not shards
//
// There is one writer of entries per Ledger rather than one per shard of
// accounts. Entries routinely touch a hot account (the sandbox funding
// source, a rail's settlement account, a platform's account) together with
// customer accounts, and even spread transfers make two batches of a few
// hundred accounts share some; shards would queue on each other's row
// locks, and the journal lock serialises the writing half of every batch
// anyway. One writer of entries never waits for another's lock in its own
// process (only, rarely, for a transaction row the records writer is
// changing: see "Two writers"), and turns each commit into as many entries
// as there are callers waiting. Several service instances (each with its own
// writers) may share one database: the lock order below keeps them
// deadlock-free, and the retry covers the rest.
//
// # Two writers
//
// A Ledger runs a second writer (records) for the WriteRecords calls whose
// batch loads nothing: the rows a quote's creation inserts, and the job
// loop's status changes and job hand-offs that carry no entry. With one
// writer, a transfer that arrived while the writer committed the job
// loop's status changes waited for that commit before its own batch could
// start. The second writer's batches take no journal lock and read
// nothing: BEGIN, the writes and COMMIT in one round trip, on their own
// session, beside the entries' batches. Entries, quote changes and
// Required transaction changes stay on the first writer, whose load
// decides them under row locks. A status
// change on the second writer and a batch of the first that requires the
// same transaction wait for each other's commit like two instances'
// writers, and the rare cycle between them (see "Hot accounts and lock
// order") is broken by the server and re-run the same way. A caller's
// WriteRecords returns after its commit, so what it wrote is there for
// its next call, whichever writer takes that.
//
// # Hot accounts and lock order
//
// Accounts without flags never refuse a transfer for their balance, so the
// batch reads them without a lock and only locks them in step 3, holding
// their row lock just for the write and the commit: a hot settlement or
// funding account is never held while a batch loads and decides. The load
// statement tells them apart by their flags column (flags never change).
// Locks are always taken in the same order — quotes by id, the
// transactions a Required status change names by id, holds by id, flagged
// accounts by id, the journal lock, unflagged accounts by id, then the
// other transactions the records change by id — so two writers cannot
// deadlock on them, with one exception: a transaction one instance's batch
// requires while another instance's batch changes it without requiring it
// (rare: a cancel against the same transfer's status check) may deadlock
// the two, which the server breaks and the retry below re-runs. Because entries are inserted under the journal lock,
// Seq follows commit order across instances: Journal(afterSeq) never skips
// an entry that commits later with a lower Seq. The same lock orders the
// hash chain: each batch links to the hash the batch before it committed.
//
// # Records
//
// PostWith attaches business rows to an entry: the transaction a payment
// creates and the job that carries it on. They commit with the entry or not
// at all, so a request that moves money pays for no unit of work (BEGIN,
// inserts, a synchronous COMMIT) of its own; the batch's one commit serves
// every caller. An entry refused by the Book, or already recorded, writes
// none of its records. Quote changes are decided under the quotes' row
// locks, call by call in queue order as if each ran alone (a call sees the
// quotes created and changed by the calls accepted before it): a Required
// change that does not hold refuses its call with ports.ErrPrecondition
// before the Book sees the entry, so nothing of that call is written.
// Required transaction status changes are decided the same way, under the
// transactions' row locks (txnBook); the changes of one batch to one
// transaction are then written in queue order (appendStatusChanges).
//
// # Callers and cancellation
//
// An entry is queued only if its caller's context is live. A caller whose
// context ends after that gets the context's error, but the entry may still
// be committed by its batch: post the same entry (same ID) again to learn its
// outcome (ErrExists with the stored entry, or the original refusal). Nothing
// is left half-written either way. PostedAt is the store clock's time when the
// batch runs (truncated to microseconds, as PostgreSQL stores it).
type Ledger struct {
	db    *bun.DB
	clock ports.Clock
	opts  LedgerOptions

	mu     sync.RWMutex // guards closed; held for reading while enqueueing
	closed bool
	queue  chan *postRequest
	done   chan struct{} // closed when the writer has exited

	// conn is the writer's own session (see writerConn); only the writer
	// goroutine touches it, and prepared, the names of the statement
	// variants prepared on it (see shapedStatement), made with it.
	conn     *bun.Conn
	prepared map[string]bool
	session  session // conn's server process

	// records is a second writer, on a session of its own, for the
	// WriteRecords calls that load nothing (batchKeys.loads): a quote's
	// creation, the job loop's status changes and job hand-offs. They
	// decide nothing and take no journal lock, so they group-commit among
	// themselves beside the entries' batches instead of lengthening them,
	// and a payment no longer waits behind the job loop's bookkeeping.
	// nil on that writer itself. See "Two writers".
	records *Ledger

	// writeFault, set by tests only, is asked before each batch's write:
	// rollBack ends the write in ROLLBACK instead of COMMIT, and lose makes
	// the writer see a broken connection instead of the server's reply.
	writeFault func() (rollBack, lose bool)
	// enqueued, set by tests only, is told each time a call joins the
	// queue, so a test can queue calls in a known order.
	enqueued func()
}

var (
	_ ports.LedgerStore = (*Ledger)(nil)
)

// postRequest is one queued Post (or one expiry from ExpireDue).
type postRequest struct {
	entry ledger.Entry
	// txns and jobs are written with the entry when the batch records it
	// (PostWith), as rows converted by the caller's goroutine.
	txns []storeTxnRow
	jobs []storeJobRow
	// quotes are created and quoteChanges applied with the records (see
	// quoteBook); a Required change that does not hold refuses the call.
	quotes       []storeQuoteRow
	quoteChanges []ports.QuoteStatusChange
	// changes and doneJobs are the status changes and job completions of
	// the records (copied).
	changes  []ports.TransactionStatusChange
	doneJobs []string
	// events are recorded with the records, their delivery jobs in jobs.
	events []storeEventRow
	// at, when set, is the time the entry is applied at if it is later than
	// the batch's time (ExpireDue applies expiries at its own now).
	at time.Time
	// recordsOnly marks a WriteRecords call: no entry, only records.
	recordsOnly bool
	done        chan postResult // buffered: the writer never blocks on it
}

type postResult struct {
	je  ledger.JournalEntry
	err error
}

// NewLedger starts the group-commit writers (the entries' and the
// records', see "Two writers"). Call Close to stop them.
func NewLedger(db *bun.DB, clock ports.Clock, opts LedgerOptions) *Ledger {
	l := newWriter(db, clock, opts.withDefaults())
	l.records = newWriter(db, clock, l.opts)
	return l
}

// newWriter starts one group-commit writer.
func newWriter(db *bun.DB, clock ports.Clock, opts LedgerOptions) *Ledger {
	l := &Ledger{
		db:    db,
		clock: clock,
		opts:  opts,
		queue: make(chan *postRequest, 2*opts.MaxBatch),
		done:  make(chan struct{}),
	}
	go l.run()
	return l
}

// Close stops accepting entries, lets the writer commit what is queued, and
// waits for it to exit. It is safe to call more than once.
func (l *Ledger) Close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.queue)
	}
	l.mu.Unlock()
	<-l.done
	if l.records != nil {
		l.records.Close()
	}
}

// Post queues e for the next batch and waits for its result.
func (l *Ledger) Post(ctx context.Context, e ledger.Entry) (ledger.JournalEntry, error) {
	return l.PostWith(ctx, e, ports.Records{})
}

// PostWith queues e with recs for the next batch and waits for its result.
// The batch that records e writes recs in the same transaction (see
// "Records" on Ledger).
func (l *Ledger) PostWith(ctx context.Context, e ledger.Entry, recs ports.Records) (ledger.JournalEntry, error) {
	r, err := l.enqueue(ctx, e, recs, time.Time{}, false)
	if err != nil {
		return ledger.JournalEntry{}, err
	}
	return l.wait(ctx, r)
}

// WriteRecords writes recs without a ledger entry in the next batch (see
// ports.LedgerStore.WriteRecords): the job loop's status changes and job hand-offs
// share the group commit with the money instead of paying a transaction
// and a synchronous commit each.
func (l *Ledger) WriteRecords(ctx context.Context, recs ports.Records) error {
	if recs.Empty() {
		return nil
	}
	r := newPostRequest(ledger.Entry{}, recs, time.Time{}, true)
	w := l
	if l.records != nil && !newBatchKeys([]*postRequest{r}).loads() {
		w = l.records // nothing to decide under the load's locks: see "Two writers"
	}
	if err := w.send(ctx, r); err != nil {
		return err
	}
	_, err := w.wait(ctx, r)
	return err
}

// enqueue hands a copy of e and recs to the writer (recs alone when
// recordsOnly), so a caller that gives up waiting may reuse them without
// racing the writer.
func (l *Ledger) enqueue(ctx context.Context, e ledger.Entry, recs ports.Records, at time.Time, recordsOnly bool) (*postRequest, error) {
	r := newPostRequest(e, recs, at, recordsOnly)
	if err := l.send(ctx, r); err != nil {
		return nil, err
	}
	return r, nil
}

// newPostRequest is a queued call's copy of e and recs.
func newPostRequest(e ledger.Entry, recs ports.Records, at time.Time, recordsOnly bool) *postRequest {
	r := &postRequest{entry: e.Clone(), at: at, recordsOnly: recordsOnly, done: make(chan postResult, 1)}
	for _, t := range recs.Transactions {
		row := storeTxnToRow(t)
		row.SenderIdentifiers = slices.Clone(row.SenderIdentifiers)
		row.ReceiverIdentifiers = slices.Clone(row.ReceiverIdentifiers)
		r.txns = append(r.txns, row)
	}
	for _, j := range recs.Jobs {
		row := storeJobToRow(j)
		row.Payload = slices.Clone(row.Payload)
		r.jobs = append(r.jobs, row)
	}
	for _, q := range recs.Quotes {
		row := storeQuoteToRow(q)
		row.SenderCustomerInfo = maps.Clone(row.SenderCustomerInfo)
		row.CounterpartyInformation = maps.Clone(row.CounterpartyInformation)
		row.PaymentInstructions = slices.Clone(row.PaymentInstructions)
		r.quotes = append(r.quotes, row)
	}
	for _, c := range recs.QuoteChanges {
		c.From = slices.Clone(c.From)
		c.ExecutedAt = ports.StoredPtr(c.ExecutedAt)
		if c.NotExpiredAt != nil {
			at := *c.NotExpiredAt
			c.NotExpiredAt = &at
		}
		r.quoteChanges = append(r.quoteChanges, c)
	}
	for _, e := range recs.Events {
		row := storeEventToRow(e)
		row.Data = slices.Clone(row.Data)
		r.events = append(r.events, row)
	}
	for _, c := range recs.StatusChanges {
		c.From = slices.Clone(c.From)
		if c.SettledAt != nil {
			at := *c.SettledAt
			c.SettledAt = &at
		}
		r.changes = append(r.changes, c)
	}
	r.doneJobs = slices.Clone(recs.CompletedJobs)
	return r
}

// send queues r for the writer's next batch, if ctx is live and the
// writer open.
func (l *Ledger) send(ctx context.Context, r *postRequest) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres ledger: post %s: %w", r.entry.ID, err)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return ErrLedgerClosed
	}
	select {
	case l.queue <- r:
		if l.enqueued != nil {
			l.enqueued()
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("postgres ledger: post %s: %w", r.entry.ID, ctx.Err())
	}
}

func (l *Ledger) wait(ctx context.Context, r *postRequest) (ledger.JournalEntry, error) {
	select {
	case res := <-r.done:
		return res.je, res.err
	case <-ctx.Done():
		return ledger.JournalEntry{}, fmt.Errorf(
			"postgres ledger: post %s: %w (the entry may still be recorded: post it again to learn its outcome)",
			r.entry.ID, ctx.Err())
	}
}

// run is the writer: it gathers batches and commits them until the queue is
// closed and drained.
func (l *Ledger) run() {
	defer close(l.done)
	defer l.dropConn()
	batch := make([]*postRequest, 0, l.opts.MaxBatch)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	prev := 1
	for {
		first, ok := <-l.queue
		if !ok {
			return
		}
		batch = append(batch[:0], first)
		open := l.drain(&batch)
		target := min(max(prev, l.opts.MinBatch), l.opts.MaxBatch)
		if open && len(batch) < target {
			timer.Reset(l.opts.MaxDelay)
		fill:
			for len(batch) < target {
				select {
				case r, ok := <-l.queue:
					if !ok {
						open = false
						break fill
					}
					batch = append(batch, r)
					if open = l.drain(&batch); !open {
						break fill
					}
				case <-timer.C:
					break fill
				}
			}
			timer.Stop()
		}
		prev = len(batch)
		l.commit(batch)
		clear(batch)
		if !open {
			// The queue was closed and drained into this batch.
			return
		}
	}
}

// drain moves what is already queued into batch without waiting, up to
// MaxBatch. It reports false when the queue is closed and empty.
func (l *Ledger) drain(batch *[]*postRequest) bool {
	for len(*batch) < l.opts.MaxBatch {
		select {
		case r, ok := <-l.queue:
			if !ok {
				return false
			}
			*batch = append(*batch, r)
		default:
			return true
		}
	}
	return true
}

// commit posts a batch and answers its callers. When the batch as a whole
// fails for a reason a retry does not cure, each entry is posted alone.
func (l *Ledger) commit(batch []*postRequest) {
	start := time.Now()
	results, err := l.postWithRetry(batch)
	if err == nil {
		if l.opts.Observe != nil {
			l.opts.Observe(len(batch), time.Since(start))
		}
		for i, r := range batch {
			r.done <- results[i]
		}
		return
	}
	if len(batch) == 1 {
		batch[0].done <- postResult{err: entryError(batch[0].entry.ID, err)}
		return
	}
	l.opts.Logger.Warn("ledger batch failed; posting its entries one by one", "entries", len(batch), "err", err)
	for _, r := range batch {
		res, err := l.postWithRetry([]*postRequest{r})
		if err != nil {
			r.done <- postResult{err: entryError(r.entry.ID, err)}
			continue
		}
		r.done <- res[0]
	}
}

// writerSession configures the writer's connection. It prefers index scans:
// every statement of a batch finds its rows by key, and with a young table or
// a big batch the planner would otherwise pick a full scan (about 1 ms per
// 10,000 rows, on the hot path of every batch). Lock waits and statements are
// bounded on the server, below batchTimeout, so a batch stuck behind another
// session fails there (and is retried) instead of leaving a backend waiting
// after the client gave up. Plans stay serial: the load statement's
// branches must run one after the other, in lock order. The status and
// quote statements are prepared here; the load and journal statements, in
// variants, when a batch first needs one (see shapedStatement).
var writerSession = []string{
	"SET enable_seqscan = off",
	"SET max_parallel_workers_per_gather = 0",
	"SET lock_timeout = '10s'",
	"SET statement_timeout = '20s'",
	"PREPARE " + statusStmtName + " AS " + statusStatement,
	"PREPARE " + quotesStmtName + " AS " + quotesStatement,
}

// writerConn returns the writer's dedicated connection, opening it when
// needed (see writerSession).
func (l *Ledger) writerConn(ctx context.Context) (bun.Conn, error) {
	if l.conn != nil {
		return *l.conn, nil
	}
	c, err := l.db.Conn(ctx)
	if err != nil {
		return bun.Conn{}, fmt.Errorf("writer connection: %w", err)
	}
	for _, set := range writerSession {
		if _, err := c.ExecContext(ctx, set); err != nil {
			discardConn(c)
			return bun.Conn{}, fmt.Errorf("writer connection: %w", err)
		}
	}
	// The session's server process tells a lost COMMIT reply's outcome
	// (see settled).
	s, err := sessionOf(ctx, c)
	if err != nil {
		discardConn(c)
		return bun.Conn{}, fmt.Errorf("writer connection: %w", err)
	}
	l.conn, l.prepared, l.session = &c, map[string]bool{}, s
	return c, nil
}

// session names a server process for as long as it runs: by its pid,
// which the server may give a later session once this one has ended, and
// its start (microseconds since the epoch), which tells the two apart.
type session struct {
	pid   int32
	start int64
}

// sessionStart is a pg_stat_activity row's session.start.
const sessionStart = "(extract(epoch FROM backend_start) * 1000000)::bigint"

// sessionOf reads the session of c.
func sessionOf(ctx context.Context, c bun.IConn) (session, error) {
	var s session
	err := c.QueryRowContext(ctx, "SELECT pid, "+sessionStart+
		" FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&s.pid, &s.start)
	if err != nil {
		return session{}, fmt.Errorf("read the session: %w", err)
	}
	return s, nil
}

// dropConn discards the writer's connection.
func (l *Ledger) dropConn() {
	if l.conn != nil {
		discardConn(*l.conn)
		l.conn = nil
	}
}

// discardConn closes c without returning it to the pool, so its session
// settings never reach other users of the pool.
func discardConn(c bun.Conn) {
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.Close()
}

// entryError is what the caller of a failed entry gets: a transfer id that
// another entry already recorded is ledger.ErrTransferIDExists (as the
// Book decides when it knows the other entry), anything else is wrapped as
// it is.
func entryError(id string, err error) error {
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) && pgErr.Field('C') == "23505" && pgErr.Field('n') == "ledger_transfers_id_key" {
		return fmt.Errorf("postgres ledger: post %s: %s: %w",
			id, pgErr.Field('D'), &ledger.Error{Code: ledger.CodeTransferIDExists, EntryID: id})
	}
	// A record of PostWith that is already stored (a transaction id).
	return fmt.Errorf("postgres ledger: post %s: %w", id, storeConflict(err))
}

// postWithRetry runs a batch, re-running it after retryable failures.
func (l *Ledger) postWithRetry(batch []*postRequest) ([]postResult, error) {
	maybe := map[int]bool{} // entries a commit of unknown outcome may have recorded
	var err error
	for attempt := 1; attempt <= l.opts.MaxAttempts; attempt++ {
		var results []postResult
		results, err = l.postBatch(batch, maybe)
		if err == nil {
			return results, nil
		}
		var pgErr pgdriver.Error
		if !errors.As(err, &pgErr) {
			// The session may be broken (or mid-statement after a timeout).
			l.dropConn()
		}
		if !retryable(err) {
			return nil, err
		}
		l.opts.Logger.Debug("ledger batch retried", "attempt", attempt, "entries", len(batch), "err", err)
		time.Sleep(backoff(attempt))
	}
	return nil, fmt.Errorf("gave up after %d attempts: %w", l.opts.MaxAttempts, err)
}

// backoff spreads retries of writers that collided: 0.5ms, 1ms, 2ms… up to
// 50ms, with jitter.
func backoff(attempt int) time.Duration {
	d := min(500*time.Microsecond<<min(attempt-1, 7), 50*time.Millisecond)
	return d/2 + rand.N(d/2+1)
}
