package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/ports"
)

// Principal is who an authenticated request acts for: the platform, the
// API token it used (its client id, the Basic user name) and what that
// token may do, or the operator (no platform).
type Principal struct {
	PlatformID  string
	ClientID    string
	Permissions []string
	Operator    bool
	// AgentID and CustomerID are set for an agent's access token (on
	// /agents/me/…): the agent, its customer, and its platform as
	// PlatformID. An agent has no token permissions: its policy decides.
	AgentID    string
	CustomerID string
	// agent is the agent as authentication read it (its policy and pause
	// switch as of this request).
	agent ports.Agent
}

type principalKey struct{}

// principal returns the request's authenticated principal (the zero value
// on the unauthenticated health, docs and OpenAPI routes).
func principal(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}

func withPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// parseBasic reads "Basic base64(tokenId:secret)" from an Authorization
// header value.
func parseBasic(h string) (tokenID, secret string, err error) {
	if h == "" {
		return "", "", fault.Unauthorized("missing Authorization header")
	}
	scheme, cred, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Basic") {
		return "", "", fault.Unauthorized("Authorization header is not Basic")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return "", "", fault.Unauthorized("malformed Basic credentials")
	}
	tokenID, secret, ok := strings.Cut(string(raw), ":")
	if !ok || tokenID == "" || checkText(string(raw)) != "" {
		return "", "", fault.Unauthorized("malformed Basic credentials")
	}
	return tokenID, secret, nil
}

// authenticate requires a valid platform API credential (HTTP Basic) and
// puts its Principal in the request context. Failures are 401 with the
// failed check as `reason` and a WWW-Authenticate challenge.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Header[operatorHeader]; ok {
			s.authenticateOperator(w, r, next)
			return
		}
		if agentPath(r.URL.Path) {
			s.authenticateAgent(w, r, next)
			return
		}
		if isBearer(r.Header.Get("Authorization")) {
			writeError(w, r, toError(fault.Unauthorized(
				"an agent access token (Bearer) reaches /agents/me/… only; this operation needs a platform credential (Basic)")))
			return
		}
		tokenID, secret, err := parseBasic(r.Header.Get("Authorization"))
		if err == nil {
			key := credKey{svc: s.d.Platforms, hash: credHash(tokenID, secret)}
			cred, aerr := verified.get(key), error(nil)
			if cred.PlatformID == "" {
				if e := s.throttled(r.Context(), tokenID, r); e != nil {
					writeError(w, r, e)
					return
				}
				var c ports.APICredential
				gen := verified.generation()
				if c, aerr = s.d.Platforms.Authenticate(r.Context(), tokenID, secret); aerr == nil {
					cred = Principal{PlatformID: c.PlatformID, ClientID: c.ClientID, Permissions: c.Permissions}
					verified.putSince(key, cred, gen)
				}
			}
			if aerr == nil {
				if ri := infoFrom(r.Context()); ri != nil {
					ri.platformID = cred.PlatformID
				}
				next.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), cred)))
				return
			}
			err = aerr
			if f, ok := fault.As(err); ok && f.Kind == fault.KindUnauthorized {
				if e := s.countFailure(r.Context(), tokenID, r); e != nil {
					writeError(w, r, e)
					return
				}
			}
		}
		writeError(w, r, toError(err))
	})
}

// Verified credentials are remembered for credTTL, so a busy client costs
// one credential lookup every few seconds instead of one per request. Only
// successes are kept, under the SHA-256 of the token id and the secret
// (never the secret itself): a wrong secret hashes elsewhere and is looked
// up. The key also names the platforms service, so servers on different
// stores in one process never share an answer. Deleting a token through
// this process forgets its entries at once (forget); another instance
// serving the same PostgreSQL store hears of it from the deleting
// transaction's NOTIFY (postgres.WatchCredentialRevocations, wired to
// ForgetCredential) a moment after it commits, and at worst keeps its
// entry for credTTL.
const (
	credTTL = 5 * time.Second
	// credCacheMax bounds the cache; it is cleared when full.
	credCacheMax = 10_000
)

type credKey struct {
	svc  *platforms.Service
	hash [sha256.Size]byte
}

