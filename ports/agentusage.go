package ports

import (
	"context"
	"errors"
	"time"
)

// ErrUsageLimit is returned by AgentUsageStore.Reserve when the
// reservation would take a counter past its limit; nothing is reserved.
var ErrUsageLimit = errors.New("agent usage limit reached")

// AgentUsage is an agent's spending counters (core/agents/policy): the
// number of actions and the amount reserved on Day, and the amount
// reserved in Month, in minor units of the agent's policy currency.
type AgentUsage struct {
	AgentID string
	// Day is the UTC day the daily counters count (midnight UTC); Month
	// the first day of the UTC month the monthly counter counts.
	Day          time.Time
	Month        time.Time
	DailyCount   int64
	DailySpend   int64
	MonthlySpend int64
}

// UsageDay is the UTC day of t (midnight UTC); UsageMonth its month's
// first day.
func UsageDay(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// UsageMonth is the first day of t's UTC month.
func UsageMonth(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// On returns the counters as they stand on day: a counter of an earlier
// day (or month) starts again from zero. A later stored day is kept (an
// instance whose clock lags never resets what a faster one counted).
func (u AgentUsage) On(day time.Time) AgentUsage {
	day = UsageDay(day)
	month := UsageMonth(day)
	if u.Day.Before(day) {
		u.Day, u.DailyCount, u.DailySpend = day, 0, 0
	}
	if u.Month.Before(month) {
		u.Month, u.MonthlySpend = month, 0
	}
	return u
}

// UsageLimits are the bounds a reservation must stay within; nil is no
// limit.
type UsageLimits struct {
	DailyCount   *int64
	DailySpend   *int64
	MonthlySpend *int64
}

// Admits reports whether adding one action of amount keeps every counter
// within lim. u must already be On the reservation's day.
func (u AgentUsage) Admits(amount int64, lim UsageLimits) bool {
	within := func(used, add int64, limit *int64) bool { return limit == nil || used <= *limit-add }
	return within(u.DailyCount, 1, lim.DailyCount) && within(u.DailySpend, amount, lim.DailySpend) &&
		within(u.MonthlySpend, amount, lim.MonthlySpend)
}

// UsageReservation is one agent action's share of its agent's usage,
// keyed by the action: reserved once, given back at most once.
type UsageReservation struct {
	ActionID string
	AgentID  string
	// Amount is in minor units of the policy currency (>= 0).
	Amount int64
	// At is when the action was submitted: its day and month are the
	// counters it is added to.
	At time.Time
}

// AgentUsageStore keeps agents' usage counters and their reservations.
// Its operations are atomic across every instance sharing the store:
// concurrent reservations never together take a counter past its limit.
type AgentUsageStore interface {
	// Reserve adds one action of r.Amount to the agent's counters on r.At's
	// day and month (counters of an earlier period restart at zero) when
	// every counter stays within lim, and records the reservation, in one
	// atomic step. It returns the usage after it. When a counter would pass
	// its limit nothing changes and it returns the usage as it stands with
	// an error wrapping ErrUsageLimit. A reservation whose ActionID is
	// already recorded (released or not) changes nothing and succeeds.
	Reserve(ctx context.Context, r UsageReservation, lim UsageLimits) (AgentUsage, error)
	// Release gives a reservation back: its amount and count leave the
	// counters of its day and month if those are still being counted. It
	// reports whether this call released it (false when already released
	// or unknown).
	Release(ctx context.Context, actionID string) (bool, error)
	// Get returns the agent's counters On day (zero for an agent that has
	// reserved nothing).
	Get(ctx context.Context, agentID string, day time.Time) (AgentUsage, error)
}
