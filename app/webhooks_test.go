package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/adapters/webhooks"
	"github.com/corridorpay/corridor/core/events"
)

// hookReceiver is a platform's webhook endpoint: it keeps every body with
// its signature, answering 503 to the first fail ones.
type hookReceiver struct {
	mu     sync.Mutex
	delay  time.Duration // before answering, as a real endpoint takes
	fail   int
	bodies [][]byte
	sigs   []string
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	delay := h.delay
	h.mu.Unlock()
	time.Sleep(delay)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail > 0 {
		h.fail--
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	h.bodies, h.sigs = append(h.bodies, b), append(h.sigs, r.Header.Get(webhooks.SignatureHeader))
	w.WriteHeader(http.StatusOK)
}

func (h *hookReceiver) received() ([]events.Envelope, [][]byte, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]events.Envelope, len(h.bodies))
	for i, b := range h.bodies {
		_ = json.Unmarshal(b, &out[i])
	}
	return out, append([][]byte(nil), h.bodies...), append([]string(nil), h.sigs...)
}

// hookedAPI serves env's API and a webhook receiver, set as the
// platform's endpoint (at hooksURL).
func hookedAPI(t *testing.T, env *apiEnv) (a apiTarget, recv *hookReceiver, hooksURL string) {
	t.Helper()
	srv := httptest.NewServer(env.handler)
	t.Cleanup(srv.Close)
	a = apiTarget{bases: []string{srv.URL}, auth: env.auth}
	recv = &hookReceiver{}
	hooks := httptest.NewServer(recv)
	t.Cleanup(hooks.Close)
	hooksURL = hooks.URL + "/in"
	r := a.do(t, 0, "PATCH", "/config", fmt.Sprintf(`{"webhookEndpoint":%q}`, hooksURL))
	require.Equal(t, 200, r.status, "%s", r.body)
	return a, recv, hooksURL
}

