// Package oidc verifies the signatures of OpenID Connect ID tokens against
// the JSON Web Key Sets (JWKS) of configured issuers.
//
// Each issuer's JWKS is fetched on its first use (not at start-up, so the
// service starts without network), kept in a jwx jwk.Cache that refreshes it
// in the background, and refreshed on demand when a token names a key ID the
// cached set does not hold: at most once per MinRefreshInterval per issuer,
// so tokens with made-up key IDs cannot make the service hammer the issuer.
// Only the signature is checked here; the claims are the caller's business.
package oidc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lestrrat-go/httprc/v3"
	"github.com/lestrrat-go/httprc/v3/errsink"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/corridorpay/corridor/ports"
)

var (
	// ErrUnknownIssuer says the token's issuer is not one of Options.Issuers.
	ErrUnknownIssuer = errors.New("oidc: issuer not configured")
	// ErrBadSignature says the token's signature does not verify: malformed
	// token, a disallowed algorithm ("none", HMAC, unknown), an algorithm
	// that does not match the key's, a key ID the issuer does not publish,
	// or a signature that does not match the key.
	ErrBadSignature = errors.New("oidc: token signature does not verify")
)

const (
	defaultMinRefresh  = 30 * time.Second
	defaultHTTPTimeout = 10 * time.Second
	// maxDocumentBytes bounds a discovery document or JWKS body.
	maxDocumentBytes = 1 << 20
	discoveryPath    = "/.well-known/openid-configuration"
	// maxKidInErrors bounds how much of an (untrusted) kid an error quotes.
	maxKidInErrors = 64
)

// allowedAlgs are the JWS algorithms an ID token may be signed with: the
// asymmetric ones. "none" and the HMAC family are refused before any key is
// looked at (an HMAC "key" would be a public key an attacker also holds).
var allowedAlgs = map[string]bool{
	"RS256": true, "RS384": true, "RS512": true,
	"PS256": true, "PS384": true, "PS512": true,
	"ES256": true, "ES384": true, "ES512": true,
	"EdDSA": true, "Ed25519": true,
}

// Issuer is one accepted OIDC issuer: its `iss` value and, optionally, its
// JWKS URL (empty: discovered from Issuer + "/.well-known/openid-configuration"
// → jwks_uri, once, then cached).
type Issuer struct {
	Issuer, JWKSURL string
}

