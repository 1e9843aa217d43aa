package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A timestamp in the response that creates a resource is the one every
// later read of it returns, to the digit: the stores keep microseconds, so
// the clock tells time to the microsecond (system.Clock) and times a
// request gives are cut to it (ports.Stored), and a create response never
// shows nanoseconds that a read then drops.
func TestCreateResponsesShowTheStoredTimestamps(t *testing.T) {
	onAPIBackends(t, func(t *testing.T, env *apiEnv, a apiTarget) {
		p := newPayer(t, a, "tess@example.com")
		require.Equal(t, 200, a.do(t, 0, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":10000}`).status)
		customer := a.do(t, 0, "GET", "/customers/"+p.customer, "").json(t)
		require.NotEmpty(t, customer["createdAt"])

		same := func(what, createPath, body, getPath string, fields ...string) {
			t.Helper()
			r := a.do(t, 0, "POST", createPath, body)
			require.Contains(t, []int{200, 201}, r.status, "%s: %s", what, r.body)
			created := r.json(t)
			id, _ := created["id"].(string)
			if id == "" {
				id, _ = created["code"].(string)
			}
			got := a.do(t, 0, "GET", fmt.Sprintf(getPath, id), "")
			require.Equal(t, 200, got.status, "%s: %s", what, got.body)
			read := got.json(t)
			for _, f := range fields {
				require.NotEmpty(t, created[f], "%s: %s in the create response", what, f)
				assert.Equal(t, created[f], read[f], "%s: %s as created and as read", what, f)
			}
		}
		// Times a request gives (here with nanoseconds) are kept to the
		// microsecond too, and shown so from the start.
		same("customer", "/customers", `{"customerType":"INDIVIDUAL","region":"US","email":"uma@example.com",
			"endUserTermsConsent":{"acceptedAt":"2026-01-02T03:04:05.123456789Z","ipAddress":"198.51.100.24",
			"termsVersion":"V1","acceptanceMethod":"CHECKBOX"}}`,
			"/customers/%s", "createdAt", "updatedAt", "endUserTermsConsent")
		same("transfer-out", "/transfer-out", p.payout(100), "/transactions/%s", "createdAt", "updatedAt")
		same("quote", "/quotes", fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},
			"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":1000}`,
			p.account, p.external), "/quotes/%s", "createdAt", "expiresAt")
		same("invitation", "/invitations", fmt.Sprintf(`{"inviterUma":%q,"expiresAt":"2099-01-02T03:04:05.123456789Z"}`,
			customer["umaAddress"]), "/invitations/%s", "createdAt", "expiresAt")
		same("token", "/tokens", `{"name":"reporting","permissions":["VIEW"]}`, "/tokens/%s", "createdAt", "updatedAt")
	})
}
