package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cross-platform probe: a second platform's credential, given the ids
// of a first platform's resources (one of every kind), on every operation
// of the API. It gets 404 for every foreign id and empty lists, nothing of
// the first platform appears in any answer, and no request writes anything.

// probeExpect is the status each operation answers the second platform.
// Every operation of the OpenAPI document must be listed (a new operation
// fails the test until it is). "own" marks operations that take no foreign
// id (they act on the caller's own data), run after the write check.
var probeExpect = map[string]int{
	"DELETE /customers/external-accounts/{externalAccountId}": 404,
	"GET /auth/credentials":                                   200, // empty: the account is not the caller's
	"GET /auth/sessions":                                      200, // empty: the account is not the caller's
	"POST /auth/credentials":                                  404,
	"POST /auth/credentials/{id}/challenge":                   404,
	"POST /auth/credentials/{id}/verify":                      404,
	"DELETE /auth/sessions/{id}":                              404,
	"DELETE /auth/credentials/{id}":                           404,
	"PATCH /internal-accounts/{id}":                           404,
	"POST /internal-accounts/{id}/export":                     404,
	"POST /auth/sessions/{id}/refresh":                        404,
	"DELETE /customers/{customerId}":                          404,
	"DELETE /documents/{documentId}":                          404,
	"DELETE /platform/external-accounts/{externalAccountId}":  404,
	"GET /beneficial-owners":                                  404, // filtered by a foreign customerId
	"GET /beneficial-owners/{beneficialOwnerId}":              404,
	"GET /config":                      200, // the caller's own configuration
	"PATCH /config":                    200, // changes the caller's own configuration
	"GET /customers":                   200,
	"GET /customers/external-accounts": 200,
	"GET /customers/external-accounts/{externalAccountId}": 404,
	"GET /customers/internal-accounts":                     200,
	"GET /customers/{customerId}":                          404,
	"GET /documents":                                       200,
	"GET /documents/{documentId}":                          404,
	"GET /exchange-rates":                                  200, // public rates, no platform data
	"GET /ledger/accounts":                                 200, // the caller's own accounts only
	"GET /ledger/accounts/{accountId}":                     404,
	"GET /ledger/accounts/{accountId}/balance":             404,
	"GET /ledger/accounts/{accountId}/statement":           404,
	"GET /ledger/entries":                                  404, // filtered by a foreign accountId
	"GET /ledger/entries/{entryId}":                        404,
	"GET /ledger/exports/reconciliation":                   400, // rail and currency are required
	"GET /ledger/trial-balance":                            200, // the caller's own accounts only
	"GET /ledger/verify":                                   403, // operator only
	"GET /platform/external-accounts":                      200,
	"GET /platform/external-accounts/{externalAccountId}":  404,
	"GET /platform/internal-accounts":                      200, // the caller's own accounts only
	"GET /quotes/{quoteId}":                                404,
	"GET /receiver/external-account/{accountId}":           404,
	"GET /receiver/uma/{receiverUmaAddress}":               404, // the sender customerId is foreign
	"GET /transactions":                                    200,
	"GET /transactions/{transactionId}":                    404,
	"GET /verifications":                                   200,
	"GET /verifications/{verificationId}":                  404,
	"PATCH /beneficial-owners/{beneficialOwnerId}":         404,
	"PATCH /customers/{customerId}":                        404,
	"POST /beneficial-owners":                              404,
	"POST /customers":                                      201,
	"POST /customers/external-accounts":                    404,
	"POST /documents":                                      404,
	"POST /platform/external-accounts":                     201,
	"POST /quotes":                                         404,
	"POST /quotes/{quoteId}/execute":                       404,
	"POST /sandbox/internal-accounts/{accountId}/fund":     404,
	"POST /sandbox/send":                                   404,
	"POST /sandbox/uma/receive":                            404,
	"POST /transfer-in":                                    404,
	"POST /transactions/{transactionId}/approve":           404,
	"POST /transactions/{transactionId}/reject":            404,
	"POST /transactions/{transactionId}/cancel":            404,
	"POST /transfer-out":                                   404,
	"POST /verifications":                                  404,
	"PUT /documents/{documentId}":                          404,
	// Invitation codes are shared by design (the invitee's platform reads
	// and claims them); only the creator may cancel, and an inviter must
	// be the caller's own customer.
	"GET /webhooks/events":                      200, // the caller's own events only
	"GET /webhooks/events/{eventId}":            404,
	"GET /webhooks/public-key":                  200, // the deployment's public key
	"POST /webhooks/events/{eventId}/redeliver": 404,
	"POST /sandbox/webhooks/test":               400, // the caller has no endpoint
	"GET /invitations/{invitationCode}":         200,
	"POST /invitations":                         400,
	"POST /invitations/{invitationCode}/cancel": 403,
	"POST /invitations/{invitationCode}/claim":  200,
	"GET /tokens":                               200, // the caller's own tokens only
	"GET /tokens/{tokenId}":                     404,
	"DELETE /tokens/{tokenId}":                  404,
	"POST /tokens":                              201,
	// Agents: another platform's agent, code or action is 404; a list
	// is empty; an agent's own operations refuse a platform credential
	// (401); a redemption needs no credential, and the probe's code is
	// dead.
	"GET /agents":                                             200,
	"POST /agents":                                            400, // the customerId is foreign
	"GET /agents/approvals":                                   200,
	"GET /agents/device-codes/{code}/status":                  404,
	"POST /agents/device-codes/{code}/redeem":                 404,
	"GET /agents/{agentId}":                                   404,
	"PATCH /agents/{agentId}":                                 404,
	"DELETE /agents/{agentId}":                                404,
	"PATCH /agents/{agentId}/policy":                          404,
	"POST /agents/{agentId}/device-codes":                     404,
	"POST /agents/{agentId}/actions/{actionId}/approve":       404,
	"POST /agents/{agentId}/actions/{actionId}/reject":        404,
	"GET /agents/me":                                          401,
	"GET /agents/me/actions":                                  401,
	"GET /agents/me/actions/{actionId}":                       401,
	"GET /agents/me/transactions":                             401,
	"GET /agents/me/transactions/{transactionId}":             401,
	"GET /agents/me/internal-accounts":                        401,
	"GET /agents/me/external-accounts":                        401,
	"POST /agents/me/external-accounts":                       401,
	"GET /agents/me/external-accounts/{externalAccountId}":    401,
	"DELETE /agents/me/external-accounts/{externalAccountId}": 401,
	"POST /agents/me/quotes":                                  401,
	"GET /agents/me/quotes/{quoteId}":                         401,
	"POST /agents/me/quotes/{quoteId}/execute":                401,
	"POST /agents/me/transfer-in":                             401,
	"POST /agents/me/transfer-out":                            401,
}

