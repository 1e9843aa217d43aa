package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/testkit/apischema"
	"github.com/corridorpay/corridor/testkit/externalfixture"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// The proofs: what a platform relies on under concurrency, measured through
// the real HTTP stack on memory, on PostgreSQL, and on two instances (two
// built binaries) sharing one database:
//   - 100 concurrent transfer-outs of 1 from an account funded for exactly
//     37: 37 accepted, 63 refused, balance 0, the journal verifies;
//   - 20 concurrent requests with one Idempotency-Key: one money movement,
//     every answer the first response or 409 IDEMPOTENCY_KEY_IN_USE.

// apiTarget is a running API: one or more base URLs (requests go round
// them) and a credential.
type apiTarget struct {
	bases []string
	auth  string
	// verify checks the whole journal (ledger verify).
	verify func(t *testing.T)
}

type apiReply struct {
	status int
	header http.Header
	body   []byte
}

func (r apiReply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

// do sends a request to the i-th instance (modulo their number).
func (a apiTarget) do(t *testing.T, i int, method, path, body string, header ...string) apiReply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.bases[i%len(a.bases)]+BasePath+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", a.auth)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k := 0; k+1 < len(header); k += 2 {
		req.Header.Set(header[k], header[k+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	apischema.Verify(t, req, resp.StatusCode, resp.Header, raw)
	return apiReply{status: resp.StatusCode, header: resp.Header, body: raw}
}

// created requires a 200 or 201 and returns the body's id.
func (a apiTarget) created(t *testing.T, method, path, body string) string {
	t.Helper()
	r := a.do(t, 0, method, path, body)
	require.Contains(t, []int{200, 201}, r.status, "%s %s: %s", method, path, r.body)
	id, _ := r.json(t)["id"].(string)
	return id
}

// inProcess serves an apiEnv behind a real listener.
func inProcess(t *testing.T, backendName string) apiTarget {
	env := newAPIEnv(t, backendName)
	srv := httptest.NewServer(env.handler)
	t.Cleanup(srv.Close)
	return apiTarget{bases: []string{srv.URL}, auth: env.auth, verify: func(t *testing.T) {
		res, err := env.be.reports.VerifyJournal(context.Background(), nil)
		require.NoError(t, err)
		require.True(t, res.OK(), "ledger verify: %+v", res.Breaks)
	}}
}

// twoInstances runs two corridor binaries on one scratch database and the
// shared Redis, with one fixed credential and cursor key.
func twoInstances(t *testing.T) apiTarget {
	dsn := pgtest.NewDatabase(t)
	// Redis outlives the scratch database: a token id of this run's own
	// keeps its cached Idempotency-Key responses apart from earlier runs'.
	token := "proof-" + uuid.NewString()[:8]
	env := []string{"DATABASE_URL=" + dsn, "REDIS_URL=" + os.Getenv("REDIS_URL"),
		"CORRIDOR_API_TOKEN_ID=" + token, "CORRIDOR_API_CLIENT_SECRET=proof-secret-0123456789",
		"CORRIDOR_CURSOR_KEY=proof-cursor-key-0123456789", "CORRIDOR_LOG_LEVEL=warn"}
	a := startCorridor(t, env...)
	b := startCorridor(t, env...)
	return apiTarget{bases: []string{a.base, b.base}, auth: basicAuth(token, "proof-secret-0123456789"),
		verify: func(t *testing.T) {
			cmd := exec.Command(corridorBinary(t), "ledger", "verify", "-quiet")
			cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "REDIS_URL=")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "corridor ledger verify: %s", out)
		}}
}

// payer is a customer's USD account and an external USD account of theirs.
type payer struct{ customer, account, external string }

