package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/testkit"
)

// agentStory is one backend with a fake clock, a platform whose webhook
// endpoint records what it is sent, a funded payer, and a connected agent
// of the payer with an APPROVAL_REQUIRED policy.
type agentStory struct {
	env      *apiEnv
	clock    *testkit.FakeClock
	platform apiTarget
	agent    apiTarget
	hooks    *hookReceiver
	payer    payer
	agentID  string
}

func newAgentStory(t *testing.T, backend string) *agentStory {
	t.Helper()
	// Noon UTC today: the story moves the clock on by minutes, and the
	// agent's daily limits reset at UTC midnight, so a start late in the
	// day would cross it.
	clock := testkit.NewFakeClock(time.Now().UTC().Truncate(24 * time.Hour).Add(12 * time.Hour))
	env := newAPIEnvClock(t, backend, clock, func(*Config) {})
	srv := httptest.NewServer(env.handler)
	t.Cleanup(srv.Close)
	s := &agentStory{env: env, clock: clock, hooks: &hookReceiver{}}
	s.platform = apiTarget{bases: []string{srv.URL}, auth: env.auth}
	hooks := httptest.NewServer(s.hooks)
	t.Cleanup(hooks.Close)
	require.Equal(t, 200, s.platform.do(t, 0, "PATCH", "/config", fmt.Sprintf(`{"webhookEndpoint":%q}`, hooks.URL)).status)
	s.payer = newPayer(t, s.platform, "agent-owner@example.com")
	s.platform.created(t, "POST", "/sandbox/internal-accounts/"+s.payer.account+"/fund", `{"amount":100000}`)

	s.agentID, s.agent = s.connectAgent(t, "Shopping assistant")
	return s
}

// connectAgent creates an agent of the payer (the story's policy) and
// redeems its device code: the agent's id and its Bearer target.
func (s *agentStory) connectAgent(t *testing.T, name string) (string, apiTarget) {
	t.Helper()
	r := s.platform.do(t, 0, "POST", "/agents", fmt.Sprintf(`{"name":%q,"customerId":%q,"policy":{
		"permissions":["VIEW_TRANSACTIONS","CREATE_TRANSFERS","CREATE_QUOTES","EXECUTE_QUOTES"],
		"defaultExecutionMode":"APPROVAL_REQUIRED",
		"spendingLimits":{"currency":"USD","perTransactionLimit":50000,"dailyLimit":80000,"dailyTransactionLimit":10,"monthlyLimit":null}}}`,
		name, s.payer.customer))
	require.Equal(t, 201, r.status, "%s", r.body)
	created := r.json(t)
	id := created["agent"].(map[string]any)["id"].(string)
	code := created["deviceCode"].(map[string]any)["code"].(string)
	r = apiTarget{bases: s.platform.bases}.do(t, 0, "POST", "/agents/device-codes/"+code+"/redeem", "")
	require.Equal(t, 200, r.status, "%s", r.body)
	return id, apiTarget{bases: s.platform.bases, auth: "Bearer " + r.json(t)["accessToken"].(string)}
}

