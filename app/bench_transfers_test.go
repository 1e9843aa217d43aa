package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/corridorpay/corridor/core/platforms"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/loadtest"
)

// BenchmarkHTTPTransferOut drives POST /transfer-out through the whole HTTP
// stack (auth, idempotency, validation, the ledger hold, the transaction
// and its submission job) over loopback, on memory and on PostgreSQL, at
// concurrency 1, 8 and 64, spread over 100 funded customer accounts each
// paying its own external account. Every request carries a fresh
// Idempotency-Key. workers=on also runs the job loop as the server does
// (rail submissions and outcomes competing for the same database);
// workers=off measures the request path alone; workers=on also reports
// how many transactions the job loop had not yet submitted when the
// requests stopped (unsubmitted).
func BenchmarkHTTPTransferOut(b *testing.B) {
	for _, backendName := range []string{"memory", "postgres"} {
		for _, withWorkers := range []bool{false, true} {
			name := fmt.Sprintf("%s/workers=%s", backendName, map[bool]string{false: "off", true: "on"}[withWorkers])
			b.Run(name, func(b *testing.B) { benchTransferOut(b, backendName, withWorkers, false) })
		}
		b.Run(backendName+"/workers=on/webhooks=on", func(b *testing.B) { benchTransferOut(b, backendName, true, true) })
	}
}

// benchHooks is a webhook endpoint that measures: how many events arrived,
// and each transaction event's lag from its change (the transaction's
// updatedAt) to its arrival (a balance event's account carries no time of
// the change).
type benchHooks struct {
	mu     sync.Mutex
	lags   []time.Duration
	events int
}

func (h *benchHooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var env struct {
		Type string `json:"type"`
		Data struct {
			UpdatedAt time.Time `json:"updatedAt"`
		} `json:"data"`
	}
	_ = json.NewDecoder(r.Body).Decode(&env)
	h.mu.Lock()
	h.events++
	h.mu.Unlock()
	payment := strings.HasPrefix(env.Type, "OUTGOING_PAYMENT.") || strings.HasPrefix(env.Type, "INCOMING_PAYMENT.")
	if payment && !env.Data.UpdatedAt.IsZero() {
		lag := time.Since(env.Data.UpdatedAt)
		h.mu.Lock()
		h.lags = append(h.lags, lag)
		h.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

// take returns and forgets the lags so far, sorted, and how many events
// arrived.
func (h *benchHooks) take() ([]time.Duration, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out, n := h.lags, h.events
	h.lags, h.events = nil, 0
	slices.Sort(out)
	return out, n
}

func benchTransferOut(b *testing.B, backendName string, withWorkers, withHooks bool) {
	s := newBenchPayers(b, backendName, withWorkers, func(env benchEnv, accountID string, i int) string {
		return benchExternalAccount(b, env.be, env.platform.ID, accountID, i)
	})
	ctx := context.Background()
	var hooks *benchHooks
	if withHooks {
		hooks = &benchHooks{}
		srv := httptest.NewServer(hooks)
		b.Cleanup(srv.Close)
		if _, err := s.svc.platforms.UpdateConfig(ctx, s.platform.ID, benchEndpoint(srv.URL)); err != nil {
			b.Fatal(err)
		}
	}
	op := s.transferOut
	s.warmUp(b, func(i int) error { return op(fmt.Sprintf("warm-%s-%v", backendName, withWorkers), i) })
	for _, conc := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			run := benchRunName(fmt.Sprintf("%s-%v-%d-%d", backendName, withWorkers, conc, b.N))
			if hooks != nil {
				hooks.take() // the warm-up's and the previous run's
			}
			r := loadtest.Run(b.N, conc, func(i int) error { return op(run, i) })
			if r.Errors > 0 {
				b.Fatalf("%d of %d transfer-outs failed", r.Errors, r.Ops)
			}
			loadtest.Report(b, r)
			if hooks != nil {
				// Deliveries during the run and for up to 5 s after:
				// the outbox lag, change to the receiver's 2xx.
				deadline := time.Now().Add(5 * time.Second)
				var lags []time.Duration
				events := 0
				for time.Now().Before(deadline) {
					l, n := hooks.take()
					lags, events = append(lags, l...), events+n
					if len(lags) >= 2*b.N { // PENDING and PROCESSING of each, at least
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				slices.Sort(lags)
				b.ReportMetric(float64(events)/r.Elapsed.Seconds(), "events/s")
				if len(lags) > 0 {
					b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1000, "lag_p99_ms")
					b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1000, "lag_p50_ms")
				}
			}
			if withWorkers {
				// How far the job loop was behind when the requests
				// stopped: transactions not yet submitted to their rail.
				_, behind, err := s.be.store.Read().Transactions().List(ctx,
					ports.TransactionFilter{PlatformID: s.platform.ID, Status: "PENDING"}, ports.Page{Limit: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(behind), "unsubmitted")
			}
		})
	}
}