// probeOwn are the operations whose request names no first-platform id:
// they create the caller's own resources, after the write check.
var probeOwn = map[string]bool{"POST /customers": true, "POST /platform/external-accounts": true, "PATCH /config": true,
	"POST /tokens": true, "POST /invitations/{invitationCode}/claim": true} // a claim is any platform's write

// allOperations lists "METHOD /pattern" of the OpenAPI document.
func (e *fuzzEnv) allOperations() []string {
	e.t.Helper()
	rec := e.call("GET", "/openapi.json", "", nil)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		e.t.Fatalf("openapi.json: %v", err)
	}
	var ops []string
	for path, methods := range doc.Paths {
		for m := range methods {
			switch m {
			case "get", "post", "put", "patch", "delete":
				ops = append(ops, strings.ToUpper(m)+" "+path)
			}
		}
	}
	slices.Sort(ops)
	return ops
}

func TestCrossPlatformProbe(t *testing.T) {
	for _, be := range []string{"memory", "postgres"} {
		t.Run(be, func(t *testing.T) { crossPlatformProbe(t, be) })
	}
}

func crossPlatformProbe(t *testing.T, backendName string) {
	e := newFuzzEnv(t, backendName)
	_, foreign := e.env.newPlatform(t, "second")
	byName := map[string]fuzzOp{}
	for _, op := range e.ops {
		byName[op.name()] = op
	}
	// A transaction, a verification and a ledger entry of the first
	// platform too.
	payout := e.create("POST", "/transfer-out", fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":100}`,
		e.ids["accountId"], e.ids["externalAccountId"]))
	e.ids["transactionId"] = payout
	e.ids["verificationId"] = e.create("POST", "/verifications", fmt.Sprintf(`{"customerId":%q}`, e.ids["customerId"]))
	rec := e.call("GET", "/ledger/entries", "", nil)
	var entries struct{ Data []struct{ ID string } }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &entries), "%s", rec.Body)
	require.NotEmpty(t, entries.Data)
	e.ids["entryId"] = entries.Data[0].ID
	secrets := slices.Collect(maps.Values(e.ids))
	ops := e.allOperations()
	for _, name := range ops {
		_, listed := probeExpect[name]
		assert.True(t, listed, "%s is not in probeExpect: add what a second platform must get", name)
	}
	slices.SortStableFunc(ops, func(a, b string) int { return cmpBool(probeOwn[a], probeOwn[b]) })
	before := e.counts()
	for _, name := range ops {
		if probeOwn[name] && before != nil {
			require.Equal(t, before, e.counts(), "a request with foreign ids wrote something")
			before = nil
		}
		method, pattern, _ := strings.Cut(name, " ")
		op, ok := byName[name]
		if !ok {
			op = fuzzOp{method: method, pattern: pattern, contentType: "application/json", seeds: []string{""}}
		}
		op.path = paramRe.ReplaceAllStringFunc(pattern, func(p string) string {
			id, ok := e.ids[strings.Trim(p, "{}")]
			require.True(t, ok, "%s: no first-platform id for %s", name, p)
			return id
		})
		body := op.seeds[0]
		// Only the query parameters that carry a first-platform id.
		q, err := url.ParseQuery(op.query)
		require.NoError(t, err)
		for k := range q {
			if _, isID := e.ids[k]; !isID {
				q.Del(k)
			}
		}
		op.query = q.Encode()
		asked := op.path + "?" + fmt.Sprint(q) + body
		saved := e.auth
		e.auth = foreign
		rec := e.callQuery(method, op.path, op.query, op.contentType, []byte(body))
		e.auth = saved
		want := probeExpect[name]
		if !assert.Equal(t, want, rec.Code, "%s: %s", name, rec.Body) {
			continue
		}
		var got struct {
			Status any
			Code   any
			Data   []json.RawMessage
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), "%s: %s", name, rec.Body)
		switch {
		case want >= 400:
			assert.EqualValues(t, want, got.Status, "%s: the error body", name)
			assert.NotEmpty(t, got.Code, "%s: the error body", name)
		case want == 200 && !probeShared[name]:
			assert.Empty(t, got.Data, "%s: a list of foreign resources", name)
		}
		for _, id := range secrets {
			if strings.Contains(asked, id) {
				continue // an answer may name the id it was asked about
			}
			assert.NotContains(t, rec.Body.String(), id, "%s leaks a first-platform id", name)
		}
	}
}

// probeShared are lists a second platform legitimately sees entries of:
// its own accounts and tokens, and the exchange rates.
var probeShared = map[string]bool{"GET /exchange-rates": true, "GET /ledger/accounts": true, "GET /platform/internal-accounts": true,
	"GET /tokens": true}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
