package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// heldStore is an IdempotencyStore whose claims wait for open (closed by
// the test) before they are made, and fail with fail when it is set.
type heldStore struct {
	ports.IdempotencyStore
	open    chan struct{}
	decided atomic.Int64 // claims made
	fail    error
}

func (h *heldStore) Begin(ctx context.Context, rec ports.IdempotencyRecord, now time.Time) (ports.IdempotencyRecord, bool, error) {
	<-h.open
	defer h.decided.Add(1)
	if h.fail != nil {
		return ports.IdempotencyRecord{}, false, h.fail
	}
	return h.IdempotencyStore.Begin(ctx, rec, now)
}

// claimProbe is an operation that reads, waits for its claim
// (ports.AwaitClaim) and then writes, counting what it did.
type claimProbe struct {
	reads, writes   atomic.Int64
	readBeforeClaim atomic.Bool // a read happened while no claim was made
	store           *heldStore
	hold            chan struct{} // when set, a write waits for it
}

func (p *claimProbe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.store.decided.Load() == 0 {
		p.readBeforeClaim.Store(true)
	}
	p.reads.Add(1)
	if err := ports.AwaitClaim(r.Context()); err != nil {
		writeError(w, r, toError(err))
		return
	}
	if p.hold != nil {
		<-p.hold
	}
	n := p.writes.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = fmt.Fprintf(w, `{"write":%d}`, n)
}

func overlapSend(s *server, overlapped bool, next http.Handler, key, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/2025-10-13/quotes", strings.NewReader(body))
	r.Header.Set(idempotencyHeader, key)
	r = r.WithContext(withPrincipal(r.Context(), Principal{PlatformID: "Platform:1", ClientID: "tok"}))
	rec := httptest.NewRecorder()
	s.idempotent(rec, r, overlapped, next)
	return rec
}

// An overlapped operation reads while its claim is made and writes only
// once it owns the key; a replay, a reused key, a key in use and a failed
// claim are answered by the claim, and their operation writes nothing.
func TestOverlappedOperationWritesOnlyUnderItsClaim(t *testing.T) {
	var logs bytes.Buffer
	s := testServer(t, &logs)
	store := &heldStore{IdempotencyStore: s.d.Idempotency, open: make(chan struct{})}
	s.d.Idempotency, s.d.Cache = store, nil // every answer from the store
	s.d.MaxBodyBytes = 1 << 10
	p := &claimProbe{store: store}
	const op = true

	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- overlapSend(s, op, p, "k", `{"a":1}`) }()
	require.Eventually(t, func() bool { return p.reads.Load() == 1 }, 5*time.Second, time.Millisecond,
		"the operation reads while its claim waits")
	assert.Zero(t, p.writes.Load(), "and does not write before the claim")
	close(store.open)
	first := <-done
	require.Equal(t, http.StatusCreated, first.Code)
	assert.Equal(t, `{"write":1}`, first.Body.String())
	assert.True(t, p.readBeforeClaim.Load())

	replay := overlapSend(s, op, p, "k", `{"a":1}`)
	assert.Equal(t, http.StatusCreated, replay.Code)
	assert.Equal(t, `{"write":1}`, replay.Body.String())
	assert.Equal(t, "true", replay.Header().Get(replayedHeader))

	reused := overlapSend(s, op, p, "k", `{"a":2}`)
	assert.Equal(t, http.StatusUnprocessableEntity, reused.Code)
	assert.Equal(t, "IDEMPOTENCY_KEY_REUSED", decodeError(t, reused.Body.Bytes()).Code)
	assert.Equal(t, int64(3), p.reads.Load(), "both ran their reads")
	assert.Equal(t, int64(1), p.writes.Load(), "neither wrote")

	// A key in use: the first request holds it while it writes.
	p.hold = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var holder *httptest.ResponseRecorder
	go func() { defer wg.Done(); holder = overlapSend(s, op, p, "busy", `{}`) }()
	require.Eventually(t, func() bool { return p.reads.Load() == 4 }, 5*time.Second, time.Millisecond)
	inUse := overlapSend(s, op, &claimProbe{store: store}, "busy", `{}`)
	assert.Equal(t, http.StatusConflict, inUse.Code)
	assert.Equal(t, "IDEMPOTENCY_KEY_IN_USE", decodeError(t, inUse.Body.Bytes()).Code)
	close(p.hold)
	wg.Wait()
	assert.Equal(t, http.StatusCreated, holder.Code)
	assert.Equal(t, int64(2), p.writes.Load())

	store.fail = errors.New("database down")
	failed := overlapSend(s, op, p, "new", `{}`)
	assert.Equal(t, http.StatusInternalServerError, failed.Code)
	assert.Equal(t, int64(2), p.writes.Load(), "a failed claim writes nothing")
}

// Every other operation runs only once it owns its key.
func TestOtherOperationsRunAfterTheirClaim(t *testing.T) {
	var logs bytes.Buffer
	s := testServer(t, &logs)
	store := &heldStore{IdempotencyStore: s.d.Idempotency, open: make(chan struct{})}
	close(store.open)
	s.d.Idempotency = store
	p := &claimProbe{store: store}
	const op = false
	rec := overlapSend(s, op, p, "k", `{}`)
	assert.Equal(t, http.StatusCreated, rec.Code)
	assert.False(t, p.readBeforeClaim.Load(), "the claim was made before the operation ran")
	replay := overlapSend(s, op, p, "k", `{}`)
	assert.Equal(t, "true", replay.Header().Get(replayedHeader))
	assert.Equal(t, int64(1), p.reads.Load(), "a replay does not run the operation")
}

// The overlapped operations are the quote's creation and execution, and
// nothing else: each is a real operation whose service waits for its
// claim before it writes (core/quotes TestUnclaimedRequestWritesNothing).
func TestOverlappedRoutes(t *testing.T) {
	s := testServer(t, &bytes.Buffer{})
	s.mux, s.readHeaders, s.permissions = http.NewServeMux(), map[string]bool{}, map[string]string{}
	s.unkeyed, s.overlapped = map[string]bool{}, map[string]bool{}
	registerQuotes(humago.NewWithPrefix(s.mux, BasePath, s.config()), s.d)
	assert.Equal(t, map[string]bool{
		"POST /quotes":                   true,
		"POST /quotes/{quoteId}/execute": true,
	}, s.overlapped)
}