// quote creates a same-currency quote of amount from the payer's account
// to its external account, as the agent.
func (s *agentStory) quote(t *testing.T, amount int64) map[string]any {
	t.Helper()
	r := s.agent.do(t, 0, "POST", "/agents/me/quotes", fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},
		"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":%d}`,
		s.payer.account, s.payer.external, amount))
	require.Equal(t, 201, r.status, "%s", r.body)
	return r.json(t)
}

// execute submits the quote's execution as the agent: a PENDING_APPROVAL
// action without a transaction (the policy wants approval).
func (s *agentStory) execute(t *testing.T, quoteID string) map[string]any {
	t.Helper()
	key := "exec-" + quoteID
	r := s.agent.do(t, 0, "POST", "/agents/me/quotes/"+quoteID+"/execute", "", "Idempotency-Key", key)
	require.Equal(t, 200, r.status, "%s", r.body)
	act := r.json(t)
	assert.Equal(t, "PENDING_APPROVAL", act["status"])
	assert.Equal(t, "EXECUTE_QUOTE", act["type"])
	assert.NotContains(t, act, "transaction")
	assert.Equal(t, quoteID, act["quote"].(map[string]any)["id"])
	again := s.agent.do(t, 0, "POST", "/agents/me/quotes/"+quoteID+"/execute", "", "Idempotency-Key", key)
	assert.JSONEq(t, string(r.body), string(again.body), "a replay answers the first response")
	return act
}

// run runs the due jobs and webhook deliveries.
func (s *agentStory) run(t *testing.T) {
	t.Helper()
	for range 3 {
		_, err := s.env.svc.runner.RunAll(t.Context(), 100)
		require.NoError(t, err)
		_, err = s.env.svc.webhooks.RunAll(t.Context(), 100)
		require.NoError(t, err)
	}
}

// pendingHook is the AGENT_ACTION.PENDING_APPROVAL webhook of action id.
func (s *agentStory) pendingHook(t *testing.T, id string) map[string]any {
	t.Helper()
	s.run(t)
	got, _, _ := s.hooks.received()
	for _, e := range got {
		var data map[string]any
		if e.Type == "AGENT_ACTION.PENDING_APPROVAL" && json.Unmarshal(e.Data, &data) == nil && data["id"] == id {
			return data
		}
	}
	t.Fatalf("no AGENT_ACTION.PENDING_APPROVAL webhook for %s", id)
	return nil
}

func (s *agentStory) usage(t *testing.T) map[string]any {
	t.Helper()
	r := s.agent.do(t, 0, "GET", "/agents/me", "")
	require.Equal(t, 200, r.status, "%s", r.body)
	return r.json(t)["usage"].(map[string]any)
}

func (s *agentStory) action(t *testing.T, id string) map[string]any {
	t.Helper()
	r := s.agent.do(t, 0, "GET", "/agents/me/actions/"+id, "")
	require.Equal(t, 200, r.status, "%s", r.body)
	return r.json(t)
}

// The full story over HTTP, every answer checked against the reference:
// create agent -> redeem -> quote -> execute needing approval -> the
// webhook arrives -> the platform approves -> the transaction completes;
// the same rejected (no money moves, the hold released) and with the quote
// expiring before approval (FAILED).
func TestAgentQuoteApprovalStory(t *testing.T) {
	for _, backend := range []string{"memory", "postgres+redis"} {
		t.Run(backend, func(t *testing.T) {
			s := newAgentStory(t, backend)
			p, a := s.platform, s.agent

			t.Run("approved", func(t *testing.T) {
				q := s.quote(t, 30_000)
				act := s.execute(t, q["id"].(string))
				actionID := act["id"].(string)
				assert.Equal(t, int64(70_000), s.payer.balance(t, p), "the funds are held while the platform decides")
				hook := s.pendingHook(t, actionID)
				assert.Equal(t, "PENDING_APPROVAL", hook["status"])

				r := p.do(t, 0, "GET", "/agents/approvals", "")
				require.Equal(t, 200, r.status, "%s", r.body)
				assert.Contains(t, string(r.body), actionID)

				r = p.do(t, 0, "POST", "/agents/"+s.agentID+"/actions/"+actionID+"/approve", "")
				require.Equal(t, 200, r.status, "%s", r.body)
				approved := r.json(t)
				assert.Equal(t, "APPROVED", approved["status"])
				txn := approved["transaction"].(map[string]any)
				txID := txn["id"].(string)
				assert.Equal(t, q["transactionId"], txID)
				assert.Equal(t, s.agentID, txn["agentId"])
				r = p.do(t, 0, "POST", "/agents/"+s.agentID+"/actions/"+actionID+"/approve", "")
				assert.Equal(t, 409, r.status, "decided once: %s", r.body)

				for range 10 { // the payout's submission, then its rail's outcome
					s.clock.Advance(time.Minute)
					s.run(t)
				}
				r = a.do(t, 0, "GET", "/agents/me/transactions/"+txID, "")
				require.Equal(t, 200, r.status, "%s", r.body)
				assert.Equal(t, "COMPLETED", r.json(t)["status"])
				assert.Equal(t, int64(70_000), s.payer.balance(t, p))
				u := s.usage(t)
				assert.EqualValues(t, 1, u["dailyTransactionCount"])
				assert.EqualValues(t, 30_000, u["dailySpend"])
			})

			t.Run("rejected", func(t *testing.T) {
				q := s.quote(t, 20_000)
				act := s.execute(t, q["id"].(string))
				actionID := act["id"].(string)
				assert.Equal(t, int64(50_000), s.payer.balance(t, p))
				s.pendingHook(t, actionID)
				assert.EqualValues(t, 50_000, s.usage(t)["dailySpend"])

				r := p.do(t, 0, "POST", "/agents/"+s.agentID+"/actions/"+actionID+"/reject", `{"reason":"not this one"}`)
				require.Equal(t, 200, r.status, "%s", r.body)
				rejected := r.json(t)
				assert.Equal(t, "REJECTED", rejected["status"])
				assert.Equal(t, "not this one", rejected["rejectionReason"])
				assert.NotContains(t, rejected, "transaction")
				s.run(t)
				assert.Equal(t, int64(70_000), s.payer.balance(t, p), "no money moves: the hold is released")
				assert.EqualValues(t, 30_000, s.usage(t)["dailySpend"], "the usage is given back")
				r = a.do(t, 0, "GET", "/agents/me/quotes/"+q["id"].(string), "")
				require.Equal(t, 200, r.status, "%s", r.body)
				assert.Equal(t, "PENDING", r.json(t)["status"], "the quote was never executed")
			})

			t.Run("quote expires before approval", func(t *testing.T) {
				q := s.quote(t, 10_000)
				act := s.execute(t, q["id"].(string))
				actionID := act["id"].(string)
				assert.Equal(t, int64(60_000), s.payer.balance(t, p))
				expires, err := time.Parse(time.RFC3339, q["expiresAt"].(string))
				require.NoError(t, err)
				s.clock.Set(expires.Add(time.Second))
				s.run(t)
				assert.Equal(t, "FAILED", s.action(t, actionID)["status"])
				assert.Equal(t, int64(70_000), s.payer.balance(t, p), "the hold is released")
				assert.EqualValues(t, 30_000, s.usage(t)["dailySpend"])
				r := p.do(t, 0, "POST", "/agents/"+s.agentID+"/actions/"+actionID+"/approve", "")
				assert.Equal(t, 409, r.status, "%s", r.body)
			})

			t.Run("refusals", func(t *testing.T) {
				// Over the per-transaction limit: 403 naming the limit and
				// the numbers.
				r := a.do(t, 0, "POST", "/agents/me/transfer-out", s.payer.payout(50_001))
				require.Equal(t, 403, r.status, "%s", r.body)
				msg := r.json(t)["message"].(string)
				for _, part := range []string{"perTransactionLimit", "limit 50000", "requested 50001"} {
					assert.Contains(t, msg, part)
				}
				// The daily limit: 30000 used of 80000.
				r = a.do(t, 0, "POST", "/agents/me/transfer-out", s.payer.payout(50_000))
				require.Equal(t, 201, r.status, "%s", r.body)
				assert.Equal(t, "PENDING_APPROVAL", r.json(t)["status"])
				assert.Equal(t, "TRANSFER_OUT", r.json(t)["type"])
				r = a.do(t, 0, "POST", "/agents/me/transfer-out", s.payer.payout(1))
				require.Equal(t, 403, r.status, "%s", r.body)
				assert.Contains(t, r.json(t)["message"], "dailyLimit exceeded: limit 80000 USD, used 80000, requested 1")

				// Another customer's account and quote are 404.
				other := newPayer(t, p, "someone-else@example.com")
				r = a.do(t, 0, "POST", "/agents/me/transfer-out", other.payout(1))
				assert.Equal(t, 404, r.status, "%s", r.body)
				otherQuote := p.created(t, "POST", "/quotes", fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},
					"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":1000}`,
					other.account, other.external))
				r = a.do(t, 0, "GET", "/agents/me/quotes/"+otherQuote, "")
				assert.Equal(t, 404, r.status, "%s", r.body)
				r = a.do(t, 0, "POST", "/agents/me/quotes/"+otherQuote+"/execute", "")
				assert.Equal(t, 404, r.status, "%s", r.body)

				// So are the quotes of the same customer that the agent did
				// not create: the platform's and another agent's.
				quoteBody := fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},
					"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":1000}`,
					s.payer.account, s.payer.external)
				platformQuote := p.created(t, "POST", "/quotes", quoteBody)
				_, second := s.connectAgent(t, "Second assistant")
				secondQuote := second.created(t, "POST", "/agents/me/quotes", quoteBody)
				for _, id := range []string{platformQuote, secondQuote} {
					r = a.do(t, 0, "GET", "/agents/me/quotes/"+id, "")
					assert.Equal(t, 404, r.status, "%s", r.body)
					assert.Equal(t, "QUOTE_NOT_FOUND", r.json(t)["code"])
					r = a.do(t, 0, "POST", "/agents/me/quotes/"+id+"/execute", "")
					assert.Equal(t, 404, r.status, "%s", r.body)
				}
				r = second.do(t, 0, "GET", "/agents/me/quotes/"+secondQuote, "")
				assert.Equal(t, 200, r.status, "%s", r.body)

				// A paused agent initiates nothing, and still reads.
				require.Equal(t, 200, p.do(t, 0, "PATCH", "/agents/"+s.agentID, `{"isPaused":true}`).status)
				r = a.do(t, 0, "POST", "/agents/me/quotes", fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},
					"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":1000}`,
					s.payer.account, s.payer.external))
				assert.Equal(t, 403, r.status, "%s", r.body)
				assert.Equal(t, 200, a.do(t, 0, "GET", "/agents/me", "").status)
			})
			s.verifyLedger(t)
		})
	}
}

