package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deferringHooks answers every webhook 202: the platform will decide by
// POST /transactions/{id}/approve or /reject.
type deferringHooks struct{}

func (deferringHooks) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusAccepted)
}

// The approval operations through the HTTP stack, each answer checked
// against the reference: a deferred UMA payment approved (200 COMPLETED)
// or rejected (200 REJECTED) once; again, on another platform, on an
// unknown id, or on a payment not awaiting approval: 409 / 404.
func TestApprovalOperations(t *testing.T) {
	onAPIBackends(t, func(t *testing.T, env *apiEnv, a apiTarget) {
		hooks := httptest.NewServer(deferringHooks{})
		t.Cleanup(hooks.Close)
		require.Equal(t, 200, a.do(t, 0, "PATCH", "/config", fmt.Sprintf(`{"webhookEndpoint":%q}`, hooks.URL)).status)
		cust := a.created(t, "POST", "/customers", `{"customerType":"INDIVIDUAL","region":"US","umaAddress":"$carol@sandbox.local"}`)

		receive := func() string {
			t.Helper()
			r := a.do(t, 0, "POST", "/sandbox/uma/receive", fmt.Sprintf(
				`{"senderUmaAddress":"$success.usd@sandbox.local","customerId":%q,"receivingCurrencyCode":"USD","receivingCurrencyAmount":1000}`, cust))
			require.Contains(t, []int{200, 201}, r.status, "%s", r.body)
			id, _ := r.json(t)["id"].(string)
			require.NotEmpty(t, id, "%s", r.body)
			// The INCOMING_PAYMENT.PENDING webhook, answered 202.
			_, err := env.svc.webhooks.RunAll(t.Context(), 10)
			require.NoError(t, err)
			return id
		}
		approved, rejected := receive(), receive()

		r := a.do(t, 0, "POST", "/transactions/"+approved+"/approve", `{}`)
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Equal(t, "COMPLETED", r.json(t)["status"])
		r = a.do(t, 0, "POST", "/transactions/"+rejected+"/reject", `{"reason":"not ours"}`)
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Equal(t, "REJECTED", r.json(t)["status"])

		for _, c := range []struct{ path, body string }{
			{"/transactions/" + approved + "/approve", `{}`},
			{"/transactions/" + approved + "/reject", `{}`},
			{"/transactions/" + rejected + "/approve", `{}`},
		} {
			r = a.do(t, 0, "POST", c.path, c.body)
			assert.Equal(t, 409, r.status, "%s: %s", c.path, r.body)
			assert.Equal(t, "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL", r.json(t)["code"], c.path)
		}
		r = a.do(t, 0, "POST", "/transactions/Transaction:00000000-0000-0000-0000-000000000000/approve", `{}`)
		assert.Equal(t, 404, r.status, "%s", r.body)
		_, otherAuth := env.newPlatform(t, "other")
		other := apiTarget{bases: a.bases, auth: otherAuth}
		pending := receive()
		r = other.do(t, 0, "POST", "/transactions/"+pending+"/approve", `{}`)
		assert.Equal(t, 404, r.status, "another platform's payment: %s", r.body)
		r = a.do(t, 0, "POST", "/transactions/"+pending+"/reject", `{"reason":1}`)
		assert.Equal(t, 400, r.status, "a reason of the wrong type: %s", r.body)

		// The receiver was credited once, by the approved payment only.
		list := a.do(t, 0, "GET", "/customers/internal-accounts?customerId="+cust+"&type=INTERNAL_FIAT&currency=USD", "")
		require.Equal(t, 200, list.status, "%s", list.body)
		acct := list.json(t)["data"].([]any)[0].(map[string]any)
		assert.EqualValues(t, 1000, acct["balance"].(map[string]any)["amount"])
	})
}

// A deposit (a REALTIME_FUNDING quote crediting the customer's own
// account) funded by POST /sandbox/send waits for the platform like a UMA
// payment: approved, it is credited and its quote COMPLETED; rejected,
// nothing is credited, its refund is COMPLETED and its quote FAILED.
func TestDepositApprovalOperations(t *testing.T) {
	onAPIBackends(t, func(t *testing.T, env *apiEnv, a apiTarget) {
		hooks := httptest.NewServer(deferringHooks{})
		t.Cleanup(hooks.Close)
		require.Equal(t, 200, a.do(t, 0, "PATCH", "/config", fmt.Sprintf(`{"webhookEndpoint":%q}`, hooks.URL)).status)
		cust := a.created(t, "POST", "/customers", `{"customerType":"INDIVIDUAL","region":"US"}`)
		list := a.do(t, 0, "GET", "/customers/internal-accounts?customerId="+cust+"&type=INTERNAL_FIAT&currency=USD", "")
		require.Equal(t, 200, list.status, "%s", list.body)
		acct := list.json(t)["data"].([]any)[0].(map[string]any)["id"].(string)

		deposit := func() (quote, txn string) {
			t.Helper()
			quote = a.created(t, "POST", "/quotes", fmt.Sprintf(`{"source":{"sourceType":"REALTIME_FUNDING","currency":"USD","customerId":%q},`+
				`"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"RECEIVING","lockedCurrencyAmount":2000}`, cust, acct))
			r := a.do(t, 0, "POST", "/sandbox/send", fmt.Sprintf(`{"quoteId":%q,"currencyCode":"USD"}`, quote))
			require.Equal(t, 200, r.status, "%s", r.body)
			body := r.json(t)
			assert.Equal(t, "PENDING", body["status"])
			assert.Equal(t, "INCOMING", body["type"])
			// The INCOMING_PAYMENT.PENDING webhook, answered 202.
			_, err := env.svc.webhooks.RunAll(t.Context(), 10)
			require.NoError(t, err)
			return quote, body["id"].(string)
		}
		status := func(path string) map[string]any {
			t.Helper()
			r := a.do(t, 0, "GET", path, "")
			require.Equal(t, 200, r.status, "%s", r.body)
			return r.json(t)
		}
		okQuote, okTxn := deposit()
		noQuote, noTxn := deposit()

		r := a.do(t, 0, "POST", "/transactions/"+okTxn+"/approve", `{}`)
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Equal(t, "COMPLETED", r.json(t)["status"])
		assert.Equal(t, "COMPLETED", status("/quotes/" + okQuote)["status"])
		r = a.do(t, 0, "POST", "/transactions/"+noTxn+"/reject", `{"reason":"unknown payer"}`)
		require.Equal(t, 200, r.status, "%s", r.body)
		rejected := r.json(t)
		assert.Equal(t, "REJECTED", rejected["status"])
		refund, _ := rejected["refund"].(map[string]any)
		require.NotNil(t, refund, "%s", r.body)
		assert.Equal(t, "COMPLETED", refund["status"])
		assert.Equal(t, "FAILED", status("/quotes/" + noQuote)["status"])
		r = a.do(t, 0, "POST", "/transactions/"+noTxn+"/approve", `{}`)
		assert.Equal(t, 409, r.status, "%s", r.body)

		got := status("/customers/internal-accounts?customerId=" + cust + "&type=INTERNAL_FIAT&currency=USD")
		assert.EqualValues(t, 2000, got["data"].([]any)[0].(map[string]any)["balance"].(map[string]any)["amount"], "credited once")
	})
}
