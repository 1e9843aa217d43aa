package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/externalfixture"
)

// agentWorld is a platform with two customers (each funded, with an
// external account and a payout) and an agent for the first.
type agentWorld struct {
	env           *apiEnv
	platform      apiTarget
	cust, other   string
	acct, otherAc string
	ext, otherExt string
	tx, otherTx   string
	agentID, code string
}

func newAgentWorld(t *testing.T, backend string) *agentWorld {
	env := newAPIEnv(t, backend)
	srv := httptest.NewServer(env.handler)
	t.Cleanup(srv.Close)
	w := &agentWorld{env: env, platform: apiTarget{bases: []string{srv.URL}, auth: env.auth}}
	a := w.platform
	setup := func(name string) (cust, acct, ext, tx string) {
		cust = a.created(t, "POST", "/customers", fmt.Sprintf(`{"customerType":"INDIVIDUAL","region":"US","email":"%s@example.com"}`, name))
		r := a.do(t, 0, "GET", "/customers/internal-accounts?customerId="+cust+"&type=INTERNAL_FIAT&currency=USD", "")
		require.Equal(t, 200, r.status, "%s", r.body)
		acct = r.json(t)["data"].([]any)[0].(map[string]any)["id"].(string)
		r = a.do(t, 0, "POST", "/sandbox/internal-accounts/"+acct+"/fund", `{"amount":100000}`)
		require.Equal(t, 200, r.status, "%s", r.body)
		ext = a.created(t, "POST", "/customers/external-accounts", externalBody(cust, "USD_ACCOUNT", externalfixture.DefaultSuffix))
		tx = a.created(t, "POST", "/transfer-out", fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":1000}`, acct, ext))
		return
	}
	w.cust, w.acct, w.ext, w.tx = setup("ada")
	w.other, w.otherAc, w.otherExt, w.otherTx = setup("bob")
	w.agentID, w.code = w.createAgent(t, w.cust, `"VIEW_TRANSACTIONS","CREATE_TRANSFERS","MANAGE_EXTERNAL_ACCOUNTS"`)
	return w
}

// externalBody is the request body of an external account of customerID
// (none: the platform's, or the agent's customer on /agents/me) whose
// primary identifier ends in suffix.
func externalBody(customerID, typ, suffix string) string {
	body := map[string]any{"currency": externalfixture.Currency[typ], "accountInfo": externalfixture.InfoJSON(externalfixture.Info(typ, suffix))}
	if customerID != "" {
		body["customerId"] = customerID
	}
	b, _ := json.Marshal(body)
	return string(b)
}

// createAgent makes an agent for cust with those permissions (JSON list
// items) and returns its id and first device code.
func (w *agentWorld) createAgent(t *testing.T, cust, perms string) (id, code string) {
	t.Helper()
	r := w.platform.do(t, 0, "POST", "/agents", fmt.Sprintf(`{"name":"Invoice payer","customerId":%q,"policy":{"permissions":[%s],`+
		`"defaultExecutionMode":"APPROVAL_REQUIRED","spendingLimits":{"currency":"USD","perTransactionLimit":50000,"dailyLimit":100000}}}`, cust, perms))
	require.Equal(t, 201, r.status, "%s", r.body)
	m := r.json(t)
	return m["agent"].(map[string]any)["id"].(string), m["deviceCode"].(map[string]any)["code"].(string)
}

// redeem redeems code (no credential) and returns the agent's Bearer
// target.
func (w *agentWorld) redeem(t *testing.T, code string) apiTarget {
	t.Helper()
	r := apiTarget{bases: w.platform.bases}.do(t, 0, "POST", "/agents/device-codes/"+code+"/redeem", "")
	require.Equal(t, 200, r.status, "%s", r.body)
	tok, _ := r.json(t)["accessToken"].(string)
	require.True(t, strings.HasPrefix(tok, agents.AccessTokenPrefix), tok)
	return apiTarget{bases: w.platform.bases, auth: "Bearer " + tok}
}

// The management operations and the connection, each answer checked
// against the reference: create with a device code, list and filters,
// update (at least one field), policy patch (nested), codes (status,
// regenerate: the earlier one dies; 409 once connected), redemption once.
func TestAgentManagementAndConnection(t *testing.T) {
	for _, backend := range []string{"memory", "postgres+redis"} {
		t.Run(backend, func(t *testing.T) {
			w := newAgentWorld(t, backend)
			a := w.platform
			r := a.do(t, 0, "GET", "/agents/"+w.agentID, "")
			require.Equal(t, 200, r.status, "%s", r.body)
			ag := r.json(t)
			assert.Equal(t, false, ag["isConnected"])
			assert.Equal(t, false, ag["isPaused"])
			assert.Equal(t, w.cust, ag["customerId"])
			usage := ag["usage"].(map[string]any)
			assert.EqualValues(t, 0, usage["dailySpend"])
			assert.NotEmpty(t, usage["dailyResetDate"])

			// Bad input: 400 naming the field.
			for _, c := range []struct{ method, path, body, field string }{
				{"POST", "/agents", fmt.Sprintf(`{"name":"x","customerId":%q,"policy":{"permissions":["NOPE"],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":1}}}`, w.cust), "permissions"},
				{"POST", "/agents", `{"name":"x","customerId":"Customer:00000000-0000-0000-0000-000000000000","policy":{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":1}}}`, "customerId"},
				{"PATCH", "/agents/" + w.agentID, `{}`, "name"},
				{"PATCH", "/agents/" + w.agentID + "/policy", `{"spendingLimits":{"perTransactionLimit":-1}}`, "perTransactionLimit"},
			} {
				r := a.do(t, 0, c.method, c.path, c.body)
				assert.Equal(t, 400, r.status, "%s %s: %s", c.method, c.path, r.body)
				assert.Contains(t, string(r.body), c.field, "%s %s", c.method, c.path)
			}

			r = a.do(t, 0, "PATCH", "/agents/"+w.agentID, `{"name":"Renamed"}`)
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.Equal(t, "Renamed", r.json(t)["name"])
			r = a.do(t, 0, "PATCH", "/agents/"+w.agentID+"/policy", `{"defaultExecutionMode":"AUTO","spendingLimits":{"dailyLimit":null}}`)
			require.Equal(t, 200, r.status, "%s", r.body)
			pol := r.json(t)["policy"].(map[string]any)
			assert.Equal(t, "AUTO", pol["defaultExecutionMode"])
			limits := pol["spendingLimits"].(map[string]any)
			assert.EqualValues(t, 50000, limits["perTransactionLimit"], "an omitted nested field stays")
			assert.Nil(t, limits["dailyLimit"], "null removes the limit")

			// Lists and filters.
			second, _ := w.createAgent(t, w.other, `"VIEW_TRANSACTIONS"`)
			r = a.do(t, 0, "GET", "/agents?limit=1", "")
			require.Equal(t, 200, r.status, "%s", r.body)
			page := r.json(t)
			assert.Equal(t, true, page["hasMore"])
			assert.EqualValues(t, 2, page["totalCount"])
			r = a.do(t, 0, "GET", "/agents?limit=1&cursor="+page["nextCursor"].(string), "")
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.Equal(t, second, r.json(t)["data"].([]any)[0].(map[string]any)["id"])
			r = a.do(t, 0, "GET", "/agents?customerId="+w.other, "")
			assert.EqualValues(t, 1, r.json(t)["totalCount"])
			r = a.do(t, 0, "GET", "/agents?isConnected=true", "")
			assert.EqualValues(t, 0, r.json(t)["totalCount"])

			// Codes: a new one kills the first.
			r = a.do(t, 0, "GET", "/agents/device-codes/"+w.code+"/status", "")
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.Equal(t, false, r.json(t)["redeemed"])
			r = a.do(t, 0, "POST", "/agents/"+w.agentID+"/device-codes", "")
			require.Equal(t, 201, r.status, "%s", r.body)
			code := r.json(t)["code"].(string)
			r = a.do(t, 0, "GET", "/agents/device-codes/"+w.code+"/status", "")
			assert.Equal(t, 404, r.status, "the earlier code died: %s", r.body)
			noAuth := apiTarget{bases: a.bases}
			r = noAuth.do(t, 0, "POST", "/agents/device-codes/"+w.code+"/redeem", "")
			assert.Equal(t, 404, r.status, "%s", r.body)

			// Typed in lower case without dashes, it still redeems.
			me := w.redeem(t, strings.ToLower(strings.ReplaceAll(code, "-", "")))
			r = noAuth.do(t, 0, "POST", "/agents/device-codes/"+code+"/redeem", "")
			assert.Equal(t, 400, r.status, "redeemed once: %s", r.body)
			r = a.do(t, 0, "GET", "/agents/device-codes/"+code+"/status", "")
			assert.Equal(t, true, r.json(t)["redeemed"])
			r = a.do(t, 0, "POST", "/agents/"+w.agentID+"/device-codes", "")
			assert.Equal(t, 409, r.status, "connected: %s", r.body)
			r = me.do(t, 0, "GET", "/agents/me", "")
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.Equal(t, w.agentID, r.json(t)["id"])
			assert.Equal(t, true, r.json(t)["isConnected"])
			r = noAuth.do(t, 0, "POST", "/agents/device-codes/"+code+"/redeem", "", "Idempotency-Key", "k1")
			assert.Equal(t, 400, r.status, "no Idempotency-Key on a redemption: %s", r.body)

		})
	}
}

// A device code redeemed by 12 clients at once: one gets the token, the
// others 400, and the agent has exactly that token.
func TestAgentDeviceCodeRedeemedOnceConcurrently(t *testing.T) {
	for _, backend := range []string{"memory", "postgres+redis"} {
		t.Run(backend, func(t *testing.T) {
			w := newAgentWorld(t, backend)
			noAuth := apiTarget{bases: w.platform.bases}
			var mu sync.Mutex
			statuses := map[int]int{}
			var token string
			var wg sync.WaitGroup
			for range 12 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := noAuth.do(t, 0, "POST", "/agents/device-codes/"+w.code+"/redeem", "")
					mu.Lock()
					defer mu.Unlock()
					statuses[r.status]++
					if r.status == 200 {
						token, _ = r.json(t)["accessToken"].(string)
					}
				}()
			}
			wg.Wait()
			assert.Equal(t, map[int]int{200: 1, 400: 11}, statuses)
			me := apiTarget{bases: w.platform.bases, auth: "Bearer " + token}
			r := me.do(t, 0, "GET", "/agents/me", "")
			assert.Equal(t, 200, r.status, "%s", r.body)
		})
	}
}

