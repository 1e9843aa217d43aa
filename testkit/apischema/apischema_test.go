package apischema_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/events"
	"github.com/corridorpay/corridor/testkit/apischema"
)

func checker(t *testing.T) *apischema.Checker {
	t.Helper()
	c, err := apischema.Load()
	require.NoError(t, err)
	if c == nil {
		t.Skip("the reference OpenAPI document is not on this machine (set CORRIDOR_REFERENCE_OPENAPI)")
	}
	return c
}

// The checker fails what does not match and passes what does.
func TestCheckerCatchesViolations(t *testing.T) {
	c := checker(t)
	json := http.Header{"Content-Type": {"application/json"}}
	get := httptest.NewRequest("GET", "http://corridor.test"+apischema.BasePath+"/transactions/Transaction:1", nil)
	bad404 := []byte(`{"status":404,"code":"NOT_FOUND","message":"x"}`)
	good404 := []byte(`{"status":404,"code":"TRANSACTION_NOT_FOUND","message":"x"}`)
	assert.NotEmpty(t, c.Check(get, 404, json, bad404), "NOT_FOUND is not among the reference's 404 codes")
	assert.Empty(t, c.Check(get, 404, json, good404))
	assert.NotEmpty(t, c.Check(get, 200, json, []byte(`{"id":5}`)), "a transaction without its required fields")
	assert.NotEmpty(t, c.Check(get, 200, json, []byte(`{"id":"Transaction:1","type":"OUTGOING","status":"REJECTED"}`)),
		"the spec's REJECTED is allowed as a status, not as a licence for the rest")

	// The spec's own answers the reference does not list are not checked.
	post := httptest.NewRequest("POST", "http://corridor.test"+apischema.BasePath+"/transfer-out", nil)
	assert.Empty(t, c.Check(post, 422, json, []byte(`{"status":422,"code":"IDEMPOTENCY_KEY_REUSED","message":"x"}`)))
	// Where the reference lists the status with a code enum, the
	// Idempotency-Key's codes conform (KeyCodes), and another code does not.
	execute := httptest.NewRequest("POST", "http://corridor.test"+apischema.BasePath+"/quotes/Quote:1/execute", nil)
	assert.Empty(t, c.Check(execute, 409, json, []byte(`{"status":409,"code":"IDEMPOTENCY_KEY_IN_USE","message":"x"}`)))
	assert.NotEmpty(t, c.Check(execute, 409, json, []byte(`{"status":409,"code":"KEY_BUSY","message":"x"}`)))

	assert.True(t, c.Has("GET", apischema.BasePath+"/quotes/Quote:1"))
	assert.False(t, c.Has("GET", apischema.BasePath+"/ledger/accounts"), "ledger reports are corridor's own")
}

// A component schema (a webhook's body) fails what does not match it.
func TestCheckComponent(t *testing.T) {
	c := checker(t)
	assert.NotEmpty(t, c.CheckComponent("IncomingPaymentWebhook", []byte(`{"type":"INCOMING_PAYMENT.PENDING"}`)),
		"an envelope without its data")
	assert.NotEmpty(t, c.CheckComponent("IncomingPaymentWebhook", []byte(`{"id":"Webhook:1","type":"INCOMING_PAYMENT.PENDING",`+
		`"timestamp":"2025-01-01T00:00:00Z","data":{"requestedReceiverCustomerInfoFields":[{"name":"SHOE_SIZE","mandatory":true}]}}`)),
		"a field name the reference does not know, and no transaction")
	assert.NotEmpty(t, c.CheckComponent("NoSuchSchema", []byte(`{}`)))
}

// Every webhook type the service records has a reference webhook, and a
// body is checked against that webhook's envelope and data.
func TestWebhookChecks(t *testing.T) {
	c := checker(t)
	for _, typ := range events.Types {
		if typ == "AGENT_ACTION.PENDING_APPROVAL" {
			continue // recorded by the agents work, with its own data
		}
		_, ok := c.HasWebhook(typ)
		assert.True(t, ok, "%s is in no webhook of the reference", typ)
	}
	name, ok := c.HasWebhook("OUTGOING_PAYMENT.COMPLETED")
	require.True(t, ok)
	assert.Equal(t, "outgoing-payment", name)
	assert.Empty(t, c.CheckWebhook([]byte(`{"id":"Webhook:1","type":"TEST","timestamp":"2025-08-15T14:32:00Z"}`)))
	assert.NotEmpty(t, c.CheckWebhook([]byte(`{"id":"Webhook:1","type":"NO_SUCH.TYPE","timestamp":"2025-08-15T14:32:00Z","data":{}}`)),
		"a type no webhook lists")
	assert.NotEmpty(t, c.CheckWebhook([]byte(`{"id":"Webhook:1","type":"OUTGOING_PAYMENT.COMPLETED","timestamp":"2025-08-15T14:32:00Z","data":{"id":5}}`)),
		"data without the transaction's fields")
	assert.NotEmpty(t, c.CheckWebhook([]byte(`{"id":"Webhook:1","type":"TEST"}`)), "an envelope without its timestamp")
}
