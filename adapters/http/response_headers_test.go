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
	cases := map[string]request{
		"success":       {method: http.MethodGet, path: "/platform/internal-accounts", auth: &tn},
		"created":       {method: http.MethodPost, path: fundPath(acct.ID), body: `{"amount":5}`, hasBody: true, auth: &tn, header: map[string]string{"Idempotency-Key": "h-1"}},
		"replayed":      {method: http.MethodPost, path: fundPath(acct.ID), body: `{"amount":5}`, hasBody: true, auth: &tn, header: map[string]string{"Idempotency-Key": "h-1"}},
		"bad input":     {method: http.MethodPost, path: fundPath(acct.ID), body: `{"amount":"x"}`, hasBody: true, auth: &tn},
		"unauthorized":  {method: http.MethodGet, path: "/platform/internal-accounts"},
		"no such route": {method: http.MethodGet, path: "/no/such/route", auth: &tn},
		"not allowed":   {method: http.MethodDelete, path: "/platform/internal-accounts", auth: &tn},
		"too large":     {method: http.MethodPost, path: fundPath(acct.ID), body: `{"amount":1,"x":"` + strings.Repeat("a", 100) + `"}`, hasBody: true, auth: &tn},
		"openapi":       {method: http.MethodGet, path: "/openapi.json"},
		"health":        {method: http.MethodGet, path: "/healthz", raw: true},
	}
	statuses := map[int]bool{}
	for _, name := range []string{"success", "created", "replayed", "bad input", "unauthorized", "no such route", "not allowed", "too large", "openapi", "health"} {
		r := h.send(cases[name])
		statuses[r.status] = true
		assert.Equal(t, "no-store", r.header.Get("Cache-Control"), "%s (%d)", name, r.status)
		assert.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"), "%s (%d)", name, r.status)
	}
	for _, s := range []int{200, 400, 401, 404, 405, 413} {
		assert.True(t, statuses[s], "a %d response was checked", s)
	}
}