// Options configure New.
type Options struct {
	Issuers []Issuer
	// HTTPClient fetches discovery documents and key sets; nil: a client
	// with a 10 s timeout.
	HTTPClient *http.Client
	// MinRefreshInterval rate-limits, per issuer, the refreshes a token
	// with an unknown kid triggers, and the retries of a key set (or
	// discovery document) whose fetch failed; 0 → 30 s. The first,
	// successful fetch of a key set does not count.
	MinRefreshInterval time.Duration
	// Now is the clock of that rate limit; nil → time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// KeySets verifies ID-token signatures against the configured issuers' key
// sets. It is safe for concurrent use. Its background refreshes stop when
// the context given to New is done; calls made after that fail with
// ports.ErrUnavailable when they need the network.
type KeySets struct {
	life       context.Context
	cache      *jwk.Cache
	client     *http.Client
	minRefresh time.Duration
	now        func() time.Time
	log        *slog.Logger
	issuers    map[string]*issuer // fixed after New

	mu      sync.Mutex
	sources map[string]*source // by JWKS URL: issuers sharing a key set share its cache entry
}

// issuer is the state of one configured issuer: where its key set lives.
type issuer struct {
	name string
	lock chan struct{} // serialises discovery
	src  atomic.Pointer[source]
	// guarded by lock: the last failed discovery, for its rate limit.
	failedAt time.Time
	failErr  error
}

// source is one JWKS URL registered (lazily) in the cache.
type source struct {
	url  string
	lock chan struct{} // serialises the first fetch and refreshes
	res  atomic.Pointer[httprc.ResourceBase[jwk.Set]]
	// onFetchErr, while the first fetch is awaited, learns why a fetch failed
	// (the cache itself only reports it to its error sink).
	onFetchErr atomic.Pointer[context.CancelCauseFunc]
	// guarded by lock: the last fetch this package asked for (a refresh or a
	// failed first fetch) and, while the set has never loaded, why it failed.
	lastFetch time.Time
	lastErr   error
}

// New checks o and starts the key-set cache; it fetches nothing yet.
func New(ctx context.Context, o Options) (*KeySets, error) {
	if o.MinRefreshInterval < 0 {
		return nil, fmt.Errorf("oidc: negative MinRefreshInterval %s", o.MinRefreshInterval)
	}
	k := &KeySets{
		life: ctx, client: o.HTTPClient, minRefresh: o.MinRefreshInterval, now: o.Now, log: o.Logger,
		issuers: make(map[string]*issuer, len(o.Issuers)), sources: map[string]*source{},
	}
	if k.client == nil {
		k.client = &http.Client{Timeout: defaultHTTPTimeout}
	}
	if k.minRefresh == 0 {
		k.minRefresh = defaultMinRefresh
	}
	if k.now == nil {
		k.now = time.Now
	}
	if k.log == nil {
		k.log = slog.New(slog.DiscardHandler)
	}
	for _, c := range o.Issuers {
		if err := validateIssuer(c); err != nil {
			return nil, err
		}
		if _, dup := k.issuers[c.Issuer]; dup {
			return nil, fmt.Errorf("oidc: issuer %q configured twice", c.Issuer)
		}
		iss := &issuer{name: c.Issuer, lock: make(chan struct{}, 1)}
		if c.JWKSURL != "" {
			iss.src.Store(k.sourceFor(c.JWKSURL))
		}
		k.issuers[c.Issuer] = iss
	}
	sink := errsink.NewFunc(func(ctx context.Context, err error) {
		k.log.WarnContext(ctx, "oidc: JWKS fetch failed", "err", err)
	})
	cache, err := jwk.NewCache(ctx, httprc.NewClient(httprc.WithErrorSink(sink)))
	if err != nil {
		return nil, fmt.Errorf("oidc: start JWKS cache: %w", err)
	}
	k.cache = cache
	return k, nil
}

func validateIssuer(c Issuer) error {
	if c.Issuer == "" {
		return errors.New("oidc: an issuer has an empty Issuer")
	}
	if c.JWKSURL != "" {
		if err := checkHTTPURL(c.JWKSURL); err != nil {
			return fmt.Errorf("oidc: issuer %q: JWKSURL: %w", c.Issuer, err)
		}
		return nil
	}
	if err := checkHTTPURL(c.Issuer); err != nil {
		return fmt.Errorf("oidc: issuer %q has no JWKSURL and cannot be discovered: %w", c.Issuer, err)
	}
	return nil
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	return nil
}

func (k *KeySets) sourceFor(jwksURL string) *source {
	k.mu.Lock()
	defer k.mu.Unlock()
	if s, ok := k.sources[jwksURL]; ok {
		return s
	}
	s := &source{url: jwksURL, lock: make(chan struct{}, 1)}
	k.sources[jwksURL] = s
	return s
}

// VerifySignature checks token's JWS signature with the issuer's current
// keys (by the header's kid; a kid not in the cached set triggers one
// refresh of that issuer's JWKS, rate-limited per issuer by
// MinRefreshInterval, then a retry). It checks ONLY the signature (claims
// are checked by the caller).
//
// Errors wrap ErrUnknownIssuer, ErrBadSignature, or ports.ErrUnavailable
// (the key set or discovery document could not be fetched).
func (k *KeySets) VerifySignature(ctx context.Context, issuer string, token []byte) error {
	iss, ok := k.issuers[issuer]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownIssuer, issuer)
	}
	kid, err := checkHeader(token)
	if err != nil {
		return fmt.Errorf("%w: issuer %q: %w", ErrBadSignature, issuer, err)
	}
	src, err := k.source(ctx, iss)
	if err != nil {
		return err
	}
	set, err := k.keys(ctx, iss, src)
	if err != nil {
		return err
	}
	if _, ok := set.LookupKeyID(kid); !ok {
		if set, err = k.refresh(ctx, iss, src, kid); err != nil {
			return err
		}
		if _, ok := set.LookupKeyID(kid); !ok {
			return fmt.Errorf("%w: issuer %q publishes no key %q", ErrBadSignature, issuer, clip(kid))
		}
	}
	_, err = jws.Verify(token,
		jws.WithCompact(),
		jws.WithAlgorithmMatch(true), // the header's alg must be the key's own alg
		jws.WithCritValidation(true),
		jws.WithKeySet(set,
			jws.WithRequireKid(true),
			jws.WithUseDefault(false),
			jws.WithInferAlgorithmFromKey(true), // for JWKs without "alg"
		))
	if err != nil {
		return fmt.Errorf("%w: issuer %q, key %q: %w", ErrBadSignature, issuer, clip(kid), err)
	}
	return nil
}

