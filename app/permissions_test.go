package main

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/platforms"
)

// routePermissions is what every operation needs of its API token: VIEW
// reads (TRANSACT and MANAGE include it), TRANSACT moves money, MANAGE
// changes customers, accounts, credentials and tokens. A route the service
// serves that is not listed here fails TestEveryRouteEnforcesItsPermission,
// so no operation can be added without deciding.
var routePermissions = map[string]string{
	"GET /agents":                                             "VIEW",
	"POST /agents":                                            "MANAGE",
	"GET /agents/approvals":                                   "VIEW",
	"GET /agents/device-codes/{code}/status":                  "VIEW",
	"POST /agents/device-codes/{code}/redeem":                 noCredential,
	"GET /agents/{agentId}":                                   "VIEW",
	"PATCH /agents/{agentId}":                                 "MANAGE",
	"DELETE /agents/{agentId}":                                "MANAGE",
	"PATCH /agents/{agentId}/policy":                          "MANAGE",
	"POST /agents/{agentId}/device-codes":                     "MANAGE",
	"POST /agents/{agentId}/actions/{actionId}/approve":       "TRANSACT",
	"POST /agents/{agentId}/actions/{actionId}/reject":        "TRANSACT",
	"GET /agents/me":                                          agentToken,
	"GET /agents/me/actions":                                  agentToken,
	"GET /agents/me/actions/{actionId}":                       agentToken,
	"GET /agents/me/transactions":                             agentToken,
	"GET /agents/me/transactions/{transactionId}":             agentToken,
	"GET /agents/me/internal-accounts":                        agentToken,
	"GET /agents/me/external-accounts":                        agentToken,
	"POST /agents/me/external-accounts":                       agentToken,
	"GET /agents/me/external-accounts/{externalAccountId}":    agentToken,
	"DELETE /agents/me/external-accounts/{externalAccountId}": agentToken,
	"POST /agents/me/quotes":                                  agentToken,
	"GET /agents/me/quotes/{quoteId}":                         agentToken,
	"POST /agents/me/quotes/{quoteId}/execute":                agentToken,
	"POST /agents/me/transfer-in":                             agentToken,
	"POST /agents/me/transfer-out":                            agentToken,
	"GET /auth/credentials":                                   "VIEW",
	"POST /auth/credentials":                                  "MANAGE",
	"DELETE /auth/credentials/{id}":                           "MANAGE",
	"POST /auth/credentials/{id}/challenge":                   "TRANSACT",
	"POST /auth/credentials/{id}/verify":                      "TRANSACT",
	"GET /auth/sessions":                                      "VIEW",
	"DELETE /auth/sessions/{id}":                              "TRANSACT",
	"POST /auth/sessions/{id}/refresh":                        "TRANSACT",
	"GET /beneficial-owners":                                  "VIEW",
	"POST /beneficial-owners":                                 "MANAGE",
	"GET /beneficial-owners/{beneficialOwnerId}":              "VIEW",
	"PATCH /beneficial-owners/{beneficialOwnerId}":            "MANAGE",
	"GET /customers":                                          "VIEW",
	"POST /customers":                                         "MANAGE",
	"GET /customers/external-accounts":                        "VIEW",
	"POST /customers/external-accounts":                       "MANAGE",
	"DELETE /customers/external-accounts/{externalAccountId}": "MANAGE",
	"GET /customers/external-accounts/{externalAccountId}":    "VIEW",
	"GET /customers/internal-accounts":                        "VIEW",
	"DELETE /customers/{customerId}":                          "MANAGE",
	"GET /customers/{customerId}":                             "VIEW",
	"PATCH /customers/{customerId}":                           "MANAGE",
	"GET /documents":                                          "VIEW",
	"POST /documents":                                         "MANAGE",
	"DELETE /documents/{documentId}":                          "MANAGE",
	"GET /documents/{documentId}":                             "VIEW",
	"PUT /documents/{documentId}":                             "MANAGE",
	"GET /exchange-rates":                                     "VIEW",
	"PATCH /internal-accounts/{id}":                           "MANAGE",
	"POST /internal-accounts/{id}/export":                     "MANAGE",
	"GET /ledger/accounts":                                    "VIEW",
	"GET /ledger/accounts/{accountId}":                        "VIEW",
	"GET /ledger/accounts/{accountId}/balance":                "VIEW",
	"GET /ledger/accounts/{accountId}/statement":              "VIEW",
	"GET /ledger/entries":                                     "VIEW",
	"GET /ledger/entries/{entryId}":                           "VIEW",
	"GET /ledger/exports/reconciliation":                      "VIEW",
	"GET /ledger/trial-balance":                               "VIEW",
	"GET /ledger/verify":                                      "VIEW",
	"GET /platform/external-accounts":                         "VIEW",
	"POST /platform/external-accounts":                        "MANAGE",
	"DELETE /platform/external-accounts/{externalAccountId}":  "MANAGE",
	"GET /platform/external-accounts/{externalAccountId}":     "VIEW",
	"GET /platform/internal-accounts":                         "VIEW",
	"POST /quotes":                                            "TRANSACT",
	"GET /quotes/{quoteId}":                                   "VIEW",
	"POST /quotes/{quoteId}/execute":                          "TRANSACT",
	"GET /receiver/external-account/{accountId}":              "VIEW",
	"GET /receiver/uma/{receiverUmaAddress}":                  "VIEW",
	"POST /sandbox/internal-accounts/{accountId}/fund":        "TRANSACT",
	"POST /sandbox/send":                                      "TRANSACT",
	"POST /sandbox/uma/receive":                               "TRANSACT",
	"GET /config":                                             "VIEW",
	"PATCH /config":                                           "MANAGE",
	"GET /invitations/{invitationCode}":                       "VIEW",
	"POST /invitations":                                       "MANAGE",
	"POST /invitations/{invitationCode}/cancel":               "MANAGE",
	"POST /invitations/{invitationCode}/claim":                "MANAGE",
	"GET /webhooks/events":                                    "VIEW",
	"GET /webhooks/events/{eventId}":                          "VIEW",
	"GET /webhooks/public-key":                                "VIEW",
	"POST /webhooks/events/{eventId}/redeliver":               "MANAGE",
	"POST /sandbox/webhooks/test":                             "MANAGE",
	"POST /transactions/{transactionId}/approve":              "TRANSACT",
	"POST /transactions/{transactionId}/reject":               "TRANSACT",
	"POST /transactions/{transactionId}/cancel":               "TRANSACT",
	"GET /tokens":                                             "VIEW",
	"POST /tokens":                                            "MANAGE",
	"DELETE /tokens/{tokenId}":                                "MANAGE",
	"GET /tokens/{tokenId}":                                   "VIEW",
	"GET /transactions":                                       "VIEW",
	"GET /transactions/{transactionId}":                       "VIEW",
	"POST /transfer-in":                                       "TRANSACT",
	"POST /transfer-out":                                      "TRANSACT",
	"GET /verifications":                                      "VIEW",
	"POST /verifications":                                     "MANAGE",
	"GET /verifications/{verificationId}":                     "VIEW",
}

