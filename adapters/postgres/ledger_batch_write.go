package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

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
	return appendExecute(gen, b, quotesStmtName, []any{pgdialect.Array(ids), pgdialect.Array(status), pgdialect.Array(updated), pgdialect.Array(executed)})
}

// quotesStatement stores quotes' final states (appendWrite), prepared on
// the writer's session like journalStatement. Its one generic plan is made
// whatever the table held then, so the rows are found by primary key from
// the id array (= ANY) rather than through a join the planner of a young
// table could turn into a walk of a whole index.
var quotesStatement = numberParams(`UPDATE quotes q SET status = u.status, updated_at = coalesce(NULLIF(u.updated_at, '')::timestamptz, q.updated_at),
	executed_at = coalesce(NULLIF(u.executed_at, '')::timestamptz, q.executed_at)
FROM unnest(?::text[], ?::text[], ?::text[], ?::text[]) AS u(id, status, updated_at, executed_at)
WHERE q.id = ANY(?1::text[]) AND q.id = u.id`)

const quotesStmtName = "ledger_quotes"

// appendStatusChanges appends the statements that apply a batch's status
// changes (in batch order), each only while the stored status is one of
// its From (statuses are upper-case words, so From travels as one
// comma-separated text). One UPDATE may change a row once, so a
// transaction changed by several calls of the batch takes one statement
// per change: the k-th statement applies the k-th change of every
// transaction, and sees what the one before it wrote (as txnBook decided).
// Rows are locked in id order, the order every batch uses.
func appendStatusChanges(gen schema.QueryGen, b []byte, changes []ports.TransactionStatusChange) []byte {
	var rounds [][]ports.TransactionStatusChange
	seen := map[string]int{}
	for _, c := range changes {
		k := seen[c.TransactionID]
		seen[c.TransactionID] = k + 1
		if k == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[k] = append(rounds[k], c)
	}
	for _, round := range rounds {
		b = appendStatusRound(gen, b, round)
	}
	return b
}

// appendStatusRound appends one UPDATE of changes, at most one per
// transaction.
func appendStatusRound(gen schema.QueryGen, b []byte, changes []ports.TransactionStatusChange) []byte {
	slices.SortStableFunc(changes, func(a, b ports.TransactionStatusChange) int {
		return cmp.Compare(a.TransactionID, b.TransactionID)
	})
	n := len(changes)
	platform, id, from, status, updated, settled, reason, patch := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, c := range changes {
		platform[i], id[i], from[i], status[i], reason[i] = c.PlatformID, c.TransactionID, strings.Join(c.From, ","), c.Status, c.FailureReason
		updated[i] = ports.Stored(c.UpdatedAt).Format(pgTimeLayout)
		if c.SettledAt != nil {
			settled[i] = ports.Stored(*c.SettledAt).Format(pgTimeLayout)
		}
		patch[i] = detailsPatch(c)
	}
	return appendExecute(gen, b, statusStmtName, []any{pgdialect.Array(platform), pgdialect.Array(id), pgdialect.Array(from),
		pgdialect.Array(status), pgdialect.Array(updated), pgdialect.Array(settled), pgdialect.Array(reason), pgdialect.Array(patch)})
}

// detailsPatch is the part of the details document status change c
// writes (its approval, refund and request key), as a JSON object merged
// into the stored one, or "" for none.
func detailsPatch(c ports.TransactionStatusChange) string {
	if c.Approval == nil && c.Refund == nil && c.RequestKey == "" {
		return ""
	}
	b, err := json.Marshal(detailsToStore(ports.TransactionDetails{Approval: c.Approval, Refund: c.Refund, RequestKey: c.RequestKey}))
	if err != nil {
		panic("details patch: " + err.Error()) // plain strings, times and slices: cannot fail
	}
	return string(b)
}

// statusStatement applies one round of status changes (appendStatusRound),
// prepared on the writer's session like journalStatement: planned with
// every batch it cost 0.28 ms for a 0.5 ms statement. Rows are found by
// primary key from the id array ($2, = ANY): joined on (id, platform_id)
// instead, the generic plan made on a young table walked the
// (platform_id, created_at, id) index, every transaction of the platform.
var statusStatement = numberParams(`WITH u AS (
	SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
		AS u(platform_id, id, from_statuses, status, updated_at, settled_at, failure_reason, details_patch)),
l AS MATERIALIZED (
	SELECT t.id FROM transactions t JOIN u ON t.id = u.id
	WHERE t.id = ANY(?2::text[]) AND t.platform_id = u.platform_id AND t.status = ANY(string_to_array(u.from_statuses, ','))
	ORDER BY t.id FOR UPDATE OF t)
UPDATE transactions t SET status = u.status, updated_at = u.updated_at::timestamptz,
	settled_at = coalesce(NULLIF(u.settled_at, '')::timestamptz, t.settled_at),
	failure_reason = coalesce(NULLIF(u.failure_reason, ''), t.failure_reason),
	details = CASE WHEN u.details_patch = '' THEN t.details ELSE t.details || u.details_patch::jsonb END
FROM u
WHERE t.id = ANY(ARRAY(SELECT id FROM l)) AND t.id = u.id AND t.platform_id = u.platform_id
	AND t.status = ANY(string_to_array(u.from_statuses, ','))`)