// The agent's token on its customer's data and nowhere else: its own
// accounts, transactions and external accounts (another customer's id is
// 404); a Basic credential on /agents/me and the token on platform routes
// are 401; paused, it reads but writes nothing (403 FORBIDDEN, AGENT_PAUSED); deleted,
// its token is 401 at once.
func TestAgentIsolation(t *testing.T) {
	for _, backend := range []string{"memory", "postgres+redis"} {
		t.Run(backend, func(t *testing.T) {
			w := newAgentWorld(t, backend)
			a := w.platform
			me := w.redeem(t, w.code)

			r := me.do(t, 0, "GET", "/agents/me/internal-accounts", "")
			require.Equal(t, 200, r.status, "%s", r.body)
			for _, acct := range r.json(t)["data"].([]any) {
				assert.NotEqual(t, w.otherAc, acct.(map[string]any)["id"])
			}
			assert.Contains(t, string(r.body), w.acct)
			r = me.do(t, 0, "GET", "/agents/me/transactions", "")
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.EqualValues(t, 1, r.json(t)["totalCount"])
			assert.Contains(t, string(r.body), w.tx)
			r = me.do(t, 0, "GET", "/agents/me/transactions/"+w.tx, "")
			assert.Equal(t, 200, r.status, "%s", r.body)
			r = me.do(t, 0, "GET", "/agents/me/external-accounts", "")
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.EqualValues(t, 1, r.json(t)["totalCount"])
			r = me.do(t, 0, "GET", "/agents/me/external-accounts/"+w.ext, "")
			assert.Equal(t, 200, r.status, "%s", r.body)
			created := me.created(t, "POST", "/agents/me/external-accounts", externalBody("", "USD_ACCOUNT", "321"))
			r = a.do(t, 0, "GET", "/customers/external-accounts/"+created, "")
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.Equal(t, w.cust, r.json(t)["customerId"], "created for the agent's customer")
			r = me.do(t, 0, "DELETE", "/agents/me/external-accounts/"+created, "")
			assert.Equal(t, 204, r.status, "%s", r.body)

			// Another customer's ids: 404, as unknown ones.
			for _, c := range []struct{ method, path, body string }{
				{"GET", "/agents/me/transactions/" + w.otherTx, ""},
				{"GET", "/agents/me/external-accounts/" + w.otherExt, ""},
				{"DELETE", "/agents/me/external-accounts/" + w.otherExt, ""},
				{"POST", "/agents/me/external-accounts", externalBody(w.other, "USD_ACCOUNT", "322")},
				{"GET", "/agents/me/actions/AgentAction:00000000-0000-0000-0000-000000000000", ""},
			} {
				r := me.do(t, 0, c.method, c.path, c.body)
				assert.Equal(t, 404, r.status, "%s %s: %s", c.method, c.path, r.body)
			}
			r = a.do(t, 0, "GET", "/customers/external-accounts/"+w.otherExt, "")
			assert.Equal(t, 200, r.status, "the other customer's account is untouched: %s", r.body)

			// Credentials in the wrong place: 401.
			r = a.do(t, 0, "GET", "/agents/me", "")
			assert.Equal(t, 401, r.status, "Basic on /agents/me: %s", r.body)
			for _, path := range []string{"/customers", "/agents", "/agents/" + w.agentID, "/transactions"} {
				r = me.do(t, 0, "GET", path, "")
				assert.Equal(t, 401, r.status, "Bearer on %s: %s", path, r.body)
			}
			r = apiTarget{bases: a.bases, auth: "Bearer agt_" + strings.Repeat("0", 64)}.do(t, 0, "GET", "/agents/me", "")
			assert.Equal(t, 401, r.status, "%s", r.body)

			// A policy without a permission: 403.
			r = a.do(t, 0, "PATCH", "/agents/"+w.agentID+"/policy", `{"permissions":["CREATE_TRANSFERS"]}`)
			require.Equal(t, 200, r.status, "%s", r.body)
			r = me.do(t, 0, "GET", "/agents/me/transactions", "")
			assert.Equal(t, 403, r.status, "%s", r.body)
			r = me.do(t, 0, "GET", "/agents/me/external-accounts", "")
			assert.Equal(t, 403, r.status, "%s", r.body)
			r = a.do(t, 0, "PATCH", "/agents/"+w.agentID+"/policy", `{"permissions":["VIEW_TRANSACTIONS","MANAGE_EXTERNAL_ACCOUNTS"]}`)
			require.Equal(t, 200, r.status, "%s", r.body)

			// Paused: reads work, writes are 403 FORBIDDEN (AGENT_PAUSED).
			r = a.do(t, 0, "PATCH", "/agents/"+w.agentID, `{"isPaused":true}`)
			require.Equal(t, 200, r.status, "%s", r.body)
			r = me.do(t, 0, "POST", "/agents/me/external-accounts", externalBody("", "USD_ACCOUNT", "323"))
			assert.Equal(t, 403, r.status, "%s", r.body)
			assert.Equal(t, "FORBIDDEN", r.json(t)["code"])
			assert.Equal(t, agents.ReasonPaused, r.json(t)["details"].(map[string]any)["reason"])
			r = me.do(t, 0, "DELETE", "/agents/me/external-accounts/"+w.ext, "")
			assert.Equal(t, 403, r.status, "%s", r.body)
			for _, path := range []string{"/agents/me", "/agents/me/transactions", "/agents/me/actions", "/agents/me/internal-accounts"} {
				r = me.do(t, 0, "GET", path, "")
				assert.Equal(t, 200, r.status, "paused, %s reads: %s", path, r.body)
			}

			// Another platform sees none of it.
			_, otherAuth := w.env.newPlatform(t, "other")
			other := apiTarget{bases: a.bases, auth: otherAuth}
			for _, c := range []struct{ method, path, body string }{
				{"GET", "/agents/" + w.agentID, ""},
				{"PATCH", "/agents/" + w.agentID, `{"isPaused":false}`},
				{"PATCH", "/agents/" + w.agentID + "/policy", `{"defaultExecutionMode":"AUTO"}`},
				{"DELETE", "/agents/" + w.agentID, ""},
				{"POST", "/agents/" + w.agentID + "/device-codes", ""},
				{"GET", "/agents/device-codes/" + w.code + "/status", ""},
			} {
				r := other.do(t, 0, c.method, c.path, c.body)
				assert.Equal(t, 404, r.status, "%s %s: %s", c.method, c.path, r.body)
			}
			r = other.do(t, 0, "GET", "/agents", "")
			assert.EqualValues(t, 0, r.json(t)["totalCount"])

			// Deleted: the token is dead at once.
			r = a.do(t, 0, "DELETE", "/agents/"+w.agentID, "")
			assert.Equal(t, 204, r.status, "%s", r.body)
			r = me.do(t, 0, "GET", "/agents/me", "")
			assert.Equal(t, 401, r.status, "%s", r.body)
			r = a.do(t, 0, "GET", "/agents/"+w.agentID, "")
			assert.Equal(t, 404, r.status, "%s", r.body)
		})
	}
}

