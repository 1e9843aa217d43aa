package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"time"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

const (
	idempotencyHeader = "Idempotency-Key"
	replayedHeader    = "Idempotent-Replayed"
	// maxIdempotencyKey bounds the key's length.
	maxIdempotencyKey = 255
	// minIdempotencyRetention is how long a key is remembered at least.
	minIdempotencyRetention = 24 * time.Hour
)

// Idempotency-Key failures.
var (
	errKeyReused = &fault.Error{Kind: fault.KindUnprocessable, Code: "IDEMPOTENCY_KEY_REUSED",
		Message: "the Idempotency-Key was already used with a different request",
		Fields:  []fault.FieldError{{Field: "Idempotency-Key", Message: "was already used with a different request"}}}
	errKeyInUse = fault.Conflict("IDEMPOTENCY_KEY_IN_USE",
		"a request with this Idempotency-Key is still in progress; retry later")
)

// requestHash identifies a request for Idempotency-Key reuse checks: the
// method, path, query and body, a JSON body in a canonical form (object
// keys sorted, insignificant whitespace dropped, numbers as written) and a
// multipart one without its boundary (canonicalMultipart), so a retry that
// serialises the same request anew is the same request.
// Records stored before the canonical form hold the hash of the exact
// bytes, which a request matches too (computed only when the canonical
// hash does not match).
type requestHash struct {
	canonical string
	r         *http.Request
	body      []byte
}

func hashOf(r *http.Request, body []byte) requestHash {
	c, ok := canonicalJSON(body)
	if !ok {
		c, ok = canonicalMultipart(r.Header.Get("Content-Type"), body)
	}
	if !ok {
		c = body
	}
	return requestHash{canonical: hashParts(r, c), r: r, body: body}
}

// canonicalMultipart is a multipart/form-data body without what a client
// draws anew for each send, its boundary: each part's form name, file
// name, content type and bytes, in order. False when the body is not such
// a form (it is then compared as it is).
func canonicalMultipart(contentType string, body []byte) ([]byte, bool) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, false
	}
	var b bytes.Buffer
	b.WriteString("multipart/form-data\x00")
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			return b.Bytes(), true
		}
		if err != nil {
			return nil, false
		}
		content, err := io.ReadAll(part)
		if err != nil {
			return nil, false
		}
		for _, v := range []string{part.FormName(), part.FileName(), part.Header.Get("Content-Type")} {
			writeLengthPrefixed(&b, []byte(v))
		}
		writeLengthPrefixed(&b, content)
	}
}

// matches reports whether a stored RequestHash is this request's.
func (h requestHash) matches(stored string) bool {
	return stored == h.canonical || stored == hashParts(h.r, h.body)
}

func hashParts(r *http.Request, body []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(r.Method), []byte(r.URL.EscapedPath()), []byte(r.URL.RawQuery), body} {
		writeLengthPrefixed(h, part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// writeLengthPrefixed writes v after its length, so no two sequences of
// parts write the same bytes.
func writeLengthPrefixed(w io.Writer, v []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(v)))
	_, _ = w.Write(n[:])
	_, _ = w.Write(v)
}

// canonicalJSON is body, one JSON value, re-encoded with sorted object
// keys and no insignificant whitespace (numbers keep their literal); false
// when body is not one JSON value (it is then compared as it is).
func canonicalJSON(body []byte) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF { // one value, nothing after it
		return nil, false
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, false
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), true
}

// idempotent runs a POST under its Idempotency-Key, if it has one. The key
// belongs to the credential (token id) that sent it. The first request with
// a key runs; its response (when below 500) is stored and every later
// request with the same key and the same method, path, query and body gets
// it back byte for byte with `Idempotent-Replayed: true`. The same key with
// a different request is 422 IDEMPOTENCY_KEY_REUSED; a key whose first
// request is still running is 409 IDEMPOTENCY_KEY_IN_USE. A 5xx releases
// the key so a retry runs again.
//
// This guards responses; money movements are additionally keyed by the
// Idempotency-Key in the ledger (see accounts.FundEntryID), so a crash
// between the commit and the stored response cannot post twice.
// unkeyedOperations take no Idempotency-Key: their answer carries a secret
// (a new token's clientSecret) that must never be stored, and a replay
// would have to store it. A retried creation makes another token; the
// first can be deleted.
var unkeyedOperations = map[string]bool{"createToken": true, "redeemAgentDeviceCode": true}

