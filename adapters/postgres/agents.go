package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// ---- agents, device codes and actions (migrations/0030_agents.sql) ----

type storeAgentRow struct {
	bun.BaseModel `bun:"table:agents"`

	ID          string          `bun:"id,pk"`
	PlatformID  string          `bun:"platform_id"`
	CustomerID  string          `bun:"customer_id"`
	Name        string          `bun:"name"`
	IsPaused    bool            `bun:"is_paused"`
	IsConnected bool            `bun:"is_connected"`
	Policy      json.RawMessage `bun:"policy,type:jsonb"`
	TokenHash   []byte          `bun:"token_hash,nullzero"`
	CreatedAt   time.Time       `bun:"created_at"`
	UpdatedAt   time.Time       `bun:"updated_at"`
	DeletedAt   *time.Time      `bun:"deleted_at"`
}

func storeAgentToRow(a ports.Agent) storeAgentRow {
	policy := json.RawMessage(a.Policy)
	if len(policy) == 0 {
		policy = json.RawMessage("{}")
	}
	return storeAgentRow{ID: a.ID, PlatformID: a.PlatformID, CustomerID: a.CustomerID, Name: a.Name,
		IsPaused: a.IsPaused, IsConnected: a.IsConnected, Policy: policy, TokenHash: a.TokenHash,
		CreatedAt: ports.Stored(a.CreatedAt), UpdatedAt: ports.Stored(a.UpdatedAt), DeletedAt: ports.StoredPtr(a.DeletedAt)}
}

func (r storeAgentRow) toPort() ports.Agent {
	return ports.Agent{ID: r.ID, PlatformID: r.PlatformID, CustomerID: r.CustomerID, Name: r.Name,
		IsPaused: r.IsPaused, IsConnected: r.IsConnected, Policy: []byte(r.Policy), TokenHash: r.TokenHash,
		CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt), DeletedAt: ports.StoredPtr(r.DeletedAt)}
}

type storeDeviceCodeRow struct {
	bun.BaseModel `bun:"table:agent_device_codes"`

	CodeHash   []byte     `bun:"code_hash,pk"`
	AgentID    string     `bun:"agent_id"`
	PlatformID string     `bun:"platform_id"`
	ExpiresAt  time.Time  `bun:"expires_at"`
	RedeemedAt *time.Time `bun:"redeemed_at"`
	CreatedAt  time.Time  `bun:"created_at"`
}

func (r storeDeviceCodeRow) toPort() ports.AgentDeviceCode {
	return ports.AgentDeviceCode{CodeHash: r.CodeHash, AgentID: r.AgentID, PlatformID: r.PlatformID,
		ExpiresAt: ports.Stored(r.ExpiresAt), RedeemedAt: ports.StoredPtr(r.RedeemedAt), CreatedAt: ports.Stored(r.CreatedAt)}
}

func (tx *storeTx) Agents() ports.AgentRepo { return storeAgents{tx} }

type storeAgents struct{ tx *storeTx }

func (r storeAgents) Create(ctx context.Context, a ports.Agent) error {
	row := storeAgentToRow(a)
	return r.tx.insert(ctx, "create agent "+a.ID, &row)
}

func (r storeAgents) get(ctx context.Context, platformID, id, lock string) (ports.Agent, error) {
	var row storeAgentRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ? AND platform_id = ? AND deleted_at IS NULL", id, platformID)
	if lock != "" {
		q = q.For(lock)
	}
	if err := storeGet(ctx, q, "agent "+id); err != nil {
		return ports.Agent{}, err
	}
	return row.toPort(), nil
}

func (r storeAgents) Get(ctx context.Context, platformID, id string) (ports.Agent, error) {
	return r.get(ctx, platformID, id, "")
}

// GetForUpdate locks the row until the unit of work ends.
func (r storeAgents) GetForUpdate(ctx context.Context, platformID, id string) (ports.Agent, error) {
	return r.get(ctx, platformID, id, "UPDATE")
}

func (r storeAgents) ByTokenHash(ctx context.Context, hash []byte) (ports.Agent, error) {
	var row storeAgentRow
	q := r.tx.db.NewSelect().Model(&row).Where("token_hash = ? AND deleted_at IS NULL", hash)
	if err := storeGet(ctx, q, "agent token"); err != nil {
		return ports.Agent{}, err
	}
	return row.toPort(), nil
}

