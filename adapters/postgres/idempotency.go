package postgres

import (
	"context"
	"database/sql"
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

// idemAsyncCommit lets the transaction commit without waiting for its WAL
// flush. That is safe here because the idempotency table guards responses,
// not money: a money movement made under a key is an entry whose id is
// derived from the key, committed synchronously by the ledger. If the
// server crashes and loses a claim or a stored response written just
// before, a retry runs again and the ledger answers "already posted"
// instead of moving money twice. (PostgreSQL flushes WAL in order, so an
// idempotency write made before a synchronous ledger commit is durable
// with it.) It saves two fsyncs per keyed request.
func idemAsyncCommit(ctx context.Context, tx bun.Tx) error {
	if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		return fmt.Errorf("async commit: %w", err)
	}
	return nil
}

// idemBeginAttempts bounds Begin's insert-or-lock loop (a row released or
// purged between the insert and the lock sends it round again).
const idemBeginAttempts = 3

// Begin claims rec.Scope/rec.Key at now, atomically: it inserts the claim
// if the key is new; otherwise it locks the stored row and takes it over only
// when it is unfinished and its lease has passed.
func (s *IdempotencyStore) Begin(ctx context.Context, rec ports.IdempotencyRecord, now time.Time) (ports.IdempotencyRecord, bool, error) {
	var (
		out   ports.IdempotencyRecord
		owned bool
	)
	now = storeTime(now)
	for attempt := 1; ; attempt++ {
		found := false
		err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if err := idemAsyncCommit(ctx, tx); err != nil {
				return err
			}
			row := idemToRow(rec)
			res, err := tx.NewInsert().Model(&row).On("CONFLICT (scope, key) DO NOTHING").Exec(ctx)
			if err != nil {
				return fmt.Errorf("insert: %w", err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				found, out, owned = true, row.toPort(), true
				return nil
			}
			var stored idemRow
			err = tx.NewSelect().Model(&stored).Where("scope = ?", rec.Scope).Where("key = ?", rec.Key).For("UPDATE").Scan(ctx)
			if errors.Is(err, sql.ErrNoRows) {
				return nil // gone since the insert: go round again
			}
			if err != nil {
				return fmt.Errorf("lock: %w", err)
			}
			found = true
			if stored.Completed || stored.LockedUntil.After(now) {
				out, owned = stored.toPort(), false
				return nil
			}
			// The unfinished claim's lease has passed: take it over.
			stored.RequestHash = rec.RequestHash
			stored.LockedUntil = storeTime(rec.LockedUntil)
			stored.ExpiresAt = storeTime(rec.ExpiresAt)
			_, err = tx.NewUpdate().Model(&stored).Column("request_hash", "locked_until", "expires_at").WherePK().Exec(ctx)
			if err != nil {
				return fmt.Errorf("take over: %w", err)
			}
			out, owned = stored.toPort(), true
			return nil
		})
		if err != nil {
			return ports.IdempotencyRecord{}, false, fmt.Errorf("idempotency begin %s/%s: %w", rec.Scope, rec.Key, err)
		}
		if found {
			return out, owned, nil
		}
		if attempt == idemBeginAttempts {
			return ports.IdempotencyRecord{}, false, fmt.Errorf("idempotency begin %s/%s: key keeps vanishing", rec.Scope, rec.Key)
		}
	}
}

// Complete stores the response of an unfinished claim: ErrNotFound when
// the key is unknown, ErrConflict when it is already complete.
func (s *IdempotencyStore) Complete(ctx context.Context, rec ports.IdempotencyRecord) error {
	row := idemToRow(rec)
	var n int64
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := idemAsyncCommit(ctx, tx); err != nil {
			return err
		}
		q := tx.NewUpdate().Model(&row).Column("status_code", "header", "body").
			Set("completed = true").
			Where("scope = ?", rec.Scope).Where("key = ?", rec.Key).Where("NOT completed")
		if !rec.ExpiresAt.IsZero() {
			q = q.Column("expires_at")
		}
		res, err := q.Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
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

// Release drops an unfinished claim; a completed key stays.
func (s *IdempotencyStore) Release(ctx context.Context, scope, key string) error {
	_, err := s.db.NewDelete().Model((*idemRow)(nil)).
		Where("scope = ?", scope).Where("key = ?", key).Where("NOT completed").Exec(ctx)
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
