package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// IdempotencyStore is ports.IdempotencyStore on the idempotency_keys table
// (migrations/0003_business.sql): the authoritative record of every
// Idempotency-Key.
//
// # Grouped writes
//
// Every keyed request writes twice (Begin, Complete). Under load the calls
// of concurrent requests are grouped (see combiner): the claims of new keys
// and the responses waiting while the previous group runs become ONE
// statement, a multi-row INSERT … ON CONFLICT DO NOTHING beside a
// multi-row UPDATE, so the database does one statement (and one commit)
// per group instead of two per request. A lone call runs at once, as a group of one. Semantics are those
// of the single-row statements, because a group only takes the easy case
// and hands every other one to them: a claim whose key is already stored
// (held, completed, or lapsed and to be taken over), or that repeats a key
// earlier in its group, is not inserted by the group and runs Begin's
// single-row claim-or-read afterwards (so of concurrent duplicates the
// first writer wins and the rest see its claim); a response whose row the
// group's UPDATE did not change runs Complete's single-row path (which
// tells ErrConflict from ErrNotFound). A group statement that fails as a
// whole is retried row by row, so one bad row fails alone.
//
// Crash safety is unchanged: a group is one autocommitted statement with
// asynchronous commit (idemAsync), all its rows or none, and a caller is
// answered only after it. A crash may lose the last claims or responses
// written, exactly as with single statements; a lost claim lets a retry run
// again, and the money it would move is keyed in the ledger (synchronous
// commit), which answers "already posted" rather than posting twice.
type IdempotencyStore struct {
	db    *bun.DB
	stmts *preparedStmts // the group statements
	calls combiner[idemCall]
}

var _ ports.IdempotencyStore = (*IdempotencyStore)(nil)

// NewIdempotencyStore returns the store on db (migrated).
func NewIdempotencyStore(db *bun.DB) *IdempotencyStore {
	s := &IdempotencyStore{db: db, stmts: newPreparedStmts(db)}
	s.calls = combiner[idemCall]{max: idemGroupsInFlight, maxBatch: idemMaxGroup, run: s.group}
	return s
}

// idemGroupsInFlight bounds the group statements running at once: calls
// arriving while one runs queue up and form the next group.
// One makes the groups as large as the load allows (each group statement
// is its own autocommitted transaction, so fewer, larger groups cost the
// server less); a group statement takes about a millisecond.
const idemGroupsInFlight = 1

// idemMaxGroup bounds the rows of one group statement.
const idemMaxGroup = 500

// idemGroupTimeout bounds one group statement (it serves many callers, so
// it does not run under any one caller's context).
const idemGroupTimeout = 10 * time.Second

type idemRow struct {
	bun.BaseModel `bun:"table:idempotency_keys"`

	Scope       string            `bun:"scope,pk"`
	Key         string            `bun:"key,pk"`
	RequestHash string            `bun:"request_hash"`
	Owner       string            `bun:"owner"`
	Completed   bool              `bun:"completed"`
	StatusCode  int               `bun:"status_code"`
	Header      map[string]string `bun:"header,type:jsonb"`
	Body        []byte            `bun:"body"`
	LockedUntil time.Time         `bun:"locked_until"`
	CreatedAt   time.Time         `bun:"created_at"`
	ExpiresAt   time.Time         `bun:"expires_at"`
}

func idemToRow(r ports.IdempotencyRecord) idemRow {
	return idemRow{
		Scope: r.Scope, Key: r.Key, RequestHash: r.RequestHash, Owner: r.Owner, Completed: r.Completed,
		StatusCode: r.StatusCode, Header: r.Header, Body: r.Body,
		LockedUntil: ports.Stored(r.LockedUntil), CreatedAt: ports.Stored(r.CreatedAt), ExpiresAt: ports.Stored(r.ExpiresAt),
	}
}

