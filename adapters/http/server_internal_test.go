package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/testkit"
)

func testServer(t *testing.T, logs *bytes.Buffer) *server {
	t.Helper()
	clock := testkit.NewFakeClock(time.Date(2025, 10, 13, 0, 0, 0, 0, time.UTC))
	d := Deps{
		Idempotency:    memory.NewIdempotencyStore(),
		Cache:          memory.NewResponseCache(clock),
		Clock:          clock,
		IdempotencyTTL: time.Hour,
	}
	leaseDefaults(&d) // as New does
	return &server{d: d, log: slog.New(slog.NewTextHandler(logs, nil))}
}

func decodeError(t *testing.T, body []byte) Error {
	t.Helper()
	var e Error
	require.NoError(t, json.Unmarshal(body, &e))
	return e
}

func TestPanicBecomes500(t *testing.T) {
	var logs bytes.Buffer
	s := testServer(t, &logs)
	h := s.logRequests(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom: secret-detail")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	e := decodeError(t, rec.Body.Bytes())
	assert.Equal(t, "INTERNAL_ERROR", e.Code)
	assert.Equal(t, 500, e.Status)
	assert.NotContains(t, rec.Body.String(), "secret-detail", "internals are logged, not sent")
	assert.Contains(t, logs.String(), "secret-detail")
	assert.NotEmpty(t, rec.Header().Get(requestIDHeader))
}

// idempotencyModes: an operation that claims its key first, and one that
// runs beside its claim (overlappedOperations).
var idempotencyModes = []bool{false, true}

func TestFiveHundredReleasesTheKey(t *testing.T) {
	for _, op := range idempotencyModes {
		t.Run(fmt.Sprintf("overlapped=%v", op), func(t *testing.T) { fiveHundredReleasesTheKey(t, op) })
	}
}

func fiveHundredReleasesTheKey(t *testing.T, op bool) {
	var logs bytes.Buffer
	s := testServer(t, &logs)
	calls := 0
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls == 1 {
			writeError(w, r, internalError(errors.New("database down")))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = fmt.Fprintf(w, `{"call":%d}`, calls)
	})
	send := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/2025-10-13/things", strings.NewReader(`{}`))
		r.Header.Set(idempotencyHeader, "k")
		r = r.WithContext(withPrincipal(r.Context(), Principal{PlatformID: "Platform:1", ClientID: "tok"}))
		rec := httptest.NewRecorder()
		s.idempotent(rec, r, op, next)
		return rec
	}
	first := send()
	assert.Equal(t, http.StatusInternalServerError, first.Code)
	second := send()
	assert.Equal(t, http.StatusCreated, second.Code, "the retry ran again after a 5xx")
	assert.Equal(t, `{"call":2}`, second.Body.String())
	third := send()
	assert.Equal(t, http.StatusCreated, third.Code)
	assert.Equal(t, `{"call":2}`, third.Body.String())
	assert.Equal(t, "true", third.Header().Get(replayedHeader))
	assert.Equal(t, 2, calls)
}

func TestPanicInsideIdempotentHandlerReleasesTheKey(t *testing.T) {
	for _, op := range idempotencyModes {
		t.Run(fmt.Sprintf("overlapped=%v", op), func(t *testing.T) { panicInsideIdempotentHandlerReleasesTheKey(t, op) })
	}
}

func panicInsideIdempotentHandlerReleasesTheKey(t *testing.T, op bool) {
	var logs bytes.Buffer
	s := testServer(t, &logs)
	panicking := true
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if panicking {
			panic("boom")
		}
		w.WriteHeader(http.StatusOK)
	})
	h := s.logRequests(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(withPrincipal(r.Context(), Principal{PlatformID: "Platform:1", ClientID: "tok"}))
		s.idempotent(w, r, op, next)
	}))
	send := func() int {
		r := httptest.NewRequest(http.MethodPost, "/2025-10-13/things", strings.NewReader(`{}`))
		r.Header.Set(idempotencyHeader, "k")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	assert.Equal(t, http.StatusInternalServerError, send())
	panicking = false
	assert.Equal(t, http.StatusOK, send(), "not blocked by the dead claim")
}

