package agents_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	railsandbox "github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/coretest"
)

type env struct {
	*coretest.Env
	svc      *agents.Service
	platform string
	customer string
	exec     *fakeExecutor
}

// fakeExecutor records what the agents service asks of its Executor.
type fakeExecutor struct {
	mu       sync.Mutex
	svc      *agents.Service
	store    ports.Store
	clock    ports.Clock
	approved []string
	released []string
}

func (f *fakeExecutor) Approve(ctx context.Context, a ports.AgentAction) (ports.AgentAction, error) {
	f.mu.Lock()
	f.approved = append(f.approved, a.ID)
	f.mu.Unlock()
	err := f.store.InTx(ctx, func(tx ports.Tx) error {
		from := a.Status
		if err := agents.Move(&a, agents.StatusFailed, f.clock.Now()); err != nil {
			return err
		}
		return tx.AgentActions().Update(ctx, a, from)
	})
	return a, err
}

func (f *fakeExecutor) Release(_ context.Context, a ports.AgentAction) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = append(f.released, a.ID+":"+a.Status)
	return nil
}

func newEnv(t *testing.T) *env {
	b := coretest.Memory()
	c := coretest.New(t, b, railsandbox.Factory(b.Clock))
	e := &env{Env: c, svc: agents.New(c.Store, c.Clock, c.IDs, coretest.QuietLog())}
	e.svc.Register(e.Runner)
	e.platform = e.Platform("USD")
	cust, err := e.Customers.Create(context.Background(), e.platform, customers.Input{CustomerType: "INDIVIDUAL"})
	require.NoError(t, err)
	e.customer = cust.ID
	return e
}

func (e *env) agent(t *testing.T) agents.Created {
	t.Helper()
	c, err := e.svc.Create(context.Background(), e.platform, agents.CreateInput{Name: " Payer ", CustomerID: e.customer, Policy: []byte(`{}`)})
	require.NoError(t, err)
	return c
}

// The spec's AgentAction transitions, and nothing else.
func TestActionTransitions(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)
	allowed := map[string][]string{
		"":                 {agents.StatusPendingApproval, agents.StatusApproved},
		"PENDING_APPROVAL": {agents.StatusApproved, agents.StatusRejected, agents.StatusFailed},
		"APPROVED":         {agents.StatusFailed},
		"REJECTED":         nil,
		"FAILED":           nil,
	}
	for from, tos := range allowed {
		for _, to := range agents.ActionStatuses {
			a := ports.AgentAction{Status: from}
			err := agents.Move(&a, to, now)
			if slicesContains(tos, string(to)) {
				require.NoError(t, err, "%q → %s", from, to)
				assert.Equal(t, string(to), a.Status)
				assert.Equal(t, now.Truncate(time.Microsecond), a.UpdatedAt, "to the microsecond")
				continue
			}
			require.ErrorIs(t, err, status.ErrIllegal, "%q → %s", from, to)
			assert.Equal(t, from, a.Status, "a refused move changes nothing")
		}
	}
}

func slicesContains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

func TestNormalizeDeviceCode(t *testing.T) {
	for in, want := range map[string]string{
		"7KQ4-M2PX-9HTR":    "7KQ4-M2PX-9HTR",
		" 7kq4m2px9htr ":    "7KQ4-M2PX-9HTR",
		"7kq4 m2px 9htr":    "7KQ4-M2PX-9HTR",
		"7KQ4-M2PX-9HT":     "",
		"7KQ4-M2PX-9HTO":    "", // O is not in the alphabet
		"7KQ4-M2PX-9HTR-22": "",
	} {
		got, ok := agents.NormalizeDeviceCode(in)
		assert.Equal(t, want != "", ok, in)
		assert.Equal(t, want, got, in)
	}
}

