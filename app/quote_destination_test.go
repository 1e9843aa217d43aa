package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A quote whose external account is deleted before it is executed cannot
// be executed: 400 naming quoteId (never a 500), nothing moves and the
// quote stays PENDING; the same for a REALTIME_FUNDING quote funded by
// POST /sandbox/send.
func TestQuoteToDeletedExternalAccount(t *testing.T) {
	onAPIBackends(t, func(t *testing.T, env *apiEnv, a apiTarget) {
		p := newPayer(t, a, "deleted-destination@example.com")
		a.created(t, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":10000}`)
		funded := a.created(t, "POST", "/quotes", fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},
			"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":1000}`,
			p.account, p.external))
		realtime := a.created(t, "POST", "/quotes", fmt.Sprintf(`{"source":{"sourceType":"REALTIME_FUNDING","currency":"USD","customerId":%q},
			"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":1000}`,
			p.customer, p.external))
		require.Equal(t, 204, a.do(t, 0, "DELETE", "/customers/external-accounts/"+p.external, "").status)

		for _, call := range []struct{ path, body string }{
			{"/quotes/" + funded + "/execute", ""},
			{"/sandbox/send", fmt.Sprintf(`{"quoteId":%q,"currencyCode":"USD"}`, realtime)},
		} {
			r := a.do(t, 0, "POST", call.path, call.body)
			require.Equal(t, 400, r.status, "%s: %s", call.path, r.body)
			body := r.json(t)
			assert.Equal(t, "INVALID_INPUT", body["code"])
			assert.Contains(t, body["message"], "was deleted")
		}
		for _, q := range []string{funded, realtime} {
			r := a.do(t, 0, "GET", "/quotes/"+q, "")
			require.Equal(t, 200, r.status, "%s", r.body)
			assert.Equal(t, "PENDING", r.json(t)["status"])
		}
		assert.Equal(t, int64(10000), p.balance(t, a), "nothing moved")
	})
}