// checkHeader parses token as a compact JWS and returns its kid once its
// alg is an allowed one.
func checkHeader(token []byte) (string, error) {
	msg, err := jws.Parse(token, jws.WithCompact())
	if err != nil {
		return "", errors.New("malformed compact JWS")
	}
	sigs := msg.Signatures()
	if len(sigs) != 1 || sigs[0].ProtectedHeaders() == nil {
		return "", errors.New("want exactly one signature with a protected header")
	}
	h := sigs[0].ProtectedHeaders()
	alg, ok := h.Algorithm()
	if !ok || !allowedAlgs[alg.String()] {
		return "", fmt.Errorf("algorithm %q not allowed", clip(alg.String()))
	}
	kid, ok := h.KeyID()
	if !ok || kid == "" {
		return "", errors.New("header has no kid")
	}
	return kid, nil
}

// source returns where iss's key set lives, discovering it on first use.
func (k *KeySets) source(ctx context.Context, iss *issuer) (*source, error) {
	if s := iss.src.Load(); s != nil {
		return s, nil
	}
	if err := acquire(ctx, iss.lock); err != nil {
		return nil, fmt.Errorf("%w: oidc discovery for issuer %q: %w", ports.ErrUnavailable, iss.name, err)
	}
	defer release(iss.lock)
	if s := iss.src.Load(); s != nil {
		return s, nil
	}
	if iss.failErr != nil && k.now().Sub(iss.failedAt) < k.minRefresh {
		return nil, fmt.Errorf("%w (not retried within %s)", iss.failErr, k.minRefresh)
	}
	jwksURL, err := k.discover(ctx, iss.name)
	if err != nil {
		if ctx.Err() == nil { // the caller giving up is not the issuer's failure
			iss.failedAt, iss.failErr = k.now(), err
		}
		return nil, err
	}
	iss.failErr = nil
	k.log.DebugContext(ctx, "oidc: discovered JWKS URL", "issuer", iss.name, "jwks_url", jwksURL)
	s := k.sourceFor(jwksURL)
	iss.src.Store(s)
	return s, nil
}

// discover reads issuer's discovery document and returns its jwks_uri.
func (k *KeySets) discover(ctx context.Context, issuer string) (string, error) {
	docURL := strings.TrimSuffix(issuer, "/") + discoveryPath
	fail := func(err error) error {
		return fmt.Errorf("%w: oidc discovery for issuer %q at %s: %w", ports.ErrUnavailable, issuer, docURL, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, docURL, nil)
	if err != nil {
		return "", fail(err)
	}
	req.Header.Set("Accept", "application/json")
	res, err := k.client.Do(req)
	if err != nil {
		return "", fail(err)
	}
	body, err := readBody(res)
	if err != nil {
		return "", fail(err)
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", fail(fmt.Errorf("decode discovery document: %w", err))
	}
	if doc.Issuer != issuer {
		return "", fail(fmt.Errorf("document names issuer %q", clip(doc.Issuer)))
	}
	if err := checkHTTPURL(doc.JWKSURI); err != nil {
		return "", fail(fmt.Errorf("jwks_uri: %w", err))
	}
	return doc.JWKSURI, nil
}

// readBody reads and closes a 200 response's body, at most maxDocumentBytes.
func readBody(res *http.Response) ([]byte, error) {
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP status %d", res.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if len(body) > maxDocumentBytes {
		return nil, fmt.Errorf("body larger than %d bytes", maxDocumentBytes)
	}
	return body, nil
}

// keys returns src's cached key set, fetching it on first use.
func (k *KeySets) keys(ctx context.Context, iss *issuer, src *source) (jwk.Set, error) {
	if r := src.res.Load(); r != nil {
		return r.Resource(), nil
	}
	fail := func(err error) error {
		return fmt.Errorf("%w: oidc JWKS for issuer %q at %s: %w", ports.ErrUnavailable, iss.name, src.url, err)
	}
	if err := acquire(ctx, src.lock); err != nil {
		return nil, fail(err)
	}
	defer release(src.lock)
	if r := src.res.Load(); r != nil {
		return r.Resource(), nil
	}
	if src.lastErr != nil && k.now().Sub(src.lastFetch) < k.minRefresh {
		return nil, fail(fmt.Errorf("%w (not retried within %s)", src.lastErr, k.minRefresh))
	}
	opCtx, cancel := k.opContext(ctx)
	defer cancel()
	r, err := k.firstFetch(opCtx, src)
	if err != nil {
		if ctx.Err() == nil { // the caller giving up is not the issuer's failure
			src.lastFetch, src.lastErr = k.now(), err
		}
		return nil, fail(err)
	}
	src.lastErr = nil
	src.res.Store(r)
	set := r.Resource()
	k.log.DebugContext(ctx, "oidc: JWKS loaded", "issuer", iss.name, "jwks_url", src.url, "keys", set.Len())
	return set, nil
}

