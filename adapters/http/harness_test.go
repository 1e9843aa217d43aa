package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fxstatic "github.com/corridorpay/corridor/adapters/fx/static"
	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/system"
	verifysandbox "github.com/corridorpay/corridor/adapters/verify/sandbox"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/apischema"
)

// apiHarness runs the full HTTP stack from httpapi.New on memory adapters
// behind a real listener.
type apiHarness struct {
	t         *testing.T
	srv       *httptest.Server
	clock     *testkit.FakeClock
	store     ports.Store
	ledger    ports.LedgerStore
	idem      *memory.IdempotencyStore
	cache     *memory.ResponseCache
	failures  *memory.FailureCounter
	platforms *platforms.Service
	accounts  *accounts.Service
	logs      *testkit.SyncBuffer
	log       *slog.Logger // writes to logs
	ids       ports.IDs
	sandboxed bool
	customers *customers.Service
	external  *external.Service
	lookup    *lookup.Service
}

type harnessOpts struct {
	production   bool // Sandbox false
	maxBodyBytes int64
	ttl          time.Duration
	ready        func(context.Context) error
}

func newHarness(t *testing.T, opts ...harnessOpts) *apiHarness {
	t.Helper()
	var o harnessOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	h := memoryHarness(t, !o.production)
	h.lookup = lookup.New(h.store, fxstatic.Default(h.clock), h.clock, h.ids)
	h.serve(httpapi.Deps{
		External:       h.external,
		Lookup:         h.lookup,
		MaxBodyBytes:   o.maxBodyBytes,
		IdempotencyTTL: o.ttl,
		Ready:          o.ready,
	})
	return h
}

// memoryHarness is the memory adapters and the services every API harness
// shares; the caller adds its own and starts the server with serve.
func memoryHarness(t *testing.T, sandboxed bool) *apiHarness {
	t.Helper()
	clock := testkit.NewFakeClock(time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC))
	l := memory.NewLedger(clock)
	st := memory.NewStore(l)
	ids := system.IDs{}
	logs := &testkit.SyncBuffer{}
	return &apiHarness{
		t: t, clock: clock, store: st, ledger: l, ids: ids, sandboxed: sandboxed,
		idem:      memory.NewIdempotencyStore(),
		cache:     memory.NewResponseCache(clock),
		failures:  memory.NewFailureCounter(clock),
		platforms: platforms.New(st, l, clock, ids, platforms.Sandbox(sandboxed)),
		accounts:  accounts.New(st, l, clock, ids, sandboxed),
		logs:      logs,
		log:       slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		customers: customers.New(st, l, clock, ids, customers.Options{}),
		external:  external.New(st, clock, ids, external.WithVerifier(verifysandbox.Verifier{})),
	}
}

// serve starts the API on d with what every harness serves filled in:
// platforms, customers, accounts, idempotency, clock, logger, sandbox mode.
func (h *apiHarness) serve(d httpapi.Deps) {
	h.t.Helper()
	d.Platforms, d.Customers, d.Accounts = h.platforms, h.customers, h.accounts
	d.Idempotency, d.Clock, d.Logger = h.idem, h.clock, h.log
	if d.Cache == nil {
		d.Cache = h.cache
	}
	d.Sandbox = h.sandboxed
	if d.Failures == nil {
		d.Failures = h.failures
	}
	d.CursorKey = []byte("test cursor key, 32 bytes long!!")
	h.srv = httptest.NewServer(httpapi.New(d))
	h.t.Cleanup(h.srv.Close)
}

// defaultRails is the default rail set on newRail, with the system ledger
// accounts (every currency, every settlement rail) created.
func (h *apiHarness) defaultRails(newRail func(ports.RailSpec) ports.Rail) *rails.Registry {
	h.t.Helper()
	reg, err := rails.FromSpecs(rails.DefaultSpecs(), newRail)
	require.NoError(h.t, err)
	require.NoError(h.t, h.ledger.CreateAccounts(context.Background(), ledger.SystemAccounts(money.Codes(), reg.SettlementRails())...))
	return reg
}

// tenant is a platform and one of its API credentials.
type tenant struct {
	platformID string
	token      string
	secret     string
}

func (h *apiHarness) tenant(currencies ...string) tenant {
	h.t.Helper()
	ctx := context.Background()
	p, err := h.platforms.Create(ctx, "platform", "example.test", currencies)
	require.NoError(h.t, err)
	token, secret, err := h.platforms.IssueCredential(ctx, p.ID, "test")
	require.NoError(h.t, err)
	return tenant{platformID: p.ID, token: token, secret: secret}
}

// credential is another credential of the same platform.
func (h *apiHarness) credential(tn tenant) tenant {
	h.t.Helper()
	token, secret, err := h.platforms.IssueCredential(context.Background(), tn.platformID, "second")
	require.NoError(h.t, err)
	return tenant{platformID: tn.platformID, token: token, secret: secret}
}

