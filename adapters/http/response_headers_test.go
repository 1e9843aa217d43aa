package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every response, whatever answered it, carries Cache-Control: no-store and
// X-Content-Type-Options: nosniff.
func TestEveryResponseIsUncacheableAndUnsniffable(t *testing.T) {
	h := newHarness(t, harnessOpts{maxBodyBytes: 64})
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")
	fund := func(body string, header map[string]string) request {
		return request{method: http.MethodPost, path: fundPath(acct.ID), body: body, hasBody: true, auth: &tn, header: header}
	}
	key := map[string]string{"Idempotency-Key": "h-1"}
	cases := []struct {
		name string
		rq   request
	}{
		{"success", request{method: http.MethodGet, path: "/platform/internal-accounts", auth: &tn}},
		{"created", fund(`{"amount":5}`, key)},
		{"replayed", fund(`{"amount":5}`, key)},
		{"bad input", fund(`{"amount":"x"}`, nil)},
		{"unauthorized", request{method: http.MethodGet, path: "/platform/internal-accounts"}},
		{"no such route", request{method: http.MethodGet, path: "/no/such/route", auth: &tn}},
		{"not allowed", request{method: http.MethodDelete, path: "/platform/internal-accounts", auth: &tn}},
		{"too large", fund(`{"amount":1,"x":"`+strings.Repeat("a", 100)+`"}`, nil)},
		{"openapi", request{method: http.MethodGet, path: "/openapi.json"}},
		{"health", request{method: http.MethodGet, path: "/healthz", raw: true}},
	}
	statuses := map[int]bool{}
	for _, c := range cases {
		r := h.send(c.rq)
		statuses[r.status] = true
		assert.Equal(t, "no-store", r.header.Get("Cache-Control"), "%s (%d)", c.name, r.status)
		assert.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"), "%s (%d)", c.name, r.status)
	}
	for _, s := range []int{200, 400, 401, 404, 405, 413} {
		assert.True(t, statuses[s], "a %d response was checked", s)
	}
}
