package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// ---- jobs (migrations/0004_external_accounts_transactions_jobs.sql) ----

type storeJobRow struct {
	bun.BaseModel `bun:"table:jobs"`

	ID          string     `bun:"id,pk"`
	Kind        string     `bun:"kind"`
	Key         string     `bun:"key"`
	Payload     []byte     `bun:"payload"`
	RunAt       time.Time  `bun:"run_at"`
	Attempts    int        `bun:"attempts"`
	LastError   string     `bun:"last_error"`
	LockedUntil *time.Time `bun:"locked_until"`
}

// storeJobToRow is the row of a job to enqueue, with an id assigned when
// it has none.
func storeJobToRow(j ports.Job) storeJobRow {
	if j.ID == "" {
		j.ID = "Job:" + uuid.NewString()
	}
	return storeJobRow{
		ID: j.ID, Kind: j.Kind, Key: j.Key, Payload: j.Payload,
		RunAt: ports.Stored(j.RunAt), Attempts: j.Attempts, LastError: j.LastError,
	}
}

func (r storeJobRow) toPort() ports.Job {
	return ports.Job{
		ID: r.ID, Kind: r.Kind, Key: r.Key, Payload: r.Payload,
		RunAt: ports.Stored(r.RunAt), Attempts: r.Attempts, LastError: r.LastError,
	}
}

// storeJobs is the job queue. Inside a unit of work every call runs in its
// transaction (an Enqueue becomes visible at commit, and goes with a
// rollback); through Read() each call commits on its own.
type storeJobs struct{ tx *storeTx }

// run executes a write in the unit of work (without a savepoint: job writes
// never expect a refusal, Enqueue being ON CONFLICT DO NOTHING) or, on
// Read(), directly on the pool.
func (q storeJobs) run(ctx context.Context, what string, write func(ctx context.Context) (sql.Result, error)) (sql.Result, error) {
	if q.tx.write {
		return q.tx.execPlain(ctx, what, write)
	}
	res, err := write(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, storeConflict(err))
	}
	return res, nil
}

// Enqueue queues j; a job whose ID or Key is already queued is a no-op.
func (q storeJobs) Enqueue(ctx context.Context, j ports.Job) error {
	row := storeJobToRow(j)
	_, err := q.run(ctx, "enqueue job "+j.Kind, func(ctx context.Context) (sql.Result, error) {
		return q.tx.db.NewInsert().Model(&row).On("CONFLICT DO NOTHING").Exec(ctx)
	})
	return err
}