// customerAccount opens a customer's internal account directly in the store
// (as the customers service does: row and ledger account in one unit).
func (h *apiHarness) customerAccount(tn tenant, customerID, typ, currency string) ports.InternalAccount {
	h.t.Helper()
	now := h.clock.Now()
	a := ports.InternalAccount{
		ID: h.ids.New("InternalAccount"), PlatformID: tn.platformID, CustomerID: customerID,
		Type: typ, Status: accounts.StatusActive, Currency: currency, CreatedAt: now, UpdatedAt: now,
	}
	ctx := context.Background()
	require.NoError(h.t, h.store.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.InternalAccounts().Create(ctx, a); err != nil {
			return err
		}
		return tx.LedgerAccounts().Create(ctx, accounts.LedgerAccount(a))
	}))
	h.clock.Advance(time.Millisecond)
	return a
}

// platformAccount returns the tenant's platform account in currency.
func (h *apiHarness) platformAccount(tn tenant, currency string) accounts.Account {
	h.t.Helper()
	as, err := h.accounts.ListPlatformAccounts(context.Background(), tn.platformID, currency, "")
	require.NoError(h.t, err)
	require.Len(h.t, as, 1)
	return as[0]
}

func (h *apiHarness) balance(tn tenant, accountID string) int64 {
	h.t.Helper()
	a, err := h.accounts.Get(context.Background(), tn.platformID, accountID)
	require.NoError(h.t, err)
	return a.Balance
}

type apiResponse struct {
	status int
	header http.Header
	body   []byte
}

func (r apiResponse) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoErrorf(t, json.Unmarshal(r.body, &m), "body %q", r.body)
	return m
}

// request is one call; auth nil sends no Authorization header.
type request struct {
	method  string
	path    string // under the base path unless raw
	raw     bool   // path is not under the base path
	body    string
	hasBody bool
	auth    *tenant
	header  map[string]string
}

func (h *apiHarness) send(rq request) apiResponse {
	h.t.Helper()
	url := h.srv.URL + httpapi.BasePath + rq.path
	if rq.raw {
		url = h.srv.URL + rq.path
	}
	var body io.Reader
	if rq.hasBody {
		body = strings.NewReader(rq.body)
	}
	req, err := http.NewRequest(rq.method, url, body)
	require.NoError(h.t, err)
	if rq.hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if rq.auth != nil {
		req.SetBasicAuth(rq.auth.token, rq.auth.secret)
	}
	for k, v := range rq.header {
		req.Header.Set(k, v)
	}
	return h.do(req)
}

// do sends req and reads the whole response.
func (h *apiHarness) do(req *http.Request) apiResponse {
	h.t.Helper()
	res, err := h.srv.Client().Do(req)
	require.NoError(h.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(h.t, err)
	apischema.Verify(h.t, req, res.StatusCode, res.Header, b)
	return apiResponse{status: res.StatusCode, header: res.Header, body: b}
}

// get sends GET path; header is name, value pairs.
func (h *apiHarness) get(tn tenant, path string, header ...string) apiResponse {
	h.t.Helper()
	return h.send(request{method: http.MethodGet, path: path, auth: &tn, header: headerPairs(header)})
}

func (h *apiHarness) post(tn tenant, path, body string, header ...string) apiResponse {
	h.t.Helper()
	return h.send(request{method: http.MethodPost, path: path, body: body, hasBody: true, auth: &tn, header: headerPairs(header)})
}

func (h *apiHarness) patch(tn tenant, path, body string) apiResponse {
	h.t.Helper()
	return h.send(request{method: http.MethodPatch, path: path, body: body, hasBody: true, auth: &tn})
}

func (h *apiHarness) del(tn tenant, path string) apiResponse {
	h.t.Helper()
	return h.send(request{method: http.MethodDelete, path: path, auth: &tn})
}

// headerPairs reads name, value, name, value... into a header map.
func headerPairs(pairs []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return m
}

// ok requires status and returns the JSON object.
func ok(t *testing.T, r apiResponse, status int) map[string]any {
	t.Helper()
	require.Equalf(t, status, r.status, "body %s", r.body)
	return r.object(t)
}

// decode requires a 200 and decodes the body into T.
func decode[T any](t *testing.T, r apiResponse) T {
	t.Helper()
	require.Equalf(t, http.StatusOK, r.status, "body %s", r.body)
	var v T
	require.NoErrorf(t, json.Unmarshal(r.body, &v), "body %s", r.body)
	return v
}

func fundPath(accountID string) string {
	return "/sandbox/internal-accounts/" + accountID + "/fund"
}

// requireError checks the one error body: status, code, and (for 400s) the
// fields named in details.errors.
func requireError(t *testing.T, r apiResponse, status int, code string, fields ...string) map[string]any {
	t.Helper()
	require.Equalf(t, status, r.status, "body %s", r.body)
	assert.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "application/json"), r.header.Get("Content-Type"))
	m := r.object(t)
	assert.EqualValues(t, status, m["status"])
	assert.Equal(t, code, m["code"])
	assert.NotEmpty(t, m["message"])
	if len(fields) > 0 {
		details, ok := m["details"].(map[string]any)
		require.Truef(t, ok, "details in %s", r.body)
		errs, ok := details["errors"].([]any)
		require.Truef(t, ok, "details.errors in %s", r.body)
		var got []string
		for _, e := range errs {
			got = append(got, e.(map[string]any)["field"].(string))
		}
		for _, f := range fields {
			assert.Containsf(t, got, f, "fields named in %s", r.body)
		}
	}
	return m
}