// verifyLedger checks the journal's invariants over everything posted.
func (s *agentStory) verifyLedger(t *testing.T) {
	t.Helper()
	res, err := s.env.be.reports.VerifyJournal(t.Context(), nil)
	require.NoError(t, err)
	require.True(t, res.OK(), "ledger verify: %+v", res.Breaks)
}

// 40 agent transfer-outs at once over HTTP, on PostgreSQL + Redis, whose
// sum would break the daily limit: the accepted ones (201, APPROVED under
// an AUTO policy) sum to at most the limit, the others are 403 naming
// dailyLimit, and the agent's usage and the account's balance equal what
// was accepted.
func TestAgentTransferOutsKeepTheDailyLimitOverHTTP(t *testing.T) {
	s := newAgentStory(t, "postgres+redis")
	r := s.platform.do(t, 0, "PATCH", "/agents/"+s.agentID+"/policy",
		`{"defaultExecutionMode":"AUTO","spendingLimits":{"dailyLimit":25000,"dailyTransactionLimit":null}}`)
	require.Equal(t, 200, r.status, "%s", r.body)
	const n = 40
	amount := func(i int) int64 { return int64(1_000 + 100*(i%5)) }
	replies := concurrently(n, func(i int) apiReply {
		return s.agent.do(t, 0, "POST", "/agents/me/transfer-out", s.payer.payout(amount(i)), "Idempotency-Key", fmt.Sprint("burst-", i))
	})
	var accepted, count int64
	for i, r := range replies {
		switch r.status {
		case 201:
			assert.Equal(t, "APPROVED", r.json(t)["status"])
			accepted += amount(i)
			count++
		case 403:
			assert.Contains(t, r.json(t)["message"], "spendingLimits.dailyLimit exceeded")
		default:
			t.Errorf("transfer-out %d: %d %s", i, r.status, r.body)
		}
	}
	assert.LessOrEqual(t, accepted, int64(25_000))
	assert.Greater(t, accepted, int64(25_000-1_500), "refused only once the limit is near")
	u := s.usage(t)
	assert.EqualValues(t, accepted, u["dailySpend"])
	assert.EqualValues(t, count, u["dailyTransactionCount"])
	assert.Equal(t, 100_000-accepted, s.payer.balance(t, s.platform))
	s.verifyLedger(t)
}
