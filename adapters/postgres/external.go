package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// ---- external accounts (migrations/0004_external_accounts_transactions_jobs.sql) ----

// storeExternalRow is an external_accounts row. accountInfo (with its
// beneficiary) is stored whole as jsonb.
type storeExternalRow struct {
	bun.BaseModel `bun:"table:external_accounts"`

	ID                            string            `bun:"id,pk"`
	PlatformID                    string            `bun:"platform_id"`
	CustomerID                    string            `bun:"customer_id"`
	Currency                      string            `bun:"currency"`
	Status                        string            `bun:"status"`
	PlatformAccountID             string            `bun:"platform_account_id"`
	OwnershipType                 string            `bun:"ownership_type"`
	Info                          ports.AccountInfo `bun:"info,type:jsonb"`
	DefaultUmaDepositAccount      bool              `bun:"default_uma_deposit_account"`
	BeneficiaryVerificationStatus string            `bun:"beneficiary_verification_status"`
	BeneficiaryVerifiedName       string            `bun:"beneficiary_verified_name"`
	IsDeleted                     bool              `bun:"is_deleted"`
	CreatedAt                     time.Time         `bun:"created_at"`
	UpdatedAt                     time.Time         `bun:"updated_at"`
}

func storeExternalToRow(a ports.ExternalAccount) storeExternalRow {
	return storeExternalRow{
		ID: a.ID, PlatformID: a.PlatformID, CustomerID: a.CustomerID, Currency: a.Currency, Status: a.Status,
		PlatformAccountID: a.PlatformAccountID, OwnershipType: a.OwnershipType,
		Info: a.Info, DefaultUmaDepositAccount: a.DefaultUmaDepositAccount,
		BeneficiaryVerificationStatus: a.BeneficiaryVerificationStatus, BeneficiaryVerifiedName: a.BeneficiaryVerifiedName,
		IsDeleted: a.IsDeleted, CreatedAt: ports.Stored(a.CreatedAt), UpdatedAt: ports.Stored(a.UpdatedAt),
	}
}

func (r storeExternalRow) toPort() ports.ExternalAccount {
	return ports.ExternalAccount{
		ID: r.ID, PlatformID: r.PlatformID, CustomerID: r.CustomerID, Currency: r.Currency, Status: r.Status,
		PlatformAccountID: r.PlatformAccountID, OwnershipType: r.OwnershipType,
		Info: r.Info, DefaultUmaDepositAccount: r.DefaultUmaDepositAccount,
		BeneficiaryVerificationStatus: r.BeneficiaryVerificationStatus, BeneficiaryVerifiedName: r.BeneficiaryVerifiedName,
		IsDeleted: r.IsDeleted, CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt),
	}
}

type storeExternals struct{ tx *storeTx }

// clearDefault, when a becomes its customer's default UMA deposit account,
// takes a transaction-scoped advisory lock on (platform, customer) and
// clears the previous default. The lock makes concurrent "make X default"
// units of work run one after the other: the second one's clearing
// statement starts after the first commits, so it sees (and clears) the
// first one's default, and exactly one default remains.
func (r storeExternals) clearDefault(ctx context.Context, a ports.ExternalAccount) error {
	if !a.DefaultUmaDepositAccount || a.IsDeleted {
		return nil
	}
	if _, err := r.tx.db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))",
		"external_accounts_default_uma|"+a.PlatformID+"|"+a.CustomerID); err != nil {
		return fmt.Errorf("lock default uma deposit account: %w", err)
	}
	_, err := r.tx.db.NewUpdate().Model((*storeExternalRow)(nil)).
		Set("default_uma_deposit_account = false").
		Where("platform_id = ?", a.PlatformID).Where("customer_id = ?", a.CustomerID).
		Where("default_uma_deposit_account AND NOT is_deleted").Where("id <> ?", a.ID).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("clear default uma deposit account: %w", err)
	}
	return nil
}

func (r storeExternals) Create(ctx context.Context, a ports.ExternalAccount) error {
	row := storeExternalToRow(a)
	_, err := r.tx.exec(ctx, "create external account "+a.ID, func(ctx context.Context) (sql.Result, error) {
		if err := r.clearDefault(ctx, a); err != nil {
			return nil, err
		}
		return r.tx.db.NewInsert().Model(&row).Exec(ctx)
	})
	return err
}

func (r storeExternals) Get(ctx context.Context, platformID, id string) (ports.ExternalAccount, error) {
	var row storeExternalRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ?", id).Where("platform_id = ?", platformID).Where("NOT is_deleted")
	if err := storeGet(ctx, q, "external account "+id); err != nil {
		return ports.ExternalAccount{}, err
	}
	return row.toPort(), nil
}

// Update replaces a live account of the platform (a deleted one is
// ErrNotFound).
func (r storeExternals) Update(ctx context.Context, a ports.ExternalAccount) error {
	row := storeExternalToRow(a)
	what := "update external account " + a.ID
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		if err := r.clearDefault(ctx, a); err != nil {
			return nil, err
		}
		return r.tx.db.NewUpdate().Model(&row).ExcludeColumn("id", "platform_id").
			WherePK().Where("platform_id = ?", a.PlatformID).Where("NOT is_deleted").Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

func storeExternalFilter(q *bun.SelectQuery, f ports.ExternalAccountFilter) *bun.SelectQuery {
	q = q.Where("platform_id = ?", f.PlatformID).Where("NOT is_deleted")
	q = storeOwnerFilter(q, f.CustomerID, f.PlatformOnly)
	if f.Currency != "" {
		q = q.Where("currency = ?", f.Currency)
	}
	return q
}

func (r storeExternals) List(ctx context.Context, f ports.ExternalAccountFilter, page ports.Page) ([]ports.ExternalAccount, int, error) {
	return storeList[storeExternalRow, ports.ExternalAccount](ctx, r.tx.db, func(q *bun.SelectQuery) *bun.SelectQuery { return storeExternalFilter(q, f) }, page, "external accounts")
}
