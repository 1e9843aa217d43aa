package httpapi_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRouteErrors(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")

	r := h.get(tn, "/no/such/route")
	requireError(t, r, http.StatusNotFound, "NOT_FOUND")

	r = h.send(request{method: http.MethodGet, path: "/nothing-here", raw: true, auth: &tn})
	requireError(t, r, http.StatusNotFound, "NOT_FOUND")

	r = h.send(request{method: http.MethodDelete, path: "/platform/internal-accounts", auth: &tn})
	requireError(t, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
	assert.Contains(t, r.header.Get("Allow"), "GET")

	r = h.send(request{method: http.MethodGet, path: fundPath("InternalAccount:x"), auth: &tn})
	requireError(t, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
	assert.Contains(t, r.header.Get("Allow"), "POST")

	// A path with an empty, "." or ".." segment is no route's: a JSON 404,
	// not the mux's bodiless redirect to its clean form.
	for _, p := range []string{"/customers//internal-accounts", "/./customers", "/customers/../tokens", "/transactions/"} {
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			r = h.send(request{method: m, path: p, body: "{}", auth: &tn})
			requireError(t, r, http.StatusNotFound, "NOT_FOUND")
			assert.Empty(t, r.header.Get("Location"), "%s %s", m, p)
		}
	}
}

func TestBodyErrors(t *testing.T) {
	h := newHarness(t, harnessOpts{maxBodyBytes: 1024})
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")
	path := fundPath(acct.ID)

	tests := []struct {
		name   string
		body   string
		status int
		code   string
		fields []string
	}{
		{"malformed JSON", `{"amount":`, 400, "INVALID_INPUT", []string{"body"}},
		{"not JSON", `amount=5`, 400, "INVALID_INPUT", []string{"body"}},
		{"empty body", ``, 400, "INVALID_INPUT", nil},
		{"array body", `[1,2]`, 400, "INVALID_INPUT", nil},
		{"null body", `null`, 400, "INVALID_INPUT", nil},
		{"string amount", `{"amount":"100"}`, 400, "INVALID_INPUT", []string{"amount"}},
		{"float amount", `{"amount":1.5}`, 400, "INVALID_INPUT", []string{"amount"}},
		{"bool amount", `{"amount":true}`, 400, "INVALID_INPUT", []string{"amount"}},
		{"missing amount", `{}`, 400, "INVALID_INPUT", []string{"amount"}},
		{"zero amount", `{"amount":0}`, 400, "INVALID_INPUT", []string{"amount"}},
		{"negative amount", `{"amount":-5}`, 400, "INVALID_INPUT", []string{"amount"}},
		{"too large amount", `{"amount":100000000001}`, 400, "INVALID_INPUT", []string{"amount"}},
		{"beyond int64", `{"amount":99999999999999999999999}`, 400, "INVALID_INPUT", []string{"amount"}},
		{"beyond float64", `{"amount":1e400}`, 400, "INVALID_INPUT", []string{"amount"}},
		{"unknown field", `{"amount":5,"currency":"USD"}`, 400, "INVALID_INPUT", []string{"currency"}},
		{"other letter case", `{"AMOUNT":5}`, 400, "INVALID_INPUT", []string{"AMOUNT"}},
		{"oversize", `{"amount":5,"pad":"` + strings.Repeat("x", 2048) + `"}`, 413, "PAYLOAD_TOO_LARGE", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.post(tn, path, tt.body)
			m := requireError(t, r, tt.status, tt.code, tt.fields...)
			assert.NotContains(t, fmt.Sprint(m), "body.", "field names drop Huma's body. prefix")
		})
	}
	assert.Zero(t, h.balance(tn, acct.ID), "no refused request moved money")

	// A body of exactly the limit is accepted.
	pad := 1024 - len(`{"amount":5}`)
	r := h.post(tn, path, `{"amount":5}`+strings.Repeat(" ", pad))
	assert.Equal(t, http.StatusOK, r.status, string(r.body))

	// The limit also holds for chunked bodies with no Content-Length.
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/2025-10-13"+path, strings.NewReader(strings.Repeat(" ", 4096)))
	require.NoError(t, err)
	req.ContentLength = -1
	req.SetBasicAuth(tn.token, tn.secret)
	res, err := h.srv.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
}

