package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// POST /transactions/{id}/cancel through the HTTP stack, each answer
// checked against the reference: an unsettled transfer-out is cancelled
// once (200 FAILED, the hold released), then 409; a transfer on an
// instant rail and a UMA payment are 409; an unknown id and another
// platform's transfer are 404; a reason of the wrong type is 400.
func TestCancelOperation(t *testing.T) {
	onAPIBackends(t, func(t *testing.T, env *apiEnv, a apiTarget) {
		p := newPayer(t, a, "dora@example.com")
		require.Equal(t, 200, a.do(t, 0, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":10000}`).status)
		cust, acct, ext := p.customer, p.account, p.external
		balance := func() int64 { return p.balance(t, a) }
		transferOut := func(rail string) string {
			t.Helper()
			body := fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q,"paymentRail":%q},"amount":2500}`, acct, ext, rail)
			return a.created(t, "POST", "/transfer-out", body)
		}

		ach := transferOut("ACH")
		assert.EqualValues(t, 7500, balance(), "held")
		r := a.do(t, 0, "POST", "/transactions/"+ach+"/cancel", `{"reason":"REQUESTED_AFTER_HOURS"}`)
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Equal(t, "FAILED", r.json(t)["status"])
		assert.Equal(t, ach, r.json(t)["id"])
		assert.EqualValues(t, 10000, balance(), "the hold is released exactly")
		r = a.do(t, 0, "GET", "/transactions/"+ach, "")
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Equal(t, "FAILED", r.json(t)["status"])

		rtp := transferOut("RTP")
		uma := a.do(t, 0, "POST", "/sandbox/uma/receive", fmt.Sprintf(
			`{"senderUmaAddress":"$success.usd@sandbox.local","customerId":%q,"receivingCurrencyCode":"USD","receivingCurrencyAmount":1000}`, cust))
		require.Equal(t, 200, uma.status, "%s", uma.body)
		for _, id := range []string{ach, rtp, uma.json(t)["id"].(string)} {
			r = a.do(t, 0, "POST", "/transactions/"+id+"/cancel", "")
			assert.Equal(t, 409, r.status, "%s: %s", id, r.body)
			assert.Equal(t, "TRANSACTION_NOT_CANCELLABLE", r.json(t)["code"], id)
		}

		open := transferOut("WIRE")
		r = a.do(t, 0, "POST", "/transactions/Transaction:00000000-0000-0000-0000-000000000000/cancel", `{}`)
		assert.Equal(t, 404, r.status, "%s", r.body)
		_, otherAuth := env.newPlatform(t, "other")
		other := apiTarget{bases: a.bases, auth: otherAuth}
		r = other.do(t, 0, "POST", "/transactions/"+open+"/cancel", `{}`)
		assert.Equal(t, 404, r.status, "another platform's transfer: %s", r.body)
		r = a.do(t, 0, "POST", "/transactions/"+open+"/cancel", `{"reason":1}`)
		assert.Equal(t, 400, r.status, "a reason of the wrong type: %s", r.body)
		r = a.do(t, 0, "POST", "/transactions/"+open+"/cancel", "")
		require.Equal(t, 200, r.status, "no body: %s", r.body)
		assert.Equal(t, "FAILED", r.json(t)["status"])
	})
}
