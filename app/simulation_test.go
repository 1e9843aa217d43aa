package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/externalfixture"
)

// The seeded whole-system simulation, in the spirit of TigerBeetle's VOPR:
// the service as wired for production, on the memory adapters and a fake
// clock, driven by a seeded random mix of operations (customers, funding,
// transfer-outs to every sandbox outcome, transfer-ins, quotes executed
// or left to expire, idempotent retries with the same and with another
// body, concurrent requests, clock jumps that let jobs and the hold reaper
// run, and restarts that keep the stores but drop in-flight work). After
// every step the invariants are checked; a failure prints the seed and the
// steps, and the same seed replays the same run.
//
// make test runs a few short seeds; make simulate SEED=… STEPS=… a long one.

type simulation struct {
	seed  uint64
	rng   *rand.Rand
	clock *testkit.FakeClock
	cfg   Config
	be    *backend
	svc   services
	h     http.Handler
	auth  string
	log   *slog.Logger
	// platformID is the platform the simulation acts as.
	platformID string

	payers []simPayer
	keyed  []simKeyed
	steps  []string
	nextID int
}

type simPayer struct {
	customer, usd string
	// ext are external USD accounts by sandbox suffix; eur an EUR IBAN.
	ext map[string]string
	eur string
}

// simKeyed is a keyed request and its first answer, for retries.
type simKeyed struct {
	path, body, key string
	status          int
	answer          []byte
}

// outcomes are the sandbox suffixes payouts go to ("" is plain success).
var simOutcomes = []string{externalfixture.DefaultSuffix, "002", "003", "004", "005"}

