package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/agents/spend"
	"github.com/corridorpay/corridor/core/approvals"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/events"
	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/core/invitations"
	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/operator"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/reports"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/core/uma"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ports"
)

// BasePath is the version segment every API operation sits under.
const BasePath = "/2025-10-13"

// APIVersion is the API's version (the date of BasePath).
const APIVersion = "2025-10-13"

// DefaultMaxBodyBytes bounds a request body when Deps.MaxBodyBytes is 0.
const DefaultMaxBodyBytes int64 = 1 << 20

// DefaultIdempotencyTTL is how long a replayable response is cached when
// Deps.IdempotencyTTL is 0.
const DefaultIdempotencyTTL = 24 * time.Hour

// Deps is what the HTTP adapter needs.
type Deps struct {
	Platforms *platforms.Service
	Customers *customers.Service
	Accounts  *accounts.Service
	// Transfers (POST /transfer-in, /transfer-out) and Transactions (GET
	// /transactions…) are registered when set.
	Transfers    *transfers.Service
	Transactions *transactions.Service
	// External (/customers/external-accounts, /platform/external-accounts)
	// and Lookup (GET /receiver/external-account/{accountId}) are
	// registered when set.
	External *external.Service
	Lookup   *lookup.Service
	// ExchangeRates (GET /exchange-rates) is registered when set.
	ExchangeRates *fx.Board
	// Uma (POST /sandbox/uma/receive) is registered when set.
	Uma *uma.Service
	// Quotes (/quotes…, POST /sandbox/send) is registered when set.
	Quotes *quotes.Service
	// KYC (/beneficial-owners, /verifications, /documents) is registered
	// when set; business customers then carry their beneficialOwners.
	KYC *kyc.Service
	// Invitations (/invitations…, UMA invitations) is registered when set.
	Invitations *invitations.Service
	// Approvals (POST /transactions/{id}/approve, /reject) is registered
	// when set.
	Approvals *approvals.Service
	// Agents (/agents…: management with Basic, /agents/me/… with the
	// agent's Bearer token, the device-code redemption without a
	// credential) is registered when set.
	Agents *agents.Service
	// AgentSpend (/agents/me/quotes…, /agents/me/transfer-in|out: the
	// agent's money-moving actions) is registered when set with Agents.
	AgentSpend *spend.Service
	// Reports (/ledger/…, the ledger reports) is registered when set.
	Reports *reports.Service
	// WalletAuth (/auth/…, embedded-wallet credentials and sessions) is
	// registered when set.
	WalletAuth *walletauth.Service
	// Events (/webhooks/events…, POST /sandbox/webhooks/test) is
	// registered when set; WebhookKey is the PEM public key webhooks are
	// signed with (GET /webhooks/public-key).
	Events     *events.Service
	WebhookKey string
	// Operator authenticates the operator's token (none configured when
	// nil: every operator token is refused).
	Operator *operator.Authenticator
	// Idempotency is the authoritative Idempotency-Key record (required);
	// Cache speeds up replays (optional).
	Idempotency ports.IdempotencyStore
	Cache       ports.ResponseCache
	Clock       ports.Clock
	Logger      *slog.Logger
	Sandbox     bool
	// CursorKey signs list cursors; a random key is used when empty (then
	// cursors only work on this instance until it restarts).
	CursorKey []byte
	// MaxBodyBytes bounds request bodies (DefaultMaxBodyBytes when 0).
	MaxBodyBytes int64
	// IdempotencyTTL is how long a replayable response is cached
	// (DefaultIdempotencyTTL when 0); keys are remembered at least 24 h.
	IdempotencyTTL time.Duration
	// IdempotencyLease is an in-progress Idempotency-Key claim's lease and
	// IdempotencyRenewEvery how often a running request renews it
	// (DefaultIdempotencyLease / DefaultIdempotencyRenewEvery when 0).
	IdempotencyLease      time.Duration
	IdempotencyRenewEvery time.Duration
	// Failures counts failed authentication attempts for the throttle
	// (none when nil); the limits default to DefaultAuthFailuresPerToken,
	// DefaultAuthFailuresPerAddress and DefaultAuthFailureWindow.
	Failures               ports.FailureCounter
	AuthFailuresPerToken   int
	AuthFailuresPerAddress int
	AuthFailureWindow      time.Duration
	// Observer is told of every answered request and Idempotency-Key
	// outcome (metrics); none when nil.
	Observer Observer
	// Ready reports whether backing services are reachable (for /readyz).
	Ready func(context.Context) error
}