// A code redeems until (not at) its expiry, once; the token it gives is
// the agent's until the agent is deleted.
func TestDeviceCodeLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.agent(t)
	assert.Equal(t, "Payer", c.Agent.Name, "trimmed")
	assert.Equal(t, c.Agent.CreatedAt.Add(agents.DeviceCodeLifetime), c.Code.ExpiresAt)

	e.Clock.Set(c.Code.ExpiresAt)
	_, err := e.svc.Redeem(ctx, c.Code.Code)
	testkit.RequireFault(t, err, fault.KindInvalid, agents.CodeExpired)

	next, err := e.svc.RegenerateCode(ctx, e.platform, c.Agent.ID)
	require.NoError(t, err)
	_, err = e.svc.Redeem(ctx, c.Code.Code)
	f := testkit.RequireFault(t, err, fault.KindNotFound, "REFERENCE_NOT_FOUND")
	assert.Equal(t, agents.ReasonDeviceCodeNotFound, f.Details["reason"])
	e.Clock.Set(next.ExpiresAt.Add(-time.Microsecond))
	r, err := e.svc.Redeem(ctx, strings.ToLower(next.Code))
	require.NoError(t, err)
	assert.True(t, r.Agent.IsConnected)
	_, err = e.svc.Redeem(ctx, next.Code)
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "code")
	st, err := e.svc.CodeStatus(ctx, e.platform, next.Code)
	require.NoError(t, err)
	assert.True(t, st.Redeemed)
	_, err = e.svc.RegenerateCode(ctx, e.platform, c.Agent.ID)
	testkit.RequireFault(t, err, fault.KindConflict, agents.CodeConnected)

	a, err := e.svc.Authenticate(ctx, r.AccessToken)
	require.NoError(t, err)
	assert.Equal(t, c.Agent.ID, a.ID)
	for _, bad := range []string{"", "agt_", r.AccessToken[:len(r.AccessToken)-1] + "x", strings.TrimPrefix(r.AccessToken, "agt_")} {
		_, err = e.svc.Authenticate(ctx, bad)
		testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")
	}
	require.NoError(t, e.svc.Delete(ctx, e.platform, c.Agent.ID))
	_, err = e.svc.Authenticate(ctx, r.AccessToken)
	testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")
}

func TestCreateAndUpdateRefuseBadInput(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.svc.Create(ctx, e.platform, agents.CreateInput{Name: "  ", CustomerID: e.customer})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "name")
	_, err = e.svc.Create(ctx, e.platform, agents.CreateInput{Name: "x", CustomerID: "Customer:nope"})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "customerId")
	other := e.Platform("USD")
	_, err = e.svc.Create(ctx, other, agents.CreateInput{Name: "x", CustomerID: e.customer})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "customerId")
	c := e.agent(t)
	_, err = e.svc.Update(ctx, e.platform, c.Agent.ID, agents.UpdateInput{})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "name", "isPaused")
	paused := true
	a, err := e.svc.Update(ctx, e.platform, c.Agent.ID, agents.UpdateInput{IsPaused: &paused})
	require.NoError(t, err)
	f := testkit.RequireFault(t, agents.Pausable(a), fault.KindForbidden, "FORBIDDEN")
	assert.Equal(t, agents.ReasonPaused, f.Details["reason"])
	_, err = e.svc.Update(ctx, other, c.Agent.ID, agents.UpdateInput{IsPaused: &paused})
	f = testkit.RequireFault(t, err, fault.KindNotFound, "REFERENCE_NOT_FOUND")
	assert.Equal(t, agents.ReasonAgentNotFound, f.Details["reason"])
}

// Approve goes to the Executor; Reject moves the action and queues its
// release, which runs once from the job queue; both only from
// PENDING_APPROVAL.
func TestDecisionsUseTheExecutor(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.exec = &fakeExecutor{svc: e.svc, store: e.Store, clock: e.Clock}
	e.svc.SetExecutor(e.exec)
	c := e.agent(t)
	submit := func() ports.AgentAction {
		act := e.svc.NewAction(c.Agent, "pc-1", agents.ActionTransferOut)
		act.Amount, act.Currency = 700, "USD"
		require.NoError(t, agents.Move(&act, agents.StatusPendingApproval, e.Clock.Now()))
		require.NoError(t, e.Store.InTx(ctx, func(tx ports.Tx) error { return e.svc.Submit(ctx, tx, act) }))
		return act
	}
	first, second, third := submit(), submit(), submit()
	evs, _, err := e.Store.Read().Events().List(ctx, ports.EventFilter{PlatformID: e.platform, Type: agents.EventPendingApproval}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, evs, 3, "each pending action records its event")

	got, err := e.svc.Approve(ctx, e.platform, c.Agent.ID, first.ID)
	require.NoError(t, err)
	assert.Equal(t, agents.StatusFailed, got.Status, "as the executor decided")
	assert.Equal(t, []string{first.ID}, e.exec.approved)
	_, err = e.svc.Approve(ctx, e.platform, c.Agent.ID, first.ID)
	testkit.RequireFault(t, err, fault.KindConflict, agents.CodeNotPending)

	got, err = e.svc.Reject(ctx, e.platform, c.Agent.ID, second.ID, "  no  ")
	require.NoError(t, err)
	assert.Equal(t, agents.StatusRejected, got.Status)
	assert.Equal(t, "no", got.RejectionReason)
	_, err = e.svc.Reject(ctx, e.platform, c.Agent.ID, second.ID, "")
	testkit.RequireFault(t, err, fault.KindConflict, agents.CodeNotPending)
	_, err = e.svc.Reject(ctx, e.platform, c.Agent.ID, second.ID, strings.Repeat("x", agents.MaxReasonLen+1))
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "reason")
	assert.Empty(t, e.exec.released, "released from the job queue, not inline")
	_, err = e.Runner.RunAll(ctx, 5)
	require.NoError(t, err)
	assert.Equal(t, []string{second.ID + ":REJECTED"}, e.exec.released)
	_, err = e.Runner.RunAll(ctx, 5)
	require.NoError(t, err)
	assert.Len(t, e.exec.released, 1, "once")
	got, err = e.svc.Reject(ctx, e.platform, c.Agent.ID, third.ID, " ")
	require.NoError(t, err)
	assert.Equal(t, agents.DefaultRejectionReason, got.RejectionReason, "set on every rejection, as the spec has it")

	_, err = e.svc.Approve(ctx, e.platform, "Agent:other", submit().ID)
	f := testkit.RequireFault(t, err, fault.KindNotFound, "REFERENCE_NOT_FOUND")
	assert.Equal(t, agents.ReasonAgentNotFound, f.Details["reason"])
}