func (r idemRow) toPort() ports.IdempotencyRecord {
	return ports.IdempotencyRecord{
		Scope: r.Scope, Key: r.Key, RequestHash: r.RequestHash, Owner: r.Owner, Completed: r.Completed,
		StatusCode: r.StatusCode, Header: r.Header, Body: r.Body,
		LockedUntil: ports.Stored(r.LockedUntil), CreatedAt: ports.Stored(r.CreatedAt), ExpiresAt: ports.Stored(r.ExpiresAt),
	}
}

// idemAsync makes the statement's own (implicit) transaction commit
// without waiting for its WAL flush: every write below is one autocommitted
// statement that starts with this CTE and reads it, and
// set_config(..., true) lasts until that transaction ends, after its
// commit record is written. That is safe here because the idempotency
// table guards responses, not money: a money movement made under a key is
// an entry whose id is derived from the key, committed synchronously by the
// ledger. If the server crashes and loses a claim or a stored response
// written just before, a retry runs again and the ledger answers "already
// posted" instead of moving money twice. (PostgreSQL flushes WAL in order,
// so an idempotency write made before a synchronous ledger commit is
// durable with it.) It saves the fsyncs of every keyed request, and one
// statement per call saves the BEGIN / SET LOCAL / COMMIT round trips.
const idemAsync = `WITH async AS (SELECT set_config('synchronous_commit', 'off', true) AS off) `

// idemColumns are the columns Begin inserts and every write returns.
const idemColumns = `scope, key, request_hash, owner, completed, status_code, header, body, locked_until, created_at, expires_at`

// idemBeginAttempts bounds Begin's claim-or-read loop (a row released or
// purged between the claim and the read sends it round again).
const idemBeginAttempts = 3

