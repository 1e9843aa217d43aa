package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/events"
	"github.com/corridorpay/corridor/testkit/apischema"
)

// answeringHooks answers every webhook with its reply (status and body)
// and keeps the bodies it received.
type answeringHooks struct {
	mu     sync.Mutex
	status int
	reply  string
	bodies [][]byte
}

func (h *answeringHooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bodies = append(h.bodies, body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(h.status)
	_, _ = w.Write([]byte(h.reply))
}

func (h *answeringHooks) answer(status int, reply string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status, h.reply = status, reply
}

// pending returns the INCOMING_PAYMENT.PENDING webhook of transaction id
// received, as sent.
func (h *answeringHooks) pending(t *testing.T, id string) []byte {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range h.bodies {
		var e events.Envelope
		require.NoError(t, json.Unmarshal(b, &e))
		var data struct{ ID string }
		_ = json.Unmarshal(e.Data, &data)
		if e.Type == "INCOMING_PAYMENT.PENDING" && data.ID == id {
			return b
		}
	}
	t.Fatalf("no INCOMING_PAYMENT.PENDING webhook of %s among %d", id, len(h.bodies))
	return nil
}

// The sandbox receive's requestedReceiverCustomerInfoFields (an extension)
// travel in the INCOMING_PAYMENT.PENDING webhook as the reference's
// incoming-payment webhook schema has them; a 200 answer carrying every
// mandatory one approves, one missing a mandatory field fails the payment
// with MISSING_MANDATORY_PAYEE_DATA and credits nothing.
func TestRequestedReceiverFields(t *testing.T) {
	onAPIBackends(t, func(t *testing.T, env *apiEnv, a apiTarget) {
		hooks := &answeringHooks{status: 200, reply: `{}`}
		hookSrv := httptest.NewServer(hooks)
		t.Cleanup(hookSrv.Close)
		require.Equal(t, 200, a.do(t, 0, "PATCH", "/config", fmt.Sprintf(`{"webhookEndpoint":%q}`, hookSrv.URL)).status)
		cust := a.created(t, "POST", "/customers", `{"customerType":"INDIVIDUAL","region":"US","umaAddress":"$erin@sandbox.local"}`)
		checker, err := apischema.Load()
		require.NoError(t, err)

		fields := `[{"name":"FULL_NAME","mandatory":true},{"name":"NATIONALITY","mandatory":false}]`
		receive := func(status int, reply string) map[string]any {
			t.Helper()
			hooks.answer(status, reply)
			r := a.do(t, 0, "POST", "/sandbox/uma/receive", fmt.Sprintf(`{"senderUmaAddress":"$success.usd@sandbox.local",`+
				`"customerId":%q,"receivingCurrencyCode":"USD","receivingCurrencyAmount":1000,"requestedReceiverCustomerInfoFields":%s}`,
				cust, fields))
			require.Equal(t, 200, r.status, "%s", r.body)
			id := r.json(t)["id"].(string)
			assert.Equal(t, "PENDING", r.json(t)["status"])
			_, err := env.svc.webhooks.RunAll(t.Context(), 10)
			require.NoError(t, err)
			body := hooks.pending(t, id)
			assert.Empty(t, checker.CheckComponent("IncomingPaymentWebhook", body), "the webhook as the reference has it")
			var e struct {
				Data struct {
					Requested []map[string]any `json:"requestedReceiverCustomerInfoFields"`
				}
			}
			require.NoError(t, json.Unmarshal(body, &e))
			assert.Equal(t, []map[string]any{{"name": "FULL_NAME", "mandatory": true}, {"name": "NATIONALITY", "mandatory": false}},
				e.Data.Requested)
			got := a.do(t, 0, "GET", "/transactions/"+id, "")
			require.Equal(t, 200, got.status, "%s", got.body)
			return got.json(t)
		}

		approved := receive(200, `{"receiverCustomerInfo":{"FULL_NAME":"Erin Diaz"}}`)
		assert.Equal(t, "COMPLETED", approved["status"])
		missing := receive(200, `{"receiverCustomerInfo":{"NATIONALITY":"US"}}`)
		assert.Equal(t, "FAILED", missing["status"])
		assert.Equal(t, "MISSING_MANDATORY_PAYEE_DATA", missing["failureReason"])

		list := a.do(t, 0, "GET", "/customers/internal-accounts?customerId="+cust+"&type=INTERNAL_FIAT&currency=USD", "")
		require.Equal(t, 200, list.status, "%s", list.body)
		acct := list.json(t)["data"].([]any)[0].(map[string]any)
		assert.EqualValues(t, 1000, acct["balance"].(map[string]any)["amount"], "credited by the approved payment only")

		for _, bad := range []string{`[{"name":"SHOE_SIZE","mandatory":true}]`,
			`[{"name":"EMAIL","mandatory":true},{"name":"EMAIL","mandatory":false}]`} {
			r := a.do(t, 0, "POST", "/sandbox/uma/receive", fmt.Sprintf(`{"senderUmaAddress":"$success.usd@sandbox.local",`+
				`"customerId":%q,"receivingCurrencyCode":"USD","receivingCurrencyAmount":1000,"requestedReceiverCustomerInfoFields":%s}`, cust, bad))
			assert.Equal(t, 400, r.status, "%s: %s", bad, r.body)
			assert.Contains(t, string(r.body), "requestedReceiverCustomerInfoFields", bad)
		}
	})
}
