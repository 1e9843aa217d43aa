package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fxstatic "github.com/corridorpay/corridor/adapters/fx/static"
	httpapi "github.com/corridorpay/corridor/adapters/http"
	railsandbox "github.com/corridorpay/corridor/adapters/rails/sandbox"
	umasandbox "github.com/corridorpay/corridor/adapters/uma/sandbox"
	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/uma"
)

// newFXHarness is the API harness with the FX and UMA operations: GET
// /exchange-rates, the UMA receiver lookup (sandbox receivers) and the
// incoming-UMA simulation, plus GET /transactions to read what they record.
func newFXHarness(t *testing.T, opts ...harnessOpts) *apiHarness {
	t.Helper()
	var o harnessOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	h := memoryHarness(t, !o.production)
	reg := h.defaultRails(railsandbox.Factory(h.clock))
	rates := fxstatic.Default(h.clock)
	dir := umasandbox.New("")
	h.lookup = lookup.New(h.store, rates, h.clock, h.ids, lookup.WithRails(reg), lookup.WithUmaDirectory(dir))
	h.serve(httpapi.Deps{
		External:      h.external,
		Lookup:        h.lookup,
		Transactions:  transactions.New(h.store),
		ExchangeRates: fx.NewBoard(rates, reg),
		Uma:           uma.New(h.store, h.ledger, dir, reg, h.clock, h.ids, !o.production),
	})
	return h
}

func umaLookupPath(address string, query url.Values) string {
	return "/receiver/uma/" + url.PathEscape(address) + "?" + query.Encode()
}

func TestUmaLookupOverHTTP(t *testing.T) {
	h := newFXHarness(t)
	tn := h.tenant("USD")
	cust := h.createCustomer(tn, `{"customerType":"INDIVIDUAL","region":"US","umaAddress":"$ana@corridor.test"}`)
	cid := cust["id"].(string)

	r := h.get(tn, umaLookupPath("$success.mxn@sandbox.local", url.Values{"customerId": {cid}}))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	m := r.object(t)
	assert.ElementsMatch(t, []string{"supportedCurrencies", "requiredPayerDataFields", "lookupId", "receiverUmaAddress"}, keys(m))
	assert.Equal(t, "$success.mxn@sandbox.local", m["receiverUmaAddress"])
	assert.Regexp(t, `^Lookup:[0-9a-f-]{36}$`, m["lookupId"])
	assert.Equal(t, []any{map[string]any{
		"currency":              map[string]any{"code": "MXN", "name": "Mexican Peso", "symbol": "$", "decimals": float64(2)},
		"estimatedExchangeRate": 18.109, // MXN per USD: 18.20 less the 0.5% spread
		"min":                   float64(1000),
		"max":                   float64(500000000),
	}}, m["supportedCurrencies"])
	assert.Equal(t, []any{
		map[string]any{"name": "FULL_NAME", "mandatory": true},
		map[string]any{"name": "BIRTH_DATE", "mandatory": true},
		map[string]any{"name": "NATIONALITY", "mandatory": true},
	}, m["requiredPayerDataFields"])

	// Stored for the quote that follows, with the receiver's address.
	stored, err := h.lookup.Get(context.Background(), tn.platformID, m["lookupId"].(string))
	require.NoError(t, err)
	assert.Equal(t, "$success.mxn@sandbox.local", stored.ReceiverUmaAddress)
	assert.Empty(t, stored.AccountID)
	assert.Equal(t, cid, stored.CustomerID)

	// Every sandbox receiver answers, by the sender's UMA address too.
	for addr, cur := range map[string]string{"$success.usd@sandbox.local": "USD", "$success.eur@sandbox.local": "EUR",
		"$pending.long.usd@sandbox.local": "USD", "$fail.compliance.usd@sandbox.local": "USD"} {
		r := h.get(tn, umaLookupPath(addr, url.Values{"senderUmaAddress": {"$ana@corridor.test"}}))
		require.Equal(t, http.StatusOK, r.status, "%s: %s", addr, r.body)
		var res struct {
			SupportedCurrencies []struct {
				Currency              struct{ Code string }
				EstimatedExchangeRate json.Number
			}
			ReceiverUmaAddress string
		}
		require.NoError(t, json.Unmarshal(r.body, &res))
		require.Len(t, res.SupportedCurrencies, 1)
		assert.Equal(t, cur, res.SupportedCurrencies[0].Currency.Code, addr)
		assert.Equal(t, addr, res.ReceiverUmaAddress)
	}
}