// idemHeader is the header column's value (jsonb; NULL when empty).
func idemHeader(h map[string]string) (any, error) {
	if h == nil {
		return nil, nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	return string(b), nil
}

// Begin claims rec.Scope/rec.Key at now, atomically, in one statement: it
// inserts the claim if the key is new, or takes the stored row over when it
// is unfinished and its lease has passed (ON CONFLICT DO UPDATE … WHERE,
// which locks the row). When neither happens the stored row is read and
// returned, not owned.
func (s *IdempotencyStore) Begin(ctx context.Context, rec ports.IdempotencyRecord, now time.Time) (ports.IdempotencyRecord, bool, error) {
	if rec.Completed || rec.StatusCode != 0 || rec.Header != nil || rec.Body != nil {
		// Not a plain claim: the group statement only inserts those.
		return s.beginOne(ctx, rec, now)
	}
	c := &idemBeginCall{ctx: ctx, row: idemToRow(rec), now: ports.Stored(now), done: make(chan idemBeginResult, 1)}
	s.calls.add(idemCall{begin: c})
	select {
	case r := <-c.done:
		return r.rec, r.owned, r.err
	case <-ctx.Done():
		return ports.IdempotencyRecord{}, false, fmt.Errorf("idempotency begin %s/%s: %w", rec.Scope, rec.Key, ctx.Err())
	}
}

// beginOne is Begin in single-row statements.
func (s *IdempotencyStore) beginOne(ctx context.Context, rec ports.IdempotencyRecord, now time.Time) (ports.IdempotencyRecord, bool, error) {
	row := idemToRow(rec)
	header, err := idemHeader(row.Header)
	if err != nil {
		return ports.IdempotencyRecord{}, false, fmt.Errorf("idempotency begin %s/%s: %w", rec.Scope, rec.Key, err)
	}
	now = ports.Stored(now)
	for attempt := 1; ; attempt++ {
		var claimed []idemRow
		err := s.db.NewRaw(idemAsync+`
			INSERT INTO idempotency_keys AS k (`+idemColumns+`)
			SELECT ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ? FROM async
			ON CONFLICT (scope, key) DO UPDATE
				SET request_hash = excluded.request_hash, owner = excluded.owner, locked_until = excluded.locked_until, expires_at = excluded.expires_at
				WHERE NOT k.completed AND k.locked_until <= ?
			RETURNING `+idemColumns,
			row.Scope, row.Key, row.RequestHash, row.Owner, row.Completed, row.StatusCode, header, row.Body,
			row.LockedUntil, row.CreatedAt, row.ExpiresAt, now).Scan(ctx, &claimed)
		if err != nil {
			return ports.IdempotencyRecord{}, false, fmt.Errorf("idempotency begin %s/%s: claim: %w", rec.Scope, rec.Key, err)
		}
		if len(claimed) == 1 {
			return claimed[0].toPort(), true, nil
		}
		// Held by another claim (unexpired) or completed: report it.
		var stored idemRow
		err = s.db.NewSelect().Model(&stored).Where("scope = ?", rec.Scope).Where("key = ?", rec.Key).Scan(ctx)
		switch {
		case err == nil && (stored.Completed || stored.LockedUntil.After(now)):
			return stored.toPort(), false, nil
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return ports.IdempotencyRecord{}, false, fmt.Errorf("idempotency begin %s/%s: read: %w", rec.Scope, rec.Key, err)
		}
		// Gone since the claim attempt (or released and re-claimed with a
		// lease already past): go round again.
		if attempt == idemBeginAttempts {
			return ports.IdempotencyRecord{}, false, fmt.Errorf("idempotency begin %s/%s: key keeps vanishing", rec.Scope, rec.Key)
		}
	}
}

// Complete stores the response of an unfinished claim: ErrNotFound when
// the key is unknown, ErrConflict when it is already complete.
func (s *IdempotencyStore) Complete(ctx context.Context, rec ports.IdempotencyRecord) error {
	c := &idemCompleteCall{ctx: ctx, rec: rec, done: make(chan error, 1)}
	s.calls.add(idemCall{complete: c})
	select {
	case err := <-c.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("idempotency complete %s/%s: %w", rec.Scope, rec.Key, ctx.Err())
	}
}

// completeOne is Complete in single-row statements.
func (s *IdempotencyStore) completeOne(ctx context.Context, rec ports.IdempotencyRecord) error {
	row := idemToRow(rec)
	header, err := idemHeader(row.Header)
	if err != nil {
		return fmt.Errorf("idempotency complete %s/%s: %w", rec.Scope, rec.Key, err)
	}
	var expires any // NULL keeps the stored expiry
	if !rec.ExpiresAt.IsZero() {
		expires = row.ExpiresAt
	}
	res, err := s.db.NewRaw(idemAsync+`
		UPDATE idempotency_keys AS k
		SET completed = true, status_code = ?, header = ?::jsonb, body = ?, expires_at = coalesce(?::timestamptz, k.expires_at)
		FROM async
		WHERE k.scope = ? AND k.key = ? AND NOT k.completed`,
		row.StatusCode, header, row.Body, expires, rec.Scope, rec.Key).Exec(ctx)
	if err != nil {
		return fmt.Errorf("idempotency complete %s/%s: %w", rec.Scope, rec.Key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("idempotency complete %s/%s: %w", rec.Scope, rec.Key, err)
	}
	if n == 1 {
		return nil
	}
	exists, err := s.db.NewSelect().Model((*idemRow)(nil)).Where("scope = ?", rec.Scope).Where("key = ?", rec.Key).Exists(ctx)
	if err != nil {
		return fmt.Errorf("idempotency complete %s/%s: %w", rec.Scope, rec.Key, err)
	}
	if exists {
		return fmt.Errorf("idempotency key %s/%s already completed: %w", rec.Scope, rec.Key, ports.ErrConflict)
	}
	return fmt.Errorf("idempotency key %s/%s: %w", rec.Scope, rec.Key, ports.ErrNotFound)
}

// Renew moves the lease of owner's unfinished claim to until, in one
// statement (asynchronous commit: a renewal lost in a crash only lets the
// claim lapse sooner, which is what a crash should do anyway).
func (s *IdempotencyStore) Renew(ctx context.Context, scope, key, owner string, until time.Time) (bool, error) {
	res, err := s.db.NewRaw(idemAsync+`
		UPDATE idempotency_keys AS k SET locked_until = ? FROM async
		WHERE k.scope = ? AND k.key = ? AND k.owner = ? AND NOT k.completed`,
		ports.Stored(until), scope, key, owner).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("idempotency renew %s/%s: %w", scope, key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("idempotency renew %s/%s: %w", scope, key, err)
	}
	return n == 1, nil
}

// Release drops owner's unfinished claim; a completed key, or one held by
// another owner, stays. (Lost in a crash, the claim only lapses after its
// lease.)
func (s *IdempotencyStore) Release(ctx context.Context, scope, key, owner string) error {
	_, err := s.db.NewRaw(idemAsync+`
		DELETE FROM idempotency_keys AS k USING async
		WHERE k.scope = ? AND k.key = ? AND k.owner = ? AND NOT k.completed`, scope, key, owner).Exec(ctx)
	if err != nil {
		return fmt.Errorf("idempotency release %s/%s: %w", scope, key, err)
	}
	return nil
}

// Purge forgets keys whose ExpiresAt is before now.
func (s *IdempotencyStore) Purge(ctx context.Context, now time.Time) (int, error) {
	res, err := s.db.NewDelete().Model((*idemRow)(nil)).Where("expires_at < ?", ports.Stored(now)).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("idempotency purge: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("idempotency purge: %w", err)
	}
	return int(n), nil
}

// ---- grouped writes (see "Grouped writes" on IdempotencyStore) ----

type idemBeginCall struct {
	ctx  context.Context
	row  idemRow // a plain claim, times truncated as stored
	now  time.Time
	done chan idemBeginResult // buffered
}

type idemBeginResult struct {
	rec   ports.IdempotencyRecord
	owned bool
	err   error
}

type idemCompleteCall struct {
	ctx  context.Context
	rec  ports.IdempotencyRecord
	done chan error // buffered
}

// idemKey names a row.
func idemKey(scope, key string) string { return scope + "\x00" + key }

// idemCall is one call of a group: a claim or a response.
type idemCall struct {
	begin    *idemBeginCall
	complete *idemCompleteCall
}

// group writes a group's new claims and its responses in one statement
// (one transaction, one round trip for both kinds) and runs beginOne and
// completeOne for the calls it did not write.
func (s *IdempotencyStore) group(calls []idemCall) {
	var begins []*idemBeginCall
	var completes []*idemCompleteCall
	for _, c := range calls {
		switch {
		case c.complete != nil:
			completes = append(completes, c.complete)
		case c.begin.ctx.Err() != nil:
			// Gone before its claim was written: claiming for nobody
			// would only hold the key for a lease.
			c.begin.done <- idemBeginResult{err: fmt.Errorf("idempotency begin %s/%s: %w", c.begin.row.Scope, c.begin.row.Key, c.begin.ctx.Err())}
		default:
			begins = append(begins, c.begin)
		}
	}
	bkey := func(c *idemBeginCall) (string, string) { return c.row.Scope, c.row.Key }
	ckey := func(c *idemCompleteCall) (string, string) { return c.rec.Scope, c.rec.Key }
	claims, beginRest := idemSplit(begins, bkey)
	responses, completeRest := idemSplit(completes, ckey)
	if len(responses) > 0 && len(claims) > 0 {
		// A key claimed and answered in one group (a retry meeting its
		// first request's response): the claim runs alone afterwards and
		// reads the response, rather than meet it inside one statement.
		answered := make(map[string]bool, len(responses))
		for _, c := range responses {
			answered[idemKey(ckey(c))] = true
		}
		claims = slices.DeleteFunc(claims, func(c *idemBeginCall) bool {
			if answered[idemKey(bkey(c))] {
				beginRest = append(beginRest, c)
				return true
			}
			return false
		})
	}
	claimed, stored, err := s.writeGroup(claims, responses)
	completeRest = idemSettle(responses, completeRest, stored, err, ckey, func(c *idemCompleteCall) { c.done <- nil })
	beginRest = idemSettle(claims, beginRest, claimed, err, bkey, func(c *idemBeginCall) {
		c.done <- idemBeginResult{rec: c.row.toPort(), owned: true}
	})
	for _, c := range completeRest {
		// Not under the caller's context alone: a response computed is
		// worth storing even if the caller stopped waiting.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), idemGroupTimeout)
		c.done <- s.completeOne(ctx, c.rec)
		cancel()
	}
	for _, c := range beginRest {
		rec, owned, err := s.beginOne(c.ctx, c.row.toPort(), c.now)
		c.done <- idemBeginResult{rec: rec, owned: owned, err: err}
	}
}

// idemSplit splits a group's calls into the rows of its group statement
// (the first call of each key, in one order for every group, so two groups
// writing the same keys wait for each other instead of deadlocking) and
// the rest, which run alone afterwards (a key repeated in the group).
func idemSplit[C any](calls []C, key func(C) (scope, key string)) (group, rest []C) {
	seen := make(map[string]bool, len(calls))
	for _, c := range calls {
		k := idemKey(key(c))
		if seen[k] {
			rest = append(rest, c)
			continue
		}
		seen[k] = true
		group = append(group, c)
	}
	slices.SortFunc(group, func(a, b C) int {
		as, ak := key(a)
		bs, bk := key(b)
		return cmp.Or(strings.Compare(as, bs), strings.Compare(ak, bk))
	})
	return group, rest
}

// idemSettle answers (answer) the calls of group whose row the group
// statement wrote (written, by idemKey) and returns the others, after
// rest, to run alone. When the statement failed (err) every call runs
// alone, so a bad row fails by itself.
func idemSettle[C any](group, rest []C, written map[string]bool, err error, key func(C) (scope, key string), answer func(C)) []C {
	if err != nil {
		return append(group, rest...)
	}
	for _, c := range group {
		if written[idemKey(key(c))] {
			answer(c)
		} else {
			rest = append(rest, c)
		}
	}
	return rest
}

// idemInsertClaims and idemStoreResponses are the group statements,
// prepared (preparedStmts: planning them cost more than running them),
// their arrays given as text[] literals (textArray) and cast. Their one
// generic plan must find rows by key whatever the table held when it was
// made: an UPDATE joined to an unnest lets the planner of a young table
// pick a sequential scan (0.4 ms per group once the table has grown), so
// idemStoreResponses finds each row by primary key in a LATERAL subquery
// (see groupedRead) and updates it by its ctid (a TID scan). A row that
// another session changes in between has a new ctid and is not updated:
// the group reports it unstored and completeOne handles it.
var (
	idemInsertClaims   = numberParams(idemAsync + idemClaimsBody)
	idemStoreResponses = numberParams(idemAsync + idemResponsesBody)
	// idemClaimsAndResponses is both in one statement, for a group that
	// holds claims and responses (see group).
	idemClaimsAndResponses = numberParams(idemAsync + `, claims AS (` + idemClaimsBody + `), responses AS (` + idemResponsesBody + `)
		SELECT * FROM claims UNION ALL SELECT * FROM responses`)
)

// idemClaimsBody and idemResponsesBody are the group statements after the
// async CTE; each returns the rows it wrote as (response, scope, key).
const (
	idemClaimsBody = `
		INSERT INTO idempotency_keys (scope, key, request_hash, owner, locked_until, created_at, expires_at)
		SELECT u.scope, u.key, u.request_hash, u.owner, u.locked_until::timestamptz, u.created_at::timestamptz, u.expires_at::timestamptz
		FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
			WITH ORDINALITY AS u(scope, key, request_hash, owner, locked_until, created_at, expires_at, ord) CROSS JOIN async
		ORDER BY u.ord
		ON CONFLICT (scope, key) DO NOTHING
		RETURNING false AS response, scope, key`
	idemResponsesBody = `
		UPDATE idempotency_keys AS k
		SET completed = true, status_code = t.status, header = NULLIF(t.header, '')::jsonb,
			body = CASE WHEN t.body_null THEN NULL ELSE t.body END,
			expires_at = coalesce(NULLIF(t.expires_at, '')::timestamptz, k.expires_at)
		FROM (SELECT r.tid, u.* FROM unnest(?::text[], ?::text[], ?::int[], ?::text[], ?::bytea[], ?::bool[], ?::text[])
				AS u(scope, key, status, header, body, body_null, expires_at)
			CROSS JOIN LATERAL (SELECT f.ctid AS tid FROM idempotency_keys AS f
				WHERE f.scope = u.scope AND f.key = u.key AND NOT f.completed LIMIT 1) AS r) AS t
			CROSS JOIN async
		WHERE k.ctid = t.tid AND NOT k.completed
		RETURNING true AS response, k.scope, k.key`
)

// writeGroup inserts the claims whose keys are new and completes the
// unfinished rows of responses, in one statement, and reports which of
// each it wrote.
func (s *IdempotencyStore) writeGroup(claims []*idemBeginCall, responses []*idemCompleteCall) (claimed, stored map[string]bool, err error) {
	if len(claims) == 0 && len(responses) == 0 {
		return nil, nil, nil
	}
	var query string
	var args []any
	if len(claims) > 0 {
		query, args = idemInsertClaims, claimArgs(claims)
	}
	if len(responses) > 0 {
		rargs, err := responseArgs(responses)
		if err != nil {
			return nil, nil, fmt.Errorf("idempotency: group of %d claims, %d responses: %w", len(claims), len(responses), err)
		}
		query, args = idemStoreResponses, append(args, rargs...)
		if len(claims) > 0 {
			query = idemClaimsAndResponses
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), idemGroupTimeout)
	defer cancel()
	var got []struct {
		Response bool   `bun:"response"`
		Scope    string `bun:"scope"`
		Key      string `bun:"key"`
	}
	if err := s.stmts.query(ctx, s.db, &got, query, args...); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, nil, fmt.Errorf("idempotency: group of %d claims, %d responses: %w", len(claims), len(responses), err)
	}
	claimed, stored = make(map[string]bool, len(claims)), make(map[string]bool, len(responses))
	for _, g := range got {
		written := claimed
		if g.Response {
			written = stored
		}
		written[idemKey(g.Scope, g.Key)] = true
	}
	return claimed, stored, nil
}

// claimArgs are the arguments of idemClaimsBody for claims.
func claimArgs(claims []*idemBeginCall) []any {
	n := len(claims)
	scope, key, hash, owner, locked, created, expires := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, c := range claims {
		r := c.row
		scope[i], key[i], hash[i], owner[i] = r.Scope, r.Key, r.RequestHash, r.Owner
		locked[i], created[i], expires[i] = r.LockedUntil.Format(pgTimeLayout), r.CreatedAt.Format(pgTimeLayout), r.ExpiresAt.Format(pgTimeLayout)
	}
	return []any{textArray(scope), textArray(key), textArray(hash), textArray(owner), textArray(locked), textArray(created), textArray(expires)}
}

// responseArgs are the arguments of idemResponsesBody for responses.
func responseArgs(responses []*idemCompleteCall) ([]any, error) {
	n := len(responses)
	scope, key, header, expires := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	status, body, bodyNull := make([]string, n), make([]string, n), make([]string, n)
	for i, c := range responses {
		r := c.rec
		h, err := idemHeader(r.Header)
		if err != nil {
			return nil, err
		}
		if h != nil {
			header[i] = h.(string) // JSON text is never empty: "" stands for NULL
		}
		scope[i], key[i], status[i] = r.Scope, r.Key, strconv.Itoa(r.StatusCode)
		body[i], bodyNull[i] = `\x`+hex.EncodeToString(r.Body), strconv.FormatBool(r.Body == nil)
		if !r.ExpiresAt.IsZero() { // "" keeps the stored expiry
			expires[i] = ports.Stored(r.ExpiresAt).Format(pgTimeLayout)
		}
	}
	return []any{textArray(scope), textArray(key), textArray(status), textArray(header), textArray(body), textArray(bodyNull), textArray(expires)}, nil
}
