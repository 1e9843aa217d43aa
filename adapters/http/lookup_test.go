package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

func lookupPath(accountID string, query url.Values) string {
	return "/receiver/external-account/" + url.PathEscape(accountID) + "?" + query.Encode()
}

func TestLookupExternalAccountOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	sender := h.createCustomer(tn, `{"customerType":"INDIVIDUAL","currencies":["EUR","USDC"],"region":"DE"}`)
	acct := h.createExt(tn, extPath, extBody("", "MXN_ACCOUNT", "", nil))
	id := acct["id"].(string)

	r := h.get(tn, lookupPath(id, url.Values{"customerId": {sender["id"].(string)}}))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.True(t, strings.Contains(string(r.body), `"estimatedExchangeRate":19.6836`), "the rate is a JSON number: %s", r.body)
	m := r.object(t)
	assert.ElementsMatch(t, []string{"supportedCurrencies", "requiredPayerDataFields", "lookupId", "accountId"}, keys(m))
	assert.Equal(t, id, m["accountId"])
	assert.Regexp(t, `^Lookup:[0-9a-f-]{36}$`, m["lookupId"])
	assert.Equal(t, []any{map[string]any{
		"currency":              map[string]any{"code": "MXN", "name": "Mexican Peso", "symbol": "$", "decimals": float64(2)},
		"estimatedExchangeRate": 19.68369565217374, // MXN per EUR: 18.20 / 0.92 less the 0.5% spread
		"min":                   float64(1000),
		"max":                   float64(500000000),
	}}, m["supportedCurrencies"])
	assert.Equal(t, []any{
		map[string]any{"name": "FULL_NAME", "mandatory": true},
		map[string]any{"name": "BIRTH_DATE", "mandatory": true},
		map[string]any{"name": "NATIONALITY", "mandatory": true},
	}, m["requiredPayerDataFields"])

	// The lookup is stored for the quote that follows.
	stored, err := h.lookup.Get(context.Background(), tn.platformID, m["lookupId"].(string))
	require.NoError(t, err)
	assert.Equal(t, ports.Lookup{
		ID: m["lookupId"].(string), PlatformID: tn.platformID, AccountID: id, CustomerID: sender["id"].(string),
		SendingCurrency: "EUR",
		Currencies:      []ports.LookupCurrency{{Currency: "MXN", EstimatedRate: "19.68369565217374", Min: 1000, Max: 500000000}},
		RequiredPayerData: []ports.PayerDataField{{Name: "FULL_NAME", Mandatory: true}, {Name: "BIRTH_DATE", Mandatory: true},
			{Name: "NATIONALITY", Mandatory: true}},
		CreatedAt: h.clock.Now(),
	}, stored)

	// Each lookup is a new one.
	again := h.get(tn, lookupPath(id, url.Values{"customerId": {sender["id"].(string)}})).object(t)
	assert.NotEqual(t, m["lookupId"], again["lookupId"])
}

func TestLookupBySenderUmaAddressOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	biz := h.createCustomer(tn, `{"customerType":"BUSINESS","umaAddress":"$acme@example.test","currencies":["USD"],
		"businessInfo":{"legalName":"Acme Ltd","country":"US","taxId":"47-1234567","incorporatedOn":"2018-03-14"}}`)
	cust := h.extCustomer(tn)
	acct := h.createExt(tn, extPath, extBody(cust, "SPARK_WALLET", "", nil))

	r := h.get(tn, lookupPath(acct["id"].(string), url.Values{"senderUmaAddress": {"$acme@example.test"}}))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var res struct {
		SupportedCurrencies []struct {
			Currency              struct{ Code string }
			EstimatedExchangeRate json.Number
			Min, Max              int64
		}
		RequiredPayerDataFields []struct {
			Name      string
			Mandatory bool
		}
		LookupID string
	}
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.Len(t, res.SupportedCurrencies, 1)
	assert.Equal(t, "BTC", res.SupportedCurrencies[0].Currency.Code)
	assert.Equal(t, json.Number("0.000016467"), res.SupportedCurrencies[0].EstimatedExchangeRate)
	assert.Equal(t, int64(1000), res.SupportedCurrencies[0].Min)
	assert.Equal(t, "COMPANY_LEGAL_NAME", res.RequiredPayerDataFields[0].Name, "a business payer")
	stored, err := h.lookup.Get(context.Background(), tn.platformID, res.LookupID)
	require.NoError(t, err)
	assert.Equal(t, biz["id"], stored.CustomerID)
	assert.Equal(t, "$acme@example.test", stored.SenderUmaAddress)
	assert.Equal(t, "USD", stored.SendingCurrency)

	// Both forms together must name the same customer.
	ok := h.get(tn, lookupPath(acct["id"].(string), url.Values{"senderUmaAddress": {"$acme@example.test"}, "customerId": {biz["id"].(string)}}))
	assert.Equal(t, http.StatusOK, ok.status, string(ok.body))
	requireBad(t, h.get(tn, lookupPath(acct["id"].(string), url.Values{"senderUmaAddress": {"$acme@example.test"}, "customerId": {cust}})), "senderUmaAddress")
}

func TestLookupErrorsOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn, other := h.tenant(), h.tenant()
	cust := h.extCustomer(tn)
	acct := h.createExt(tn, extPath, extBody(cust, "USD_ACCOUNT", "", nil))
	id := acct["id"].(string)

	r := h.get(tn, lookupPath(id, nil))
	requireError(t, r, http.StatusBadRequest, "INVALID_INPUT", "senderUmaAddress", "customerId")
	requireBad(t, h.get(tn, lookupPath(id, url.Values{"senderUmaAddress": {"not-an-uma"}})), "senderUmaAddress")
	requireError(t, h.get(tn, lookupPath("ExternalAccount:00000000-0000-0000-0000-000000000000", url.Values{"customerId": {cust}})),
		http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.get(tn, lookupPath(id, url.Values{"customerId": {"Customer:00000000-0000-0000-0000-000000000000"}})),
		http.StatusNotFound, "USER_NOT_FOUND")
	requireError(t, h.get(tn, lookupPath(id, url.Values{"senderUmaAddress": {"$nobody@example.test"}})),
		http.StatusNotFound, "USER_NOT_FOUND")

	// Another platform sees neither the account nor the customer.
	otherCust := h.extCustomer(other)
	requireError(t, h.get(other, lookupPath(id, url.Values{"customerId": {otherCust}})), http.StatusNotFound, "REFERENCE_NOT_FOUND")

	// A deleted account cannot be looked up.
	require.Equal(t, http.StatusNoContent, h.del(tn, extPath+"/"+id).status)
	requireError(t, h.get(tn, lookupPath(id, url.Values{"customerId": {cust}})), http.StatusNotFound, "REFERENCE_NOT_FOUND")
}
