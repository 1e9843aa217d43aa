package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// IdempotencyStore is ports.IdempotencyStore on the idempotency_keys table
// (migrations/0003_business.sql): the authoritative record of every
// Idempotency-Key.
type IdempotencyStore struct {
	db *bun.DB
}

var _ ports.IdempotencyStore = (*IdempotencyStore)(nil)

// NewIdempotencyStore returns the store on db (migrated).
func NewIdempotencyStore(db *bun.DB) *IdempotencyStore { return &IdempotencyStore{db: db} }

type idemRow struct {
	bun.BaseModel `bun:"table:idempotency_keys"`

	Scope       string            `bun:"scope,pk"`
	Key         string            `bun:"key,pk"`
	RequestHash string            `bun:"request_hash"`
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
		Scope: r.Scope, Key: r.Key, RequestHash: r.RequestHash, Completed: r.Completed,
		StatusCode: r.StatusCode, Header: r.Header, Body: r.Body,
		LockedUntil: storeTime(r.LockedUntil), CreatedAt: storeTime(r.CreatedAt), ExpiresAt: storeTime(r.ExpiresAt),
	}
}

func (r idemRow) toPort() ports.IdempotencyRecord {
	return ports.IdempotencyRecord{
		Scope: r.Scope, Key: r.Key, RequestHash: r.RequestHash, Completed: r.Completed,
		StatusCode: r.StatusCode, Header: r.Header, Body: r.Body,
		LockedUntil: storeTime(r.LockedUntil), CreatedAt: storeTime(r.CreatedAt), ExpiresAt: storeTime(r.ExpiresAt),
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
const idemColumns = `scope, key, request_hash, completed, status_code, header, body, locked_until, created_at, expires_at`

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
	row := idemToRow(rec)
	header, err := idemHeader(row.Header)
	if err != nil {
		return ports.IdempotencyRecord{}, false, fmt.Errorf("idempotency begin %s/%s: %w", rec.Scope, rec.Key, err)
	}
	now = storeTime(now)
	for attempt := 1; ; attempt++ {
		var claimed []idemRow
		err := s.db.NewRaw(idemAsync+`
			INSERT INTO idempotency_keys AS k (`+idemColumns+`)
			SELECT ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ? FROM async
			ON CONFLICT (scope, key) DO UPDATE
				SET request_hash = excluded.request_hash, locked_until = excluded.locked_until, expires_at = excluded.expires_at
				WHERE NOT k.completed AND k.locked_until <= ?
			RETURNING `+idemColumns,
			row.Scope, row.Key, row.RequestHash, row.Completed, row.StatusCode, header, row.Body,
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

// Release drops an unfinished claim; a completed key stays. (Lost in a
// crash, the claim only lapses after its lease.)
func (s *IdempotencyStore) Release(ctx context.Context, scope, key string) error {
	_, err := s.db.NewRaw(idemAsync+`
		DELETE FROM idempotency_keys AS k USING async
		WHERE k.scope = ? AND k.key = ? AND NOT k.completed`, scope, key).Exec(ctx)
	if err != nil {
		return fmt.Errorf("idempotency release %s/%s: %w", scope, key, err)
	}
	return nil
}

// Purge forgets keys whose ExpiresAt is before now.
func (s *IdempotencyStore) Purge(ctx context.Context, now time.Time) (int, error) {
	res, err := s.db.NewDelete().Model((*idemRow)(nil)).Where("expires_at < ?", storeTime(now)).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("idempotency purge: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("idempotency purge: %w", err)
	}
	return int(n), nil
}