// firstFetch registers src in the cache and waits for its first fetch (or,
// if an earlier first fetch failed, retries it), returning the resource.
//
// jwk.Cache.Register waits for the first successful fetch only: a failed
// one goes to the cache's error sink and Register would wait on. So the
// fetch client tells firstFetch (through src.onFetchErr) why it failed.
func (k *KeySets) firstFetch(ctx context.Context, src *source) (*httprc.ResourceBase[jwk.Set], error) {
	if k.cache.IsRegistered(ctx, src.url) {
		if _, err := k.cache.Refresh(ctx, src.url); err != nil {
			return nil, err
		}
	} else {
		regCtx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		src.onFetchErr.Store(&cancel)
		defer src.onFetchErr.Store(nil)
		err := k.cache.Register(regCtx, src.url, jwk.WithHTTPClient(&fetchClient{client: k.client, src: src}))
		if err != nil {
			if cause := context.Cause(regCtx); cause != nil {
				return nil, cause
			}
			return nil, err
		}
	}
	r, err := k.cache.LookupResource(ctx, src.url)
	if err != nil {
		return nil, err
	}
	if r.Resource() == nil {
		return nil, errors.New("key set not loaded")
	}
	return r, nil
}

// refresh refetches src's key set because a token names kid, which it does
// not hold, unless another caller just did or the rate limit says no (then
// it returns the cached set).
func (k *KeySets) refresh(ctx context.Context, iss *issuer, src *source, kid string) (jwk.Set, error) {
	fail := func(err error) error {
		return fmt.Errorf("%w: oidc JWKS refresh for issuer %q at %s: %w", ports.ErrUnavailable, iss.name, src.url, err)
	}
	if err := acquire(ctx, src.lock); err != nil {
		return nil, fail(err)
	}
	defer release(src.lock)
	set := src.res.Load().Resource()
	if _, ok := set.LookupKeyID(kid); ok {
		return set, nil // refreshed while this call waited
	}
	now := k.now()
	if since := now.Sub(src.lastFetch); !src.lastFetch.IsZero() && since < k.minRefresh {
		k.log.DebugContext(ctx, "oidc: JWKS refresh on unknown kid rate-limited",
			"issuer", iss.name, "jwks_url", src.url, "since_last", since)
		return set, nil
	}
	src.lastFetch = now
	k.log.DebugContext(ctx, "oidc: refreshing JWKS on unknown kid", "issuer", iss.name, "jwks_url", src.url)
	opCtx, cancel := k.opContext(ctx)
	defer cancel()
	fresh, err := k.cache.Refresh(opCtx, src.url)
	if err != nil {
		return nil, fail(err)
	}
	return fresh, nil
}

// errClosed says the context given to New is done.
var errClosed = errors.New("oidc: key sets closed")

// opContext is ctx, also cancelled when the cache stops: a call to a
// stopped cache would otherwise wait as long as ctx lets it.
func (k *KeySets) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(k.life, func() { cancel(errClosed) })
	return c, func() {
		stop()
		cancel(nil)
	}
}

// fetchClient is the HTTP client the cache fetches src with. It turns what
// the cache would only report to its error sink (a bad status, a body that
// is no JWKS) into errors it can hand to a waiting first fetch.
type fetchClient struct {
	client *http.Client
	src    *source
}

// Do fetches req and returns the response with its body read and checked.
func (f *fetchClient) Do(req *http.Request) (*http.Response, error) {
	res, err := f.fetch(req)
	if err != nil {
		if cancel := f.src.onFetchErr.Load(); cancel != nil {
			(*cancel)(err)
		}
		return nil, err
	}
	return res, nil
}

func (f *fetchClient) fetch(req *http.Request) (*http.Response, error) {
	req.Header.Set("Accept", "application/json")
	res, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := readBody(res)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", f.src.url, err)
	}
	if _, err := jwk.Parse(body); err != nil {
		return nil, fmt.Errorf("fetch %s: not a JWKS: %w", f.src.url, err)
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

func acquire(ctx context.Context, lock chan struct{}) error {
	select {
	case lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func release(lock chan struct{}) { <-lock }

// clip bounds an untrusted header value quoted in an error.
func clip(s string) string {
	if len(s) > maxKidInErrors {
		return s[:maxKidInErrors] + "…"
	}
	return s
}
