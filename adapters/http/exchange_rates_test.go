package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ratesPath(q url.Values) string { return "/exchange-rates?" + q.Encode() }

func TestExchangeRatesOverHTTP(t *testing.T) {
	h := newFXHarness(t)
	tn := h.tenant("USD")

	r := h.get(tn, ratesPath(url.Values{"sourceCurrency": {"USD"}, "destinationCurrency": {"EUR", "INR"}}))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.True(t, strings.Contains(string(r.body), `"exchangeRate":1.092418614813`), "a JSON number: %s", r.body)
	var res struct {
		Data []map[string]any
	}
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.Len(t, res.Data, 2)
	eur := res.Data[0]
	assert.ElementsMatch(t, []string{"sourceCurrency", "sendingAmount", "minSendingAmount", "maxSendingAmount", "destinationCurrency",
		"destinationPaymentRail", "receivingAmount", "exchangeRate", "fees", "updatedAt"}, keys(eur))
	assert.Equal(t, map[string]any{"code": "USD", "name": "United States Dollar", "symbol": "$", "decimals": float64(2)}, eur["sourceCurrency"])
	assert.Equal(t, map[string]any{"code": "EUR", "name": "Euro", "symbol": "€", "decimals": float64(2)}, eur["destinationCurrency"])
	assert.Equal(t, "SEPA_INSTANT", eur["destinationPaymentRail"])
	assert.Equal(t, float64(10000), eur["sendingAmount"], "the default amount")
	// Fees: floor(50/0.92) + floor(25/0.92) + 0.3% of 10000 = 54 + 27 + 30;
	// receiving floor(9889 × 0.92 × 0.995) = 9052; rate 1 / 0.9154.
	assert.Equal(t, float64(9052), eur["receivingAmount"])
	assert.Equal(t, map[string]any{"fixed": float64(81), "total": float64(111)}, eur["fees"])
	assert.Equal(t, 1.092418614813, eur["exchangeRate"])
	assert.Greater(t, eur["maxSendingAmount"], eur["minSendingAmount"])
	assert.Equal(t, h.clock.Now().UTC().Format("2006-01-02T15:04:05.999999999Z07:00"), eur["updatedAt"])
	inr := res.Data[1]
	assert.Equal(t, "UPI", inr["destinationPaymentRail"])
	assert.Equal(t, 0.012065127559, inr["exchangeRate"], "sending units per receiving unit, as the reference's example")

	// A chosen amount; comma-separated destinations too.
	r = h.get(tn, ratesPath(url.Values{"sourceCurrency": {"EUR"}, "destinationCurrency": {"USD,GBP"}, "sendingAmount": {"0"}}))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.Len(t, res.Data, 2)
	for _, d := range res.Data {
		assert.Equal(t, float64(0), d["sendingAmount"])
		assert.Equal(t, float64(0), d["receivingAmount"], "below the corridor minimum")
	}

	// No filter: every ordered pair of distinct currencies whose
	// destination is paid on a bank rail (12 sources, 10 fiat
	// destinations); corridors into BTC and USDC go by chain and are priced
	// by /quotes only.
	r = h.get(tn, "/exchange-rates")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	require.NoError(t, json.Unmarshal(r.body, &res))
	assert.Len(t, res.Data, 12*10-10)
	for _, d := range res.Data {
		assert.NotContains(t, []string{"BTC", "USDC"}, d["destinationCurrency"].(map[string]any)["code"])
	}
}

func TestExchangeRatesErrorsOverHTTP(t *testing.T) {
	h := newFXHarness(t)
	tn := h.tenant("USD")
	requireBad(t, h.get(tn, ratesPath(url.Values{"sourceCurrency": {"XXX"}})), "sourceCurrency")
	requireBad(t, h.get(tn, ratesPath(url.Values{"destinationCurrency": {"EUR", "ABC"}})), "destinationCurrency")
	requireBad(t, h.get(tn, ratesPath(url.Values{"sendingAmount": {"-1"}})), "sendingAmount")
	requireBad(t, h.get(tn, ratesPath(url.Values{"sendingAmount": {"ten"}})), "sendingAmount")
	requireBad(t, h.get(tn, ratesPath(url.Values{"sendingAmount": {"9000000000000001"}})), "sendingAmount")
	r := h.send(request{method: http.MethodGet, path: "/exchange-rates"})
	assert.Equal(t, http.StatusUnauthorized, r.status)
}