type server struct {
	d   Deps
	log *slog.Logger
	mux *http.ServeMux
	api huma.API
	// private serves the authenticated routes (built once in New).
	private http.Handler
	// readHeaders are the header parameters operations read (checkRequest).
	readHeaders map[string]bool
	// permissions is what each route ("METHOD /path") needs of its token.
	permissions map[string]string
	// unkeyed are the POST routes that take no Idempotency-Key.
	unkeyed map[string]bool
	// overlapped are the POST routes run beside their key's claim
	// (overlappedOperations).
	overlapped map[string]bool
	// optional bounds the response cache's and the throttle's calls
	// (optionalCall).
	optional bestEffort
}

func init() {
	// Every error Huma produces (validation, malformed or oversize bodies…)
	// uses the one error body.
	huma.NewError = humaError
	huma.NewErrorWithContext = func(_ huma.Context, status int, msg string, errs ...error) huma.StatusError {
		return humaError(status, msg, errs...)
	}
	// Strict bodies: a property spelled with other letter case is unknown.
	huma.ValidateStrictCasing = true
}

// New returns the HTTP handler: the API under BasePath (Basic auth on every
// operation), its OpenAPI document and docs page (no auth), and /healthz
// and /readyz.
func New(d Deps) http.Handler {
	if d.Platforms == nil || d.Accounts == nil || d.Customers == nil || d.Idempotency == nil {
		panic("httpapi: Deps needs Platforms, Customers, Accounts and Idempotency")
	}
	if d.Clock == nil {
		d.Clock = system.Clock{}
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.MaxBodyBytes <= 0 {
		d.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if d.IdempotencyTTL <= 0 {
		d.IdempotencyTTL = DefaultIdempotencyTTL
	}
	leaseDefaults(&d)
	if d.AuthFailuresPerToken <= 0 {
		d.AuthFailuresPerToken = DefaultAuthFailuresPerToken
	}
	if d.AuthFailuresPerAddress <= 0 {
		d.AuthFailuresPerAddress = DefaultAuthFailuresPerAddress
	}
	if d.AuthFailureWindow <= 0 {
		d.AuthFailureWindow = DefaultAuthFailureWindow
	}
	if len(d.CursorKey) == 0 {
		d.CursorKey = make([]byte, 32)
		_, _ = rand.Read(d.CursorKey)
	}
	// Every line logged with a request's context names the request.
	d.Logger = slog.New(ContextLogHandler(d.Logger.Handler()))
	s := &server{d: d, log: d.Logger, mux: http.NewServeMux(), readHeaders: map[string]bool{operatorHeader: true},
		permissions: map[string]string{}, unkeyed: map[string]bool{}, overlapped: map[string]bool{}}
	s.private = s.authenticate(http.HandlerFunc(s.limitBody))
	s.api = humago.NewWithPrefix(s.mux, BasePath, s.config())
	registerAccounts(s.api, d)
	registerCustomers(s.api, d)
	registerConfig(s.api, d)
	registerTokens(s.api, d)
	if d.Transactions != nil {
		registerTransactions(s.api, d)
	}
	if d.Transfers != nil {
		registerTransfers(s.api, d)
	}
	if d.External != nil {
		registerExternal(s.api, d)
	}
	if d.Lookup != nil {
		registerLookup(s.api, d)
	}
	if d.ExchangeRates != nil {
		registerExchangeRates(s.api, d)
	}
	if d.Uma != nil {
		registerSandboxUma(s.api, d)
	}
	if d.Quotes != nil {
		registerQuotes(s.api, d)
	}
	if d.KYC != nil {
		registerBeneficialOwners(s.api, d)
		registerVerifications(s.api, d)
		registerDocuments(s.api, d)
	}
	if d.Invitations != nil {
		registerInvitations(s.api, d)
	}
	if d.Approvals != nil {
		registerApprovals(s.api, d)
	}
	if d.Agents != nil {
		registerAgents(s.api, d)
		registerAgentMe(s.api, d)
		if d.AgentSpend != nil {
			registerAgentSpend(s.api, d)
		}
	}
	if d.Reports != nil {
		registerLedgerReports(s.api, d)
	}
	if d.WalletAuth != nil {
		registerWalletAuth(s.api, d)
	}
	if d.Events != nil {
		registerWebhooks(s.api, d)
	}
	return s.logRequests(http.HandlerFunc(s.serve))
}

func (s *server) config() huma.Config {
	c := huma.DefaultConfig("corridor", APIVersion)
	c.Info.Description = "Payments and embedded-wallet API. Every operation is authenticated with a platform " +
		"API credential over HTTP Basic (token id as user name, client secret as password). Amounts are " +
		"integers in the currency's smallest unit."
	// No $schema links in bodies, and no schema route: the wire format is
	// exactly the documented models.
	c.CreateHooks = nil
	c.SchemasPath = ""
	c.Servers = []*huma.Server{{URL: BasePath, Description: "this server"}}
	c.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"BasicAuth": {Type: "http", Scheme: "basic",
			Description: "API token id as the user name and API client secret as the password."},
		"AgentAuth": {Type: "http", Scheme: "bearer",
			Description: "An agent's access token (from POST /agents/device-codes/{code}/redeem), on /agents/me/… only."},
		"OperatorToken": {Type: "apiKey", In: "header", Name: operatorHeader,
			Description: "The deployment operator's token (CORRIDOR_OPERATOR_TOKEN), alone: no platform credential beside it. " +
				"It reaches the ledger reports only, where it sees every account."},
	}
	c.Security = []map[string][]string{{"BasicAuth": {}}}
	c.Transformers = []huma.Transformer{noteErrorCause}
	c.OnAddOperation = append(c.OnAddOperation, s.onAddOperation)
	return c
}

// onAddOperation adjusts every operation as it is registered: body limits
// and, on POSTs, the optional Idempotency-Key header in the OpenAPI
// document. Bodies are already read into memory and bounded by limitBody
// (under the http.Server's read timeout), so Huma sets no read deadline of
// its own (one left on the connection would cancel a slow handler's
// context) and its size check only has to let MaxBodyBytes through.
func (s *server) onAddOperation(_ *huma.OpenAPI, op *huma.Operation) {
	op.MaxBodyBytes = s.d.MaxBodyBytes + 1
	op.BodyReadTimeout = -1
	s.noteHeaders(op)
	s.notePermission(op)
	if strings.HasPrefix(op.Path, "/ledger") {
		op.Security = []map[string][]string{{"BasicAuth": {}}, {"OperatorToken": {}}}
	}
	noteAgentSecurity(op)
	if op.Method != http.MethodPost {
		return
	}
	if unkeyedOperations[op.OperationID] {
		s.unkeyed[op.Method+" "+op.Path] = true
		return
	}
	if overlappedOperations[op.OperationID] {
		s.overlapped[op.Method+" "+op.Path] = true
	}
	for _, p := range op.Parameters {
		if p != nil && p.In == "header" && strings.EqualFold(p.Name, idempotencyHeader) {
			p.Description = idempotencyDoc
			return
		}
	}
	maxLen := maxIdempotencyKey
	op.Parameters = append(op.Parameters, &huma.Param{
		Name:        idempotencyHeader,
		In:          "header",
		Description: idempotencyDoc,
		Schema:      &huma.Schema{Type: "string", MaxLength: &maxLen},
	})
}

const idempotencyDoc = "Optional key (at most 255 characters) making the request safe to retry: a request " +
	"repeated with the same key and the same body gets the first response back, with header " +
	"`Idempotent-Replayed: true`; the same key with another body is 422 IDEMPOTENCY_KEY_REUSED, and " +
	"while the first request runs it is 409 IDEMPOTENCY_KEY_IN_USE. Keys belong to the platform (all its credentials) " +
	"and are remembered for at least 24 hours."

// noteErrorCause records the internal cause of a 5xx Huma is writing, for
// the request log line.
func noteErrorCause(ctx huma.Context, _ string, v any) (any, error) {
	if e, ok := v.(*Error); ok && e.cause != nil {
		noteCause(ctx.Context(), e.cause)
	}
	return v, nil
}

// publicPaths need no credential.
var publicPaths = map[string]bool{
	BasePath + "/openapi.json":     true,
	BasePath + "/openapi.yaml":     true,
	BasePath + "/openapi-3.0.json": true,
	BasePath + "/openapi-3.0.yaml": true,
	BasePath + "/docs":             true,
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	setResponseHeaders(w.Header())
	if e := s.checkRequest(r); e != nil {
		writeError(w, r, e)
		return
	}
	switch r.URL.Path {
	case healthzPath:
		s.healthz(w, r)
	case readyzPath:
		s.readyz(w, r)
	default:
		if publicPaths[r.URL.Path] {
			s.route(w, r)
			return
		}
		if redeemPath(r.URL.Path) && r.Method == http.MethodPost {
			s.redeem(w, r)
			return
		}
		s.private.ServeHTTP(w, r)
	}
}

// setResponseHeaders sets what every response carries, before anything
// else writes: API answers hold customer data and balances, so no cache
// (browser or proxy) may keep them, and no client may sniff a content type
// other than the one declared.
func setResponseHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// limitBody reads the request body into memory, refusing one larger than
// MaxBodyBytes with 413.
func (s *server) limitBody(w http.ResponseWriter, r *http.Request) {
	limit := s.bodyLimit(r)
	if r.ContentLength > limit {
		writeError(w, r, statusError(http.StatusRequestEntityTooLarge, "the request body is too large"))
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		_ = r.Body.Close()
		switch {
		case err != nil:
			writeError(w, r, toError(fault.Invalid("body", "could not read the request body")))
			return
		case int64(len(body)) > limit:
			writeError(w, r, statusError(http.StatusRequestEntityTooLarge, "the request body is too large"))
			return
		}
		if e := checkBody(r, body); e != nil {
			writeError(w, r, e)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, body))
	}
	s.route(w, r)
}