// transferOut sends transfer-out i of run: 1.00 from the i-th account (of
// benchAccounts, in turn) to its destination.
func (s *benchPayers) transferOut(run string, i int) error {
	k := i % len(s.accts)
	body := fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":100}`, s.accts[k], s.dests[k])
	resp, err := s.post("/transfer-out", fmt.Sprintf("%s-%d", run, i), body)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// benchExternalAccount stores an ACTIVE USD external account for the owner
// of internal account accountID (an account number whose sandbox outcome is
// success).
func benchExternalAccount(b *testing.B, be *backend, platformID, accountID string, i int) string {
	b.Helper()
	ctx := context.Background()
	a, err := be.store.Read().InternalAccounts().Get(ctx, platformID, accountID)
	if err != nil {
		b.Fatal(err)
	}
	now := system.Clock{}.Now()
	ea := ports.ExternalAccount{
		ID: system.IDs{}.New("ExternalAccount"), PlatformID: platformID, CustomerID: a.CustomerID, Currency: "USD",
		Status: "ACTIVE", BeneficiaryVerificationStatus: "MATCHED", CreatedAt: now, UpdatedAt: now,
		Info: ports.AccountInfo{AccountType: "USD_ACCOUNT", AccountNumber: fmt.Sprintf("4%08d0", i), RoutingNumber: "021000021",
			BankAccountType: "CHECKING", BankName: "Bench Bank"},
	}
	if err := be.store.InTx(ctx, func(tx ports.Tx) error { return tx.ExternalAccounts().Create(ctx, ea) }); err != nil {
		b.Fatal(err)
	}
	return ea.ID
}

// benchPayers is a loopback server over a new bench environment whose
// benchAccounts are each funded with 10,000,000.00 USD (far more than every
// concurrency level spends, so no request meets an insufficient balance)
// and each pay their own destination. With workers the job loop runs
// alongside, as the server's does. All of it stops when the benchmark ends.
type benchPayers struct {
	benchEnv
	url          string
	client       *http.Client
	accts, dests []string
}

// newBenchPayers builds benchPayers; dest makes the destination of the
// i-th account.
func newBenchPayers(b *testing.B, backendName string, withWorkers bool, dest func(env benchEnv, accountID string, i int) string) *benchPayers {
	b.Helper()
	env := newBenchEnv(b, backendName)
	ctx := context.Background()
	s := &benchPayers{benchEnv: env, accts: benchAccounts(b, env.be, env.svc, env.platform.ID)}
	s.dests = make([]string, len(s.accts))
	for i, a := range s.accts {
		if _, err := env.svc.accounts.Fund(ctx, env.platform.ID, a, 1_000_000_000, ""); err != nil {
			b.Fatal(err)
		}
		s.dests[i] = dest(env, a, i)
	}
	srv := httptest.NewServer(newHandler(env.be, env.svc, env.cfg, env.clock, env.log))
	b.Cleanup(srv.Close)
	if withWorkers {
		w := startWorkers(ctx, env.be, env.svc.runner, env.svc.webhooks, env.cfg, env.clock, env.log)
		b.Cleanup(w.stop)
	}
	s.url = srv.URL + BasePath
	s.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	return s
}

// warmUpOps is how many requests warmUp sends.
const warmUpOps = 1000

// warmUp sends warmUpOps requests (op) at concurrency 64 before anything is
// measured, so every figure is of a running server: the connection pool
// open, statements prepared on its connections, caches filled. A failed
// request fails the benchmark.
func (s *benchPayers) warmUp(b *testing.B, op func(i int) error) {
	b.Helper()
	if r := loadtest.Run(warmUpOps, 64, op); r.Errors > 0 {
		b.Fatalf("warm-up: %d of %d requests failed", r.Errors, r.Ops)
	}
}

// post sends an authenticated JSON POST to path under Idempotency-Key key.
func (s *benchPayers) post(path, key, body string) (*http.Response, error) {
	req, _ := http.NewRequest("POST", s.url+path, bytes.NewReader([]byte(body)))
	req.SetBasicAuth(s.tokenID, s.secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	return s.client.Do(req)
}

// benchEndpoint is the configuration change that sets the webhook
// endpoint url.
func benchEndpoint(url string) platforms.ConfigUpdate {
	return platforms.ConfigUpdate{WebhookEndpoint: &url}
}