// Without a UsageReader the counters are zero, and reset at the next UTC
// day and month.
func TestUsageResetDates(t *testing.T) {
	e := newEnv(t)
	e.Clock.Set(time.Date(2026, 1, 31, 23, 59, 0, 0, time.UTC))
	u, err := e.svc.Usage(context.Background(), ports.Agent{})
	require.NoError(t, err)
	assert.Equal(t, agents.Usage{DailyResetDate: "2026-02-01", MonthlyResetMonth: "2026-02"}, u)
	e.Clock.Set(time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC))
	u, _ = e.svc.Usage(context.Background(), ports.Agent{})
	assert.Equal(t, "2027-01", u.MonthlyResetMonth)
}

// A policy names only internal accounts of the agent's customer: another
// customer's, or one that does not exist, is 400 naming the field, on
// creation and on a policy change alike.
func TestPolicyNamesOnlyTheCustomersAccounts(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	other, err := e.Customers.Create(ctx, e.platform, customers.Input{CustomerType: "INDIVIDUAL"})
	require.NoError(t, err)
	own := e.InternalAccount(ports.InternalAccountFilter{PlatformID: e.platform, CustomerID: e.customer, Currency: "USD", Type: accounts.TypeInternalFiat})
	theirs := e.InternalAccount(ports.InternalAccountFilter{PlatformID: e.platform, CustomerID: other.ID, Currency: "USD", Type: accounts.TypeInternalFiat})
	allowed := func(ids ...string) []byte {
		b, err := json.Marshal(map[string]any{"accountRestrictions": map[string]any{"allowedAccountIds": ids}})
		require.NoError(t, err)
		return b
	}
	_, err = e.svc.Create(ctx, e.platform, agents.CreateInput{Name: "a", CustomerID: e.customer, Policy: allowed(own.ID, theirs.ID)})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "policy.accountRestrictions.allowedAccountIds[1]")

	// The reference's id form names the same account.
	refForm := "Account:" + strings.TrimPrefix(own.ID, "InternalAccount:")
	c, err := e.svc.Create(ctx, e.platform, agents.CreateInput{Name: "a", CustomerID: e.customer, Policy: allowed(refForm)})
	require.NoError(t, err)

	rules := []byte(`{"accountRestrictions":{"accountRules":[{"accountId":"` + theirs.ID + `"},` +
		`{"accountId":"InternalAccount:00000000-0000-4000-8000-000000000000"}]}}`)
	_, err = e.svc.SetPolicy(ctx, e.platform, c.Agent.ID, func([]byte) ([]byte, error) { return rules, nil })
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT",
		"policy.accountRestrictions.accountRules[0].accountId", "policy.accountRestrictions.accountRules[1].accountId")
	got, err := e.svc.Get(ctx, e.platform, c.Agent.ID)
	require.NoError(t, err)
	assert.JSONEq(t, string(allowed(refForm)), string(got.Policy), "the refused change left the policy as it was")
}
