package policy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// Usage is an agent's counters as the agent shows them (AgentUsage):
// today's actions and spend and this month's spend, in minor units of the
// policy currency, with the UTC day and month when they start again.
type Usage struct {
	DailyTransactionCount int64  `json:"dailyTransactionCount"`
	DailySpend            int64  `json:"dailySpend"`
	MonthlySpend          int64  `json:"monthlySpend"`
	DailyResetDate        string `json:"dailyResetDate,omitempty" format:"date" doc:"The UTC day the daily counters start again"`
	MonthlyResetMonth     string `json:"monthlyResetMonth,omitempty" doc:"The UTC month (YYYY-MM) the monthly counter starts again"`
}

// ViewUsage renders counters (already On the current day).
func ViewUsage(u ports.AgentUsage) Usage {
	return Usage{
		DailyTransactionCount: u.DailyCount, DailySpend: u.DailySpend, MonthlySpend: u.MonthlySpend,
		DailyResetDate:    u.Day.AddDate(0, 0, 1).Format(time.DateOnly),
		MonthlyResetMonth: u.Month.AddDate(0, 1, 0).Format("2006-01"),
	}
}

// UsageLimits are the policy's bounds on the usage counters.
func (p Policy) UsageLimits() ports.UsageLimits {
	l := p.SpendingLimits
	return ports.UsageLimits{DailyCount: l.DailyTransactionLimit, DailySpend: l.DailyLimit, MonthlySpend: l.MonthlyLimit}
}

// Meter decides agents' requests and keeps their usage: the policy's
// answer, then the action's reservation in the usage store, which holds
// every counter within its limit atomically however many instances
// reserve at once.
type Meter struct {
	Store ports.AgentUsageStore
	Clock ports.Clock
}

// Usage returns an agent's counters today.
func (m Meter) Usage(ctx context.Context, agentID string) (Usage, error) {
	u, err := m.Store.Get(ctx, agentID, m.Clock.Now())
	if err != nil {
		return Usage{}, err
	}
	return ViewUsage(u), nil
}

// Admit decides req (Policy.Decide) and, for an operation that moves
// money, reserves it in the agent's usage under actionID, today: a 403
// naming the limit and its numbers when the daily count, daily spend or
// monthly spend would pass its limit. Admitting the same actionID again
// reserves nothing more (a retried request). A reservation stays until
// GiveBack.
func (m Meter) Admit(ctx context.Context, agentID, actionID string, p Policy, req Request, conv Converter) (Decision, error) {
	d, err := p.Decide(req, conv)
	if err != nil || !req.Operation.Moves() {
		return d, err
	}
	r := ports.UsageReservation{ActionID: actionID, AgentID: agentID, Amount: d.Amount, At: m.Clock.Now()}
	for attempt := 0; ; attempt++ {
		u, err := m.Store.Reserve(ctx, r, p.UsageLimits())
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, ports.ErrUsageLimit) {
			return Decision{}, fmt.Errorf("policy: reserve %s: %w", actionID, err)
		}
		// The counters returned with a refusal are read after it: a
		// reservation given back meanwhile may have made room, so try again.
		if refused := p.refusal(u, d.Amount); refused != nil || attempt == 2 {
			if refused == nil {
				refused = Exceeded(ReasonDaily, "spendingLimits", p.SpendingLimits.Currency, 0, u.DailySpend, d.Amount)
			}
			return Decision{}, refused
		}
	}
}

// GiveBack returns an action's reservation to its agent's usage (a
// rejected or failed action); at most once, however often it is called.
func (m Meter) GiveBack(ctx context.Context, actionID string) error {
	if _, err := m.Store.Release(ctx, actionID); err != nil {
		return fmt.Errorf("policy: give back %s: %w", actionID, err)
	}
	return nil
}

// refusal names the first limit the usage u leaves no room in (nil when
// u has room).
func (p Policy) refusal(u ports.AgentUsage, amount int64) *fault.Error {
	l, cur := p.SpendingLimits, p.SpendingLimits.Currency
	switch {
	case l.DailyTransactionLimit != nil && u.DailyCount+1 > *l.DailyTransactionLimit:
		return Exceeded(ReasonDailyCount, "spendingLimits.dailyTransactionLimit", cur, *l.DailyTransactionLimit, u.DailyCount, 1)
	case l.DailyLimit != nil && u.DailySpend+amount > *l.DailyLimit:
		return Exceeded(ReasonDaily, "spendingLimits.dailyLimit", cur, *l.DailyLimit, u.DailySpend, amount)
	case l.MonthlyLimit != nil && u.MonthlySpend+amount > *l.MonthlyLimit:
		return Exceeded(ReasonMonthly, "spendingLimits.monthlyLimit", cur, *l.MonthlyLimit, u.MonthlySpend, amount)
	}
	return nil
}
