package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuthFailures(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	other := h.tenant("USD")
	basic := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }

	tests := []struct {
		name   string
		auth   string // Authorization header; empty sends none
		reason string
	}{
		{"missing header", "", "missing Authorization header"},
		{"bearer scheme", "Bearer abc", "an agent access token (Bearer) reaches /agents/me/… only; this operation needs a platform credential (Basic)"},
		{"scheme only", "Digest", "Authorization header is not Basic"},
		{"bad base64", "Basic !!!not-base64!!!", "malformed Basic credentials"},
		{"no colon", basic("justatoken"), "malformed Basic credentials"},
		{"empty token id", basic(":" + tn.secret), "malformed Basic credentials"},
		{"unknown token", basic("tok_nope:" + tn.secret), "invalid API token id or client secret"},
		{"wrong secret", basic(tn.token + ":" + other.secret), "invalid API token id or client secret"},
		{"other platform's secret", basic(other.token + ":" + tn.secret), "invalid API token id or client secret"},
		{"empty secret", basic(tn.token + ":"), "invalid API token id or client secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tt.auth != "" {
				hdr["Authorization"] = tt.auth
			}
			for _, rq := range []request{
				{method: http.MethodGet, path: "/platform/internal-accounts", header: hdr},
				{method: http.MethodPost, path: fundPath("InternalAccount:x"), body: `{"amount":1}`, hasBody: true, header: hdr},
				{method: http.MethodGet, path: "/no/such/route", header: hdr},
			} {
				r := h.send(rq)
				m := requireError(t, r, http.StatusUnauthorized, "UNAUTHORIZED")
				assert.Equal(t, tt.reason, m["reason"])
				assert.Equal(t, `Basic realm="corridor"`, r.header.Get("WWW-Authenticate"))
			}
		})
	}

	// The right credential passes; the scheme name is case-insensitive.
	r := h.send(request{method: http.MethodGet, path: "/platform/internal-accounts",
		header: map[string]string{"Authorization": "basic " + base64.StdEncoding.EncodeToString([]byte(tn.token+":"+tn.secret))}})
	assert.Equal(t, http.StatusOK, r.status, string(r.body))

	// Secrets and the Authorization header never reach the logs.
	logs := h.logs.String()
	assert.Contains(t, logs, `"status":401`)
	for _, secret := range []string{tn.secret, other.secret, "Basic ", "Authorization"} {
		assert.NotContains(t, logs, secret)
	}
}

func TestPublicRoutesNeedNoAuth(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{"/openapi.json", "/openapi.yaml", "/docs"} {
		r := h.send(request{method: http.MethodGet, path: p})
		assert.Equal(t, http.StatusOK, r.status, p)
		assert.NotEmpty(t, r.body, p)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		r := h.send(request{method: http.MethodGet, path: p, raw: true})
		assert.Equal(t, http.StatusOK, r.status, p)
		assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	}
	r := h.send(request{method: http.MethodPost, path: "/healthz", raw: true})
	requireError(t, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
}

func TestReadyzFails(t *testing.T) {
	h := newHarness(t, harnessOpts{ready: func(context.Context) error { return errors.New("db password=hunter2 unreachable") }})
	r := h.send(request{method: http.MethodGet, path: "/readyz", raw: true})
	requireError(t, r, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	assert.NotContains(t, string(r.body), "hunter2", "the cause is logged, not sent")
	assert.Contains(t, h.logs.String(), "unreachable")
	assert.Contains(t, h.logs.String(), `"level":"WARN"`, "the probe reporting a dependency down is not the service failing")
	assert.NotContains(t, h.logs.String(), `"level":"ERROR"`)
	r = h.send(request{method: http.MethodGet, path: "/healthz", raw: true})
	assert.Equal(t, http.StatusOK, r.status)
}

func TestOpenAPIDocument(t *testing.T) {
	h := newHarness(t)
	r := h.send(request{method: http.MethodGet, path: "/openapi.json"})
	require.Equal(t, http.StatusOK, r.status)
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Title   string `json:"title"`
			Version string `json:"version"`
		} `json:"info"`
		Servers    []struct{ URL string } `json:"servers"`
		Security   []map[string][]string  `json:"security"`
		Components struct {
			SecuritySchemes map[string]struct {
				Type   string `json:"type"`
				Scheme string `json:"scheme"`
			} `json:"securitySchemes"`
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Parameters  []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(r.body, &doc))
	assert.True(t, strings.HasPrefix(doc.OpenAPI, "3.1."), doc.OpenAPI)
	assert.Equal(t, "corridor", doc.Info.Title)
	assert.Equal(t, "2025-10-13", doc.Info.Version)
	require.NotEmpty(t, doc.Servers)
	assert.Equal(t, "/2025-10-13", doc.Servers[0].URL)
	assert.Equal(t, "http", doc.Components.SecuritySchemes["BasicAuth"].Type)
	assert.Equal(t, "basic", doc.Components.SecuritySchemes["BasicAuth"].Scheme)
	require.NotEmpty(t, doc.Security)
	assert.Contains(t, doc.Security[0], "BasicAuth")
	assert.Contains(t, doc.Components.Schemas, "InternalAccount")
	assert.Contains(t, doc.Components.Schemas, "Error")

	ops := map[string]bool{}
	posts := 0
	for path, methods := range doc.Paths {
		for method, op := range methods {
			ops[op.OperationID] = true
			if method != "post" {
				continue
			}
			posts++
			found := false
			for _, p := range op.Parameters {
				if p.In == "header" && p.Name == "Idempotency-Key" {
					found = true
				}
			}
			// POST /tokens answers a secret that is never stored, so it
			// cannot be replayed and takes no key.
			assert.Equalf(t, path != "/tokens", found, "POST %s documents Idempotency-Key", path)
		}
	}
	assert.Positive(t, posts)
	for _, id := range []string{"listCustomerInternalAccounts", "listPlatformInternalAccounts", "sandboxFundInternalAccount"} {
		assert.True(t, ops[id], id)
	}

	y := h.send(request{method: http.MethodGet, path: "/openapi.yaml"})
	require.Equal(t, http.StatusOK, y.status)
	assert.Contains(t, string(y.body), "openapi: 3.1")
}

// A device code or an invitation code in a path is a bearer value: the
// request log shows the path without it.
func TestBearerPathSegmentsAreNotLogged(t *testing.T) {
	h := newHarness(t)
	for _, rq := range []request{
		{method: http.MethodGet, path: "/agents/device-codes/W4B3-TSJW-6AT2/status"},
		{method: http.MethodGet, path: "/invitations/K7QX2M9P"},
		{method: http.MethodPost, path: "/invitations/K7QX2M9P/claim", body: `{"inviteeUma":"$bob@example.com"}`, hasBody: true},
	} {
		r := h.send(rq)
		assert.GreaterOrEqual(t, r.status, 400, rq.path)
	}
	logs := h.logs.String()
	assert.Contains(t, logs, "/agents/device-codes/{redacted}/status")
	assert.Contains(t, logs, "/invitations/{redacted}/claim")
	assert.NotContains(t, logs, "W4B3-TSJW-6AT2")
	assert.NotContains(t, logs, "K7QX2M9P")
}