func TestAPIErrorMapping(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		code   string
		fields []string
	}{
		{"invalid", fault.Invalid("address.postalCode", "bad"), 400, "INVALID_INPUT", []string{"address.postalCode"}},
		{"wrapped", fmt.Errorf("ctx: %w", fault.NotFound("USER_NOT_FOUND", "no")), 404, "USER_NOT_FOUND", nil},
		{"unauthorized", fault.Unauthorized("Invalid OTP code"), 401, "UNAUTHORIZED", nil},
		{"forbidden", fault.New(fault.KindForbidden, "FORBIDDEN", "no"), 403, "FORBIDDEN", nil},
		{"conflict", fault.Conflict("UMA_ADDRESS_EXISTS", "taken"), 409, "UMA_ADDRESS_EXISTS", nil},
		{"gone", fault.New(fault.KindGone, "CUSTOMER_DELETED", "gone"), 410, "CUSTOMER_DELETED", nil},
		{"unprocessable", fault.New(fault.KindUnprocessable, "X", "y"), 422, "X", nil},
		{"unknown kind", &fault.Error{Kind: 99, Code: "ODD"}, 500, "INTERNAL_ERROR", nil},
		{"plain", errors.New("pq: connection refused"), 500, "INTERNAL_ERROR", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := toError(apiError(tt.err))
			assert.Equal(t, tt.status, e.Status)
			assert.Equal(t, tt.code, e.Code)
			b, err := json.Marshal(e)
			require.NoError(t, err)
			assert.NotContains(t, string(b), "connection refused")
			for _, f := range tt.fields {
				assert.Contains(t, string(b), `"field":"`+f+`"`)
			}
			if tt.status == 401 {
				assert.Equal(t, "Invalid OTP code", e.Reason)
				assert.Equal(t, `Basic realm="corridor"`, e.GetHeaders().Get("WWW-Authenticate"))
			}
		})
	}
	assert.NoError(t, apiError(nil))
}

func TestHumaErrorMapping(t *testing.T) {
	e := humaError(http.StatusUnprocessableEntity, "validation failed",
		&huma.ErrorDetail{Location: "body.address", Message: "expected required property postalCode to be present"},
		&huma.ErrorDetail{Location: "body.extra", Message: "unexpected property", Value: "secret value"},
		&huma.ErrorDetail{Location: "query.limit", Message: "expected number <= 100"},
		&huma.ErrorDetail{Location: "header.Idempotency-Key", Message: "expected length <= 255"},
		&huma.ErrorDetail{Location: "body", Message: "expected required property amount to be present"},
	).(*Error)
	assert.Equal(t, 400, e.Status)
	assert.Equal(t, "INVALID_INPUT", e.Code)
	b, err := json.Marshal(e)
	require.NoError(t, err)
	for _, f := range []string{"address.postalCode", "extra", "limit", "Idempotency-Key", "amount"} {
		assert.Contains(t, string(b), `"field":"`+f+`"`)
	}
	assert.NotContains(t, string(b), "secret value", "values are not echoed")

	for status, code := range map[int]string{
		400: "INVALID_INPUT", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "PAYLOAD_TOO_LARGE",
		415: "UNSUPPORTED_MEDIA_TYPE", 406: "NOT_ACCEPTABLE", 500: "INTERNAL_ERROR", 503: "SERVICE_UNAVAILABLE",
		418: "IM_A_TEAPOT", 599: "ERROR",
	} {
		e := humaError(status, "m").(*Error)
		assert.Equal(t, status, e.Status)
		assert.Equal(t, code, e.Code, status)
	}
}

func TestLoggedPathRedactsBearerSegments(t *testing.T) {
	for in, want := range map[string]string{
		"/2025-10-13/agents/device-codes/W4B3-TSJW-6AT2/status": "/2025-10-13/agents/device-codes/{redacted}/status",
		"/2025-10-13/agents/device-codes/W4B3-TSJW-6AT2/redeem": "/2025-10-13/agents/device-codes/{redacted}/redeem",
		"/2025-10-13/invitations/K7QX2M9P":                      "/2025-10-13/invitations/{redacted}",
		"/2025-10-13/invitations/K7QX2M9P/claim":                "/2025-10-13/invitations/{redacted}/claim",
		"/2025-10-13/invitations":                               "/2025-10-13/invitations",
		"/2025-10-13/agents/Agent:1/device-codes":               "/2025-10-13/agents/Agent:1/device-codes",
		"/2025-10-13/customers/Customer:1":                      "/2025-10-13/customers/Customer:1",
	} {
		assert.Equal(t, want, loggedPath(in), in)
	}
}