func newSimulation(t testing.TB, seed uint64) *simulation {
	t.Helper()
	cfg, err := LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	s := &simulation{seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		clock: testkit.NewFakeClock(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)), cfg: cfg,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s.be, err = openBackend(context.Background(), cfg, s.clock, s.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.be.close)
	s.start()
	p, err := s.svc.platforms.Create(context.Background(), "sim", cfg.SandboxUmaDomain, []string{"USD", "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	token, secret, err := s.svc.platforms.IssueCredential(context.Background(), p.ID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	s.auth, s.platformID = basicAuth(token, secret), p.ID
	return s
}

// start builds the services and the handler over the stores (a restart
// keeps the stores and rebuilds the rest).
func (s *simulation) start() {
	s.svc = newServices(s.be, s.cfg, s.clock)
	s.h = newHandler(s.be, s.svc, s.cfg, s.clock, s.log)
}

// call sends one request in process and returns status and body.
func (s *simulation) call(method, path, body string, header ...string) (int, []byte) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://corridor.test"+BasePath+path, rd)
	req.Header.Set("Authorization", s.auth)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

func (s *simulation) key() string {
	s.nextID++
	return "sim-" + strconv.FormatUint(s.seed, 10) + "-" + strconv.Itoa(s.nextID)
}

// keyedCall sends a keyed POST and remembers it for retries.
func (s *simulation) keyedCall(path, body string) (int, []byte) {
	k := s.key()
	status, answer := s.call("POST", path, body, "Idempotency-Key", k)
	if status < 500 {
		s.keyed = append(s.keyed, simKeyed{path: path, body: body, key: k, status: status, answer: answer})
	}
	return status, answer
}

func idOf(b []byte) string {
	var m struct{ ID string }
	_ = json.Unmarshal(b, &m)
	return m.ID
}

func (s *simulation) pick() *simPayer {
	if len(s.payers) == 0 {
		return nil
	}
	return &s.payers[s.rng.IntN(len(s.payers))]
}

// step runs one random operation and returns its description, or an error
// when the service answered something no input may get (a 5xx, a replay
// that differs).
func (s *simulation) step() (string, error) {
	n := s.rng.IntN(100)
	p := s.pick()
	switch {
	case p == nil || n < 6:
		return s.newPayer()
	case n < 22:
		amount := 1 + s.rng.Int64N(50_000)
		status, b := s.keyedCall("/sandbox/internal-accounts/"+p.usd+"/fund", fmt.Sprintf(`{"amount":%d}`, amount))
		return fmt.Sprintf("fund %s %d → %d", p.usd, amount, status), s.want(status, b, 200)
	case n < 45:
		suffix := simOutcomes[s.rng.IntN(len(simOutcomes))]
		amount := 1 + s.rng.Int64N(20_000)
		status, b := s.keyedCall("/transfer-out", fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":%d}`, p.usd, p.ext[suffix], amount))
		return fmt.Sprintf("transfer-out %d to …%s → %d", amount, suffix, status), s.want(status, b, 201, 400)
	case n < 52:
		amount := 1 + s.rng.Int64N(20_000)
		suffix := simOutcomes[s.rng.IntN(len(simOutcomes))]
		status, b := s.keyedCall("/transfer-in", fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":%d}`, p.ext[suffix], p.usd, amount))
		return fmt.Sprintf("transfer-in %d from …%s → %d", amount, suffix, status), s.want(status, b, 201, 400)
	case n < 62:
		amount := 100 + s.rng.Int64N(10_000)
		now := s.rng.IntN(2) == 0
		status, b := s.keyedCall("/quotes", fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":%d,"immediatelyExecute":%t}`, p.usd, p.eur, amount, now))
		if err := s.want(status, b, 201, 200, 400); err != nil || now || status >= 300 || s.rng.IntN(3) == 0 {
			return fmt.Sprintf("quote %d (execute now %t) → %d", amount, now, status), err
		}
		// Executed later (maybe after it expired).
		s.clock.Advance(time.Duration(s.rng.IntN(400)) * time.Second)
		es, eb := s.keyedCall("/quotes/"+idOf(b)+"/execute", `{}`)
		return fmt.Sprintf("quote %d then execute → %d", amount, es), s.want(es, eb, 200, 400, 409)
	case n < 72 && len(s.keyed) > 0:
		k := s.keyed[s.rng.IntN(len(s.keyed))]
		if s.rng.IntN(4) == 0 {
			status, b := s.call("POST", k.path, strings.Replace(k.body, "}", `,"description":"other"}`, 1), "Idempotency-Key", k.key)
			if status != 422 && !(status == 400 && k.status == 400) {
				return "retry with another body", fmt.Errorf("same key, another body: %d %s (first %d)", status, b, k.status)
			}
			return "retry " + k.key + " with another body → " + strconv.Itoa(status), nil
		}
		status, b := s.call("POST", k.path, k.body, "Idempotency-Key", k.key)
		if status != k.status || !bytes.Equal(b, k.answer) {
			return "retry", fmt.Errorf("replay of %s differs: %d %s, first %d %s", k.key, status, b, k.status, k.answer)
		}
		return "retry " + k.key + " → " + strconv.Itoa(status), nil
	case n < 80:
		return s.concurrentPayouts(p)
	case n < 95:
		d := time.Duration(1+s.rng.IntN(60)) * time.Second
		if s.rng.IntN(5) == 0 {
			d = time.Duration(1+s.rng.IntN(15)) * time.Minute
		}
		s.clock.Advance(d)
		return "advance " + d.String() + " and run jobs", s.runJobs()
	default:
		return s.restart()
	}
}

// want is nil when status is one of ok (and never when it is a 5xx).
func (s *simulation) want(status int, body []byte, ok ...int) error {
	for _, o := range ok {
		if status == o {
			return nil
		}
	}
	return fmt.Errorf("unexpected %d: %s", status, body)
}

func (s *simulation) newPayer() (string, error) {
	s.nextID++
	status, b := s.call("POST", "/customers", fmt.Sprintf(`{"customerType":"INDIVIDUAL","region":"US","email":"sim%d@example.com"}`, s.nextID))
	if status != 201 {
		return "new customer", fmt.Errorf("create customer: %d %s", status, b)
	}
	p := simPayer{customer: idOf(b), ext: map[string]string{}}
	status, b = s.call("GET", "/customers/internal-accounts?customerId="+p.customer+"&type=INTERNAL_FIAT&currency=USD", "")
	var list struct{ Data []struct{ ID string } }
	if status != 200 || json.Unmarshal(b, &list) != nil || len(list.Data) != 1 {
		return "new customer", fmt.Errorf("internal accounts: %d %s", status, b)
	}
	p.usd = list.Data[0].ID
	ext := func(typ, suffix string) (string, error) {
		body, _ := json.Marshal(map[string]any{"customerId": p.customer, "currency": externalfixture.Currency[typ],
			"accountInfo": externalfixture.InfoJSON(externalfixture.Info(typ, suffix))})
		status, b := s.call("POST", "/customers/external-accounts", string(body))
		if status != 201 {
			return "", fmt.Errorf("external account …%s: %d %s", suffix, status, b)
		}
		return idOf(b), nil
	}
	for _, suffix := range simOutcomes {
		id, err := ext("USD_ACCOUNT", suffix)
		if err != nil {
			return "new customer", err
		}
		p.ext[suffix] = id
	}
	id, err := ext("EUR_ACCOUNT", externalfixture.DefaultSuffix)
	if err != nil {
		return "new customer", err
	}
	p.eur = id
	s.payers = append(s.payers, p)
	return "new customer " + p.customer, nil
}

// concurrentPayouts sends several payouts from one account at once, two of
// them with one Idempotency-Key. Together they take at most half the
// available balance, so every interleaving gives the same money movements
// and the run stays replayable; the invariants are checked after.
func (s *simulation) concurrentPayouts(p *simPayer) (string, error) {
	status, b := s.call("GET", "/customers/internal-accounts?customerId="+p.customer+"&type=INTERNAL_FIAT&currency=USD", "")
	var list struct {
		Data []struct{ Balance struct{ Amount int64 } }
	}
	if status != 200 || json.Unmarshal(b, &list) != nil || len(list.Data) != 1 {
		return "concurrent payouts", fmt.Errorf("balance: %d %s", status, b)
	}
	n := 2 + s.rng.IntN(6)
	share := list.Data[0].Balance.Amount / int64(2*n)
	if share < 1 {
		return "concurrent payouts skipped (no balance)", nil
	}
	bodies := make([]string, n)
	keys := make([]string, n)
	for i := range n {
		bodies[i] = fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":%d}`, p.usd, p.ext[externalfixture.DefaultSuffix], 1+s.rng.Int64N(share))
		keys[i] = s.key()
	}
	bodies[n-1], keys[n-1] = bodies[0], keys[0] // a duplicate of the first
	statuses := make([]int, n)
	answers := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			statuses[i], answers[i] = s.call("POST", "/transfer-out", bodies[i], "Idempotency-Key", keys[i])
		})
	}
	wg.Wait()
	for i := 1; i < n-1; i++ {
		if err := s.want(statuses[i], answers[i], 201); err != nil {
			return "concurrent payouts", err
		}
	}
	// The pair with one key: one runs (201), the other gets the same 201
	// or 409 IDEMPOTENCY_KEY_IN_USE while it runs.
	first := -1
	for _, i := range []int{0, n - 1} {
		if err := s.want(statuses[i], answers[i], 201, 409); err != nil {
			return "concurrent payouts", err
		}
		if statuses[i] != 201 {
			continue
		}
		if first >= 0 && !bytes.Equal(answers[i], answers[first]) {
			return "concurrent payouts", fmt.Errorf("one key, two answers: %s and %s", answers[first], answers[i])
		}
		first = i
	}
	if first < 0 {
		return "concurrent payouts", fmt.Errorf("neither request of one key ran: %s", answers[0])
	}
	s.keyed = append(s.keyed, simKeyed{path: "/transfer-out", body: bodies[0], key: keys[0], status: 201, answer: answers[first]})
	return fmt.Sprintf("%d concurrent payouts", n), nil
}

func (s *simulation) runJobs() error {
	ctx := context.Background()
	if _, err := s.svc.runner.RunAll(ctx, 50); err != nil {
		return fmt.Errorf("run jobs: %w", err)
	}
	if _, err := s.be.ledger.ExpireDue(ctx, s.clock.Now(), 500); err != nil {
		return fmt.Errorf("expire holds: %w", err)
	}
	return nil
}

// restart drops in-flight work: some due jobs are claimed by the process
// that dies (their lease must run out before anyone runs them again), and
// the services are built anew over the same stores.
func (s *simulation) restart() (string, error) {
	claimed, err := s.be.store.Read().Jobs().Claim(context.Background(), s.clock.Now(), s.rng.IntN(4), time.Minute, ports.JobKinds{})
	if err != nil {
		return "restart", err
	}
	s.start()
	return fmt.Sprintf("restart (%d claimed jobs abandoned)", len(claimed)), nil
}

// check verifies the invariants: the journal verifies (every currency sums
// to zero, no protected balance below zero, counters equal the journal,
// the hash chain holds); every payout's status agrees with its hold; no
// hold is open for a transaction that ended or that does not exist.
func (s *simulation) check() error {
	ctx := context.Background()
	res, err := s.be.reports.VerifyJournal(ctx, nil)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if !res.OK() {
		return fmt.Errorf("the journal does not verify: %+v", res.Breaks)
	}
	accounts, pending, err := s.be.ledger.Snapshot(ctx)
	if err != nil {
		return err
	}
	journal, err := s.be.ledger.Journal(ctx, 0, 1_000_000)
	if err != nil {
		return err
	}
	if v := ledger.Verify(accounts, pending, journal); len(v) > 0 {
		return fmt.Errorf("ledger.Verify: %v", v)
	}
	holds := map[string]ledger.PendingTransfer{}
	for _, p := range pending {
		holds[p.EntryID] = p
	}
	txs, _, err := s.be.store.Read().Transactions().List(ctx, ports.TransactionFilter{PlatformID: s.platformID}, ports.Page{Limit: 100_000})
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, tx := range txs {
		known[tx.ID] = true
		hold, held := holds["hold:"+tx.ID]
		if !held || tx.Type != "OUTGOING" {
			continue
		}
		open := hold.Status == ledger.PendingOpen
		switch tx.Status {
		case "PENDING", "PROCESSING":
			if !open {
				return fmt.Errorf("%s is %s but its hold is %v", tx.ID, tx.Status, hold.Status)
			}
		case "COMPLETED":
			if hold.Status != ledger.PendingPosted {
				return fmt.Errorf("%s is COMPLETED but its hold is %v", tx.ID, hold.Status)
			}
		case "FAILED", "REJECTED", "EXPIRED":
			if open || hold.Status == ledger.PendingPosted {
				return fmt.Errorf("%s is %s but its hold is %v", tx.ID, tx.Status, hold.Status)
			}
		}
	}
	for id, h := range holds {
		if txID, ok := strings.CutPrefix(id, "hold:"); ok && h.Status == ledger.PendingOpen && !known[txID] {
			return fmt.Errorf("hold %s is open without its transaction", id)
		}
	}
	return nil
}

// run runs steps operations, checking after each, and reports the first
// failure with the seed and the steps that led to it.
func (s *simulation) run(t testing.TB, steps int) {
	t.Helper()
	for i := range steps {
		what, err := s.step()
		s.steps = append(s.steps, what)
		if err == nil {
			err = s.check()
		}
		if err != nil {
			tail := s.steps[max(0, len(s.steps)-15):]
			t.Fatalf("simulation seed %d failed at step %d (%s): %v\nreplay: make simulate SEED=%d STEPS=%d\nlast steps:\n  %s",
				s.seed, i, what, err, s.seed, steps, strings.Join(tail, "\n  "))
		}
	}
	// Let everything settle, then check once more.
	s.clock.Advance(2 * time.Hour)
	for range 3 {
		if err := s.runJobs(); err != nil {
			t.Fatalf("simulation seed %d: settling: %v", s.seed, err)
		}
		s.clock.Advance(10 * time.Minute)
	}
	if err := s.check(); err != nil {
		t.Fatalf("simulation seed %d after settling: %v", s.seed, err)
	}
}

// summary counts the steps by kind and answer.
func (s *simulation) summary() string {
	counts := map[string]int{}
	for _, st := range s.steps {
		kind := strings.Fields(st)[0]
		switch {
		case strings.HasPrefix(st, "new customer"), strings.HasPrefix(st, "restart"), strings.HasPrefix(st, "advance"):
			kind = strings.Join(strings.Fields(st)[:2], " ")
		case strings.Contains(st, "concurrent payouts"):
			kind = "concurrent payouts"
		case strings.Contains(st, "→ "):
			kind += " → " + strings.Fields(st[strings.Index(st, "→ ")+len("→ "):])[0]
		}
		counts[kind]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %d; ", k, counts[k])
	}
	return b.String()
}

// The checks find a broken invariant: a payout whose hold was voided
// behind its back, and a hold whose transaction does not exist.
func TestSimulationDetectsBrokenInvariants(t *testing.T) {
	ctx := context.Background()
	sim := newSimulation(t, 99)
	if _, err := sim.newPayer(); err != nil {
		t.Fatal(err)
	}
	p := sim.payers[0]
	if status, b := sim.keyedCall("/sandbox/internal-accounts/"+p.usd+"/fund", `{"amount":1000}`); status != 200 {
		t.Fatalf("fund: %d %s", status, b)
	}
	status, b := sim.keyedCall("/transfer-out", fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":300}`, p.usd, p.ext[externalfixture.DefaultSuffix]))
	if status != 201 {
		t.Fatalf("transfer-out: %d %s", status, b)
	}
	if err := sim.check(); err != nil {
		t.Fatalf("before the fault: %v", err)
	}
	txID := idOf(b)
	hold, err := sim.be.ledger.Pending(ctx, "hold:"+txID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.be.ledger.Post(ctx, ledger.Entry{ID: "fault:void:" + txID, Ref: txID, Transfers: []ledger.Transfer{{
		ID: "fault:void:" + txID, Kind: ledger.VoidPending, PendingID: hold.ID, Currency: "USD",
		DebitAccountID: hold.DebitAccountID, CreditAccountID: hold.CreditAccountID, Code: "fault"}}}); err != nil {
		t.Fatal(err)
	}
	err = sim.check()
	if err == nil || !strings.Contains(err.Error(), "is PENDING but its hold is") {
		t.Fatalf("a voided hold under a pending payout: got %v", err)
	}

	sim2 := newSimulation(t, 98)
	if _, err := sim2.newPayer(); err != nil {
		t.Fatal(err)
	}
	q := sim2.payers[0]
	if status, b := sim2.keyedCall("/sandbox/internal-accounts/"+q.usd+"/fund", `{"amount":1000}`); status != 200 {
		t.Fatalf("fund: %d %s", status, b)
	}
	if _, err := sim2.be.ledger.Post(ctx, ledger.Entry{ID: "hold:Transaction:ghost", Ref: "Transaction:ghost", Transfers: []ledger.Transfer{{
		ID: "hold:Transaction:ghost", Kind: ledger.Pending, Amount: 10, Currency: "USD",
		DebitAccountID: q.usd, CreditAccountID: "sys:rail_settlement:ACH:USD", Code: "fault"}}}); err != nil {
		t.Fatal(err)
	}
	err = sim2.check()
	if err == nil || !strings.Contains(err.Error(), "open without its transaction") {
		t.Fatalf("an orphan hold: got %v", err)
	}
}

func TestSimulation(t *testing.T) {
	seeds, steps := []uint64{1, 2, 3}, 150
	if v := os.Getenv("CORRIDOR_SIM_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CORRIDOR_SIM_SEED: %v", err)
		}
		seeds = []uint64{seed}
	}
	if v := os.Getenv("CORRIDOR_SIM_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("CORRIDOR_SIM_STEPS: %v", err)
		}
		steps = n
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			start := time.Now()
			sim := newSimulation(t, seed)
			sim.run(t, steps)
			el := time.Since(start)
			t.Logf("seed %d: %d steps in %s (%.0f steps/s)", seed, steps, el.Round(time.Millisecond), float64(steps)/el.Seconds())
			t.Log(sim.summary())
		})
	}
}
