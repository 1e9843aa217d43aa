package postgres

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/corridorpay/corridor/ports"
)

// ---- events (the outbox) and their delivery attempts ----

// storeEventRow is an event with its delivery state: read from the view
// event_states (ModelTableExpr), inserted into events without the state
// (storeEventStateColumns), which event_deliveries holds.
type storeEventRow struct {
	bun.BaseModel `bun:"table:events"`

	ID            string          `bun:"id,pk"`
	PlatformID    string          `bun:"platform_id"`
	Type          string          `bun:"type"`
	ResourceID    string          `bun:"resource_id"`
	Data          json.RawMessage `bun:"data,type:jsonb"`
	DataFormat    string          `bun:"data_format"`
	CreatedAt     time.Time       `bun:"created_at"`
	Status        string          `bun:"status"`
	Attempts      int             `bun:"attempts"`
	LastAttemptAt *time.Time      `bun:"last_attempt_at"`
	DeliveredAt   *time.Time      `bun:"delivered_at"`
	// AttemptsBefore is ports.Event's (migration 0041).
	AttemptsBefore int `bun:"attempts_before"`
	// Seq is the identity an insert takes (inserts exclude it).
	Seq int64 `bun:"seq"`
}

func storeEventToRow(e ports.Event) storeEventRow {
	data := e.Resource
	if len(data) == 0 {
		data = json.RawMessage(`{}`)
	}
	return storeEventRow{ID: e.ID, PlatformID: e.PlatformID, Type: e.Type, ResourceID: e.ResourceID, Data: data,
		DataFormat: storeEventPortData, CreatedAt: ports.Stored(e.CreatedAt)}
}

// storeEventStateColumns are storeEventRow's columns that are not the
// events table's: the delivery state, in event_deliveries (migration
// 0041), and seq, which an insert takes from the identity.
var storeEventStateColumns = []string{"seq", "status", "attempts", "last_attempt_at", "delivered_at", "attempts_before"}

func (r storeEventRow) toPort() ports.Event {
	e := ports.Event{ID: r.ID, PlatformID: r.PlatformID, Type: r.Type, ResourceID: r.ResourceID, CreatedAt: ports.Stored(r.CreatedAt),
		Status: r.Status, Attempts: r.Attempts, LastAttemptAt: ports.StoredPtr(r.LastAttemptAt), DeliveredAt: ports.StoredPtr(r.DeliveredAt),
		AttemptsBefore: r.AttemptsBefore, Seq: r.Seq}
	if len(r.Data) > 0 && string(r.Data) != "{}" {
		e.Resource = append(json.RawMessage(nil), r.Data...)
	}
	return e
}

type storeEventAttemptRow struct {
	bun.BaseModel `bun:"table:event_attempts"`

	EventID    string    `bun:"event_id,pk"`
	Attempt    int       `bun:"attempt,pk"`
	At         time.Time `bun:"at"`
	StatusCode int       `bun:"status_code"`
	LatencyUS  int64     `bun:"latency_us"`
	Error      string    `bun:"error"`
}

// Formats of events.data: the port value's JSON, or a transactions row
// as the trigger recorded it (to_jsonb of the row).
const (
	storeEventPortData = "port"
	storeEventTxnRow   = "transactions"
	// storeEventBalanceData is an internal_accounts row (to_jsonb) with
	// "balance" and "total_balance": a balance event the ledger's batch
	// recorded, read back as ports.InternalAccountBalance.
	storeEventBalanceData = "internal_account_balance"
)

// storeEventTxnRow is a transaction event's row snapshot read back as a
// row of transactions.
type storeEventTxnSnapshot struct {
	EventID string      `bun:"event_id"`
	Txn     storeTxnRow `bun:"embed:t__"`
}