type credEntry struct {
	p       Principal
	expires time.Time
}

type credCache struct {
	ttl time.Duration
	max int
	now func() time.Time // the wall clock: freshness against the store

	mu sync.Mutex
	m  map[credKey]credEntry
	// gen counts forget calls: a lookup that began before one does not
	// cache what it read (the token may have been deleted since).
	gen uint64
}

var verified = &credCache{ttl: credTTL, max: credCacheMax, now: time.Now, m: map[credKey]credEntry{}}

func credHash(tokenID, secret string) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(tokenID))
	h.Write([]byte{0})
	h.Write([]byte(secret))
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// get returns the unexpired principal stored under k (zero when none).
func (c *credCache) get(k credKey) Principal {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, found := c.m[k]
	if !found {
		return Principal{}
	}
	if c.now().After(e.expires) {
		delete(c.m, k)
		return Principal{}
	}
	return e.p
}

// forget drops every entry of the client id (a deleted token): its next
// request is checked against the store.
func (c *credCache) forget(svc *platforms.Service, clientID string) {
	c.drop(svc, func(e credEntry) bool { return e.p.ClientID == clientID })
}

// forgetAll drops every entry of svc (notifications about deleted tokens
// may have been missed).
func (c *credCache) forgetAll(svc *platforms.Service) {
	c.drop(svc, func(credEntry) bool { return true })
}

// drop removes svc's entries that match, and counts a generation (see
// putSince).
func (c *credCache) drop(svc *platforms.Service, match func(credEntry) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, e := range c.m {
		if k.svc == svc && match(e) {
			delete(c.m, k)
		}
	}
}

// ForgetCredential drops what the servers on svc remember of the API token
// clientID (deleted through another instance): its next request is
// checked against the store.
func ForgetCredential(svc *platforms.Service, clientID string) { verified.forget(svc, clientID) }

// ForgetCredentials drops everything the servers on svc remember of
// verified tokens.
func ForgetCredentials(svc *platforms.Service) { verified.forgetAll(svc) }

func (c *credCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// putSince is put, unless a token was forgotten since generation gen was
// read (the principal may be a deleted token's).
func (c *credCache) putSince(k credKey, p Principal, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.store(k, p)
	}
}

func (c *credCache) put(k credKey, p Principal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store(k, p)
}

// store adds an entry; c.mu is held.
func (c *credCache) store(k credKey, p Principal) {
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = credEntry{p: p, expires: c.now().Add(c.ttl)}
}

// operatorHeader carries the operator's token (core/operator): a
// credential of its own, sent without a platform credential.
const operatorHeader = "Corridor-Operator-Token"

// operatorPrefix is where the operator's credential reaches: the ledger
// reports. Every other operation acts for a platform.
const operatorPrefix = BasePath + "/ledger"

// authenticateOperator admits a request made with the operator token
// alone. With a platform credential beside it, it is 401 (one request, one
// principal); a wrong token is 401 and counts against the throttle; the
// operator outside the ledger reports is 403.
func (s *server) authenticateOperator(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if r.Header.Get("Authorization") != "" {
		writeError(w, r, toError(fault.Unauthorized("the operator token is a credential of its own: send it without a platform credential")))
		return
	}
	if e := s.throttled(r.Context(), operatorHeader, r); e != nil {
		writeError(w, r, e)
		return
	}
	if err := s.d.Operator.Authenticate(r.Header.Get(operatorHeader)); err != nil {
		if e := s.countFailure(r.Context(), operatorHeader, r); e != nil {
			writeError(w, r, e)
			return
		}
		writeError(w, r, toError(err))
		return
	}
	if ri := infoFrom(r.Context()); ri != nil {
		ri.operator = true
	}
	if r.URL.Path != operatorPrefix && !strings.HasPrefix(r.URL.Path, operatorPrefix+"/") {
		writeError(w, r, toError(fault.New(fault.KindForbidden, "FORBIDDEN",
			"the operator token reaches the ledger reports (/ledger/…) only; this operation needs a platform credential")))
		return
	}
	next.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), Principal{Operator: true})))
}