// bodyKey carries the request body limitBody already read, so later
// middleware (the idempotency hash) need not read and copy it again.
type bodyKey struct{}

// requestBody returns the body limitBody read; a request that did not pass
// through limitBody (a test calling a middleware alone) is read here, within
// the same limit.
func requestBody(r *http.Request, limit int64) ([]byte, error) {
	if b, ok := r.Context().Value(bodyKey{}).([]byte); ok || r.Body == nil {
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit))
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, err
}

// route dispatches to the API, answering unknown routes and methods with
// the error body, and running POSTs under their Idempotency-Key.
func (s *server) route(w http.ResponseWriter, r *http.Request) {
	if !canonicalPath(r.URL.Path) {
		// The mux would answer a redirect with no body (and a client
		// would re-send a POST it may not mean): no route has such a path.
		writeError(w, r, statusError(http.StatusNotFound, "no such route: "+r.URL.Path))
		return
	}
	_, pattern := s.mux.Handler(r)
	if pattern == "" {
		s.routeError(w, r)
		return
	}
	operation := strings.Replace(pattern, " "+BasePath, " ", 1)
	if ri := infoFrom(r.Context()); ri != nil {
		ri.operation = operation
	}
	if e := s.checkPermission(r, operation); e != nil {
		writeError(w, r, e)
		return
	}
	if e := queryError(r.URL.RawQuery); e != nil {
		writeError(w, r, e)
		return
	}
	if r.Method == http.MethodPost && !publicPaths[r.URL.Path] {
		if s.unkeyed[operation] {
			s.refuseKey(w, r, operation)
			return
		}
		s.idempotent(w, r, s.overlapped[operation], s.mux)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// canonicalPath reports whether p is already in the form the mux routes
// (no empty, "." or ".." segment), a trailing slash allowed.
func canonicalPath(p string) bool {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// queryError refuses a query string that does not parse: net/url drops a
// parameter whose percent-encoding is broken, or a string with a ';', and
// the operation would then run as if that filter had not been sent (a
// list of everything instead of one customer's). 400 naming the
// parameter.
func queryError(raw string) *Error {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		if strings.Contains(pair, ";") {
			return invalidFields(FieldError{Field: "query", Message: "parameters are separated by '&'; a ';' must be percent-encoded (%3B)"})
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return invalidFields(FieldError{Field: "query", Message: "a parameter name has a malformed percent-encoding: " + strconv.Quote(k)})
		}
		if _, err := url.QueryUnescape(v); err != nil {
			if key == "" {
				return invalidFields(FieldError{Field: "query", Message: "a parameter with no name has a malformed percent-encoding"})
			}
			return invalidFields(FieldError{Field: key, Message: "malformed percent-encoding in the value"})
		}
	}
	return nil
}

// routeError answers a request no operation matches: 404, or 405 with the
// allowed methods (as the mux decides), in the error body.
func (s *server) routeError(w http.ResponseWriter, r *http.Request) {
	buf := newResponseBuffer()
	s.mux.ServeHTTP(buf, r)
	switch buf.status {
	case http.StatusNotFound:
		writeError(w, r, statusError(http.StatusNotFound, "no such route: "+r.URL.Path))
	case http.StatusMethodNotAllowed:
		if allow := buf.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		writeError(w, r, statusError(http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path))
	default:
		// A redirect to the canonical path, or similar.
		buf.copyTo(w)
	}
}
