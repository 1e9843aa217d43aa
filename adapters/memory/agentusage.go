package memory

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/corridorpay/corridor/ports"
)

// AgentUsageStore is the in-memory ports.AgentUsageStore: one mutex makes
// every reservation atomic.
type AgentUsageStore struct {
	mu       sync.Mutex
	usage    map[string]ports.AgentUsage
	reserved map[string]agentReservation
}

type agentReservation struct {
	r        ports.UsageReservation
	released bool
}

var _ ports.AgentUsageStore = (*AgentUsageStore)(nil)

// NewAgentUsageStore returns an empty store.
func NewAgentUsageStore() *AgentUsageStore {
	return &AgentUsageStore{usage: map[string]ports.AgentUsage{}, reserved: map[string]agentReservation{}}
}

func (s *AgentUsageStore) current(agentID string, day time.Time) ports.AgentUsage {
	u, ok := s.usage[agentID]
	if !ok {
		u = ports.AgentUsage{AgentID: agentID}
	}
	return u.On(day)
}

// Reserve implements ports.AgentUsageStore.
func (s *AgentUsageStore) Reserve(_ context.Context, r ports.UsageReservation, lim ports.UsageLimits) (ports.AgentUsage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.current(r.AgentID, r.At)
	if _, ok := s.reserved[r.ActionID]; ok {
		return u, nil
	}
	if !u.Admits(r.Amount, lim) {
		return u, fmt.Errorf("reserve %d for %s: %w", r.Amount, r.ActionID, ports.ErrUsageLimit)
	}
	u.DailyCount++
	u.DailySpend += r.Amount
	u.MonthlySpend += r.Amount
	s.usage[r.AgentID] = u
	s.reserved[r.ActionID] = agentReservation{r: r}
	return u, nil
}

// Release implements ports.AgentUsageStore.
func (s *AgentUsageStore) Release(_ context.Context, actionID string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, ok := s.reserved[actionID]
	if !ok || res.released {
		return false, nil
	}
	res.released = true
	s.reserved[actionID] = res
	u, ok := s.usage[res.r.AgentID]
	if !ok {
		return true, nil
	}
	if u.Day.Equal(ports.UsageDay(res.r.At)) {
		u.DailyCount = max(0, u.DailyCount-1)
		u.DailySpend = max(0, u.DailySpend-res.r.Amount)
	}
	if u.Month.Equal(ports.UsageMonth(res.r.At)) {
		u.MonthlySpend = max(0, u.MonthlySpend-res.r.Amount)
	}
	s.usage[res.r.AgentID] = u
	return true, nil
}

// Get implements ports.AgentUsageStore.
func (s *AgentUsageStore) Get(_ context.Context, agentID string, day time.Time) (ports.AgentUsage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current(agentID, day), nil
}