func TestQueryErrors(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	tests := []struct {
		path  string
		field string
	}{
		{"/customers/internal-accounts?limit=0", "limit"},
		{"/customers/internal-accounts?limit=101", "limit"},
		{"/customers/internal-accounts?limit=ten", "limit"},
		{"/customers/internal-accounts?type=CHECKING", "type"},
		{"/customers/internal-accounts?currency=XYZ", "currency"},
		{"/customers/internal-accounts?cursor=forged", "cursor"},
		{"/platform/internal-accounts?type=internal_fiat", "type"},
		{"/platform/internal-accounts?currency=usd", "currency"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			requireError(t, h.get(tn, tt.path), http.StatusBadRequest, "INVALID_INPUT", tt.field)
		})
	}
}

// A query time that does not parse names its parameter and says the
// format in words, not as Go's layout.
func TestQueryTimeErrorSaysTheFormat(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	m := requireError(t, h.get(tn, "/customers?createdAfter=yesterday"), http.StatusBadRequest, "INVALID_INPUT", "createdAfter")
	assert.Equal(t, "createdAfter: must be an RFC 3339 date-time such as 2026-03-01T12:00:00Z", m["message"])
}

// TestNoServerErrorForUglyInput sends a battery of hostile and random
// requests: none may produce a 5xx.
func TestNoServerErrorForUglyInput(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")

	bodies := []string{
		"", "{", "}", "[]", "[{}]", `""`, "0", "-1", "true", "null", `{"amount":null}`,
		`{"amount":{}}`, `{"amount":[]}`, `{"amount":1e400}`, `{"amount":-0}`, `{"amount":0x10}`,
		`{"amount":9223372036854775807}`, `{"amount":9223372036854775808}`, `{"amount":1,"amount":2}`,
		"\x00\x01\x02", "\xff\xfe{", `{"amount":1}` + "garbage", strings.Repeat("[", 5000),
		`{"amount":"` + strings.Repeat("9", 10000) + `"}`, `{"__proto__":{"amount":1}}`,
	}
	rng := rand.New(rand.NewPCG(42, 4242))
	alphabet := []byte(`{}[]":,0123456789-+.eE aműnt\ntrue false null`)
	for range 200 {
		n := rng.IntN(64)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		bodies = append(bodies, string(b))
	}
	paths := []string{
		fundPath(acct.ID), fundPath("InternalAccount:nope"), fundPath("%00"), fundPath(strings.Repeat("a", 5000)),
		fundPath("..%2F..%2Fetc"),
	}
	for i, body := range bodies {
		path := paths[i%len(paths)]
		r := h.post(tn, path, body, "Idempotency-Key", fmt.Sprintf("fuzz-%d", i))
		require.Lessf(t, r.status, 500, "POST %s %q -> %d %s", path, body, r.status, r.body)
		var m map[string]any
		require.NoErrorf(t, json.Unmarshal(r.body, &m), "JSON body for %q", body)
	}
	for _, q := range []string{
		"?limit=-1", "?limit=99999999999999999999", "?cursor=%00", "?cursor=" + strings.Repeat("A", 4000),
		"?type=%FF", "?currency=" + strings.Repeat("X", 1000), "?customerId=%27%20OR%201%3D1", "?limit=1&limit=2",
	} {
		r := h.get(tn, "/customers/internal-accounts"+q)
		require.Lessf(t, r.status, 500, "GET %s -> %d %s", q, r.status, r.body)
	}
}

// A query parameter that does not parse is refused, never dropped: a
// broken percent-escape in a filter must not turn the list into one of
// everything.
func TestMalformedQueryIsRefused(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	for path, field := range map[string]string{
		"/customers/internal-accounts?type=INTERNAL_FIAT%zz":       "type",
		"/customers/internal-accounts?customerId=C%zz":             "customerId",
		"/customers/internal-accounts?limit=%zz":                   "limit",
		"/customers/internal-accounts?%zz=1":                       "query",
		"/customers/internal-accounts?&=%":                         "query",
		"/customers/internal-accounts?currency=USD;limit=1":        "query",
		"/platform/internal-accounts?limit=10&currency=USD%2":      "currency",
		"/customers/internal-accounts?customerId=%E2%82%&limit=10": "customerId",
	} {
		r := h.get(tn, path)
		requireError(t, r, http.StatusBadRequest, "INVALID_INPUT", field)
	}
	// Well-formed escapes pass.
	r := h.get(tn, "/customers/internal-accounts?type=INTERNAL%5FFIAT&currency=USD&limit=5")
	assert.Equal(t, http.StatusOK, r.status, string(r.body))
}
