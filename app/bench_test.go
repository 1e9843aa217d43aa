package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
			cfg, err := LoadConfig(func(string) string { return "" })
			if err != nil {
				b.Fatal(err)
			}
			if backendName == "postgres" {
				cfg.DatabaseURL = pgtest.NewDatabase(b)
			}
			ctx := context.Background()
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			clock := system.Clock{}
			be, err := openBackend(ctx, cfg, clock, log)
			if err != nil {
				b.Fatal(err)
			}
			defer be.close()
			svc := newServices(be, cfg, clock)
			p, err := svc.platforms.Create(ctx, "bench", cfg.SandboxUmaDomain, []string{"USD"})
			if err != nil {
				b.Fatal(err)
			}
			tokenID, secret, err := svc.platforms.IssueCredential(ctx, p.ID, "bench")
			if err != nil {
				b.Fatal(err)
			}
			accts := benchAccounts(b, be, svc, p.ID)
			srv := httptest.NewServer(newHandler(be, svc, cfg, clock, log))
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
			for _, conc := range []int{1, 8, 64} {
				b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
					run := fmt.Sprintf("%s-%d-%d", backendName, conc, b.N)
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
