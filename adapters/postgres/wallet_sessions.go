package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

type storeSessionRow struct {
	bun.BaseModel `bun:"table:wallet_sessions"`

	ID           string     `bun:"id,pk"`
	PlatformID   string     `bun:"platform_id"`
	AccountID    string     `bun:"account_id"`
	CredentialID string     `bun:"credential_id"`
	PublicKey    string     `bun:"public_key"`
	CreatedAt    time.Time  `bun:"created_at"`
	ExpiresAt    time.Time  `bun:"expires_at"`
	RevokedAt    *time.Time `bun:"revoked_at"`
}

func (r storeSessionRow) toPort() ports.WalletSession {
	return ports.WalletSession{ID: r.ID, PlatformID: r.PlatformID, AccountID: r.AccountID, CredentialID: r.CredentialID,
		PublicKey: r.PublicKey, CreatedAt: ports.Stored(r.CreatedAt), ExpiresAt: ports.Stored(r.ExpiresAt), RevokedAt: ports.StoredPtr(r.RevokedAt)}
}

type storeSessions struct{ tx *storeTx }

func (tx *storeTx) WalletSessions() ports.WalletSessionRepo { return storeSessions{tx} }

func (r storeSessions) Create(ctx context.Context, s ports.WalletSession) error {
	row := storeSessionRow{ID: s.ID, PlatformID: s.PlatformID, AccountID: s.AccountID, CredentialID: s.CredentialID,
		PublicKey: s.PublicKey, CreatedAt: ports.Stored(s.CreatedAt), ExpiresAt: ports.Stored(s.ExpiresAt), RevokedAt: ports.StoredPtr(s.RevokedAt)}
	return r.tx.insert(ctx, "create session "+s.ID, &row)
}

func (r storeSessions) Get(ctx context.Context, platformID, id string) (ports.WalletSession, error) {
	var row storeSessionRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ?", id).Where("platform_id = ?", platformID)
	if err := storeGet(ctx, q, "session "+id); err != nil {
		return ports.WalletSession{}, err
	}
	return row.toPort(), nil
}

func (r storeSessions) Active(ctx context.Context, platformID, accountID string, now time.Time) ([]ports.WalletSession, error) {
	var rows []storeSessionRow
	err := r.tx.db.NewSelect().Model(&rows).
		Where("account_id = ?", accountID).Where("platform_id = ?", platformID).
		Where("revoked_at IS NULL").Where("expires_at > ?", now).
		OrderExpr("created_at, id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("active sessions of %s: %w", accountID, err)
	}
	out := make([]ports.WalletSession, len(rows))
	for i, row := range rows {
		out[i] = row.toPort()
	}
	return out, nil
}

func (r storeSessions) Revoke(ctx context.Context, platformID, id string, at time.Time) error {
	what := "revoke session " + id
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model((*storeSessionRow)(nil)).
			Set("revoked_at = coalesce(revoked_at, ?)", ports.Stored(at)).
			Where("id = ?", id).Where("platform_id = ?", platformID).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

func (r storeSessions) RevokeCredential(ctx context.Context, platformID, credentialID string, at time.Time) error {
	_, err := r.tx.exec(ctx, "revoke sessions of "+credentialID, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model((*storeSessionRow)(nil)).Set("revoked_at = ?", ports.Stored(at)).
			Where("credential_id = ?", credentialID).Where("platform_id = ?", platformID).
			Where("revoked_at IS NULL").Exec(ctx)
	})
	return err
}

type storeSecretRow struct {
	bun.BaseModel `bun:"table:wallet_secrets"`

	AccountID  string    `bun:"account_id,pk"`
	PlatformID string    `bun:"platform_id"`
	Sealed     []byte    `bun:"sealed"`
	CreatedAt  time.Time `bun:"created_at"`
}

type storeSecrets struct{ tx *storeTx }

func (tx *storeTx) WalletSecrets() ports.WalletSecretRepo { return storeSecrets{tx} }

func (r storeSecrets) Create(ctx context.Context, s ports.WalletSecret) error {
	row := storeSecretRow{AccountID: s.AccountID, PlatformID: s.PlatformID, Sealed: s.Sealed, CreatedAt: ports.Stored(s.CreatedAt)}
	return r.tx.insert(ctx, "create wallet secret of "+s.AccountID, &row)
}

func (r storeSecrets) Get(ctx context.Context, platformID, accountID string) (ports.WalletSecret, error) {
	var row storeSecretRow
	q := r.tx.db.NewSelect().Model(&row).Where("account_id = ?", accountID).Where("platform_id = ?", platformID)
	if err := storeGet(ctx, q, "wallet secret of "+accountID); err != nil {
		return ports.WalletSecret{}, err
	}
	return ports.WalletSecret{PlatformID: row.PlatformID, AccountID: row.AccountID, Sealed: row.Sealed, CreatedAt: ports.Stored(row.CreatedAt)}, nil
}
