package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/ports"
)

// stall waits as a Redis that has stopped answering does: until the
// caller's context ends, or for long.
func stall(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(20 * time.Second):
		return context.DeadlineExceeded
	}
}

// warmUp sends a request without credentials (no helper is asked),
// whose checks load the reference document, so the times measured after
// it are the server's.
func warmUp(h *apiHarness) {
	h.t.Helper()
	requireError(h.t, h.send(request{method: http.MethodGet, path: "/customers"}), http.StatusUnauthorized, "UNAUTHORIZED")
}

// handled waits until the server has logged the end of n requests.
func (h *apiHarness) handled(n int) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		return strings.Count(h.logs.String(), `"msg":"request"`) >= n
	}, 5*time.Second, time.Millisecond, "%d requests ended", n)
}

// stalledCache is a response cache that never answers.
type stalledCache struct{ gets, puts atomic.Int32 }

func (c *stalledCache) Get(ctx context.Context, _, _ string) (ports.IdempotencyRecord, bool, error) {
	c.gets.Add(1)
	return ports.IdempotencyRecord{}, false, stall(ctx)
}

func (c *stalledCache) Put(ctx context.Context, _ ports.IdempotencyRecord, _ time.Duration) error {
	c.puts.Add(1)
	return stall(ctx)
}

// stalledCounter is a failure counter that never answers.
type stalledCounter struct{ calls atomic.Int32 }

func (c *stalledCounter) Failures(ctx context.Context, _ ...string) ([]ports.FailureCount, error) {
	c.calls.Add(1)
	return nil, stall(ctx)
}

func (c *stalledCounter) AddFailure(ctx context.Context, _ time.Duration, _ ...string) ([]ports.FailureCount, error) {
	c.calls.Add(1)
	return nil, stall(ctx)
}

// A response cache that stops answering costs the requests of the moment
// a fraction of a second, and the next ones nothing: they skip it for a
// while and are answered from the idempotency store; then one tries it
// again. Unbounded, each keyed request waited for the cache's read and
// again for its write (20 s each here, seconds with Redis).
func TestAStalledResponseCacheHoldsNoRequest(t *testing.T) {
	h := memoryHarness(t, true)
	cache := &stalledCache{}
	h.serve(httpapi.Deps{Cache: cache})
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")
	warmUp(h)

	start := time.Now()
	first := h.post(tn, fundPath(acct.ID), `{"amount":300}`, "Idempotency-Key", "k1")
	require.Equal(t, http.StatusOK, first.status, "body %s", first.body)
	assert.Less(t, time.Since(start), 5*time.Second, "answered without waiting for the cache")
	assert.Equal(t, int32(1), cache.gets.Load())
	assert.Equal(t, int32(0), cache.puts.Load(), "the cache is skipped after its read failed")
	assert.Contains(t, h.logs.String(), "idempotency cache get failed")

	// Meanwhile: no cache call; a replay is answered from the store, and
	// moves no money again.
	again := h.post(tn, fundPath(acct.ID), `{"amount":300}`, "Idempotency-Key", "k1")
	assert.Equal(t, string(first.body), string(again.body))
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	second := h.post(tn, fundPath(acct.ID), `{"amount":5}`, "Idempotency-Key", "k2")
	require.Equal(t, http.StatusOK, second.status)
	assert.Equal(t, int32(1), cache.gets.Load(), "skipped while paused")
	assert.Equal(t, int64(305), h.balance(tn, acct.ID))

	// After the pause the cache is asked again (once the requests so far
	// have ended: a handler still between its response and its cache fill
	// would find the pause over and fill).
	h.handled(4)
	h.clock.Advance(6 * time.Second)
	third := h.post(tn, fundPath(acct.ID), `{"amount":7}`, "Idempotency-Key", "k3")
	require.Equal(t, http.StatusOK, third.status)
	assert.Equal(t, int32(2), cache.gets.Load())
	assert.Equal(t, int64(312), h.balance(tn, acct.ID))
}

// heldFill is a response cache that answers reads (a miss) at once and
// holds each write until released, whatever its context says.
type heldFill struct {
	puts    atomic.Int32
	release chan struct{}
}

func (c *heldFill) Get(context.Context, string, string) (ports.IdempotencyRecord, bool, error) {
	return ports.IdempotencyRecord{}, false, nil
}

func (c *heldFill) Put(context.Context, ports.IdempotencyRecord, time.Duration) error {
	c.puts.Add(1)
	<-c.release
	return nil
}

// The client has its whole response before the cache is filled, a
// replay's too: the response is stored (the idempotency store) first, and
// the cache only speeds up replays.
func TestTheResponseDoesNotWaitForTheCacheFill(t *testing.T) {
	h := memoryHarness(t, true)
	cache := &heldFill{release: make(chan struct{})}
	h.serve(httpapi.Deps{Cache: cache})
	t.Cleanup(func() { close(cache.release) }) // before the server closes
	tn := h.tenant("USD")
	acct := h.platformAccount(tn, "USD")

	// The first response, then a replay answered from the store (the
	// cache misses), which warms the cache the same way.
	var first apiResponse
	for i, replayed := range []string{"", "true"} {
		got := make(chan apiResponse, 1)
		// Each on a connection of its own: on a kept-alive one the next
		// request is read once the handler, fill included, has returned.
		go func() {
			got <- h.post(tn, fundPath(acct.ID), `{"amount":300}`, "Idempotency-Key", "k1", "Connection", "close")
		}()
		select {
		case r := <-got:
			assert.Equal(t, http.StatusOK, r.status)
			assert.True(t, strings.Contains(string(r.body), `"balance"`), "the whole body: %s", r.body)
			assert.Equal(t, replayed, r.header.Get("Idempotent-Replayed"))
			if i == 0 {
				first = r
			} else {
				assert.Equal(t, string(first.body), string(r.body))
			}
			// The fill follows, and is held until the test ends.
			assert.Eventually(t, func() bool { return cache.puts.Load() == int32(i+1) }, 5*time.Second, time.Millisecond)
		case <-time.After(10 * time.Second):
			t.Fatalf("response %d waited for the cache fill", i+1)
		}
	}
	assert.Equal(t, int64(300), h.balance(tn, acct.ID))
}

// A throttle counter that stops answering lets a credential's first
// request through after a fraction of a second (unchecked, as when the
// counter fails), and a wrong secret still gets its 401.
func TestAStalledThrottleHoldsNoRequest(t *testing.T) {
	h := memoryHarness(t, true)
	counter := &stalledCounter{}
	h.serve(httpapi.Deps{Failures: counter})
	tn := h.tenant("USD")
	warmUp(h)
	require.Zero(t, counter.calls.Load())

	start := time.Now()
	r := h.get(tn, "/customers")
	require.Equal(t, http.StatusOK, r.status, "body %s", r.body)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, int32(1), counter.calls.Load())
	assert.Contains(t, h.logs.String(), "auth throttle read failed")

	wrong := tn
	wrong.secret = "not-the-secret"
	requireError(t, h.get(wrong, "/customers"), http.StatusUnauthorized, "UNAUTHORIZED")
	assert.Equal(t, int32(1), counter.calls.Load(), "skipped while paused")
}