// Actions waiting for the platform: listed in /agents/approvals and the
// agent's own list, announced by an AGENT_ACTION.PENDING_APPROVAL event
// whose data is the action as GET returns it; rejected once with its
// reason, approved once; 409 after, 404 for another agent or platform.
func TestAgentActionApprovals(t *testing.T) {
	for _, backend := range []string{"memory", "postgres+redis"} {
		t.Run(backend, func(t *testing.T) {
			w := newAgentWorld(t, backend)
			a := w.platform
			me := w.redeem(t, w.code)
			ctx := t.Context()
			ag, err := w.env.be.store.Read().Agents().Get(ctx, w.env.platformID, w.agentID)
			require.NoError(t, err)
			submit := func(amount int64) string {
				act := w.env.svc.agents.NewAction(ag, "", agents.ActionTransferOut)
				act.Amount, act.Currency, act.SourceAccountID, act.DestinationAccountID = amount, "USD", w.acct, w.ext
				require.NoError(t, agents.Move(&act, agents.StatusPendingApproval, time.Now().UTC()))
				require.NoError(t, w.env.be.store.InTx(ctx, func(tx ports.Tx) error { return w.env.svc.agents.Submit(ctx, tx, act) }))
				return act.ID
			}
			first, second := submit(1200), submit(3400)

			r := a.do(t, 0, "GET", "/agents/approvals?agentId="+w.agentID+"&sortOrder=asc", "")
			require.Equal(t, 200, r.status, "%s", r.body)
			data := r.json(t)["data"].([]any)
			require.Len(t, data, 2)
			assert.Equal(t, first, data[0].(map[string]any)["id"])
			details := data[0].(map[string]any)["transferDetails"].(map[string]any)
			assert.EqualValues(t, 1200, details["amount"])
			r = a.do(t, 0, "GET", "/agents/approvals?limit=1", "")
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.Equal(t, second, r.json(t)["data"].([]any)[0].(map[string]any)["id"], "newest first")
			cursor := r.json(t)["nextCursor"].(string)
			r = a.do(t, 0, "GET", "/agents/approvals?limit=1&cursor="+cursor, "")
			assert.Equal(t, first, r.json(t)["data"].([]any)[0].(map[string]any)["id"])
			r = a.do(t, 0, "GET", "/agents/approvals?limit=1&sortOrder=asc&cursor="+cursor, "")
			assert.Equal(t, 400, r.status, "a cursor of the other order: %s", r.body)
			r = a.do(t, 0, "GET", "/agents/approvals?customerId="+w.other, "")
			assert.EqualValues(t, 0, r.json(t)["totalCount"])

			// The webhook event's data is the action as the agent reads it.
			r = a.do(t, 0, "GET", "/webhooks/events?type="+agents.EventPendingApproval+"&resourceId="+first, "")
			require.Equal(t, 200, r.status, "%s", r.body)
			evs := r.json(t)["data"].([]any)
			require.Len(t, evs, 1)
			r = a.do(t, 0, "GET", "/webhooks/events/"+evs[0].(map[string]any)["id"].(string), "")
			require.Equal(t, 200, r.status, "%s", r.body)
			var ev struct{ Data json.RawMessage }
			require.NoError(t, json.Unmarshal(r.body, &ev))
			got := me.do(t, 0, "GET", "/agents/me/actions/"+first, "")
			require.Equal(t, 200, got.status, "%s", got.body)
			assert.JSONEq(t, string(got.body), string(ev.Data))

			// Decisions.
			r = a.do(t, 0, "POST", "/agents/"+w.agentID+"/actions/"+first+"/reject", `{"reason":"over budget"}`)
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.Equal(t, "REJECTED", r.json(t)["status"])
			assert.Equal(t, "over budget", r.json(t)["rejectionReason"])
			// The action was made by hand (no hold, no quote): the executor
			// (core/agents/spend) decides it, APPROVED or FAILED; either way
			// it is decided once.
			r = a.do(t, 0, "POST", "/agents/"+w.agentID+"/actions/"+second+"/approve", "")
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.Contains(t, []string{"APPROVED", "FAILED"}, r.json(t)["status"])
			for _, c := range []string{first + "/approve", first + "/reject", second + "/reject"} {
				r = a.do(t, 0, "POST", "/agents/"+w.agentID+"/actions/"+c, "")
				assert.Equal(t, 409, r.status, "%s: %s", c, r.body)
			}
			third := submit(500)
			otherAgent, _ := w.createAgent(t, w.cust, `"VIEW_TRANSACTIONS"`)
			r = a.do(t, 0, "POST", "/agents/"+otherAgent+"/actions/"+third+"/approve", "")
			assert.Equal(t, 404, r.status, "another agent's action: %s", r.body)
			_, otherAuth := w.env.newPlatform(t, "other")
			r = apiTarget{bases: a.bases, auth: otherAuth}.do(t, 0, "POST", "/agents/"+w.agentID+"/actions/"+third+"/reject", "")
			assert.Equal(t, 404, r.status, "another platform's: %s", r.body)
			r = a.do(t, 0, "POST", "/agents/"+w.agentID+"/actions/"+third+"/reject", `{"reason":1}`)
			assert.Equal(t, 400, r.status, "%s", r.body)

			r = me.do(t, 0, "GET", "/agents/me/actions?status=PENDING_APPROVAL", "")
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.EqualValues(t, 1, r.json(t)["totalCount"])
			r = me.do(t, 0, "GET", "/agents/me/actions", "")
			assert.EqualValues(t, 3, r.json(t)["totalCount"])
		})
	}
}
