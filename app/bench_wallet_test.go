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
	"sync"
	"testing"

	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/loadtest"
)

// BenchmarkHTTPQuoteStamped measures the signed quote execute: quote
// round trips (create, then execute; workers off) paid from embedded
// wallets, each execute carrying a real Service-Wallet-Signature stamp by
// the wallet's session (checked against the wallet's active sessions),
// beside the same round trips paid from the same customers' ordinary
// internal accounts, in one environment (on PostgreSQL with Redis holding
// the single-use values and the response cache). The aim: stamped at
// least 0.9× plain at every concurrency.
func BenchmarkHTTPQuoteStamped(b *testing.B) {
	for _, backendName := range []string{"memory", "postgres+redis"} {
		b.Run(backendName, func(b *testing.B) { benchQuoteStamped(b, backendName) })
	}
}

// stampedPayers are the benchmark's customers: per customer an ordinary
// account and an embedded wallet (with an open session), and a EUR
// destination both pay.
type stampedPayers struct {
	*benchPayers
	wallets []string
	keys    []*ecdsa.PrivateKey
}

func newStampedPayers(b *testing.B, backendName string) *stampedPayers {
	env := newBenchEnv(b, backendName)
	ctx := context.Background()
	s := &stampedPayers{benchPayers: &benchPayers{benchEnv: env}}
	for i := range 100 {
		region, email := "US", fmt.Sprintf("bench%d@example.com", i)
		c, err := env.svc.customers.Create(ctx, env.platform.ID, customers.Input{CustomerType: "INDIVIDUAL", Region: &region, Email: &email})
		if err != nil {
			b.Fatal(err)
		}
		byType := map[string]string{}
		rows, _, err := env.be.store.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: env.platform.ID,
			CustomerID: c.ID}, ports.Page{Limit: 10})
		for _, r := range rows {
			byType[r.Type] = r.ID
		}
		acct, wallet := byType["INTERNAL_FIAT"], byType["EMBEDDED_WALLET"]
		if err != nil || acct == "" || wallet == "" {
			b.Fatalf("accounts of %s: %v (%v)", c.ID, err, byType)
		}
		for _, id := range []string{acct, wallet} {
			if _, err := env.svc.accounts.Fund(ctx, env.platform.ID, id, 1_000_000_000, ""); err != nil {
				b.Fatal(err)
			}
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
		s.accts, s.dests = append(s.accts, acct), append(s.dests, benchEURAccount(b, env.be, env.svc, env.platform.ID, acct))
		s.wallets = append(s.wallets, wallet)
		s.keys = append(s.keys, key)
	}
	srv := httptest.NewServer(newHandler(env.be, env.svc, env.cfg, env.clock, env.log))
	b.Cleanup(srv.Close)
	s.url, s.client = srv.URL+BasePath, &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	return s
}

// roundTrip creates a quote from source to dest and executes it, stamping
// the execute with key when one is given.
func (s *stampedPayers) roundTrip(key *ecdsa.PrivateKey, source, dest, idem string) error {
	body := fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},"destination":{"destinationType":"ACCOUNT","accountId":%q},`+
		`"lockedCurrencySide":"SENDING","lockedCurrencyAmount":10000}`, source, dest)
	resp, err := s.post("/quotes", idem+"-create", body)
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
	if err != nil || resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("create: %d %v", resp.StatusCode, err)
	}
	req, _ := http.NewRequest("POST", s.url+"/quotes/"+q.ID+"/execute", nil)
	req.SetBasicAuth(s.tokenID, s.secret)
	req.Header.Set("Idempotency-Key", idem+"-execute")
	if key != nil {
		if len(q.PaymentInstructions) != 1 {
			return fmt.Errorf("create %s: no payment instructions", q.ID)
		}
		payload, _ := q.PaymentInstructions[0].Info["payloadToSign"].(string)
		stamp, err := walletauth.Sign(key, []byte(payload))
		if err != nil {
			return err
		}
		req.Header.Set("Service-Wallet-Signature", stamp)
	}
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

func benchQuoteStamped(b *testing.B, backendName string) {
	s := newStampedPayers(b, backendName)
	plain := func(run string, i int) error {
		k := i % len(s.accts)
		return s.roundTrip(nil, s.accts[k], s.dests[k], fmt.Sprintf("%s-%d", run, i))
	}
	stamped := func(run string, i int) error {
		k := i % len(s.wallets)
		return s.roundTrip(s.keys[k], s.wallets[k], s.dests[k], fmt.Sprintf("%s-%d", run, i))
	}
	s.warmUp(b, func(i int) error { return plain("warm-plain-"+backendName, i) })
	s.warmUp(b, func(i int) error { return stamped("warm-stamped-"+backendName, i) })
	for _, conc := range benchConcurrencies {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			benchPairAt(b, backendName, conc, [2]func(string, int) error{plain, stamped})
		})
	}
}

// benchPairAt measures plain (ops[0]) and stamped (ops[1]) round trips at
// concurrency conc, b.N of each, in four alternating rounds (plain then
// stamped, stamped then plain, twice): run one after the other, the
// second of a pair paid for the vacuum and checkpoints of the first's
// writes, which moved the ratio between 0.83 and 1.07 from run to run. It
// reports each side's ops/s and p50/p99, and stamped/plain.
func benchPairAt(b *testing.B, backendName string, conc int, ops [2]func(run string, i int) error) {
	const rounds = 4
	var runs [2][]loadtest.Result
	per := max(1, b.N/rounds)
	for r := range rounds {
		for k := range 2 {
			side := k ^ (r % 2)
			run := benchRunName(fmt.Sprintf("pair-%s-%d-%d-%d-%d", backendName, conc, b.N, r, side))
			var (
				first    sync.Once
				firstErr error
			)
			res := loadtest.Run(per, conc, func(i int) error {
				err := ops[side](run, i)
				if err != nil {
					first.Do(func() { firstErr = err })
				}
				return err
			})
			if res.Errors > 0 {
				b.Fatalf("%d of %d round trips failed; first: %v", res.Errors, res.Ops, firstErr)
			}
			runs[side] = append(runs[side], res)
		}
	}
	plain, stamped := loadtest.Merge(runs[0]...), loadtest.Merge(runs[1]...)
	b.ReportMetric(plain.TPS, "plain_ops/s")
	b.ReportMetric(stamped.TPS, "stamped_ops/s")
	b.ReportMetric(stamped.TPS/plain.TPS, "stamped/plain")
	b.ReportMetric(float64(plain.P50.Microseconds())/1000, "plain_p50_ms")
	b.ReportMetric(float64(stamped.P50.Microseconds())/1000, "stamped_p50_ms")
	b.ReportMetric(float64(stamped.P99.Microseconds())/1000, "stamped_p99_ms")
	b.ReportMetric(0, "ns/op")
}
