package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

func TestIdempotentReplay(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")
	path := fundPath(acct.ID)

	first := h.post(tn, path, `{"amount":1500}`, "Idempotency-Key", "k-1")
	require.Equal(t, http.StatusOK, first.status, string(first.body))
	assert.Empty(t, first.header.Get("Idempotent-Replayed"))
	assert.Equal(t, int64(1500), h.balance(tn, acct.ID))

	// Time passes; a replay still returns the first response, byte for byte.
	h.clock.Advance(time.Minute)
	again := h.post(tn, path, `{"amount":1500}`, "Idempotency-Key", "k-1")
	require.Equal(t, first.status, again.status)
	assert.Equal(t, string(first.body), string(again.body))
	assert.Equal(t, first.header.Get("Content-Type"), again.header.Get("Content-Type"))
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.Equal(t, int64(1500), h.balance(tn, acct.ID), "a replay never moves money twice")

	// The same request serialised anew (whitespace, key order) is the
	// same request; another value, or a number written otherwise, is not.
	for _, body := range []string{`{"amount": 1500}`, "{\n  \"amount\" : 1500\n}\n"} {
		r := h.post(tn, path, body, "Idempotency-Key", "k-1")
		require.Equal(t, http.StatusOK, r.status, "%q: %s", body, r.body)
		assert.Equal(t, string(first.body), string(r.body))
		assert.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
	}
	for _, body := range []string{`{"amount":1600}`, `{"amount":1500.0}`, `{"amount":15e2}`} {
		r := h.post(tn, path, body, "Idempotency-Key", "k-1")
		requireError(t, r, http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED", "Idempotency-Key")
	}
	// ...and so is the same key and body with another query.
	r := h.post(tn, path+"?x=1", `{"amount":1500}`, "Idempotency-Key", "k-1")
	requireError(t, r, http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	assert.Equal(t, int64(1500), h.balance(tn, acct.ID))

	// A new key funds again.
	r = h.post(tn, path, `{"amount":1500}`, "Idempotency-Key", "k-2")
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, int64(3000), h.balance(tn, acct.ID))

	// Without a key, each request runs.
	for range 2 {
		r = h.post(tn, path, `{"amount":1}`)
		require.Equal(t, http.StatusOK, r.status)
		assert.Empty(t, r.header.Get("Idempotent-Replayed"))
	}
	assert.Equal(t, int64(3002), h.balance(tn, acct.ID))
}

func TestIdempotentErrorsReplayToo(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	// A 4xx is a response worth keeping: the retry gets the same 404.
	first := h.post(tn, fundPath("InternalAccount:missing"), `{"amount":5}`, "Idempotency-Key", "e-1")
	requireError(t, first, http.StatusNotFound, "REFERENCE_NOT_FOUND")
	again := h.post(tn, fundPath("InternalAccount:missing"), `{"amount":5}`, "Idempotency-Key", "e-1")
	assert.Equal(t, http.StatusNotFound, again.status)
	assert.Equal(t, string(first.body), string(again.body))
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
}

func TestIdempotencyKeyValidation(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")
	r := h.post(tn, fundPath(acct.ID), `{"amount":5}`, "Idempotency-Key", strings.Repeat("k", 256))
	requireError(t, r, http.StatusBadRequest, "INVALID_INPUT", "Idempotency-Key")
	r = h.post(tn, fundPath(acct.ID), `{"amount":5}`, "Idempotency-Key", strings.Repeat("k", 255))
	assert.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, int64(5), h.balance(tn, acct.ID))
}

func TestIdempotencyKeyScopedPerPlatform(t *testing.T) {
	h := newHarness(t)
	a := h.tenant("USD")
	b := h.tenant("USD")
	acctA := h.platformAccount(a, "USD")
	acctB := h.platformAccount(b, "USD")

	ra := h.post(a, fundPath(acctA.ID), `{"amount":100}`, "Idempotency-Key", "shared")
	require.Equal(t, http.StatusOK, ra.status)
	// Platform B's identical key is its own: it runs, on its own account.
	rb := h.post(b, fundPath(acctB.ID), `{"amount":200}`, "Idempotency-Key", "shared")
	require.Equal(t, http.StatusOK, rb.status, string(rb.body))
	assert.Empty(t, rb.header.Get("Idempotent-Replayed"))
	assert.Equal(t, int64(100), h.balance(a, acctA.ID))
	assert.Equal(t, int64(200), h.balance(b, acctB.ID))

	// B replaying A's exact request does not get A's response: it is B's
	// own request, and A's account is not B's.
	rb = h.post(b, fundPath(acctA.ID), `{"amount":100}`, "Idempotency-Key", "other")
	requireError(t, rb, http.StatusNotFound, "REFERENCE_NOT_FOUND")
	assert.Equal(t, int64(100), h.balance(a, acctA.ID))

	// A second credential of platform A shares A's keys: the same request
	// replays A's response, another body is 422, and nothing moves twice.
	a2 := h.credential(a)
	r := h.post(a2, fundPath(acctA.ID), `{"amount":100}`, "Idempotency-Key", "shared")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
	requireError(t, h.post(a2, fundPath(acctA.ID), `{"amount":999}`, "Idempotency-Key", "shared"),
		http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	assert.Equal(t, int64(100), h.balance(a, acctA.ID), "same platform, same key: one funding")
}

func TestIdempotencyConcurrentSameKey(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")
	const n = 8
	var wg sync.WaitGroup
	results := make([]apiResponse, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = h.post(tn, fundPath(acct.ID), `{"amount":42}`, "Idempotency-Key", "race")
		}()
	}
	close(start)
	wg.Wait()

	ran, replayed, inUse := 0, 0, 0
	var okBody string
	for _, r := range results {
		switch {
		case r.status == http.StatusOK && r.header.Get("Idempotent-Replayed") == "true":
			replayed++
			okBody = string(r.body)
		case r.status == http.StatusOK:
			ran++
			okBody = string(r.body)
		case r.status == http.StatusConflict:
			inUse++
			requireError(t, r, http.StatusConflict, "IDEMPOTENCY_KEY_IN_USE")
		default:
			t.Fatalf("unexpected %d %s", r.status, r.body)
		}
	}
	assert.Equal(t, 1, ran, "exactly one request runs")
	assert.Equal(t, n, ran+replayed+inUse)
	for _, r := range results {
		if r.status == http.StatusOK {
			assert.Equal(t, okBody, string(r.body))
		}
	}
	assert.Equal(t, int64(42), h.balance(tn, acct.ID))
}