// A transfer-out's events reach the platform's endpoint through the
// service's own runners, signed with the published key, in order, each
// with the transaction as it then was; the new endpoint gets a TEST.
func TestWebhooksDeliveredSignedInOrder(t *testing.T) {
	for _, backend := range []string{"memory", "postgres+redis"} {
		t.Run(backend, func(t *testing.T) {
			env := newAPIEnvWith(t, backend, func(c *Config) { c.SettlementDelay = 0 })
			a, recv, hooksURL := hookedAPI(t, env)
			p := newPayer(t, a, "hooks@example.com")
			a.created(t, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":10000}`)
			tx := a.created(t, "POST", "/transfer-out",
				fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":2500}`, p.account, p.external))

			deadline := time.Now().Add(20 * time.Second)
			var got []events.Envelope
			for time.Now().Before(deadline) {
				_, err := env.svc.runner.RunAll(t.Context(), 100)
				require.NoError(t, err)
				_, err = env.svc.webhooks.RunAll(t.Context(), 100)
				require.NoError(t, err)
				got, _, _ = recv.received()
				if len(got) > 0 && got[len(got)-1].Type == "OUTGOING_PAYMENT.COMPLETED" {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			got, bodies, sigs := recv.received()
			var types []string
			for _, e := range got {
				types = append(types, e.Type)
			}
			require.Contains(t, types, "OUTGOING_PAYMENT.COMPLETED", "%v", types)
			// Order holds per resource only: the TEST event (no resource)
			// may go beside the transaction's.
			assert.Contains(t, types, "TEST", "the new endpoint's TEST event")

			key := a.do(t, 0, "GET", "/webhooks/public-key", "").json(t)["publicKeyPem"].(string)
			var order []string
			for i, e := range got {
				require.NoError(t, webhooks.Verify(key, bodies[i], sigs[i]), "signature of %s", e.Type)
				assert.Regexp(t, `^Webhook:[0-9a-f-]{36}$`, e.ID)
				if e.Type == "TEST" {
					assert.Empty(t, e.Data)
					continue
				}
				var data map[string]any
				require.NoError(t, json.Unmarshal(e.Data, &data))
				if data["id"] == tx {
					order = append(order, e.Type)
					status := strings.TrimPrefix(e.Type, "OUTGOING_PAYMENT.")
					assert.Equal(t, status, data["status"], "the transaction as it was at %s", e.Type)
				}
			}
			assert.Equal(t, []string{"OUTGOING_PAYMENT.PENDING", "OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.COMPLETED"}, order)
			// The last event's data is the transaction as GET returns it
			// (a response checked against the reference's schema): the
			// webhook carries the API's own form.
			var last json.RawMessage
			for _, e := range got {
				if e.Type == "OUTGOING_PAYMENT.COMPLETED" {
					last = e.Data
				}
			}
			now := a.do(t, 0, "GET", "/transactions/"+tx, "")
			require.Equal(t, 200, now.status)
			assert.JSONEq(t, string(now.body), string(last), "COMPLETED's data is the settled transaction")

			// The outbox shows each delivery and its attempt.
			list := a.do(t, 0, "GET", "/webhooks/events?resourceId="+tx, "").json(t)
			rows := list["data"].([]any)
			require.Len(t, rows, 3)
			id := rows[0].(map[string]any)["id"].(string)
			one := a.do(t, 0, "GET", "/webhooks/events/"+id, "").json(t)
			assert.Equal(t, "DELIVERED", one["status"])
			attempts := one["attemptsList"].([]any)
			require.Len(t, attempts, 1)
			assert.Equal(t, float64(200), attempts[0].(map[string]any)["statusCode"])
			r := a.do(t, 0, "GET", "/webhooks/events?status=NOPE", "")
			assert.Equal(t, 400, r.status, "an unknown status names the field: %s", r.body)
			assert.Contains(t, string(r.body), `"field":"status"`)

			// Redelivery sends it again.
			r = a.do(t, 0, "POST", "/webhooks/events/"+id+"/redeliver", "")
			require.Equal(t, 200, r.status, "%s", r.body)
			_, err := env.svc.webhooks.RunAll(t.Context(), 100)
			require.NoError(t, err)
			again, _, _ := recv.received()
			assert.Equal(t, id, again[len(again)-1].ID, "the same event id, for de-duplication")

			// The sandbox's test webhook reports what the endpoint answered.
			recv.mu.Lock()
			recv.fail = 1
			recv.mu.Unlock()
			test := a.do(t, 0, "POST", "/sandbox/webhooks/test", "").json(t)
			assert.Equal(t, float64(503), test["response_status"])
			assert.Equal(t, hooksURL, test["url"])
		})
	}
}

// A burst of payouts, 16 requests at a time, with the service's own job
// and delivery loops running as a server runs them and an endpoint that
// takes a few milliseconds: every event reaches the endpoint exactly once
// (one instance never sends an event twice) and each transaction's events
// in order. Races between deliveries show here only now and then (the
// race core/events' TestEarlierEventRecordedWhileReadIsNotSentAgain
// pins down failed one run in three before its fix); this checks the
// whole path end to end.
func TestWebhookBurstSendsEachEventOnce(t *testing.T) {
	const n = 400
	for _, backend := range []string{"memory", "postgres+redis"} {
		t.Run(backend, func(t *testing.T) {
			env := newAPIEnvWith(t, backend, func(c *Config) { c.SettlementDelay = 0 })
			a, recv, _ := hookedAPI(t, env)
			recv.mu.Lock()
			recv.delay = 3 * time.Millisecond
			recv.mu.Unlock()
			p := newPayer(t, a, "burst@example.com")
			a.created(t, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":100000}`)
			w := startWorkers(t.Context(), env.be, env.svc.runner, env.svc.webhooks, env.cfg, system.Clock{},
				slog.New(slog.NewTextHandler(io.Discard, nil)))
			t.Cleanup(w.stop)
			replies := make([]apiReply, n)
			var wg sync.WaitGroup
			sem := make(chan struct{}, 16) // requests in flight
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					replies[i] = a.do(t, i, "POST", "/transfer-out", p.payout(1), "Idempotency-Key", fmt.Sprintf("burst-%d", i))
				}()
			}
			wg.Wait()
			for _, r := range replies {
				require.Equal(t, 201, r.status, "%s", r.body)
			}
			// Every payment settled, then every event delivered.
			require.Eventually(t, func() bool {
				r := a.do(t, 0, "GET", "/transactions?type=OUTGOING&status=COMPLETED&limit=1", "")
				return r.status == 200 && r.json(t)["totalCount"] == float64(n)
			}, time.Minute, 50*time.Millisecond, "the payouts settle")
			require.Eventually(t, func() bool {
				r := a.do(t, 0, "GET", "/webhooks/events?status=PENDING&limit=1", "")
				return r.status == 200 && r.json(t)["totalCount"] == float64(0)
			}, time.Minute, 50*time.Millisecond, "every event is delivered")

			got, _, _ := recv.received()
			sends := map[string]int{}
			types := map[string]int{}
			order := map[string][]string{} // by transaction
			for _, e := range got {
				sends[e.ID]++
				if sends[e.ID] > 1 {
					continue
				}
				types[e.Type]++
				if typ, ok := strings.CutPrefix(e.Type, "OUTGOING_PAYMENT."); ok {
					var data struct {
						ID string `json:"id"`
					}
					require.NoError(t, json.Unmarshal(e.Data, &data))
					order[data.ID] = append(order[data.ID], typ)
				}
			}
			for id, k := range sends {
				assert.Equal(t, 1, k, "event %s sent once", id)
			}
			for _, typ := range []string{"OUTGOING_PAYMENT.PENDING", "OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.COMPLETED"} {
				assert.Equal(t, n, types[typ], typ)
			}
			assert.Positive(t, types["INTERNAL_ACCOUNT.BALANCE_UPDATED"])
			require.Len(t, order, n)
			for id, o := range order {
				assert.Equal(t, []string{"PENDING", "PROCESSING", "COMPLETED"}, o, "the events of %s in order", id)
			}
		})
	}
}