func newPayer(t *testing.T, a apiTarget, email string) payer {
	t.Helper()
	cust := a.created(t, "POST", "/customers", fmt.Sprintf(`{"customerType":"INDIVIDUAL","region":"US","email":%q}`, email))
	r := a.do(t, 0, "GET", "/customers/internal-accounts?customerId="+cust+"&type=INTERNAL_FIAT&currency=USD", "")
	require.Equal(t, 200, r.status, "%s", r.body)
	data := r.json(t)["data"].([]any)
	require.Len(t, data, 1)
	ext, err := json.Marshal(map[string]any{"customerId": cust, "currency": "USD",
		"accountInfo": externalfixture.InfoJSON(externalfixture.Info("USD_ACCOUNT", externalfixture.DefaultSuffix))})
	require.NoError(t, err)
	return payer{customer: cust, account: data[0].(map[string]any)["id"].(string),
		external: a.created(t, "POST", "/customers/external-accounts", string(ext))}
}

// balance is the account's available balance.
func (p payer) balance(t *testing.T, a apiTarget) int64 {
	t.Helper()
	r := a.do(t, 1, "GET", "/customers/internal-accounts?customerId="+p.customer+"&type=INTERNAL_FIAT&currency=USD", "")
	require.Equal(t, 200, r.status, "%s", r.body)
	bal := r.json(t)["data"].([]any)[0].(map[string]any)["balance"].(map[string]any)
	return int64(bal["amount"].(float64))
}

func (p payer) payout(amount int64) string {
	return fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":%d}`, p.account, p.external, amount)
}

// concurrently runs n requests at once (released together) and returns
// their replies in order.
func concurrently(n int, req func(i int) apiReply) []apiReply {
	out := make([]apiReply, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			out[i] = req(i)
		}()
	}
	close(gate)
	wg.Wait()
	return out
}