const statusStmtName = "ledger_status"

// batchWrites are the rows an accepted batch writes, as column arrays.
type batchWrites struct {
	now   time.Time
	shard int16 // the writer's chain

	entryID, entryRef, entryReverses []string

	trEntry, trID, trKind, trDebit, trCredit, trCurrency, trPending, trCode []string
	trIdx                                                                   []int64
	trAmount, trTimeout                                                     []int64

	newPending, updPending []ledger.PendingTransfer
	resolvedBy             map[string]string

	// Account deltas, by account id (sorted), the unflagged accounts among
	// them (not locked yet), and the postings in batch order.
	deltaIDs []string
	unlocked []string
	deltas   []ledger.Counters
	postings []posting

	// The internal accounts whose balance or total balance the batch
	// changed, with both at its end (their balance events).
	balanceIDs            []string
	balances, totalAmount []int64

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
		if a.Kind == ledger.KindInternal && (a.Available() != b.Available() || a.Total() != b.Total()) {
			w.balanceIDs = append(w.balanceIDs, a.ID)
			w.balances, w.totalAmount = append(w.balances, a.Available()), append(w.totalAmount, a.Total())
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
		jes[i] = ledger.JournalEntry{Entry: e, PostedAt: w.now, Shard: w.shard}
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

// deliveryJobsOf + a relation x of events (id, platform_id, created_at,
// seq) + deliveryJobsEnd inserts their delivery jobs: one per platform
// with a webhook endpoint, up to ports.EventsPerDeliveryJob events each,
// in seq order (event_delivery_jobs, migrations/0039, as the transactions
// trigger queues theirs).
const (
	deliveryJobsOf = `INSERT INTO jobs (id, kind, key, payload, run_at, attempts, last_error)
	SELECT j.* FROM (SELECT array_agg(x.id ORDER BY x.seq) AS ids, array_agg(x.platform_id ORDER BY x.seq) AS platform_ids,
			array_agg(x.created_at ORDER BY x.seq) AS created FROM `
	deliveryJobsEnd = `) AS a
		CROSS JOIN LATERAL event_delivery_jobs(a.ids, a.platform_ids, a.created) AS j`
)

// journalStatement writes the accepted entries (with their hashes),
// transfers and holds, then locks the touched accounts that are not locked
// yet (the unflagged ones) in id order, adds each touched account's summed
// delta once, writes the postings with the counters after each and records
// the batch's INTERNAL_ACCOUNT.BALANCE_UPDATED events; it returns the
// entries' Seq. The journal lock is held since the load. The uncorrelated
// "(SELECT count(*) FROM l)" condition is evaluated once before the UPDATE
// reads any row, so every lock is taken in order first. The final WHERE
// checks that every account and posting was written, failing the statement
// (a text that is not a boolean) and so the batch before its COMMIT
// otherwise.
//
// It is prepared on the writer's session and run by EXECUTE inside the
// batch's one simple query (appendJournal): planned as part of every
// batch's text it cost 0.5 ms of a 0.8 ms statement, which at concurrency
// 1 is a quarter of a ledger post. Its variants (journalStmt) leave out the
// holds, resolved holds and balance events parts when a batch has none;
// the other parts always run, on empty arrays when a batch needs nothing
// of them (a CTE over an empty unnest writes nothing). The generic plan
// finds every row by key: writerSession prefers index scans, and the rows a part
// updates or joins are also named by their id array (= ANY, the ?N
// placeholders repeat a parameter), so a plan made on a young table cannot
// walk a whole index instead.
//
// The balance events (ports.BalanceUpdated, bev): one per changed internal
// account that is an internal_accounts row (system accounts have none), its
// data the row and its balances at the end of the batch (data_format
// storeEventBalanceData), with the delivery jobs (bjob) of the platforms
// that have a webhook endpoint.
//
// Parameters, in order: now; the writer's shard; entries (id, ref,
// reverses, hash, prev_hash);
// transfers (entry, idx, id, kind, debit, credit, amount, currency,
// pending, timeout, code); new holds (id, entry, debit, credit, amount,
// currency, timeout, code, status, expires_at, posted_amount,
// resolved_by); resolved holds (id, status, posted_amount, resolved_by);
// account deltas (id, dp, dpo, cp, cpo); accounts to lock; postings
// (account, entry, transfer, a0-a3); balances (id, balance, total); the
// numbers of accounts and postings.
var journalStatement = numberParams(`WITH e AS (
	INSERT INTO ledger_entries (id, ref, reverses, posted_at, shard, hash, prev_hash)
	SELECT u.id, u.ref, NULLIF(u.reverses, ''), ?::timestamptz, ?::smallint, u.hash, u.prev_hash
	FROM unnest(?::text[], ?::text[], ?::text[], ?::bytea[], ?::bytea[]) WITH ORDINALITY AS u(id, ref, reverses, hash, prev_hash, ord)
	ORDER BY u.ord
	RETURNING id, seq),
t AS (
	INSERT INTO ledger_transfers (entry_id, idx, id, kind, debit_account_id, credit_account_id, amount, currency, pending_id, timeout_ns, code)
	SELECT u.entry_id, u.idx, u.id, u.kind, u.dr, u.cr, u.amount, u.currency, u.pending_id, u.timeout_ns, u.code
	FROM unnest(?::text[], ?::int[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::text[])
		AS u(entry_id, idx, id, kind, dr, cr, amount, currency, pending_id, timeout_ns, code)),
{{holds}}pi AS (
	INSERT INTO ledger_pending (id, entry_id, debit_account_id, credit_account_id, amount, currency, timeout_ns, code,
		status, expires_at, posted_amount, resolved_by, created_at)
	SELECT u.id, u.entry_id, u.dr, u.cr, u.amount, u.currency, u.timeout_ns, u.code,
		u.status, NULLIF(u.expires_at, '')::timestamptz, u.posted_amount, NULLIF(u.resolved_by, ''), ?1::timestamptz
	FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::bigint[], ?::text[],
		?::text[], ?::text[], ?::bigint[], ?::text[])
		AS u(id, entry_id, dr, cr, amount, currency, timeout_ns, code, status, expires_at, posted_amount, resolved_by)),
{{end}}{{resolved}}pu AS (
	UPDATE ledger_pending hp SET status = u.status, posted_amount = u.posted_amount, resolved_by = NULLIF(u.resolved_by, '')
	FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[]) AS u(id, status, posted_amount, resolved_by)
	WHERE hp.id = ANY(?31::text[]) AND hp.id = u.id),
{{end}}d AS (
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
	WHERE a.id = ANY(?35::text[]) AND a.id = d.id AND (SELECT count(*) FROM l) >= 0
	RETURNING a.id, a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted),
po AS (
	INSERT INTO ledger_postings (account_id, entry_id, transfer_id, posted_at, debits_pending, debits_posted, credits_pending, credits_posted)
	SELECT x.account_id, x.entry_id, x.transfer_id, ?1::timestamptz,
		u.debits_pending - x.a0, u.debits_posted - x.a1, u.credits_pending - x.a2, u.credits_posted - x.a3
	FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[])
		WITH ORDINALITY AS x(account_id, entry_id, transfer_id, a0, a1, a2, a3, ord)
	JOIN u ON u.id = x.account_id
	ORDER BY x.ord
	RETURNING 1),
{{balances}}bev AS (
	INSERT INTO events (id, platform_id, type, resource_id, data, data_format, created_at)
	SELECT 'Webhook:' || gen_random_uuid(), ia.platform_id, '` + ports.BalanceUpdated + `', ia.id,
		to_jsonb(ia) || jsonb_build_object('balance', x.balance, 'total_balance', x.total,
			'updated_at', greatest(ia.updated_at, ?1::timestamptz)), '` + storeEventBalanceData + `',
		?1::timestamptz
	FROM unnest(?::text[], ?::bigint[], ?::bigint[]) AS x(id, balance, total)
	JOIN internal_accounts AS ia ON ia.id = x.id AND ia.id = ANY(?48::text[])
	ORDER BY x.id
	RETURNING id, platform_id, created_at, seq),
bjob AS (
	` + deliveryJobsOf + `bev AS x` + deliveryJobsEnd + `),
{{end}}c AS (SELECT (SELECT count(*) FROM u) AS updated, (SELECT count(*) FROM po) AS posted, ?::bigint AS n, ?::bigint AS m)
SELECT e.id, e.seq FROM e, c
WHERE CASE WHEN c.updated = c.n AND c.posted = c.m THEN true
	ELSE ('ledger batch: updated ' || c.updated || ' accounts of ' || c.n || ', wrote ' || c.posted || ' postings of ' || c.m)::boolean END`)

// appendJournal appends the EXECUTE of w's variant of journalStmt (which
// postBatch prepares) with the batch's rows.
func (w *batchWrites) appendJournal(gen schema.QueryGen, b []byte) []byte {
	args := []any{w.now, w.shard,
		pgdialect.Array(w.entryID), pgdialect.Array(w.entryRef), pgdialect.Array(w.entryReverses),
		pgdialect.Array(w.entryHash), pgdialect.Array(w.entryPrev),
		pgdialect.Array(w.trEntry), pgdialect.Array(w.trIdx), pgdialect.Array(w.trID), pgdialect.Array(w.trKind),
		pgdialect.Array(w.trDebit), pgdialect.Array(w.trCredit), pgdialect.Array(w.trAmount),
		pgdialect.Array(w.trCurrency), pgdialect.Array(w.trPending), pgdialect.Array(w.trTimeout), pgdialect.Array(w.trCode)}
	args = w.appendHolds(args)
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
	args = append(args,
		pgdialect.Array(w.deltaIDs), pgdialect.Array(dp), pgdialect.Array(dpo), pgdialect.Array(cp), pgdialect.Array(cpo),
		pgdialect.Array(nonNil(w.unlocked)),
		pgdialect.Array(pAcct), pgdialect.Array(pEntry), pgdialect.Array(pTransfer),
		pgdialect.Array(a0), pgdialect.Array(a1), pgdialect.Array(a2), pgdialect.Array(a3),
		pgdialect.Array(nonNil(w.balanceIDs)), pgdialect.Array(nonNil(w.balances)), pgdialect.Array(nonNil(w.totalAmount)),
		n, m)
	return appendExecute(gen, b, journalStmt.stmtName(w.journalShape()), args)
}

// journalStmt is journalStatement in variants (shapedStatement): a batch
// that opens no hold, resolves none or changes no internal account's
// balance leaves out that part.
var journalStmt = newShapedStatement("ledger_journal", journalStatement, "holds", "resolved", "balances")

// journalShape is the variant of journalStmt that w needs.
func (w *batchWrites) journalShape() stmtShape {
	return journalStmt.shapeOf(len(w.newPending) > 0, len(w.updPending) > 0, len(w.balanceIDs) > 0)
}

// appendHolds appends the arguments of the new holds and the resolved
// ones (empty arrays when there are none).
func (w *batchWrites) appendHolds(args []any) []any {
	n := len(w.newPending)
	id, entry, dr, cr, cur, code, status, expires, resolved := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	amount, timeout, posted := make([]int64, n), make([]int64, n), make([]int64, n)
	for i, p := range w.newPending {
		id[i], entry[i], dr[i], cr[i], cur[i], code[i] = p.ID, p.EntryID, p.DebitAccountID, p.CreditAccountID, p.Currency, p.Code
		status[i], expires[i], resolved[i] = p.Status.String(), formatTime(p.ExpiresAt), w.resolvedBy[p.ID]
		amount[i], timeout[i], posted[i] = p.Amount, int64(p.Timeout), p.PostedAmount
	}
	args = append(args, pgdialect.Array(id), pgdialect.Array(entry), pgdialect.Array(dr), pgdialect.Array(cr),
		pgdialect.Array(amount), pgdialect.Array(cur), pgdialect.Array(timeout), pgdialect.Array(code),
		pgdialect.Array(status), pgdialect.Array(expires), pgdialect.Array(posted), pgdialect.Array(resolved))
	k := len(w.updPending)
	uid, ustatus, uresolved, uposted := make([]string, k), make([]string, k), make([]string, k), make([]int64, k)
	for i, p := range w.updPending {
		uid[i], ustatus[i], uresolved[i], uposted[i] = p.ID, p.Status.String(), w.resolvedBy[p.ID], p.PostedAmount
	}
	return append(args, pgdialect.Array(uid), pgdialect.Array(ustatus), pgdialect.Array(uposted), pgdialect.Array(uresolved))
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
	var events []storeEventRow
	for i, r := range batch {
		if outcomes[i].err == nil {
			events = append(events, r.events...)
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
	if len(events) > 0 {
		if b, err = db.NewInsert().Model(&events).ExcludeColumn(storeEventStateColumns...).Returning("NULL").AppendQuery(gen, b); err != nil {
			return nil, fmt.Errorf("write events: %w", err)
		}
		b = append(b, ";\n"...)
		// Their delivery jobs, for the platforms with a webhook endpoint:
		// one per platform (event_delivery_jobs, migrations/0039).
		ids := make([]string, len(events))
		for i, e := range events {
			ids[i] = e.ID
		}
		b = gen.AppendQuery(b, deliveryJobsOf+`events AS x WHERE x.id = ANY(?::text[])`+deliveryJobsEnd, pgdialect.Array(ids))
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

// nonNil is s, or an empty slice for nil (a nil slice is a NULL array).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

const pgTimeLayout = "2006-01-02T15:04:05.999999Z07:00"

// formatTime renders t for a text array cast to timestamptz; "" is NULL.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(pgTimeLayout)
}