// storeEventsToPort converts rows, turning transactions-row snapshots into
// the transaction's port JSON (one query for them all) and balance
// snapshots into their port JSON (storeEventSnapshotRow.toPort).
func storeEventsToPort(ctx context.Context, db bun.IDB, rows []storeEventRow) ([]ports.Event, error) {
	var snap []string
	for _, r := range rows {
		if r.DataFormat == storeEventTxnRow {
			snap = append(snap, r.ID)
		}
	}
	txnOf := map[string]storeTxnRow{}
	if len(snap) > 0 {
		var txns []storeEventTxnSnapshot
		err := db.NewRaw(`SELECT e.id AS event_id, `+storeColumns(db.Dialect(), "t", reflect.TypeFor[storeTxnRow]())+`
	FROM events AS e CROSS JOIN LATERAL jsonb_populate_record(NULL::transactions, e.data) AS t WHERE e.id = ANY(?)`,
			pgdialect.Array(snap)).Scan(ctx, &txns)
		if err != nil {
			return nil, fmt.Errorf("read transaction snapshots: %w", err)
		}
		for _, t := range txns {
			txnOf[t.EventID] = t.Txn
		}
	}
	out := make([]ports.Event, len(rows))
	for i, r := range rows {
		e, err := storeEventSnapshotRow{storeEventRow: r, Txn: txnOf[r.ID]}.toPort()
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// storeBalanceToPort turns a balance event's data (storeEventBalanceData)
// into its ports.InternalAccountBalance.
func storeBalanceToPort(data []byte) (ports.InternalAccountBalance, error) {
	var snap struct {
		storeAccountRow
		Balance      int64 `json:"balance"`
		TotalBalance int64 `json:"total_balance"`
	}
	if err := json.Unmarshal(data, &snap); err != nil {
		return ports.InternalAccountBalance{}, err
	}
	return ports.InternalAccountBalance{InternalAccount: snap.toPort(), Balance: snap.Balance, TotalBalance: snap.TotalBalance}, nil
}

type storeEvents struct{ tx *storeTx }

// Append inserts the event and, when its platform has a webhook
// endpoint, its delivery job, without a savepoint: event ids are unique by
// construction.
func (r storeEvents) Append(ctx context.Context, e ports.Event) error {
	row, job := storeEventToRow(e), storeJobToRow(ports.EventDeliveryJobFor(e))
	_, err := r.tx.execPlain(ctx, "append event "+e.ID, func(ctx context.Context) (sql.Result, error) {
		if _, err := r.tx.db.NewInsert().Model(&row).ExcludeColumn(storeEventStateColumns...).Exec(ctx); err != nil {
			return nil, err
		}
		return r.tx.db.NewRaw(`INSERT INTO jobs (id, kind, key, payload, run_at, attempts, last_error)
	SELECT ?, ?, ?, ?, ?, 0, '' WHERE EXISTS (SELECT 1 FROM platforms WHERE id = ? AND webhook_endpoint <> '')
	ON CONFLICT DO NOTHING`, job.ID, job.Kind, job.Key, job.Payload, job.RunAt, e.PlatformID).Exec(ctx)
	})
	return err
}

// Get reads one event of the platform (with its snapshot) through the
// prepared statement GetMany uses: the delivery of an event that waits for
// an earlier one reads it again this way.
func (r storeEvents) Get(ctx context.Context, platformID, id string) (ports.Event, error) {
	es, err := r.GetMany(ctx, []string{id})
	if err != nil {
		return ports.Event{}, err
	}
	if len(es) == 0 || es[0].PlatformID != platformID {
		return ports.Event{}, fmt.Errorf("get event %s: %w", id, ports.ErrNotFound)
	}
	return es[0], nil
}

// GetMany reads the events of ids with their transaction snapshots in one
// prepared statement (eventsByIDStatement): the delivery runner reads each
// claimed batch this way.
func (r storeEvents) GetMany(ctx context.Context, ids []string) ([]ports.Event, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []storeEventSnapshotRow
	if err := r.tx.stmts.query(ctx, r.tx.db, &rows, eventsByIDStatement, textArray(ids)); err != nil {
		return nil, fmt.Errorf("get %d events: %w", len(ids), err)
	}
	out := make([]ports.Event, len(rows))
	for i, row := range rows {
		e, err := row.toPort()
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// storeEventSnapshotRow is an event with, for a transaction event, its
// snapshot read back as a transactions row (Txn; zero otherwise, and the
// event's own data is not sent).
type storeEventSnapshotRow struct {
	storeEventRow
	Txn storeTxnRow `bun:"embed:t__"`
}

func (r storeEventSnapshotRow) toPort() (ports.Event, error) {
	e := r.storeEventRow.toPort()
	switch r.DataFormat {
	case storeEventTxnRow:
		e.Resource, e.Decoded = nil, r.Txn.toPort()
	case storeEventBalanceData:
		b, err := storeBalanceToPort(r.Data)
		if err != nil {
			return e, fmt.Errorf("balance snapshot of %s: %w", r.ID, err)
		}
		e.Resource, e.Decoded = nil, b
	}
	return e, nil
}

// eventsByIDStatement reads events by primary key, each transaction
// snapshot populated as a transactions row on the server. Its one generic
// plan looks each event up through a LATERAL ... LIMIT 1 on its id, which
// only the primary key serves, whatever the table held when it was made
// (a plain "id = ANY($1)" was planned as a sequential scan on a young
// table).
var eventsByIDStatement = `SELECT e.id, e.platform_id, e.type, e.resource_id,
	CASE WHEN e.data_format = '` + storeEventTxnRow + `' THEN NULL ELSE e.data END AS data,
	e.data_format, e.created_at, d.status, d.attempts, d.last_attempt_at, d.delivered_at, d.attempts_before, e.seq, ` +
	storeColumns(pgdialect.New(), "t", reflect.TypeFor[storeTxnRow]()) + `
FROM unnest($1::text[]) AS u(id)
CROSS JOIN LATERAL (SELECT * FROM events WHERE id = u.id LIMIT 1) AS e
LEFT JOIN LATERAL (SELECT * FROM event_deliveries WHERE event_id = u.id LIMIT 1) AS d ON true
LEFT JOIN LATERAL (SELECT * FROM jsonb_populate_record(NULL::transactions, e.data)
	WHERE e.data_format = '` + storeEventTxnRow + `') AS t ON true`

// storeEventStates reads storeEventRow from the view of events with their
// delivery state.
const storeEventStates = "event_states AS store_event_row"

func (r storeEvents) List(ctx context.Context, f ports.EventFilter, page ports.Page) ([]ports.Event, int, error) {
	filter := func(q *bun.SelectQuery, f ports.EventFilter) *bun.SelectQuery {
		q = q.Where("platform_id = ?", f.PlatformID)
		if f.ResourceID != "" {
			q = q.Where("resource_id = ?", f.ResourceID)
		}
		if f.Type != "" {
			q = q.Where("type = ?", f.Type)
		}
		if f.Status != "" {
			q = q.Where("status = ?", f.Status)
		}
		return q
	}
	what := "events of " + f.PlatformID
	total, err := r.count(ctx, f, filter)
	if err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", what, err)
	}
	var rows []storeEventRow
	if err := storePage(filter(r.tx.db.NewSelect().Model(&rows).ModelTableExpr(storeEventStates), f), page, false).Scan(ctx); err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", what, err)
	}
	out, err := storeEventsToPort(ctx, r.tx.db, rows)
	return out, int(total), err
}

// count counts the events of f. Most events are delivered, so those that
// are count as all of them less the few that are not (which
// event_deliveries_undelivered finds), not as a join of every event with
// its delivery row.
func (r storeEvents) count(ctx context.Context, f ports.EventFilter,
	filter func(*bun.SelectQuery, ports.EventFilter) *bun.SelectQuery) (int64, error) {
	q := func() *bun.SelectQuery {
		return r.tx.db.NewSelect().Model((*storeEventRow)(nil)).ModelTableExpr(storeEventStates)
	}
	if f.Status != ports.EventDelivered {
		return filter(q(), f).Count(ctx)
	}
	all := f
	all.Status = ""
	total, err := filter(q(), all).Count(ctx)
	if err != nil {
		return 0, err
	}
	undelivered, err := filter(q(), all).Where("status <> ?", ports.EventDelivered).Count(ctx)
	return total - undelivered, err
}

// RecordAttempts is EndDeliveries with attempts alone: one statement
// that numbers each attempt after its event's count and updates the
// events' delivery rows (not the events: see migration 0041), committed
// asynchronously.
func (r storeEvents) RecordAttempts(ctx context.Context, rs []ports.AttemptRecord) error {
	return r.EndDeliveries(ctx, rs, nil, nil)
}

// EndDeliveries is one prepared statement (endDeliveriesStatement): a
// delivery batch ends in one round trip, where a unit of work took four
// (BEGIN, the attempts, the jobs, COMMIT). One statement is atomic
// without a transaction around it; inside a unit of work it is one more
// statement of it.
func (r storeEvents) EndDeliveries(ctx context.Context, rs []ports.AttemptRecord, next []ports.Job, done []string) error {
	if len(rs) == 0 && len(next) == 0 && len(done) == 0 {
		return nil
	}
	n := len(rs)
	ids, platforms, statuses, ats, codes, latencies, errs := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, rec := range rs {
		a := rec.Attempt
		ids[i], platforms[i], statuses[i], errs[i] = a.EventID, rec.PlatformID, rec.Status, a.Error
		ats[i] = ports.Stored(a.At).Format(pgTimeLayout)
		codes[i], latencies[i] = strconv.Itoa(a.StatusCode), strconv.FormatInt(a.Latency.Microseconds(), 10)
	}
	m := len(next)
	jid, kind, key, payload, runAt, lastErr := make([]string, m), make([]string, m), make([]string, m), make([]string, m),
		make([]string, m), make([]string, m)
	for i, j := range next {
		row := storeJobToRow(j)
		jid[i], kind[i], key[i], lastErr[i] = row.ID, row.Kind, row.Key, row.LastError
		payload[i], runAt[i] = `\x`+hex.EncodeToString(row.Payload), row.RunAt.Format(pgTimeLayout)
	}
	var recorded []int64
	err := r.tx.stmts.query(ctx, r.tx.db, &recorded, endDeliveriesStatement,
		textArray(ids), textArray(platforms), textArray(statuses), textArray(ats), textArray(codes), textArray(latencies), textArray(errs),
		textArray(jid), textArray(kind), textArray(key), textArray(payload), textArray(runAt), textArray(lastErr), textArray(done))
	switch {
	case err == nil && (len(recorded) != 1 || recorded[0] != int64(n)):
		err = fmt.Errorf("attempts recorded: %v of %d", recorded, n)
	case isEndDeliveriesNotFound(err):
		return fmt.Errorf("end a delivery batch: an event of %d attempts is not its platform's: %w", n, ports.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("end a delivery batch (%d attempts, %d jobs queued, %d ended): %w", n, m, len(done), storeConflict(err))
	}
	return nil
}

// endDeliveriesStatement records attempts ($1-$7: event, platform, status,
// at, status code, latency in µs, error), each numbered after its
// event's count and moving its delivery row to its status, queues
// jobs ($8-$13: id, kind, key, payload, run_at, last error; a conflict
// skips one, as Enqueue) and deletes the jobs of $14. Every part runs to
// completion (data-modifying CTEs always do); when an attempt's event is
// not its platform's, the final cast fails the statement and so all of
// it (endDeliveriesNotFound). The delivery rows are found by the id array
// (= ANY), which the primary key serves; but a generic plan made on a
// young table that has not been analyzed yet may filter a scan of it
// instead, until autovacuum's analyze makes the connection plan it again
// (seen in the webhook benchmark, on a new database; planning it per call
// measured no better: see docs/performance.md). Committed asynchronously
// (async).
const endDeliveriesStatement = idemAsync + `, v AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[], $7::text[])
		AS v(id, platform_id, status, at, status_code, latency_us, error)),
e AS (
	UPDATE event_deliveries AS d SET status = v.status, attempts = d.attempts + 1, last_attempt_at = v.at::timestamptz,
		delivered_at = CASE WHEN v.status = 'DELIVERED' THEN v.at::timestamptz ELSE d.delivered_at END
	FROM v WHERE d.event_id = ANY($1::text[]) AND d.event_id = v.id AND d.platform_id = v.platform_id
		AND (SELECT off FROM async) IS NOT NULL
	RETURNING d.event_id AS id, d.attempts, v.at, v.status_code, v.latency_us, v.error),
a AS (
	INSERT INTO event_attempts (event_id, attempt, at, status_code, latency_us, error)
	SELECT e.id, e.attempts, e.at::timestamptz, e.status_code, e.latency_us, e.error FROM e
	RETURNING 1),
q AS (
	INSERT INTO jobs (id, kind, key, payload, run_at, attempts, last_error)
	SELECT u.id, u.kind, u.key, u.payload, u.run_at::timestamptz, 0, u.last_error
	FROM unnest($8::text[], $9::text[], $10::text[], $11::bytea[], $12::text[], $13::text[])
		AS u(id, kind, key, payload, run_at, last_error)
	ON CONFLICT DO NOTHING),
x AS (
	DELETE FROM jobs WHERE id = ANY($14::text[]))
SELECT CASE WHEN c.n = cardinality($1::text[]) THEN c.n
	ELSE ('` + endDeliveriesNotFound + `' || c.n || ' of ' || cardinality($1::text[]))::bigint END
FROM (SELECT count(*) AS n FROM a) AS c`

// endDeliveriesNotFound starts the text endDeliveriesStatement fails to
// cast when an attempt's event is not its platform's.
const endDeliveriesNotFound = "end deliveries: attempts recorded: "

// isEndDeliveriesNotFound reports whether err is endDeliveriesStatement's
// failed cast (invalid_text_representation of its own text).
func isEndDeliveriesNotFound(err error) bool {
	var pg pgdriver.Error
	return errors.As(err, &pg) && pg.Field('C') == "22P02" && strings.Contains(pg.Field('M'), endDeliveriesNotFound)
}

func (r storeEvents) Attempts(ctx context.Context, platformID, eventID string) ([]ports.EventAttempt, error) {
	if _, err := r.Get(ctx, platformID, eventID); err != nil {
		return nil, err
	}
	var rows []storeEventAttemptRow
	if err := r.tx.db.NewSelect().Model(&rows).Where("event_id = ?", eventID).Order("attempt").Scan(ctx); err != nil {
		return nil, fmt.Errorf("attempts of %s: %w", eventID, err)
	}
	out := make([]ports.EventAttempt, len(rows))
	for i, a := range rows {
		out[i] = ports.EventAttempt{EventID: a.EventID, At: ports.Stored(a.At), StatusCode: a.StatusCode,
			Latency: time.Duration(a.LatencyUS) * time.Microsecond, Error: a.Error}
	}
	return out, nil
}

// RequeuePending is one statement: the platform's pending events (found
// through event_deliveries_undelivered) get their schedule from the start
// and delivery jobs of up to ports.EventsPerDeliveryJob events each, in
// recording order, as a statement's new events do (event_delivery_jobs).
// A job an event already has (a waiting retry) stays; the event goes with
// whichever job comes first.
func (r storeEvents) RequeuePending(ctx context.Context, platformID string, runAt time.Time) (int, error) {
	var n int
	_, err := r.tx.execPlain(ctx, "requeue the pending events of "+platformID, func(ctx context.Context) (sql.Result, error) {
		return nil, r.tx.db.NewRaw(`WITH p AS (
	SELECT event_id, seq, attempts <> attempts_before AS restart FROM event_deliveries
	WHERE platform_id = ?0 AND status = 'PENDING'),
u AS (
	UPDATE event_deliveries AS d SET attempts_before = d.attempts FROM p
	WHERE d.event_id = p.event_id AND p.restart),
a AS (SELECT array_agg(p.event_id ORDER BY p.seq) AS ids FROM p),
j AS (
	INSERT INTO jobs (id, kind, key, payload, run_at, attempts, last_error)
	SELECT x.* FROM a CROSS JOIN LATERAL event_delivery_jobs(a.ids,
		array_fill(?0::text, ARRAY[cardinality(a.ids)]), array_fill(?1::timestamptz, ARRAY[cardinality(a.ids)])) AS x
	WHERE a.ids IS NOT NULL)
SELECT count(*) FROM p`, platformID, ports.Stored(runAt)).Scan(ctx, &n)
	})
	return n, err
}

// pendingHeadsStatement reads each resource's first $3 pending events
// through event_deliveries_undelivered, resources given as the arrays $1
// (platforms) and $2 (resource ids). Prepared: a delivery batch runs it
// once, and planned per call it cost as much as it ran (0.22 ms).
const pendingHeadsStatement = `SELECT v.platform_id, v.resource_id, p.event_id
	FROM (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS u(platform_id, resource_id)) AS v
	CROSS JOIN LATERAL (SELECT d.event_id, d.seq FROM event_deliveries AS d
		WHERE d.platform_id = v.platform_id AND d.resource_id = v.resource_id AND d.status = 'PENDING'
		ORDER BY d.seq LIMIT $3) AS p
	ORDER BY v.platform_id, v.resource_id, p.seq`

// PendingHeads reads each resource's first n pending events through
// event_deliveries_undelivered, in one statement.
func (r storeEvents) PendingHeads(ctx context.Context, es []ports.Event, n int) (map[string][]string, error) {
	out := map[string][]string{}
	if len(es) == 0 {
		return out, nil
	}
	platforms, resources := make([]string, len(es)), make([]string, len(es))
	for i, e := range es {
		platforms[i], resources[i] = e.PlatformID, e.ResourceID
		out[ports.ResourceKey(e.PlatformID, e.ResourceID)] = []string{}
	}
	var rows []struct {
		PlatformID string `bun:"platform_id"`
		ResourceID string `bun:"resource_id"`
		EventID    string `bun:"event_id"`
	}
	err := r.tx.stmts.query(ctx, r.tx.db, &rows, pendingHeadsStatement, textArray(platforms), textArray(resources), n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("pending heads of %d resources: %w", len(es), err)
	}
	for _, row := range rows {
		key := ports.ResourceKey(row.PlatformID, row.ResourceID)
		out[key] = append(out[key], row.EventID)
	}
	return out, nil
}

func (r storeEvents) Requeue(ctx context.Context, platformID, id string, runAt time.Time) error {
	what := "requeue event " + id
	res, err := r.tx.execPlain(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewRaw(`UPDATE event_deliveries SET status = 'PENDING', delivered_at = NULL, attempts_before = attempts
	WHERE event_id = ? AND platform_id = ?`,
			id, platformID).Exec(ctx)
	})
	if err != nil {
		return err
	}
	if err := storeUpdated(res, what); err != nil {
		return err
	}
	// Its delivery job, or its retry already queued brought forward to
	// runAt (unless a sender holds it now).
	row := storeJobToRow(ports.EventDeliveryJobAt(platformID, id, runAt))
	_, err = r.tx.execPlain(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewInsert().Model(&row).On("CONFLICT (id) DO UPDATE").Set("run_at = EXCLUDED.run_at").
			Where("store_job_row.run_at > EXCLUDED.run_at AND (store_job_row.locked_until IS NULL OR store_job_row.locked_until <= EXCLUDED.run_at)").Exec(ctx)
	})
	return err
}