// refuseKey serves an unkeyed operation, refusing it when a key is sent
// (a client relying on the key to make a retry safe must not be misled).
func (s *server) refuseKey(w http.ResponseWriter, r *http.Request, operation string) {
	if _, sent := r.Header[idempotencyHeader]; sent {
		writeError(w, r, toError(fault.Invalid(idempotencyHeader,
			operation+" takes no Idempotency-Key: its answer carries a secret that is never stored, so it cannot be replayed")))
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *server) idempotent(w http.ResponseWriter, r *http.Request, overlapped bool, next http.Handler) {
	key := r.Header.Get(idempotencyHeader)
	if key == "" {
		next.ServeHTTP(w, r)
		return
	}
	if len(key) > maxIdempotencyKey {
		writeError(w, r, toError(fault.Invalid(idempotencyHeader, fmt.Sprintf("must be at most %d characters", maxIdempotencyKey))))
		return
	}
	body, err := requestBody(r, s.d.MaxBodyBytes)
	if err != nil {
		writeError(w, r, toError(fault.Invalid("body", "could not read the request body")))
		return
	}
	ctx := r.Context()
	// Keys belong to the platform: every credential of one platform shares
	// them, as core's ids derived from keys do. An agent's keys are its
	// own: two agents of a platform act for different customers, so one
	// must never be answered with the other's response.
	scope := principal(ctx).PlatformID
	if p := principal(ctx); p.AgentID != "" {
		scope = p.AgentID
	}
	hash := hashOf(r, body)

	if s.d.Cache != nil {
		var rec ports.IdempotencyRecord
		var ok bool
		if s.optionalCall(ctx, "idempotency cache get", func(ctx context.Context) (err error) {
			rec, ok, err = s.d.Cache.Get(ctx, scope, key)
			return err
		}) && ok && rec.Completed {
			s.replay(w, r, rec, hash)
			return
		}
	}

	now := s.d.Clock.Now().UTC()
	claim := ports.IdempotencyRecord{
		Scope:       scope,
		Key:         key,
		RequestHash: hash.canonical,
		Owner:       newAttempt(),
		LockedUntil: now.Add(s.d.IdempotencyLease),
		CreatedAt:   now,
		ExpiresAt:   now.Add(s.retention()),
	}
	c := s.beginClaim(ctx, claim, now, overlapped)
	if overlapped {
		// The operation reads while the claim is made, and waits for it
		// before it writes (ports.AwaitClaim).
		r = r.WithContext(ports.WithClaimWait(ctx, c.await))
	} else if out := c.wait(); out.err != nil || !out.owned {
		s.answerUnowned(w, r, out, hash)
		return
	}

	buf := newResponseBuffer()
	completed := false
	defer func() {
		// Once the claim is decided, even when the handler panicked.
		if out := c.wait(); out.err == nil && out.owned {
			out.stopRenew()
			if !completed {
				// The handler panicked or failed: let a retry run
				// again (even when the client has gone: its context is
				// cancelled then).
				if err := s.d.Idempotency.Release(context.WithoutCancel(ctx), scope, key, claim.Owner); err != nil {
					s.log.ErrorContext(ctx, "idempotency release failed", "error", err)
				}
			}
		}
	}()
	next.ServeHTTP(buf, r)
	out := c.wait()
	if out.err != nil || !out.owned {
		// An operation run beside a claim it does not own wrote nothing
		// (its AwaitClaim failed): the claim answers.
		s.answerUnowned(w, r, out, hash)
		return
	}
	out.stopRenew()

	var cache *ports.IdempotencyRecord // the response to cache once sent
	if buf.status < http.StatusInternalServerError {
		done := claim
		done.Completed = true
		done.StatusCode = buf.status
		done.Header = storedHeaders(buf.header)
		done.Body = buf.body.Bytes()
		done.ExpiresAt = s.d.Clock.Now().UTC().Add(s.retention())
		if err := s.d.Idempotency.Complete(ctx, done); err != nil {
			// The response stands; the claim lapses after its lease, and a
			// retry then runs again (money entries are keyed, so it cannot
			// post twice).
			s.log.ErrorContext(ctx, "idempotency complete failed", "error", err)
		} else {
			cache = &done
		}
		completed = true
	}
	buf.copyTo(w)
	if cache != nil {
		s.cacheAfter(w, r, *cache)
	}
}

// overlappedOperations run beside their Idempotency-Key's claim: each
// waits for the claim (ports.AwaitClaim) before its first write, so its
// reads overlap the claim's round trip. (Quote creation and execution: the
// create + execute round trip at concurrency 1, median p50 8.09 → 7.62 ms
// in sixteen interleaved pairs, see docs/performance.md; the transfer-out
// moved within the noise, so it keeps claiming first.)
var overlappedOperations = map[string]bool{"createQuote": true, "executeQuote": true}

// claimOutcome is the decision on a request's Idempotency-Key claim.
type claimOutcome struct {
	rec   ports.IdempotencyRecord
	owned bool
	err   error
	// stopRenew ends the renewal of an owned claim (keepClaim).
	stopRenew func()
}

// pendingClaim is a claim being made.
type pendingClaim struct {
	done chan struct{}
	out  claimOutcome
}

// beginClaim claims claim's key, in the background when overlapped (else before
// it returns); an owned claim is renewed from then until its stopRenew.
func (s *server) beginClaim(ctx context.Context, claim ports.IdempotencyRecord, now time.Time, overlapped bool) *pendingClaim {
	c := &pendingClaim{done: make(chan struct{})}
	begin := func() {
		defer close(c.done)
		c.out.rec, c.out.owned, c.out.err = s.d.Idempotency.Begin(ctx, claim, now)
		if c.out.err == nil && c.out.owned {
			c.out.stopRenew = s.keepClaim(ctx, claim.Scope, claim.Key, claim.Owner)
		}
	}
	if overlapped {
		go begin()
	} else {
		begin()
	}
	return c
}

// wait returns the claim's outcome once it is decided.
func (c *pendingClaim) wait() claimOutcome {
	<-c.done
	return c.out
}

// await is the operation's side of the claim (ports.WithClaimWait).
func (c *pendingClaim) await(ctx context.Context) error {
	select {
	case <-c.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	switch {
	case c.out.err != nil:
		return c.out.err
	case !c.out.owned:
		return ports.ErrNotClaimed
	}
	return nil
}

// answerUnowned answers a request whose claim failed or found its key
// held: 500, 422 IDEMPOTENCY_KEY_REUSED, the stored response, or 409
// IDEMPOTENCY_KEY_IN_USE.
func (s *server) answerUnowned(w http.ResponseWriter, r *http.Request, out claimOutcome, hash requestHash) {
	rec := out.rec
	switch {
	case out.err != nil:
		writeError(w, r, internalError(fmt.Errorf("idempotency begin: %w", out.err)))
	case !hash.matches(rec.RequestHash):
		s.observeIdempotency("reused")
		writeError(w, r, toError(errKeyReused))
	case rec.Completed:
		s.replay(w, r, rec, hash)
		s.cacheAfter(w, r, rec)
	default:
		s.observeIdempotency("in_use")
		writeError(w, r, toError(errKeyInUse))
	}
}

// retention is how long a completed key is remembered (at least 24 h).
func (s *server) retention() time.Duration {
	return max(s.d.IdempotencyTTL, minIdempotencyRetention)
}

// cacheAfter sends the response written to w (with its Content-Length) and
// then caches rec, the stored record it answered from: the response is
// stored already, so the client need not wait for the cache.
func (s *server) cacheAfter(w http.ResponseWriter, r *http.Request, rec ports.IdempotencyRecord) {
	if s.d.Cache == nil {
		return
	}
	ttl := s.d.IdempotencyTTL
	if left := rec.ExpiresAt.Sub(s.d.Clock.Now()); left < ttl {
		ttl = left
	}
	if ttl <= 0 {
		return
	}
	_ = http.NewResponseController(w).Flush()
	// The client may have gone since: the cache still fills.
	s.optionalCall(context.WithoutCancel(r.Context()), "idempotency cache put", func(ctx context.Context) error {
		return s.d.Cache.Put(ctx, rec, ttl)
	})
}

// replay writes a stored response, or 422 when the request differs from the
// one that used the key first.
func (s *server) replay(w http.ResponseWriter, r *http.Request, rec ports.IdempotencyRecord, hash requestHash) {
	if !hash.matches(rec.RequestHash) {
		s.observeIdempotency("reused")
		writeError(w, r, toError(errKeyReused))
		return
	}
	s.observeIdempotency("replayed")
	for k, v := range rec.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set(replayedHeader, "true")
	w.Header().Set("Content-Length", strconv.Itoa(len(rec.Body)))
	w.WriteHeader(rec.StatusCode)
	_, _ = w.Write(rec.Body)
}

// replayedHeaders are the response headers a replay repeats.
var replayedHeaders = []string{"Content-Type", "Location"}

func storedHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for _, k := range replayedHeaders {
		if v := h.Get(k); v != "" {
			out[k] = v
		}
	}
	return out
}

// responseBuffer captures a response in memory.
type responseBuffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newResponseBuffer() *responseBuffer { return &responseBuffer{header: http.Header{}} }

func (b *responseBuffer) Header() http.Header { return b.header }

func (b *responseBuffer) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *responseBuffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *responseBuffer) copyTo(w http.ResponseWriter) {
	for k, vs := range b.header {
		w.Header()[k] = vs
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	// A length, so the response can be flushed before the handler returns
	// without being chunked.
	w.Header().Set("Content-Length", strconv.Itoa(b.body.Len()))
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}
