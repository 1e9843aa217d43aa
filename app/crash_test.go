package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/testkit/externalfixture"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// TestCrashDuringKeyedLoad kills the real process (SIGKILL) twice while
// goroutines send keyed fundings and transfer-outs, restarts it on the same
// PostgreSQL database (and Redis, when REDIS_URL is set), and retries every
// unanswered request with its key and body until it is answered. Then:
// every key moved money exactly once (one OUTGOING transaction per accepted
// transfer-out key, balances = funding - accepted payouts), `corridor ledger
// verify` is clean, and a retry after a restart waited about one claim
// lease at most (a dead process's claim lapses, it does not block for a
// minute).
func TestCrashDuringKeyedLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts the binary")
	}
	dsn := pgtest.NewDatabase(t)
	token := "crash-" + uuid.NewString()[:8] // Redis is shared: keys are scoped by this token
	env := []string{"DATABASE_URL=" + dsn, "REDIS_URL=" + os.Getenv("REDIS_URL"),
		"CORRIDOR_API_TOKEN_ID=" + token, "CORRIDOR_API_CLIENT_SECRET=crash-secret-0123456789"}
	start := func() *process {
		p := startCorridor(t, env...)
		p.user, p.secret = token, "crash-secret-0123456789"
		return p
	}
	p := start()
	l := &crashLoad{t: t, user: p.user, secret: p.secret, client: &http.Client{Timeout: 30 * time.Second}}
	l.serving(p)
	// Webhook delivery on, to a receiver that outlives the kills.
	recv := &hookReceiver{}
	hooks := httptest.NewServer(recv)
	t.Cleanup(hooks.Close)
	code, cfg := l.send("PATCH", "/config", "", map[string]any{"webhookEndpoint": hooks.URL + "/in"})
	require.Equal(t, http.StatusOK, code, "%v", cfg)

	const accounts, workers, seed = 3, 6, int64(100_000_000)
	custs, accts, dests := make([]string, accounts), make([]string, accounts), make([]string, accounts)
	for i := range accounts {
		custs[i], accts[i], dests[i] = crashPayer(t, p, i)
		code, _ := l.send("POST", "/sandbox/internal-accounts/"+accts[i]+"/fund", fmt.Sprintf("seed-%d", i), map[string]any{"amount": seed})
		require.Equal(t, http.StatusOK, code)
	}

	// Each worker sends keyed operations until stopped: a funding, then
	// two transfer-outs, on the account it shares with another worker.
	var stop atomic.Bool
	var wg sync.WaitGroup
	funded := make([]atomic.Int64, accounts)
	paid := make([]atomic.Int64, accounts)
	payouts := make([]atomic.Int64, accounts)
	progress := make([]atomic.Int64, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := w % accounts
			for i := 0; !stop.Load(); i++ {
				key := fmt.Sprintf("w%d-%d", w, i)
				amount := int64(100 + w*10 + i%7)
				if i%3 == 0 {
					code, body := l.send("POST", "/sandbox/internal-accounts/"+accts[a]+"/fund", key, map[string]any{"amount": amount * 3})
					if !assert.Equal(t, http.StatusOK, code, "%s: %v", key, body) {
						return
					}
					funded[a].Add(amount * 3)
				} else {
					code, body := l.send("POST", "/transfer-out", key, map[string]any{
						"source": map[string]any{"accountId": accts[a]}, "destination": map[string]any{"accountId": dests[a]}, "amount": amount,
					})
					if !assert.Equal(t, http.StatusCreated, code, "%s: %v", key, body) {
						return
					}
					paid[a].Add(amount)
					payouts[a].Add(1)
				}
				progress[w].Add(1)
			}
		}()
	}
	// moving waits until every worker has answered n more operations.
	moving := func(n int64) {
		base := make([]int64, workers)
		for w := range workers {
			base[w] = progress[w].Load()
		}
		require.Eventually(t, func() bool {
			for w := range workers {
				if progress[w].Load() < base[w]+n {
					return false
				}
			}
			return true
		}, 40*time.Second, 10*time.Millisecond, "the load stalled")
	}

	for range 2 {
		moving(5) // mid-load: every worker has requests in flight
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
		_ = p.cmd.Wait()
		p = start()
		l.serving(p)
	}
	moving(3) // every interrupted request answered, and new ones too
	stop.Store(true)
	wg.Wait()
	require.False(t, t.Failed())

	waits := l.waitsAfterRestart()
	var ops int64
	for w := range workers {
		ops += progress[w].Load()
	}
	t.Logf("%d keyed requests answered; %d interrupted by the kills; %d answers of 409 IDEMPOTENCY_KEY_IN_USE while a dead claim's lease ran; longest wait after a restart %s",
		ops, len(waits), l.inUse.Load(), maxDuration(waits))
	require.NotEmpty(t, waits, "the kills interrupted no request")
	assert.Less(t, maxDuration(waits), httpapi.DefaultIdempotencyLease+5*time.Second,
		"a retry after a crash waits about one claim lease at most")

	// Audit: balances and transactions against what was accepted.
	db, err := postgres.Open(context.Background(), dsn)
	require.NoError(t, err)
	defer db.Close()
	for i, id := range accts {
		code, list := l.send("GET", "/customers/internal-accounts?customerId="+custs[i]+"&type=INTERNAL_FIAT&currency=USD", "", nil)
		require.Equal(t, http.StatusOK, code, "%v", list)
		acct := list["data"].([]any)[0].(map[string]any)
		require.Equal(t, id, acct["id"])
		want := seed + funded[i].Load() - paid[i].Load()
		assert.EqualValues(t, want, acct["balance"].(map[string]any)["amount"], "account %d: funding minus accepted payouts", i)
		var n, sum int64
		require.NoError(t, db.QueryRowContext(context.Background(),
			`SELECT count(*), coalesce(sum(sent_amount), 0) FROM transactions WHERE type = 'OUTGOING' AND source_account_id = ?`, id).Scan(&n, &sum))
		assert.Equal(t, payouts[i].Load(), n, "account %d: one transaction per accepted transfer-out key", i)
		assert.Equal(t, paid[i].Load(), sum, "account %d", i)
	}

	// Webhooks: every committed transaction's events were recorded, none
	// for work that rolled back, and each reached the receiver at least
	// once (the deliveries a kill interrupted ran again after their lease).
	var orphans, txnsWithout int64
	require.NoError(t, db.QueryRowContext(context.Background(), `SELECT
		(SELECT count(*) FROM events e WHERE e.type LIKE '%_PAYMENT.%' AND NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id = e.resource_id)),
		(SELECT count(*) FROM transactions t WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.resource_id = t.id))`).Scan(&orphans, &txnsWithout))
	assert.Zero(t, orphans, "an event of a transaction that does not exist")
	assert.Zero(t, txnsWithout, "a transaction without its events")
	require.Eventually(t, func() bool {
		// Settled payments first (their last events come with the
		// settlement), then nothing left to deliver.
		var open, pending int64
		require.NoError(t, db.QueryRowContext(context.Background(), `SELECT
			(SELECT count(*) FROM transactions WHERE status IN ('CREATED', 'PENDING', 'PROCESSING')),
			(SELECT count(*) FROM event_deliveries WHERE status <> 'DELIVERED')`).Scan(&open, &pending))
		return open == 0 && pending == 0
	}, 90*time.Second, 200*time.Millisecond, "every payment settled and every event delivered after the restarts")
	got, _, _ := recv.received()
	seen := map[string]bool{}
	for _, e := range got {
		seen[e.ID] = true
	}
	rows, err := db.QueryContext(context.Background(), `SELECT id FROM events`)
	require.NoError(t, err)
	var recorded int
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		recorded++
		assert.True(t, seen[id], "event %s never reached the receiver", id)
	}
	require.NoError(t, rows.Err())
	t.Logf("webhooks: %d events recorded, %d deliveries received (%d duplicates after the kills)", recorded, len(got), len(got)-len(seen))
	p.stop(t)

	cmd := exec.Command(corridorBinary(t), "ledger", "verify", "-quiet")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "ledger verify: %s", out)
}