func TestUmaLookupErrorsOverHTTP(t *testing.T) {
	h := newFXHarness(t)
	tn := h.tenant("USD")
	cid := h.createCustomer(tn, `{"customerType":"INDIVIDUAL","region":"US"}`)["id"].(string)
	q := url.Values{"customerId": {cid}}

	requireError(t, h.get(tn, umaLookupPath("not-an-address", q)), http.StatusBadRequest, "INVALID_UMA_ADDRESS", "receiverUmaAddress")
	requireError(t, h.get(tn, umaLookupPath("$UPPER@sandbox.local", q)), http.StatusBadRequest, "INVALID_UMA_ADDRESS", "receiverUmaAddress")
	requireError(t, h.get(tn, umaLookupPath("$nobody@sandbox.local", q)), http.StatusNotFound, "UMA_NOT_FOUND")
	requireError(t, h.get(tn, umaLookupPath("$success.usd@elsewhere.example", q)), http.StatusNotFound, "UMA_NOT_FOUND")
	requireError(t, h.get(tn, umaLookupPath("$success.usd@sandbox.local", nil)), http.StatusBadRequest, "INVALID_INPUT", "senderUmaAddress", "customerId")
	requireBad(t, h.get(tn, umaLookupPath("$success.usd@sandbox.local", url.Values{"senderUmaAddress": {"nope"}})), "senderUmaAddress")
	requireError(t, h.get(tn, umaLookupPath("$success.usd@sandbox.local", url.Values{"customerId": {"Customer:00000000-0000-0000-0000-000000000000"}})),
		http.StatusNotFound, "USER_NOT_FOUND")
	// Another platform's customer is unknown.
	other := h.tenant()
	requireError(t, h.get(other, umaLookupPath("$success.usd@sandbox.local", q)), http.StatusNotFound, "USER_NOT_FOUND")
	r := h.send(request{method: http.MethodGet, path: umaLookupPath("$success.usd@sandbox.local", q)})
	assert.Equal(t, http.StatusUnauthorized, r.status)
}

const receivePath = "/sandbox/uma/receive"

func receiveBody(fields map[string]any) string {
	b, err := json.Marshal(fields)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestSandboxUmaReceiveOverHTTP(t *testing.T) {
	h := newFXHarness(t)
	tn := h.tenant("USD")
	cust := h.createCustomer(tn, `{"customerType":"INDIVIDUAL","region":"US","umaAddress":"$ana@corridor.test"}`)
	cid := cust["id"].(string)
	usd := h.customerAccounts(tn, cid)
	var usdID string
	for _, a := range usd {
		if a["balance"].(map[string]any)["currency"].(map[string]any)["code"] == "USD" {
			usdID = a["id"].(string)
		}
	}
	require.NotEmpty(t, usdID)

	body := receiveBody(map[string]any{"senderUmaAddress": "$success.usd@sandbox.local", "receiverUmaAddress": "$ana@corridor.test",
		"receivingCurrencyCode": "USD", "receivingCurrencyAmount": 2500})
	r := h.post(tn, receivePath, body, "Idempotency-Key", "rcv-1")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	m := r.object(t)
	assert.Regexp(t, `^Transaction:[0-9a-f-]{36}$`, m["id"])
	assert.Equal(t, "INCOMING", m["type"])
	assert.Equal(t, "COMPLETED", m["status"])
	assert.Equal(t, "CREDIT", m["direction"])
	assert.Equal(t, cid, m["customerId"])
	assert.Equal(t, map[string]any{"amount": float64(2500), "currency": map[string]any{"code": "USD", "name": "United States Dollar", "symbol": "$", "decimals": float64(2)}}, m["receivedAmount"])
	assert.Equal(t, usdID, m["destination"].(map[string]any)["accountId"])
	assert.Regexp(t, `^CRD-`, m["reconciliationInstructions"].(map[string]any)["reference"])
	assert.NotEmpty(t, m["settledAt"])
	assert.Equal(t, int64(2500), h.balance(tn, usdID))

	// A retry with the same key credits nothing more and answers the same.
	again := h.post(tn, receivePath, body, "Idempotency-Key", "rcv-1")
	require.Equal(t, http.StatusOK, again.status, string(again.body))
	assert.Equal(t, m["id"], again.object(t)["id"])
	assert.Equal(t, int64(2500), h.balance(tn, usdID))

	// The transaction is listed, incoming, for the customer.
	got := h.get(tn, "/transactions/"+m["id"].(string))
	require.Equal(t, http.StatusOK, got.status, string(got.body))
	assert.Equal(t, "INCOMING", got.object(t)["type"])

	// By customer id.
	r = h.post(tn, receivePath, receiveBody(map[string]any{"senderUmaAddress": "$success.eur@sandbox.local", "customerId": cid,
		"receivingCurrencyCode": "USD", "receivingCurrencyAmount": 500}))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, int64(3000), h.balance(tn, usdID))
}

