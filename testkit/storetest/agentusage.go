package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// RunAgentUsage is the contract suite of ports.AgentUsageStore: limits at,
// under and over, unlimited counters, day and month rollover, reservations
// counted once and given back once, agents apart, and concurrent
// reservations that never together pass a limit.
func RunAgentUsage(t *testing.T, newStore func(t *testing.T) ports.AgentUsageStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s ports.AgentUsageStore)
	}{
		{"Limits", testUsageLimits},
		{"Unlimited", testUsageUnlimited},
		{"ReserveOnce", testUsageReserveOnce},
		{"ReleaseOnce", testUsageReleaseOnce},
		{"Rollover", testUsageRollover},
		{"ReleaseAcrossPeriods", testUsageReleaseAcrossPeriods},
		{"LaggingClock", testUsageLaggingClock},
		{"AgentsApart", testUsageAgentsApart},
		{"Concurrent", testUsageConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

var usageNow = time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)

func usageLimit(v int64) *int64 { return &v }

func reserve(t *testing.T, s ports.AgentUsageStore, agent, action string, amount int64, at time.Time, lim ports.UsageLimits) (ports.AgentUsage, error) {
	t.Helper()
	return s.Reserve(context.Background(), ports.UsageReservation{ActionID: action, AgentID: agent, Amount: amount, At: at}, lim)
}

func counters(u ports.AgentUsage) [3]int64 {
	return [3]int64{u.DailyCount, u.DailySpend, u.MonthlySpend}
}

func testUsageLimits(t *testing.T, s ports.AgentUsageStore) {
	cases := []struct {
		name string
		lim  ports.UsageLimits
	}{
		{"daily spend", ports.UsageLimits{DailySpend: usageLimit(1000)}},
		{"monthly spend", ports.UsageLimits{MonthlySpend: usageLimit(1000)}},
	}
	for i, tc := range cases {
		agent := fmt.Sprintf("Agent:limits-%d", i)
		u, err := reserve(t, s, agent, agent+"/1", 600, usageNow, tc.lim)
		require.NoError(t, err, tc.name)
		assert.Equal(t, [3]int64{1, 600, 600}, counters(u), tc.name)
		// One over: refused, nothing changes, the numbers come back.
		u, err = reserve(t, s, agent, agent+"/2", 401, usageNow, tc.lim)
		require.ErrorIs(t, err, ports.ErrUsageLimit, tc.name)
		assert.Equal(t, [3]int64{1, 600, 600}, counters(u), tc.name)
		// At the limit: accepted.
		u, err = reserve(t, s, agent, agent+"/3", 400, usageNow, tc.lim)
		require.NoError(t, err, tc.name)
		assert.Equal(t, [3]int64{2, 1000, 1000}, counters(u), tc.name)
		// The refused action id was not recorded: it may be tried again.
		_, err = reserve(t, s, agent, agent+"/2", 1, usageNow, tc.lim)
		require.ErrorIs(t, err, ports.ErrUsageLimit, tc.name)
		_, err = reserve(t, s, agent, agent+"/4", 0, usageNow, tc.lim)
		require.NoError(t, err, tc.name)
	}
	// The count: at 2, the third is refused.
	lim := ports.UsageLimits{DailyCount: usageLimit(2)}
	for i := range 2 {
		_, err := reserve(t, s, "Agent:count", fmt.Sprint("count/", i), 1, usageNow, lim)
		require.NoError(t, err)
	}
	u, err := reserve(t, s, "Agent:count", "count/2", 1, usageNow, lim)
	require.ErrorIs(t, err, ports.ErrUsageLimit)
	assert.Equal(t, [3]int64{2, 2, 2}, counters(u))
	// A zero limit admits nothing with an amount, and a zero count nothing.
	_, err = reserve(t, s, "Agent:zero", "zero/1", 1, usageNow, ports.UsageLimits{DailySpend: usageLimit(0)})
	require.ErrorIs(t, err, ports.ErrUsageLimit)
	_, err = reserve(t, s, "Agent:zero", "zero/2", 0, usageNow, ports.UsageLimits{DailyCount: usageLimit(0)})
	require.ErrorIs(t, err, ports.ErrUsageLimit)
}

func testUsageUnlimited(t *testing.T, s ports.AgentUsageStore) {
	for i := range 3 {
		_, err := reserve(t, s, "Agent:free", fmt.Sprint("free/", i), 3_000_000_000_000_000, usageNow, ports.UsageLimits{})
		require.NoError(t, err)
	}
	u, err := s.Get(context.Background(), "Agent:free", usageNow)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{3, 9_000_000_000_000_000, 9_000_000_000_000_000}, counters(u))
	assert.Equal(t, "Agent:free", u.AgentID)
	assert.Equal(t, time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC), u.Day)
	assert.Equal(t, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), u.Month)

	none, err := s.Get(context.Background(), "Agent:nobody", usageNow)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{}, counters(none))
	assert.Equal(t, "Agent:nobody", none.AgentID)
}

func testUsageReserveOnce(t *testing.T, s ports.AgentUsageStore) {
	lim := ports.UsageLimits{DailySpend: usageLimit(100)}
	_, err := reserve(t, s, "Agent:once", "once/1", 100, usageNow, lim)
	require.NoError(t, err)
	// The same action again (a retried request): nothing added, no refusal.
	u, err := reserve(t, s, "Agent:once", "once/1", 100, usageNow, lim)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{1, 100, 100}, counters(u))
}

