package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ports"
)

// BenchmarkHTTPQuoteStamped is BenchmarkHTTPQuote (workers off) with the
// quotes paid from embedded wallets: each execute carries a real
// Service-Wallet-Signature stamp by the wallet's session, checked against
// the wallet's active sessions. Compare with BenchmarkHTTPQuote's
// workers=off rows (the aim: at least 0.9× at every concurrency).
func BenchmarkHTTPQuoteStamped(b *testing.B) {
	for _, backendName := range []string{"memory", "postgres"} {
		b.Run(backendName, func(b *testing.B) { benchQuoteStamped(b, backendName) })
	}
}

func benchQuoteStamped(b *testing.B, backendName string) {
	env := newBenchEnv(b, backendName)
	ctx := context.Background()
	s := &benchPayers{benchEnv: env}
	var keys []*ecdsa.PrivateKey
	for i := range 100 {
		region, email := "US", fmt.Sprintf("bench%d@example.com", i)
		c, err := env.svc.customers.Create(ctx, env.platform.ID, customers.Input{CustomerType: "INDIVIDUAL", Region: &region, Email: &email})
		if err != nil {
			b.Fatal(err)
		}
		rows, _, err := env.be.store.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: env.platform.ID,
			CustomerID: c.ID, Type: "EMBEDDED_WALLET"}, ports.Page{Limit: 10})
		if err != nil || len(rows) != 1 {
			b.Fatalf("wallet: %v (%d)", err, len(rows))
		}
		wallet := rows[0].ID
		if _, err := env.svc.accounts.Fund(ctx, env.platform.ID, wallet, 1_000_000_000, ""); err != nil {
			b.Fatal(err)
		}
		creds, err := env.svc.walletauth.Credentials(ctx, env.platform.ID, wallet)
		if err != nil || len(creds) != 1 {
			b.Fatalf("credential: %v", err)
		}
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		pub, _ := key.PublicKey.ECDH()
		if _, err := env.svc.walletauth.VerifyEmailOTP(ctx, env.platform.ID, creds[0].ID, walletauth.SandboxOTP, walletauth.CompressedHex(pub)); err != nil {
			b.Fatal(err)
		}
		s.accts, s.dests, keys = append(s.accts, wallet), append(s.dests, benchEURAccount(b, env.be, env.svc, env.platform.ID, wallet)), append(keys, key)
	}
	srv := httptest.NewServer(newHandler(env.be, env.svc, env.cfg, env.clock, env.log))
	b.Cleanup(srv.Close)
	s.url, s.client = srv.URL+BasePath, &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}

	op := func(run string, i int) error {
		k := i % len(s.accts)
		body := fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},"destination":{"destinationType":"ACCOUNT","accountId":%q},`+
			`"lockedCurrencySide":"SENDING","lockedCurrencyAmount":10000}`, s.accts[k], s.dests[k])
		resp, err := s.post("/quotes", fmt.Sprintf("%s-%d-create", run, i), body)
		if err != nil {
			return err
		}
		var q struct {
			ID                  string `json:"id"`
			PaymentInstructions []struct {
				Info map[string]any `json:"accountOrWalletInfo"`
			} `json:"paymentInstructions"`
		}
		err = json.NewDecoder(resp.Body).Decode(&q)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusCreated || len(q.PaymentInstructions) != 1 {
			return fmt.Errorf("create: %d %v", resp.StatusCode, err)
		}
		payload, _ := q.PaymentInstructions[0].Info["payloadToSign"].(string)
		stamp, err := walletauth.Sign(keys[k], []byte(payload))
		if err != nil {
			return err
		}
		req, _ := http.NewRequest("POST", s.url+"/quotes/"+q.ID+"/execute", nil)
		req.SetBasicAuth(s.tokenID, s.secret)
		req.Header.Set("Idempotency-Key", fmt.Sprintf("%s-%d-execute", run, i))
		req.Header.Set("Service-Wallet-Signature", stamp)
		resp, err = s.client.Do(req)
		if err != nil {
			return err
		}
		out, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), `"status":"PROCESSING"`) {
			return fmt.Errorf("execute %s: %d %s", q.ID, resp.StatusCode, out)
		}
		return nil
	}
	s.warmUp(b, func(i int) error { return op("warm-stamped-"+backendName, i) })
	benchRoundTrips(b, "stamped-"+backendName, op)
}
