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

// ---- agents' usage counters (migrations/0035_agent_usage.sql) ----

// AgentUsageStore is ports.AgentUsageStore on PostgreSQL. A reservation is
// one short transaction: record the reservation (a repeated action id
// stops there), make sure the agent's row exists, then one conditional
// UPDATE that rolls the day and month over and adds the action only if
// every counter stays within its limit. The UPDATE takes the agent's row
// lock, so concurrent reservations of one agent, from any number of
// instances, are decided one after the other on committed counters; a
// refused one rolls its reservation row back.
type AgentUsageStore struct{ db *bun.DB }

var _ ports.AgentUsageStore = (*AgentUsageStore)(nil)

// NewAgentUsageStore returns the store on db (migrated).
func NewAgentUsageStore(db *bun.DB) *AgentUsageStore { return &AgentUsageStore{db: db} }

type agentUsageRow struct {
	AgentID      string `bun:"agent_id"`
	Day          string `bun:"day"` // YYYY-MM-DD (selected as text)
	Month        string `bun:"month"`
	DailyCount   int64  `bun:"daily_count"`
	DailySpend   int64  `bun:"daily_spend"`
	MonthlySpend int64  `bun:"monthly_spend"`
}

func (r agentUsageRow) toPort() (ports.AgentUsage, error) {
	day, err := time.Parse(time.DateOnly, r.Day)
	if err != nil {
		return ports.AgentUsage{}, fmt.Errorf("agent usage %s: day %q: %w", r.AgentID, r.Day, err)
	}
	month, err := time.Parse(time.DateOnly, r.Month)
	if err != nil {
		return ports.AgentUsage{}, fmt.Errorf("agent usage %s: month %q: %w", r.AgentID, r.Month, err)
	}
	return ports.AgentUsage{AgentID: r.AgentID, Day: day, Month: month,
		DailyCount: r.DailyCount, DailySpend: r.DailySpend, MonthlySpend: r.MonthlySpend}, nil
}

// The day and month columns are dates: they are passed as text so no time
// zone of the connection or driver can shift them.
func usageDate(t time.Time) string { return t.Format(time.DateOnly) }

var errUsageRefused = errors.New("refused")

// Reserve implements ports.AgentUsageStore.
func (s *AgentUsageStore) Reserve(ctx context.Context, r ports.UsageReservation, lim ports.UsageLimits) (ports.AgentUsage, error) {
	day, month := usageDate(ports.UsageDay(r.At)), usageDate(ports.UsageMonth(r.At))
	var after agentUsageRow
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO agent_usage_reservations (action_id, agent_id, amount, reserved_at)
			VALUES (?, ?, ?, ?) ON CONFLICT (action_id) DO NOTHING`, r.ActionID, r.AgentID, r.Amount, ports.Stored(r.At))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return sql.ErrNoRows // already reserved: nothing to add
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_usage (agent_id, day, month) VALUES (?, ?::date, ?::date)
			ON CONFLICT (agent_id) DO NOTHING`, r.AgentID, day, month); err != nil {
			return err
		}
		// cur: the counters rolled over to the reservation's day and month
		// (a later stored period is kept); the update applies only when
		// each limit (NULL: none) still holds with the action added.
		err = tx.QueryRowContext(ctx, `
			WITH cur AS (
				SELECT agent_id,
					GREATEST(day, ?1::date) AS day, GREATEST(month, ?2::date) AS month,
					CASE WHEN day >= ?1::date THEN daily_count ELSE 0 END AS daily_count,
					CASE WHEN day >= ?1::date THEN daily_spend ELSE 0 END AS daily_spend,
					CASE WHEN month >= ?2::date THEN monthly_spend ELSE 0 END AS monthly_spend
				FROM agent_usage WHERE agent_id = ?0 FOR UPDATE)
			UPDATE agent_usage u SET day = cur.day, month = cur.month,
				daily_count = cur.daily_count + 1,
				daily_spend = cur.daily_spend + ?3,
				monthly_spend = cur.monthly_spend + ?3
			FROM cur
			WHERE u.agent_id = cur.agent_id
				AND (?4::bigint IS NULL OR cur.daily_count + 1 <= ?4::bigint)
				AND (?5::bigint IS NULL OR cur.daily_spend + ?3 <= ?5::bigint)
				AND (?6::bigint IS NULL OR cur.monthly_spend + ?3 <= ?6::bigint)
			RETURNING u.agent_id, u.day::text, u.month::text, u.daily_count, u.daily_spend, u.monthly_spend`,
			r.AgentID, day, month, r.Amount, lim.DailyCount, lim.DailySpend, lim.MonthlySpend).
			Scan(&after.AgentID, &after.Day, &after.Month, &after.DailyCount, &after.DailySpend, &after.MonthlySpend)
		if errors.Is(err, sql.ErrNoRows) {
			return errUsageRefused
		}
		return err
	})
	switch {
	case err == nil:
		return after.toPort()
	case errors.Is(err, sql.ErrNoRows), errors.Is(err, errUsageRefused):
		u, gerr := s.Get(ctx, r.AgentID, r.At)
		if gerr != nil || errors.Is(err, sql.ErrNoRows) {
			return u, gerr
		}
		return u, fmt.Errorf("reserve %d for %s: %w", r.Amount, r.ActionID, ports.ErrUsageLimit)
	default:
		return ports.AgentUsage{}, fmt.Errorf("postgres: reserve agent usage %s: %w", r.ActionID, err)
	}
}

// Release implements ports.AgentUsageStore: one statement marks the
// reservation released (only once) and takes it off the counters of its
// day and month when those are still the counted ones.
func (s *AgentUsageStore) Release(ctx context.Context, actionID string) (bool, error) {
	var agentID string
	err := s.db.QueryRowContext(ctx, `
		WITH res AS (
			UPDATE agent_usage_reservations SET released_at = now()
			WHERE action_id = ? AND released_at IS NULL
			RETURNING agent_id, amount, (reserved_at AT TIME ZONE 'UTC')::date AS day),
		upd AS (
			UPDATE agent_usage u SET
				daily_count = CASE WHEN u.day = res.day THEN GREATEST(u.daily_count - 1, 0) ELSE u.daily_count END,
				daily_spend = CASE WHEN u.day = res.day THEN GREATEST(u.daily_spend - res.amount, 0) ELSE u.daily_spend END,
				monthly_spend = CASE WHEN u.month = date_trunc('month', res.day)::date
					THEN GREATEST(u.monthly_spend - res.amount, 0) ELSE u.monthly_spend END
			FROM res WHERE u.agent_id = res.agent_id)
		SELECT agent_id FROM res`, actionID).Scan(&agentID)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("postgres: release agent usage %s: %w", actionID, err)
	}
	return true, nil
}

// Get implements ports.AgentUsageStore.
func (s *AgentUsageStore) Get(ctx context.Context, agentID string, day time.Time) (ports.AgentUsage, error) {
	var row agentUsageRow
	err := s.db.QueryRowContext(ctx, `SELECT agent_id, day::text, month::text, daily_count, daily_spend, monthly_spend
		FROM agent_usage WHERE agent_id = ?`, agentID).
		Scan(&row.AgentID, &row.Day, &row.Month, &row.DailyCount, &row.DailySpend, &row.MonthlySpend)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.AgentUsage{AgentID: agentID}.On(day), nil
	}
	if err != nil {
		return ports.AgentUsage{}, fmt.Errorf("postgres: agent usage %s: %w", agentID, err)
	}
	u, err := row.toPort()
	return u.On(day), err
}
