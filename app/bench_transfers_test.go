package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

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
			b.Run(name, func(b *testing.B) { benchTransferOut(b, backendName, withWorkers) })
		}
	}
}

func benchTransferOut(b *testing.B, backendName string, withWorkers bool) {
	env := newBenchEnv(b, backendName)
	be, svc, cfg, clock, log := env.be, env.svc, env.cfg, env.clock, env.log
	tokenID, secret, p := env.tokenID, env.secret, env.platform
	ctx := context.Background()
	accts := benchAccounts(b, be, svc, p.ID)
	dests := make([]string, len(accts))
	for i, a := range accts {
		if _, err := svc.accounts.Fund(ctx, p.ID, a, 1_000_000_000, ""); err != nil {
			b.Fatal(err)
		}
		dests[i] = benchExternalAccount(b, be, p.ID, a, i)
	}
	srv := httptest.NewServer(newHandler(be, svc, cfg, clock, log))
	defer srv.Close()
	if withWorkers {
		w := startWorkers(ctx, be, svc.runner, cfg, clock, log)
		defer w.stop()
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	for _, conc := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			run := fmt.Sprintf("%s-%v-%d-%d", backendName, withWorkers, conc, b.N)
			r := loadtest.Run(b.N, conc, func(i int) error {
				k := i % len(accts)
				body := fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":100}`, accts[k], dests[k])
				req, _ := http.NewRequest("POST", srv.URL+BasePath+"/transfer-out", bytes.NewReader([]byte(body)))
				req.SetBasicAuth(tokenID, secret)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", fmt.Sprintf("%s-%d", run, i))
				resp, err := client.Do(req)
				if err != nil {
					return err
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					return fmt.Errorf("status %d", resp.StatusCode)
				}
				return nil
			})
			if r.Errors > 0 {
				b.Fatalf("%d of %d transfer-outs failed", r.Errors, r.Ops)
			}
			loadtest.Report(b, r)
			if withWorkers {
				// How far the job loop was behind when the requests
				// stopped: transactions not yet submitted to their rail.
				_, behind, err := be.store.Read().Transactions().List(ctx,
					ports.TransactionFilter{PlatformID: p.ID, Status: "PENDING"}, ports.Page{Limit: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(behind), "unsubmitted")
			}
		})
	}
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
