package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/loadtest"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// BenchmarkHTTPFund drives POST /sandbox/internal-accounts/{id}/fund through
// the whole HTTP stack (auth, idempotency, core, ledger) over loopback, on
// memory and on PostgreSQL, at concurrency 1, 8 and 64. Every request carries
// a fresh Idempotency-Key, as a careful client's would.
func BenchmarkHTTPFund(b *testing.B) {
	for _, backendName := range []string{"memory", "postgres"} {
		b.Run(backendName, func(b *testing.B) {
			env := newBenchEnv(b, backendName)
			be, svc, cfg, clock, log := env.be, env.svc, env.cfg, env.clock, env.log
			tokenID, secret := env.tokenID, env.secret
			p := env.platform
			accts := benchAccounts(b, be, svc, p.ID)
			srv := httptest.NewServer(newHandler(be, svc, cfg, clock, log))
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
			for _, conc := range []int{1, 8, 64} {
				b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
					run := benchRunName(fmt.Sprintf("%s-%d-%d", backendName, conc, b.N))
					r := loadtest.Run(b.N, conc, func(i int) error {
						url := srv.URL + BasePath + "/sandbox/internal-accounts/" + accts[i%len(accts)] + "/fund"
						req, _ := http.NewRequest("POST", url, bytes.NewReader([]byte(`{"amount":100}`)))
						req.SetBasicAuth(tokenID, secret)
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Idempotency-Key", fmt.Sprintf("%s-%d", run, i))
						resp, err := client.Do(req)
						if err != nil {
							return err
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						_ = resp.Body.Close()
						if resp.StatusCode != 200 {
							return fmt.Errorf("status %d", resp.StatusCode)
						}
						return nil
					})
					if r.Errors > 0 {
						b.Fatalf("%d of %d fund requests failed", r.Errors, r.Ops)
					}
					loadtest.Report(b, r)
				})
			}
		})
	}
}

// benchEnv is a backend with a platform and its credential, for the HTTP
// benchmarks.
type benchEnv struct {
	cfg             Config
	clock           ports.Clock
	log             *slog.Logger
	be              *backend
	svc             services
	platform        ports.Platform
	tokenID, secret string
}

// benchRuns numbers the benchmarks' measured runs in this process.
var benchRuns atomic.Int64

// benchRunName is name made unique in the process: runs key their
// requests' Idempotency-Keys by it, and a repeated run (-count, or the
// same b.N twice) must not replay the first one's responses.
func benchRunName(name string) string {
	return fmt.Sprintf("%s-r%d", name, benchRuns.Add(1))
}

// newBenchEnv opens a memory or PostgreSQL (scratch database) backend and
// provisions a USD platform; the backend closes when the benchmark ends.
func newBenchEnv(b *testing.B, backendName string) benchEnv {
	b.Helper()
	cfg, err := LoadConfig(func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	switch backendName {
	case "postgres":
		cfg.DatabaseURL = pgtest.NewDatabase(b)
	case "postgres+redis": // the local Redis unless REDIS_URL names another
		cfg.DatabaseURL, cfg.RedisURL = pgtest.NewDatabase(b), cmp.Or(os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379/0")
	}
	ctx := context.Background()
	env := benchEnv{cfg: cfg, clock: system.Clock{}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	env.be, err = openBackend(ctx, cfg, env.clock, env.log)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(env.be.close)
	env.svc = newServices(env.be, cfg, env.clock)
	env.platform, err = env.svc.platforms.Create(ctx, "bench", cfg.SandboxUmaDomain, []string{"USD"})
	if err != nil {
		b.Fatal(err)
	}
	env.tokenID, env.secret, err = env.svc.platforms.IssueCredential(ctx, env.platform.ID, "bench")
	if err != nil {
		b.Fatal(err)
	}
	return env
}

// benchAccounts makes 100 customers and returns their USD account ids.
func benchAccounts(b *testing.B, be *backend, svc services, platformID string) []string {
	b.Helper()
	ctx := context.Background()
	var ids []string
	for i := 0; i < 100; i++ {
		c, err := svc.customers.Create(ctx, platformID, benchCustomer(i))
		if err != nil {
			b.Fatal(err)
		}
		rows, _, err := be.store.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: platformID, CustomerID: c.ID, Currency: "USD", Type: "INTERNAL_FIAT"}, ports.Page{Limit: 10})
		if err != nil || len(rows) != 1 {
			b.Fatalf("customer accounts: %v (%d rows)", err, len(rows))
		}
		ids = append(ids, rows[0].ID)
	}
	return ids
}

func benchCustomer(int) customers.Input {
	region := "US"
	return customers.Input{CustomerType: "INDIVIDUAL", Region: &region}
}
