package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/loadtest"
)

// BenchmarkHTTPQuote drives quote round trips through the whole HTTP stack
// over loopback, on memory and on PostgreSQL, at concurrency 1, 8 and 64:
// POST /quotes (USD from a funded customer account, 100.00 locked on the
// sending side, to the customer's EUR IBAN) then POST
// /quotes/{id}/execute, each with a fresh Idempotency-Key. One op is the
// round trip (two requests), so ops/s is round trips per second and the
// percentiles are per round trip. workers=on/off as in
// BenchmarkHTTPTransferOut: with the job loop running the payouts (and
// their sandbox outcomes) alongside, or the request path alone.
func BenchmarkHTTPQuote(b *testing.B) {
	for _, backendName := range []string{"memory", "postgres"} {
		for _, withWorkers := range []bool{false, true} {
			name := fmt.Sprintf("%s/workers=%s", backendName, map[bool]string{false: "off", true: "on"}[withWorkers])
			b.Run(name, func(b *testing.B) { benchQuote(b, backendName, withWorkers, false) })
		}
	}
}

// BenchmarkHTTPQuoteImmediate is BenchmarkHTTPQuote with the quote
// executed by its creation (immediatelyExecute): one request per op, for
// comparison with the two-request round trip.
func BenchmarkHTTPQuoteImmediate(b *testing.B) {
	for _, backendName := range []string{"memory", "postgres"} {
		b.Run(backendName+"/workers=off", func(b *testing.B) { benchQuote(b, backendName, false, true) })
	}
}

func benchQuote(b *testing.B, backendName string, withWorkers, immediate bool) {
	s := newBenchPayers(b, backendName, withWorkers, func(env benchEnv, accountID string, _ int) string {
		return benchEURAccount(b, env.be, env.svc, env.platform.ID, accountID)
	})
	post := func(path, key, body string, want int) ([]byte, error) {
		resp, err := s.post(path, key, body)
		if err != nil {
			return nil, err
		}
		out, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != want {
			return nil, fmt.Errorf("POST %s: status %d: %s", path, resp.StatusCode, out)
		}
		return out, nil
	}
	// op runs round trip i of run, timing each of its two requests.
	times := newRequestTimes("create", "execute")
	op := func(run string, i int) error {
		k := i % len(s.accts)
		// 100.00 USD locked on the sending side: about 92 EUR, well inside
		// the USD→EUR corridor's 1.00–250,000.00.
		body := fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},"destination":{"destinationType":"ACCOUNT","accountId":%q},`+
			`"lockedCurrencySide":"SENDING","lockedCurrencyAmount":10000,"immediatelyExecute":%v}`, s.accts[k], s.dests[k], immediate)
		t0 := time.Now()
		created, err := post("/quotes", fmt.Sprintf("%s-%d-create", run, i), body, http.StatusCreated)
		times.add(0, time.Since(t0))
		if err != nil || immediate {
			if err == nil && !bytes.Contains(created, []byte(`"status":"PROCESSING"`)) && !bytes.Contains(created, []byte(`"status":"COMPLETED"`)) {
				err = fmt.Errorf("immediately executed quote: %s", created)
			}
			return err
		}
		var q struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(created, &q); err != nil {
			return err
		}
		t1 := time.Now()
		executed, err := post("/quotes/"+q.ID+"/execute", fmt.Sprintf("%s-%d-execute", run, i), "", http.StatusOK)
		times.add(1, time.Since(t1))
		if err == nil && !bytes.Contains(executed, []byte(`"status":"PROCESSING"`)) && !bytes.Contains(executed, []byte(`"status":"COMPLETED"`)) {
			err = fmt.Errorf("executed quote %s: %s", q.ID, executed)
		}
		return err
	}
	s.warmUp(b, func(i int) error { return op(fmt.Sprintf("warm-%s-%v-%v", backendName, withWorkers, immediate), i) })
	benchRoundTrips(b, fmt.Sprintf("%s-%v-%v", backendName, withWorkers, immediate), op, times)
}

// requestTimes keeps the latency of each request of a round trip, by its
// place in the round trip, so a benchmark can report the p50 of each
// (name_p50_ms) beside the round trip's.
type requestTimes struct {
	mu    sync.Mutex
	names []string
	lat   [][]time.Duration
}

func newRequestTimes(names ...string) *requestTimes {
	return &requestTimes{names: names, lat: make([][]time.Duration, len(names))}
}

// add keeps d as a latency of request k.
func (t *requestTimes) add(k int, d time.Duration) {
	t.mu.Lock()
	t.lat[k] = append(t.lat[k], d)
	t.mu.Unlock()
}

// reset forgets every latency kept (the warm-up's, the previous run's).
func (t *requestTimes) reset() {
	t.mu.Lock()
	t.lat = make([][]time.Duration, len(t.names))
	t.mu.Unlock()
}

// report reports each request's p50 of the latencies kept.
func (t *requestTimes) report(b *testing.B) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, d := range t.lat {
		if len(d) > 0 {
			slices.Sort(d)
			b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, t.names[k]+"_p50_ms")
		}
	}
}

// benchRoundTrips runs op (round trip i of run) at concurrency 1, 8 and 64
// and reports each, with the p50 of each request op keeps in times; a
// failed round trip fails the benchmark, naming the first error.
func benchRoundTrips(b *testing.B, name string, op func(run string, i int) error, times *requestTimes) {
	for _, conc := range benchConcurrencies {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			times.reset()
			benchRoundTripsAt(b, name, conc, op)
			times.report(b)
		})
	}
}

var benchConcurrencies = []int{1, 8, 64}

// benchRoundTripsAt is one concurrency of benchRoundTrips.
func benchRoundTripsAt(b *testing.B, name string, conc int, op func(run string, i int) error) {
	run := benchRunName(fmt.Sprintf("%s-%d-%d", name, conc, b.N))
	var (
		first    sync.Once
		firstErr error
	)
	r := loadtest.Run(b.N, conc, func(i int) error {
		err := op(run, i)
		if err != nil {
			first.Do(func() { firstErr = err })
		}
		return err
	})
	if r.Errors > 0 {
		b.Fatalf("%d of %d round trips failed; first: %v", r.Errors, r.Ops, firstErr)
	}
	loadtest.Report(b, r)
}

// benchEURAccount creates, through the external-account service, a EUR
// IBAN account of the owner of internal account accountID (the sandbox pays
// it successfully: its IBAN does not end in an outcome suffix).
func benchEURAccount(b *testing.B, be *backend, svc services, platformID, accountID string) string {
	b.Helper()
	ctx := context.Background()
	a, err := be.store.Read().InternalAccounts().Get(ctx, platformID, accountID)
	if err != nil {
		b.Fatal(err)
	}
	ea, err := svc.external.Create(ctx, platformID, external.Input{CustomerID: a.CustomerID, Currency: "EUR", Info: ports.AccountInfo{
		AccountType: "EUR_ACCOUNT", IBAN: "DE89370400440532013000", SwiftCode: "COBADEFFXXX",
		Beneficiary: &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Bench Payee", CountryOfResidence: "DE"},
	}})
	if err != nil {
		b.Fatal(err)
	}
	if ea.Status != external.StatusActive {
		b.Fatalf("EUR external account %s is %s", ea.ID, ea.Status)
	}
	return ea.ID
}