func (r storeAgents) List(ctx context.Context, f ports.AgentFilter, page ports.Page) ([]ports.Agent, int, error) {
	return storeList[storeAgentRow, ports.Agent](ctx, r.tx.db, func(q *bun.SelectQuery) *bun.SelectQuery {
		q = q.Where("platform_id = ? AND deleted_at IS NULL", f.PlatformID)
		if f.CustomerID != "" {
			q = q.Where("customer_id = ?", f.CustomerID)
		}
		if f.IsPaused != nil {
			q = q.Where("is_paused = ?", *f.IsPaused)
		}
		if f.IsConnected != nil {
			q = q.Where("is_connected = ?", *f.IsConnected)
		}
		return storeTimeBounds(q, f.CreatedAfter, f.CreatedBefore, f.UpdatedAfter, f.UpdatedBefore)
	}, page, "agents")
}

func (r storeAgents) Update(ctx context.Context, a ports.Agent) error {
	row := storeAgentToRow(a)
	what := "update agent " + a.ID
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model(&row).
			Column("name", "is_paused", "is_connected", "policy", "token_hash", "updated_at").
			WherePK().Where("platform_id = ? AND deleted_at IS NULL", a.PlatformID).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

func (r storeAgents) Delete(ctx context.Context, platformID, id string, at time.Time) error {
	what := "delete agent " + id
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model((*storeAgentRow)(nil)).
			Set("token_hash = NULL, updated_at = ?, deleted_at = ?", ports.Stored(at), ports.Stored(at)).
			Where("id = ? AND platform_id = ? AND deleted_at IS NULL", id, platformID).Exec(ctx)
	})
	if err != nil {
		return err
	}
	if err := storeUpdated(res, what); err != nil {
		return err
	}
	return r.DropUnredeemedCodes(ctx, id)
}

func (r storeAgents) CreateDeviceCode(ctx context.Context, c ports.AgentDeviceCode) error {
	row := storeDeviceCodeRow{CodeHash: c.CodeHash, AgentID: c.AgentID, PlatformID: c.PlatformID,
		ExpiresAt: ports.Stored(c.ExpiresAt), RedeemedAt: ports.StoredPtr(c.RedeemedAt), CreatedAt: ports.Stored(c.CreatedAt)}
	return r.tx.insert(ctx, "create device code", &row)
}

func (r storeAgents) DeviceCode(ctx context.Context, hash []byte) (ports.AgentDeviceCode, error) {
	var row storeDeviceCodeRow
	if err := storeGet(ctx, r.tx.db.NewSelect().Model(&row).Where("code_hash = ?", hash), "device code"); err != nil {
		return ports.AgentDeviceCode{}, err
	}
	return row.toPort(), nil
}

func (r storeAgents) DropUnredeemedCodes(ctx context.Context, agentID string) error {
	_, err := r.tx.exec(ctx, "drop device codes of "+agentID, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewDelete().Model((*storeDeviceCodeRow)(nil)).
			Where("agent_id = ? AND redeemed_at IS NULL", agentID).Exec(ctx)
	})
	return err
}

// RedeemDeviceCode is one conditional UPDATE: under READ COMMITTED a
// racing redeem of the same code waits for the first to commit, then
// re-checks redeemed_at and touches nothing.
func (r storeAgents) RedeemDeviceCode(ctx context.Context, hash []byte, at time.Time) (ports.AgentDeviceCode, error) {
	var rows []storeDeviceCodeRow
	_, err := r.tx.exec(ctx, "redeem device code", func(ctx context.Context) (sql.Result, error) {
		return nil, r.tx.db.NewUpdate().Model(&rows).Set("redeemed_at = ?", ports.Stored(at)).
			Where("code_hash = ? AND redeemed_at IS NULL AND expires_at > ?", hash, ports.Stored(at)).
			Returning("*").Scan(ctx)
	})
	if err != nil {
		return ports.AgentDeviceCode{}, err
	}
	if len(rows) == 1 {
		return rows[0].toPort(), nil
	}
	if _, err := r.DeviceCode(ctx, hash); err != nil {
		return ports.AgentDeviceCode{}, err
	}
	return ports.AgentDeviceCode{}, &ports.ConflictError{Constraint: ports.ConflictDeviceCodeSpent}
}

// ---- agent actions ----