func testUsageReleaseOnce(t *testing.T, s ports.AgentUsageStore) {
	ctx := context.Background()
	lim := ports.UsageLimits{DailySpend: usageLimit(100), DailyCount: usageLimit(1)}
	_, err := reserve(t, s, "Agent:rel", "rel/1", 100, usageNow, lim)
	require.NoError(t, err)
	ok, err := s.Release(ctx, "rel/1")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = s.Release(ctx, "rel/1")
	require.NoError(t, err)
	assert.False(t, ok, "a reservation is given back once")
	ok, err = s.Release(ctx, "rel/unknown")
	require.NoError(t, err)
	assert.False(t, ok)
	u, err := s.Get(ctx, "Agent:rel", usageNow)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{0, 0, 0}, counters(u))
	// The room is free again; the released action id stays spent.
	_, err = reserve(t, s, "Agent:rel", "rel/2", 100, usageNow, lim)
	require.NoError(t, err)
	u, err = reserve(t, s, "Agent:rel", "rel/1", 100, usageNow, lim)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{1, 100, 100}, counters(u))
}

func testUsageRollover(t *testing.T, s ports.AgentUsageStore) {
	ctx := context.Background()
	lim := ports.UsageLimits{DailySpend: usageLimit(100), MonthlySpend: usageLimit(250), DailyCount: usageLimit(1)}
	day1 := time.Date(2026, 4, 28, 23, 59, 59, 0, time.UTC)
	_, err := reserve(t, s, "Agent:roll", "roll/1", 100, day1, lim)
	require.NoError(t, err)
	_, err = reserve(t, s, "Agent:roll", "roll/2", 1, day1, lim)
	require.ErrorIs(t, err, ports.ErrUsageLimit)
	// The next UTC day: the daily counters start again, the month goes on.
	day2 := day1.Add(time.Second)
	u, err := s.Get(ctx, "Agent:roll", day2)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{0, 0, 100}, counters(u))
	u, err = reserve(t, s, "Agent:roll", "roll/3", 100, day2, lim)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{1, 100, 200}, counters(u))
	// The month's limit binds before the day's.
	day3 := day2.Add(24 * time.Hour)
	u, err = reserve(t, s, "Agent:roll", "roll/4", 51, day3, lim)
	require.ErrorIs(t, err, ports.ErrUsageLimit)
	assert.Equal(t, [3]int64{0, 0, 200}, counters(u))
	// A new month starts every counter again.
	may := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	u, err = reserve(t, s, "Agent:roll", "roll/5", 100, may, lim)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{1, 100, 100}, counters(u))
	assert.Equal(t, may, u.Day)
	assert.Equal(t, may, u.Month)
}

func testUsageReleaseAcrossPeriods(t *testing.T, s ports.AgentUsageStore) {
	ctx := context.Background()
	day1 := time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC)
	_, err := reserve(t, s, "Agent:late", "late/1", 70, day1, ports.UsageLimits{})
	require.NoError(t, err)
	day2 := day1.Add(24 * time.Hour)
	_, err = reserve(t, s, "Agent:late", "late/2", 30, day2, ports.UsageLimits{})
	require.NoError(t, err)
	// Yesterday's action fails today: today's counters stay, the month's
	// gives it back.
	ok, err := s.Release(ctx, "late/1")
	require.NoError(t, err)
	require.True(t, ok)
	u, err := s.Get(ctx, "Agent:late", day2)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{1, 30, 30}, counters(u))
	// Last month's action gives nothing back to this month.
	may := time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)
	_, err = reserve(t, s, "Agent:late", "late/3", 5, may, ports.UsageLimits{})
	require.NoError(t, err)
	ok, err = s.Release(ctx, "late/2")
	require.NoError(t, err)
	require.True(t, ok)
	u, err = s.Get(ctx, "Agent:late", may)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{1, 5, 5}, counters(u))
}

func testUsageLaggingClock(t *testing.T, s ports.AgentUsageStore) {
	day2 := time.Date(2026, 4, 11, 0, 0, 1, 0, time.UTC)
	_, err := reserve(t, s, "Agent:lag", "lag/1", 10, day2, ports.UsageLimits{})
	require.NoError(t, err)
	// An instance whose clock still says yesterday adds to today's
	// counters rather than resetting them.
	u, err := reserve(t, s, "Agent:lag", "lag/2", 10, day2.Add(-2*time.Second), ports.UsageLimits{DailySpend: usageLimit(15)})
	require.ErrorIs(t, err, ports.ErrUsageLimit)
	assert.Equal(t, [3]int64{1, 10, 10}, counters(u))
}

func testUsageAgentsApart(t *testing.T, s ports.AgentUsageStore) {
	lim := ports.UsageLimits{DailySpend: usageLimit(100)}
	_, err := reserve(t, s, "Agent:a", "a/1", 100, usageNow, lim)
	require.NoError(t, err)
	u, err := reserve(t, s, "Agent:b", "b/1", 100, usageNow, lim)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{1, 100, 100}, counters(u))
}

// testUsageConcurrent: 40 reservations at once whose sum is far over the
// daily limit; the accepted ones sum to at most the limit, and the
// counters equal exactly what was accepted.
func testUsageConcurrent(t *testing.T, s ports.AgentUsageStore) {
	const n, limit = 40, 5_000
	lim := ports.UsageLimits{DailySpend: usageLimit(limit)}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		accepted int64
		count    int64
		errs     []error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			amount := int64(100 + 37*(i%9))
			_, err := s.Reserve(context.Background(), ports.UsageReservation{ActionID: fmt.Sprint("conc/", i), AgentID: "Agent:conc", Amount: amount, At: usageNow}, lim)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				accepted += amount
				count++
			case !errors.Is(err, ports.ErrUsageLimit):
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	require.Empty(t, errs)
	assert.LessOrEqual(t, accepted, int64(limit))
	assert.Greater(t, accepted, int64(limit-500), "refusals only once the limit is near")
	u, err := s.Get(context.Background(), "Agent:conc", usageNow)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{count, accepted, accepted}, counters(u))
}
