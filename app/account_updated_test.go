package main

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/testkit"
)

// An internal account's updatedAt moves when its balance changes (a
// funding, a payout's hold), in the account list and in the
// INTERNAL_ACCOUNT.BALANCE_UPDATED webhook's data, on both backends.
func TestInternalAccountUpdatedAtFollowsBalance(t *testing.T) {
	for _, backend := range []string{"memory", "postgres+redis"} {
		t.Run(backend, func(t *testing.T) {
			start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
			clock := testkit.NewFakeClock(start)
			env := newAPIEnvClock(t, backend, clock, func(*Config) {})
			srv := httptest.NewServer(env.handler)
			t.Cleanup(srv.Close)
			a := apiTarget{bases: []string{srv.URL}, auth: env.auth}
			p := newPayer(t, a, "updated-at@example.com")
			account := func() map[string]any {
				t.Helper()
				r := a.do(t, 0, "GET", "/customers/internal-accounts?customerId="+p.customer+"&type=INTERNAL_FIAT", "")
				require.Equal(t, 200, r.status, "%s", r.body)
				return r.json(t)["data"].([]any)[0].(map[string]any)
			}
			created := account()
			assert.Equal(t, created["createdAt"], created["updatedAt"])

			clock.Advance(time.Minute)
			a.created(t, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":10000}`)
			funded := account()
			assert.Equal(t, start.Add(time.Minute).Format(time.RFC3339), funded["updatedAt"], "the funding moved it")
			assert.Equal(t, created["createdAt"], funded["createdAt"])

			clock.Advance(time.Minute)
			a.created(t, "POST", "/transfer-out", p.payout(2500))
			held := account()
			assert.Equal(t, start.Add(2*time.Minute).Format(time.RFC3339), held["updatedAt"], "the hold moved it")

			r := a.do(t, 0, "GET", fmt.Sprintf("/webhooks/events?type=INTERNAL_ACCOUNT.BALANCE_UPDATED&resourceId=%s&limit=10", p.account), "")
			require.Equal(t, 200, r.status, "%s", r.body)
			var seen []any
			for _, e := range r.json(t)["data"].([]any) {
				d := a.do(t, 0, "GET", "/webhooks/events/"+e.(map[string]any)["id"].(string), "")
				require.Equal(t, 200, d.status, "%s", d.body)
				seen = append(seen, d.json(t)["data"].(map[string]any)["updatedAt"])
			}
			assert.ElementsMatch(t, []any{start.Add(time.Minute).Format(time.RFC3339), start.Add(2 * time.Minute).Format(time.RFC3339)}, seen)
		})
	}
}