// crashPayer creates a customer with its USD account and an external
// account paid out successfully, through the API.
func crashPayer(t *testing.T, p *process, i int) (customerID, accountID, externalID string) {
	t.Helper()
	code, cust := p.call(t, "POST", "/customers", map[string]any{
		"customerType": "INDIVIDUAL", "region": "US", "email": fmt.Sprintf("payer%d@example.com", i), "fullName": "Payer",
	})
	require.Equal(t, http.StatusCreated, code, "%v", cust)
	custID := cust["id"].(string)
	code, list := p.call(t, "GET", "/customers/internal-accounts?customerId="+custID+"&type=INTERNAL_FIAT&currency=USD", nil)
	require.Equal(t, http.StatusOK, code, "%v", list)
	accountID = list["data"].([]any)[0].(map[string]any)["id"].(string)
	code, ext := p.call(t, "POST", "/customers/external-accounts", map[string]any{
		"customerId": custID, "currency": "USD",
		"accountInfo": externalfixture.InfoJSON(externalfixture.Info("USD_ACCOUNT", fmt.Sprintf("55%d", i))),
	})
	require.Equal(t, http.StatusCreated, code, "%v", ext)
	return custID, accountID, ext["id"].(string)
}

// crashLoad sends requests to whichever process is serving, retrying each
// until it is answered.
type crashLoad struct {
	t            *testing.T
	user, secret string
	client       *http.Client
	mu           sync.Mutex
	base         string
	readyAt      time.Time
	waits        []time.Duration
	inUse        atomic.Int64
}

// serving points the load at p, ready now.
func (l *crashLoad) serving(p *process) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.base, l.readyAt = p.base, time.Now()
}

func (l *crashLoad) target() (string, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.base, l.readyAt
}

// send sends the request (same key, same body) until a process answers it
// with neither a 5xx nor 409 IDEMPOTENCY_KEY_IN_USE. An interrupted request
// records how long after its answering process became ready it was
// answered.
func (l *crashLoad) send(method, path, key string, body any) (int, map[string]any) {
	var raw []byte
	if body != nil {
		var err error
		raw, err = json.Marshal(body)
		require.NoError(l.t, err)
	}
	interrupted := false
	for {
		base, ready := l.target()
		code, out, err := l.once(method, base+httpapi.BasePath+path, key, raw)
		switch {
		case err != nil || code >= 500:
			interrupted = true
		case code == http.StatusConflict && out["code"] == "IDEMPOTENCY_KEY_IN_USE":
			interrupted = true
			l.inUse.Add(1)
		default:
			if interrupted {
				l.mu.Lock()
				l.waits = append(l.waits, time.Since(ready))
				l.mu.Unlock()
			}
			return code, out
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (l *crashLoad) once(method, url, key string, raw []byte) (int, map[string]any, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(raw))
	require.NoError(l.t, err)
	req.SetBasicAuth(l.user, l.secret)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	var out map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			return 0, nil, fmt.Errorf("status %d: %w: %s", resp.StatusCode, err, b)
		}
	}
	return resp.StatusCode, out, nil
}

func (l *crashLoad) waitsAfterRestart() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Duration(nil), l.waits...)
}

func maxDuration(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