type storeAgentActionRow struct {
	bun.BaseModel `bun:"table:agent_actions"`

	ID                   string    `bun:"id,pk"`
	PlatformID           string    `bun:"platform_id"`
	AgentID              string    `bun:"agent_id"`
	CustomerID           string    `bun:"customer_id"`
	PlatformCustomerID   string    `bun:"platform_customer_id"`
	Type                 string    `bun:"type"`
	Status               string    `bun:"status"`
	QuoteID              string    `bun:"quote_id"`
	TransactionID        string    `bun:"transaction_id"`
	Amount               int64     `bun:"amount"`
	Currency             string    `bun:"currency"`
	SourceAccountID      string    `bun:"source_account_id"`
	DestinationAccountID string    `bun:"destination_account_id"`
	Charged              int64     `bun:"charged"`
	RejectionReason      string    `bun:"rejection_reason"`
	CreatedAt            time.Time `bun:"created_at"`
	UpdatedAt            time.Time `bun:"updated_at"`
}

func storeAgentActionToRow(a ports.AgentAction) storeAgentActionRow {
	return storeAgentActionRow{ID: a.ID, PlatformID: a.PlatformID, AgentID: a.AgentID, CustomerID: a.CustomerID,
		PlatformCustomerID: a.PlatformCustomerID, Type: a.Type, Status: a.Status, QuoteID: a.QuoteID,
		TransactionID: a.TransactionID, Amount: a.Amount, Currency: a.Currency, SourceAccountID: a.SourceAccountID,
		DestinationAccountID: a.DestinationAccountID, Charged: a.Charged, RejectionReason: a.RejectionReason,
		CreatedAt: ports.Stored(a.CreatedAt), UpdatedAt: ports.Stored(a.UpdatedAt)}
}

func (r storeAgentActionRow) toPort() ports.AgentAction {
	return ports.AgentAction{ID: r.ID, PlatformID: r.PlatformID, AgentID: r.AgentID, CustomerID: r.CustomerID,
		PlatformCustomerID: r.PlatformCustomerID, Type: r.Type, Status: r.Status, QuoteID: r.QuoteID,
		TransactionID: r.TransactionID, Amount: r.Amount, Currency: r.Currency, SourceAccountID: r.SourceAccountID,
		DestinationAccountID: r.DestinationAccountID, Charged: r.Charged, RejectionReason: r.RejectionReason,
		CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt)}
}

func (tx *storeTx) AgentActions() ports.AgentActionRepo { return storeAgentActions{tx} }

type storeAgentActions struct{ tx *storeTx }

func (r storeAgentActions) Create(ctx context.Context, a ports.AgentAction) error {
	row := storeAgentActionToRow(a)
	return r.tx.insert(ctx, "create agent action "+a.ID, &row)
}

func (r storeAgentActions) Get(ctx context.Context, platformID, id string) (ports.AgentAction, error) {
	var row storeAgentActionRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ? AND platform_id = ?", id, platformID)
	if err := storeGet(ctx, q, "agent action "+id); err != nil {
		return ports.AgentAction{}, err
	}
	return row.toPort(), nil
}

func (r storeAgentActions) List(ctx context.Context, f ports.AgentActionFilter, page ports.Page) ([]ports.AgentAction, int, error) {
	filter := func(q *bun.SelectQuery) *bun.SelectQuery {
		q = q.Where("platform_id = ?", f.PlatformID)
		for _, c := range []struct{ cond, v string }{
			{"agent_id = ?", f.AgentID}, {"customer_id = ?", f.CustomerID}, {"status = ?", f.Status},
			{"transaction_id = ?", f.TransactionID},
		} {
			if c.v != "" {
				q = q.Where(c.cond, c.v)
			}
		}
		return storeTimeBounds(q, f.StartDate, f.EndDate, nil, nil)
	}
	total, err := filter(r.tx.db.NewSelect().Model((*storeAgentActionRow)(nil))).Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("count agent actions: %w", err)
	}
	var rows []storeAgentActionRow
	if err := storePage(filter(r.tx.db.NewSelect().Model(&rows)), page, f.Desc).Scan(ctx); err != nil {
		return nil, 0, fmt.Errorf("list agent actions: %w", err)
	}
	return storePorts[storeAgentActionRow, ports.AgentAction](rows), int(total), nil
}

// Update is one conditional UPDATE (see RedeemDeviceCode).
func (r storeAgentActions) Update(ctx context.Context, a ports.AgentAction, from string) error {
	row := storeAgentActionToRow(a)
	what := "update agent action " + a.ID
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model(&row).Column("status", "transaction_id", "charged", "rejection_reason", "updated_at").
			WherePK().Where("platform_id = ? AND status = ?", a.PlatformID, from).Exec(ctx)
	})
	return storeConditional(res, err, what, ports.ConflictAgentActionStatus, func() error {
		_, err := r.Get(ctx, a.PlatformID, a.ID)
		return err
	})
}