// TestIdempotencyStaleClaim: a claim whose holder died blocks the key with
// 409 until its lease passes; then a retry takes it over, and the ledger
// key keeps the money safe even if the dead holder had posted.
func TestIdempotencyStaleClaim(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")
	body := `{"amount":300}`

	// The first attempt posted its entry, then died before storing the
	// response: its claim is left in progress.
	_, err := h.accounts.Fund(context.Background(), tn.platformID, acct.ID, 300, "dead")
	require.NoError(t, err)
	now := h.clock.Now()
	_, owned, err := h.idem.Begin(context.Background(), ports.IdempotencyRecord{
		Scope: tn.platformID, Key: "dead", RequestHash: "unknown", LockedUntil: now.Add(time.Minute),
		CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour),
	}, now)
	require.NoError(t, err)
	require.True(t, owned)

	r := h.post(tn, fundPath(acct.ID), body, "Idempotency-Key", "dead")
	// The abandoned claim has another hash on record: reuse is reported.
	requireError(t, r, http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")

	h.clock.Advance(2 * time.Minute)
	r = h.post(tn, fundPath(acct.ID), body, "Idempotency-Key", "dead")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, int64(300), h.balance(tn, acct.ID), "the retry found the posted entry")
	r2 := h.post(tn, fundPath(acct.ID), body, "Idempotency-Key", "dead")
	assert.Equal(t, "true", r2.header.Get("Idempotent-Replayed"))
	assert.Equal(t, string(r.body), string(r2.body))
}

func TestIdempotencyInProgressIs409(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")
	body := `{"amount":300}`

	// Find the hash the server computes by running the request on another
	// key first, then plant an in-progress claim with that hash.
	r := h.post(tn, fundPath(acct.ID), body, "Idempotency-Key", "probe")
	require.Equal(t, http.StatusOK, r.status)
	rec := h.cached(tn, "probe")
	now := h.clock.Now()
	_, owned, err := h.idem.Begin(context.Background(), ports.IdempotencyRecord{
		Scope: tn.platformID, Key: "busy", RequestHash: rec.RequestHash, LockedUntil: now.Add(time.Minute),
		CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour),
	}, now)
	require.NoError(t, err)
	require.True(t, owned)

	r = h.post(tn, fundPath(acct.ID), body, "Idempotency-Key", "busy")
	requireError(t, r, http.StatusConflict, "IDEMPOTENCY_KEY_IN_USE")
	assert.Equal(t, int64(300), h.balance(tn, acct.ID))
}

func TestIdempotencyReplayFromStoreAfterCacheExpiry(t *testing.T) {
	h := newHarness(t, harnessOpts{ttl: time.Hour})
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")
	first := h.post(tn, fundPath(acct.ID), `{"amount":7}`, "Idempotency-Key", "long")
	require.Equal(t, http.StatusOK, first.status)
	h.cached(tn, "long")

	// The cached copy expires after an hour; the store keeps the key a day.
	h.clock.Advance(3 * time.Hour)
	_, ok, err := h.cache.Get(context.Background(), tn.platformID, "long")
	require.NoError(t, err)
	require.False(t, ok)
	again := h.post(tn, fundPath(acct.ID), `{"amount":7}`, "Idempotency-Key", "long")
	assert.Equal(t, string(first.body), string(again.body))
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.Equal(t, int64(7), h.balance(tn, acct.ID))
	// The replay warmed the cache again.
	h.cached(tn, "long")
}

// cached waits for the response cache to hold key's response (it is filled
// after the response is sent) and returns it.
func (h *apiHarness) cached(tn tenant, key string) ports.IdempotencyRecord {
	h.t.Helper()
	var rec ports.IdempotencyRecord
	require.Eventually(h.t, func() bool {
		r, ok, err := h.cache.Get(context.Background(), tn.platformID, key)
		require.NoError(h.t, err)
		rec = r
		return ok
	}, 5*time.Second, time.Millisecond, "the response of %s is cached", key)
	return rec
}