// raceForBalance: 100 transfer-outs of 1 against exactly 37.
func raceForBalance(t *testing.T, a apiTarget) {
	p := newPayer(t, a, "race@example.com")
	r := a.do(t, 0, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":37}`, "Idempotency-Key", "fund-37")
	require.Equal(t, 200, r.status, "%s", r.body)
	replies := concurrently(100, func(i int) apiReply {
		return a.do(t, i, "POST", "/transfer-out", p.payout(1), "Idempotency-Key", fmt.Sprintf("race-%d", i))
	})
	accepted, refused := 0, 0
	for _, r := range replies {
		switch r.status {
		case http.StatusCreated:
			accepted++
		case http.StatusBadRequest:
			require.Equal(t, "INVALID_AMOUNT", r.json(t)["code"], "%s", r.body)
			refused++
		default:
			t.Fatalf("unexpected %d: %s", r.status, r.body)
		}
	}
	assert.Equal(t, 37, accepted, "accepted")
	assert.Equal(t, 63, refused, "refused")
	assert.Equal(t, int64(0), p.balance(t, a))
	a.verify(t)
}

// raceForKey: 20 requests with one key, for a payout and for a funding.
func raceForKey(t *testing.T, a apiTarget) {
	p := newPayer(t, a, "key@example.com")
	// race sends 20 requests at once with one key and returns the first
	// response, which every success and a later retry repeat.
	race := func(name, path, body string, status int) []byte {
		replies := concurrently(20, func(i int) apiReply {
			return a.do(t, i, "POST", path, body, "Idempotency-Key", "same-key-"+name)
		})
		var first []byte
		for _, r := range replies {
			switch r.status {
			case status:
				if first == nil {
					first = r.body
				}
				require.JSONEq(t, string(first), string(r.body), "%s: every success is the first response", name)
			case http.StatusConflict:
				require.Equal(t, "IDEMPOTENCY_KEY_IN_USE", r.json(t)["code"], "%s", r.body)
			default:
				t.Fatalf("%s: unexpected %d: %s", name, r.status, r.body)
			}
		}
		require.NotNil(t, first, "%s: one request succeeded", name)
		// A retry after the race is the stored response.
		again := a.do(t, 0, "POST", path, body, "Idempotency-Key", "same-key-"+name)
		require.Equal(t, status, again.status, "%s", again.body)
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.JSONEq(t, string(first), string(again.body))
		return first
	}
	race("fund", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":1000}`, http.StatusOK)
	race("transfer-out", "/transfer-out", p.payout(300), http.StatusCreated)
	// Funded once (1000), paid out once (300).
	assert.Equal(t, int64(700), p.balance(t, a))

	// A quote's creation and execution run beside their claims
	// (adapters/http overlappedOperations): one quote, executed once.
	var quote struct {
		ID                 string
		TotalSendingAmount int64
	}
	require.NoError(t, json.Unmarshal(race("quote", "/quotes", fmt.Sprintf(
		`{"source":{"sourceType":"ACCOUNT","accountId":%q},"destination":{"destinationType":"ACCOUNT","accountId":%q},`+
			`"lockedCurrencySide":"SENDING","lockedCurrencyAmount":200}`, p.account, p.external), http.StatusCreated), &quote))
	race("execute", "/quotes/"+quote.ID+"/execute", "", http.StatusOK)
	assert.Equal(t, 700-quote.TotalSendingAmount, p.balance(t, a))

	r := a.do(t, 0, "GET", "/transactions?customerId="+p.customer+"&limit=100", "")
	require.Equal(t, 200, r.status, "%s", r.body)
	payouts := 0
	for _, tx := range r.json(t)["data"].([]any) {
		if tx.(map[string]any)["type"] == "OUTGOING" {
			payouts++
		}
	}
	assert.Equal(t, 2, payouts, "one payout transaction, one quote's")
	a.verify(t)
}

func TestRaceForBalance(t *testing.T) {
	for _, be := range []string{"memory", "postgres"} {
		t.Run(be, func(t *testing.T) { raceForBalance(t, inProcess(t, be)) })
	}
	t.Run("two-instances", func(t *testing.T) { raceForBalance(t, twoInstances(t)) })
}

func TestRaceForIdempotencyKey(t *testing.T) {
	for _, be := range []string{"memory", "postgres"} {
		t.Run(be, func(t *testing.T) { raceForKey(t, inProcess(t, be)) })
	}
	t.Run("two-instances", func(t *testing.T) { raceForKey(t, twoInstances(t)) })
}

// Keys belong to the platform: a second credential of the same platform
// sending another body under a key the first used is refused (422), and
// nothing moves; the same body is the first response, replayed.
func TestKeyReusedByAnotherCredential(t *testing.T) {
	for _, be := range []string{"memory", "postgres"} {
		t.Run(be, func(t *testing.T) {
			env := newAPIEnv(t, be)
			srv := httptest.NewServer(env.handler)
			t.Cleanup(srv.Close)
			first := apiTarget{bases: []string{srv.URL}, auth: env.auth}
			token, secret, err := env.svc.platforms.IssueCredential(context.Background(), env.platformID, "second")
			require.NoError(t, err)
			second := apiTarget{bases: []string{srv.URL}, auth: basicAuth(token, secret)}

			p := newPayer(t, first, "two-creds@example.com")
			r := first.do(t, 0, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":1000}`, "Idempotency-Key", "fund-1")
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			paid := first.do(t, 0, "POST", "/transfer-out", p.payout(300), "Idempotency-Key", "pay-1")
			require.Equal(t, http.StatusCreated, paid.status, "%s", paid.body)

			other := second.do(t, 0, "POST", "/transfer-out", p.payout(500), "Idempotency-Key", "pay-1")
			require.Equal(t, http.StatusUnprocessableEntity, other.status, "%s", other.body)
			assert.Equal(t, "IDEMPOTENCY_KEY_REUSED", other.json(t)["code"])
			otherFund := second.do(t, 0, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":9000}`, "Idempotency-Key", "fund-1")
			require.Equal(t, http.StatusUnprocessableEntity, otherFund.status, "%s", otherFund.body)
			assert.Equal(t, int64(700), p.balance(t, first), "nothing moved")

			again := second.do(t, 0, "POST", "/transfer-out", p.payout(300), "Idempotency-Key", "pay-1")
			require.Equal(t, http.StatusCreated, again.status, "%s", again.body)
			assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
			assert.JSONEq(t, string(paid.body), string(again.body))
			assert.Equal(t, int64(700), p.balance(t, first))
		})
	}
}
