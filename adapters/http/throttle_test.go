package httpapi_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/corridorpay/corridor/adapters/http"
)

// throttleHarness serves with small limits: 5 failures per token id, 8 per
// address, in a one-minute window.
func throttleHarness(t *testing.T) *apiHarness {
	h := memoryHarness(t, true)
	h.serve(httpapi.Deps{AuthFailuresPerToken: 5, AuthFailuresPerAddress: 8, AuthFailureWindow: time.Minute})
	return h
}

// asFrom sends GET /platform/internal-accounts with a Basic credential from
// the given client address, through the handler in process.
func asFrom(h *apiHarness, addr, token, secret string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "http://corridor.test"+httpapi.BasePath+"/platform/internal-accounts", nil)
	req.RemoteAddr = addr + ":40000"
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(token+":"+secret)))
	rec := httptest.NewRecorder()
	h.srv.Config.Handler.ServeHTTP(rec, req)
	return rec
}

func TestFailedAuthenticationIsThrottledPerTokenID(t *testing.T) {
	h := throttleHarness(t)
	victim, other := h.tenant("USD"), h.tenant("USD")
	for i := range 4 {
		require.Equal(t, http.StatusUnauthorized, asFrom(h, "198.51.100.1", victim.token, "wrong-"+strconv.Itoa(i)).Code)
	}
	// The fifth failure reaches the limit: 429 instead of 401.
	rec := asFrom(h, "198.51.100.1", victim.token, "wrong-5")
	require.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `"code":"RATE_LIMITED"`)
	retry, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	require.NoError(t, err)
	assert.True(t, retry >= 1 && retry <= 60, "Retry-After %d", retry)
	// Now even the right secret is refused, from any address, so the
	// limit does not tell which guess was right.
	assert.Equal(t, http.StatusTooManyRequests, asFrom(h, "198.51.100.1", victim.token, victim.secret).Code)
	assert.Equal(t, http.StatusTooManyRequests, asFrom(h, "203.0.113.7", victim.token, victim.secret).Code)
	// Another credential from the same address is unaffected.
	assert.Equal(t, http.StatusOK, asFrom(h, "198.51.100.1", other.token, other.secret).Code)
	// After the window the token id is allowed again.
	h.clock.Advance(61 * time.Second)
	assert.Equal(t, http.StatusOK, asFrom(h, "198.51.100.1", victim.token, victim.secret).Code)
}

func TestFailedAuthenticationIsThrottledPerAddress(t *testing.T) {
	h := throttleHarness(t)
	tn := h.tenant("USD")
	// Guesses spread over token ids still count against the address.
	for i := range 7 {
		require.Equal(t, http.StatusUnauthorized, asFrom(h, "198.51.100.2", "tok_guess"+strconv.Itoa(i), "x").Code)
	}
	assert.Equal(t, http.StatusTooManyRequests, asFrom(h, "198.51.100.2", "tok_guess7", "x").Code)
	assert.Equal(t, http.StatusTooManyRequests, asFrom(h, "198.51.100.2", tn.token, tn.secret).Code, "a blocked address is refused")
	// The same credential from another address works, and malformed
	// credentials are not counted (they guess nothing).
	assert.Equal(t, http.StatusOK, asFrom(h, "203.0.113.8", tn.token, tn.secret).Code)
	for range 20 {
		req := httptest.NewRequest(http.MethodGet, "http://corridor.test"+httpapi.BasePath+"/platform/internal-accounts", nil)
		req.RemoteAddr = "192.0.2.50:1"
		req.Header.Set("Authorization", "Basic !!!")
		rec := httptest.NewRecorder()
		h.srv.Config.Handler.ServeHTTP(rec, req)
		require.Equal(t, http.StatusUnauthorized, rec.Code)
	}
	assert.Equal(t, http.StatusOK, asFrom(h, "192.0.2.50", tn.token, tn.secret).Code)
	h.clock.Advance(time.Minute)
	assert.Equal(t, http.StatusOK, asFrom(h, "198.51.100.2", tn.token, tn.secret).Code)
}