func TestSandboxUmaReceiveErrorsOverHTTP(t *testing.T) {
	h := newFXHarness(t)
	tn := h.tenant("USD")
	cid := h.createCustomer(tn, `{"customerType":"INDIVIDUAL","region":"US","umaAddress":"$bo@corridor.test"}`)["id"].(string)
	base := func(edit func(m map[string]any)) string {
		m := map[string]any{"senderUmaAddress": "$success.usd@sandbox.local", "customerId": cid,
			"receivingCurrencyCode": "USD", "receivingCurrencyAmount": 100}
		edit(m)
		return receiveBody(m)
	}
	for name, tc := range map[string]struct {
		body   string
		status int
		code   string
		field  string
	}{
		"no sender":          {base(func(m map[string]any) { delete(m, "senderUmaAddress") }), 400, "INVALID_INPUT", "senderUmaAddress"},
		"malformed sender":   {base(func(m map[string]any) { m["senderUmaAddress"] = "bob" }), 400, "INVALID_UMA_ADDRESS", "senderUmaAddress"},
		"unknown sender":     {base(func(m map[string]any) { m["senderUmaAddress"] = "$who@sandbox.local" }), 404, "UMA_NOT_FOUND", ""},
		"no receiver":        {base(func(m map[string]any) { delete(m, "customerId") }), 400, "INVALID_INPUT", "customerId"},
		"unknown receiver":   {base(func(m map[string]any) { delete(m, "customerId"); m["receiverUmaAddress"] = "$zz@corridor.test" }), 404, "UMA_NOT_FOUND", ""},
		"unknown customer":   {base(func(m map[string]any) { m["customerId"] = "Customer:00000000-0000-0000-0000-000000000000" }), 404, "USER_NOT_FOUND", ""},
		"no currency":        {base(func(m map[string]any) { delete(m, "receivingCurrencyCode") }), 400, "INVALID_INPUT", "receivingCurrencyCode"},
		"unknown currency":   {base(func(m map[string]any) { m["receivingCurrencyCode"] = "XYZ" }), 400, "INVALID_INPUT", "receivingCurrencyCode"},
		"no account in it":   {base(func(m map[string]any) { m["receivingCurrencyCode"] = "EUR" }), 400, "INVALID_INPUT", "receivingCurrencyCode"},
		"no amount":          {base(func(m map[string]any) { delete(m, "receivingCurrencyAmount") }), 400, "INVALID_INPUT", "receivingCurrencyAmount"},
		"zero amount":        {base(func(m map[string]any) { m["receivingCurrencyAmount"] = 0 }), 400, "INVALID_INPUT", "receivingCurrencyAmount"},
		"fractional amount":  {base(func(m map[string]any) { m["receivingCurrencyAmount"] = 1.5 }), 400, "INVALID_INPUT", "receivingCurrencyAmount"},
		"unknown property":   {base(func(m map[string]any) { m["amount"] = 5 }), 400, "INVALID_INPUT", ""},
		"receiver disagrees": {base(func(m map[string]any) { m["receiverUmaAddress"] = "$other@corridor.test" }), 400, "INVALID_INPUT", "receiverUmaAddress"},
		"sender info not text": {base(func(m map[string]any) { m["senderCustomerInfo"] = map[string]any{"FULL_NAME": 5} }), 400, "INVALID_INPUT",
			"senderCustomerInfo.FULL_NAME"},
		"sender info unknown": {base(func(m map[string]any) { m["senderCustomerInfo"] = map[string]any{"SHOE_SIZE": "42"} }), 400, "INVALID_INPUT",
			"senderCustomerInfo.SHOE_SIZE"},
	} {
		t.Run(name, func(t *testing.T) {
			var fields []string
			if tc.field != "" {
				fields = append(fields, tc.field)
			}
			requireError(t, h.post(tn, receivePath, tc.body), tc.status, tc.code, fields...)
		})
	}

	// Production credentials get 403.
	prod := newFXHarness(t, harnessOpts{production: true})
	ptn := prod.tenant("USD")
	pc := prod.createCustomer(ptn, `{"customerType":"INDIVIDUAL","region":"US"}`)["id"].(string)
	requireError(t, prod.post(ptn, receivePath, fmt.Sprintf(`{"senderUmaAddress":"$success.usd@sandbox.local","customerId":%q,
		"receivingCurrencyCode":"USD","receivingCurrencyAmount":100}`, pc)), http.StatusForbidden, "FORBIDDEN")
}
