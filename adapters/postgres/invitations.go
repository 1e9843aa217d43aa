package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// ---- UMA invitations (migrations/0023_invitations.sql) ----

type storeInvitationRow struct {
	bun.BaseModel `bun:"table:invitations"`

	Code         string    `bun:"code,pk"`
	PlatformID   string    `bun:"platform_id"`
	InviterUma   string    `bun:"inviter_uma"`
	FirstName    string    `bun:"first_name"`
	AmountToSend int64     `bun:"amount_to_send"`
	Currency     string    `bun:"currency"`
	URL          string    `bun:"url"`
	Status       string    `bun:"status"`
	InviteeUma   string    `bun:"invitee_uma"`
	ClaimedAt    time.Time `bun:"claimed_at,nullzero"`
	ExpiresAt    time.Time `bun:"expires_at,nullzero"`
	CreatedAt    time.Time `bun:"created_at"`
	UpdatedAt    time.Time `bun:"updated_at"`
}

func storeInvitationToRow(inv ports.Invitation) storeInvitationRow {
	return storeInvitationRow{
		Code: inv.Code, PlatformID: inv.PlatformID, InviterUma: inv.InviterUma, FirstName: inv.FirstName,
		AmountToSend: inv.AmountToSend, Currency: inv.Currency, URL: inv.URL, Status: inv.Status, InviteeUma: inv.InviteeUma,
		ClaimedAt: ports.Stored(inv.ClaimedAt), ExpiresAt: ports.Stored(inv.ExpiresAt),
		CreatedAt: ports.Stored(inv.CreatedAt), UpdatedAt: ports.Stored(inv.UpdatedAt),
	}
}

func (r storeInvitationRow) toPort() ports.Invitation {
	return ports.Invitation{
		Code: r.Code, PlatformID: r.PlatformID, InviterUma: r.InviterUma, FirstName: r.FirstName,
		AmountToSend: r.AmountToSend, Currency: r.Currency, URL: r.URL, Status: r.Status, InviteeUma: r.InviteeUma,
		ClaimedAt: ports.Stored(r.ClaimedAt), ExpiresAt: ports.Stored(r.ExpiresAt),
		CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt),
	}
}

func (tx *storeTx) Invitations() ports.InvitationRepo { return storeInvitations{tx} }

type storeInvitations struct{ tx *storeTx }

func (r storeInvitations) Create(ctx context.Context, inv ports.Invitation) error {
	row := storeInvitationToRow(inv)
	return r.tx.insert(ctx, "create invitation "+inv.Code, &row)
}

func (r storeInvitations) Get(ctx context.Context, code string) (ports.Invitation, error) {
	var row storeInvitationRow
	q := r.tx.db.NewSelect().Model(&row).Where("code = ?", code)
	if err := storeGet(ctx, q, "invitation "+code); err != nil {
		return ports.Invitation{}, err
	}
	return row.toPort(), nil
}

// Update is one conditional UPDATE: under READ COMMITTED a racing update
// of the same row waits for the first to commit, then re-checks the
// status and touches nothing.
func (r storeInvitations) Update(ctx context.Context, inv ports.Invitation, from string) error {
	row := storeInvitationToRow(inv)
	what := "update invitation " + inv.Code
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model(&row).Column("status", "invitee_uma", "claimed_at", "updated_at").
			WherePK().Where("status = ?", from).Exec(ctx)
	})
	return storeConditional(res, err, what, ports.ConflictInvitationStatus, func() error {
		_, err := r.Get(ctx, inv.Code)
		return err
	})
}