// Routes outside the platform tokens' permissions: an agent's own
// operations take its access token (a platform token there is 401), and
// the device-code redemption takes no credential.
const (
	agentToken   = "AGENT"
	noCredential = "NONE"
)

// TestEveryRouteEnforcesItsPermission sends every operation of the OpenAPI
// document with a token holding only VIEW, only TRANSACT and only MANAGE.
// A token without what the operation needs gets 403 FORBIDDEN naming the
// permission, whatever the body, and nothing is written; a token with it
// gets past the check (the request, made with unknown ids and an empty
// body, is then refused for what it is, never for its permission).
func TestEveryRouteEnforcesItsPermission(t *testing.T) {
	e := newFuzzEnv(t, "memory")
	ops := e.allOperations()
	require.Len(t, ops, len(routePermissions), "the table lists every operation")
	for _, op := range ops {
		_, ok := routePermissions[op]
		require.Truef(t, ok, "%s is not in routePermissions: decide what it needs (adapters/http/permissions.go) and list it", op)
	}
	ctx := context.Background()
	tokens := map[string]string{}
	for _, perm := range platforms.AllPermissions {
		tok, err := e.env.svc.platforms.CreateToken(ctx, e.env.platformID, "only "+perm, []string{perm}, platforms.AllPermissions)
		require.NoError(t, err)
		tokens[perm] = basicAuth(tok.Token.ClientID, tok.Secret)
	}
	for _, op := range slices.Sorted(maps.Keys(routePermissions)) {
		need := routePermissions[op]
		method, pattern, _ := strings.Cut(op, " ")
		path := paramRe.ReplaceAllString(pattern, "Unknown:0")
		for _, perm := range platforms.AllPermissions {
			before := e.counts()
			req := httptest.NewRequest(method, "http://corridor.test"+BasePath+path, strings.NewReader(`{}`))
			req.Header.Set("Authorization", tokens[perm])
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			var body struct {
				Status  int
				Code    string
				Message string
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			switch need {
			case agentToken:
				assert.Equalf(t, 401, rec.Code, "%s with a platform token: %s", op, rec.Body)
				assert.Equalf(t, before, e.counts(), "%s with %s wrote something", op, perm)
				continue
			case noCredential:
				assert.Lessf(t, rec.Code, 500, "%s: %s", op, rec.Body)
				assert.NotEqualf(t, 403, rec.Code, "%s: %s", op, rec.Body)
				continue
			}
			refused := rec.Code == http.StatusForbidden && body.Code == "FORBIDDEN" && strings.Contains(body.Message, "permission")
			if platforms.Allows([]string{perm}, need) {
				assert.Falsef(t, refused, "%s with %s (needs %s): refused: %s", op, perm, need, rec.Body)
				assert.Lessf(t, rec.Code, 500, "%s with %s: %s", op, perm, rec.Body)
				continue
			}
			if assert.Truef(t, refused, "%s with %s (needs %s): %d %s", op, perm, need, rec.Code, rec.Body) {
				assert.Equal(t, 403, body.Status)
				assert.Containsf(t, body.Message, need, "%s names %s", op, need)
			}
			assert.Equalf(t, before, e.counts(), "%s with %s wrote something", op, perm)
		}
	}
}