// Claim leases up to n due jobs, oldest run_at first, in one statement:
// rows locked by another claimer are skipped, so concurrent claimers (in
// any number of processes) never get the same job.
func (q storeJobs) Claim(ctx context.Context, now time.Time, n int, lease time.Duration, kinds ports.JobKinds) ([]ports.Job, error) {
	if n <= 0 {
		return nil, nil
	}
	now = ports.Stored(now)
	var rows []storeJobRow
	_, err := q.run(ctx, "claim jobs", func(ctx context.Context) (sql.Result, error) {
		rows = rows[:0]
		return nil, q.tx.stmts.query(ctx, q.tx.db, &rows, claimStatement(q.tx.stmts.db, kinds),
			now.Format(pgTimeLayout), n, ports.Stored(now.Add(lease)).Format(pgTimeLayout))
	})
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rows, func(a, b storeJobRow) int {
		if c := a.RunAt.Compare(b.RunAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	out := make([]ports.Job, len(rows))
	for i, r := range rows {
		out[i] = r.toPort()
	}
	return out, nil
}

// claimStatement is the claim of a runner's kinds: the due jobs, oldest
// first, locked and leased until $3 in one statement, $1 being now and $2
// how many. It is prepared (planned per call it cost more than it ran:
// 0.22 ms of planning for 0.13 ms), so the kinds, which are the runner's
// constants, are written into its text: a partial due index (jobs_due_work,
// jobs_due_deliveries) serves a plan only when its kind predicate is a
// constant. The claimed rows, locked by the claim, are updated by their
// ctid (a TID scan), which the one generic plan keeps whatever the table
// held when it was made; joined by id, a young table's plan scanned it.
func claimStatement(db *bun.DB, kinds ports.JobKinds) string {
	kindFilter, kindArgs := storeKindFilter(kinds)
	return `WITH due AS (
		SELECT ctid AS tid, id FROM jobs
		WHERE run_at <= $1::timestamptz AND (locked_until IS NULL OR locked_until <= $1::timestamptz)` +
		db.QueryGen().FormatQuery(kindFilter, kindArgs...) + `
		ORDER BY run_at, id
		LIMIT $2
		FOR UPDATE SKIP LOCKED
	)
	UPDATE jobs SET locked_until = $3::timestamptz, attempts = jobs.attempts + 1
	FROM due WHERE jobs.ctid = due.tid AND jobs.id = due.id
	RETURNING jobs.id, jobs.kind, jobs.key, jobs.payload, jobs.run_at, jobs.attempts, jobs.last_error, jobs.locked_until`
}

// storeKindFilter is the claim's kind condition, kind IN (…) or
// kind <> … AND …, with its arguments: bun writes them into the statement
// as literals, so the planner matches the partial due-indexes of
// migrations/0025 (one for webhook deliveries, one for the rest) and a
// claim never walks the other lane's due jobs.
func storeKindFilter(k ports.JobKinds) (string, []any) {
	if len(k.Only) > 0 {
		return " AND kind IN ?", []any{bun.Tuple(k.Only)}
	}
	var b strings.Builder
	args := make([]any, len(k.Except))
	for i, kind := range k.Except {
		b.WriteString(" AND kind <> ?")
		args[i] = kind
	}
	return b.String(), args
}

// Complete deletes a job; ErrNotFound when it is not queued.
func (q storeJobs) Complete(ctx context.Context, id string) error {
	what := "complete job " + id
	res, err := q.run(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return q.tx.db.NewDelete().Model((*storeJobRow)(nil)).Where("id = ?", id).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

// CompleteAll deletes the jobs of ids still queued, in one prepared
// statement (each delivery batch ends its jobs with it; it finds them by
// primary key whatever its generic plan was made on).
func (q storeJobs) CompleteAll(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := q.run(ctx, fmt.Sprintf("complete %d jobs", len(ids)), func(ctx context.Context) (sql.Result, error) {
		return q.tx.stmts.exec(ctx, q.tx.db, completeJobsStatement, textArray(ids))
	})
	return err
}

const completeJobsStatement = `DELETE FROM jobs WHERE id = ANY($1::text[])`

// Retry makes a job due again at runAt with lastError, ending its lease.
func (q storeJobs) Retry(ctx context.Context, id string, runAt time.Time, lastError string) error {
	what := "retry job " + id
	res, err := q.run(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return q.tx.db.NewUpdate().Model((*storeJobRow)(nil)).
			Set("run_at = ?", ports.Stored(runAt)).Set("last_error = ?", lastError).Set("locked_until = NULL").
			Where("id = ?", id).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

var _ ports.JobBacklogReader = storeJobs{}

// Backlog counts the queue by kind in one statement (the queue holds only
// unfinished jobs, so the scan is short).
func (q storeJobs) Backlog(ctx context.Context, now time.Time) ([]ports.JobBacklog, error) {
	now = ports.Stored(now)
	var rows []struct {
		Kind      string     `bun:"kind"`
		Queued    int64      `bun:"queued"`
		Due       int64      `bun:"due"`
		OldestDue *time.Time `bun:"oldest_due"`
	}
	err := q.tx.db.NewRaw(`
		SELECT kind, count(*) AS queued,
		       count(*) FILTER (WHERE run_at <= ?) AS due,
		       min(run_at) FILTER (WHERE run_at <= ? AND (locked_until IS NULL OR locked_until <= ?)) AS oldest_due
		FROM jobs GROUP BY kind ORDER BY kind`, now, now, now).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("job backlog: %w", err)
	}
	out := make([]ports.JobBacklog, len(rows))
	for i, r := range rows {
		out[i] = ports.JobBacklog{Kind: r.Kind, Queued: r.Queued, Due: r.Due}
		if r.OldestDue != nil {
			out[i].OldestDue = r.OldestDue.UTC()
		}
	}
	return out, nil
}
