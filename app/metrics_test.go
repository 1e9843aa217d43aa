package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GET /metrics, scraped after real traffic, has the series the dashboard
// and the alerts read, with the values that traffic implies.
func TestMetricsAfterTraffic(t *testing.T) {
	for _, be := range []string{"memory", "postgres"} {
		t.Run(be, func(t *testing.T) {
			env := newAPIEnv(t, be)
			srv := httptest.NewServer(env.handler)
			t.Cleanup(srv.Close)
			a := apiTarget{bases: []string{srv.URL}, auth: env.auth}
			p := newPayer(t, a, "metrics@example.com")
			fund := "/sandbox/internal-accounts/" + p.account + "/fund"
			for range 2 { // the second is a replay
				r := a.do(t, 0, "POST", fund, `{"amount":1000}`, "Idempotency-Key", "m-1")
				require.Equal(t, 200, r.status, "%s", r.body)
			}
			r := a.do(t, 0, "POST", fund, `{"amount":999}`, "Idempotency-Key", "m-1")
			require.Equal(t, 422, r.status, "%s", r.body)
			r = a.do(t, 0, "POST", "/transfer-out", p.payout(100))
			require.Equal(t, 201, r.status, "%s", r.body)

			rec := httptest.NewRecorder()
			env.be.metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			require.Equal(t, http.StatusOK, rec.Code)
			body, err := io.ReadAll(rec.Body)
			require.NoError(t, err)
			text := string(body)
			value := func(series string) float64 {
				t.Helper()
				m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
				require.NotNil(t, m, "no series %s in:\n%s", series, text)
				v, err := strconv.ParseFloat(m[1], 64)
				require.NoError(t, err)
				return v
			}
			op := `operation="POST /sandbox/internal-accounts/{accountId}/fund"`
			assert.Equal(t, 2.0, value(`corridor_http_requests_total{`+op+`,status="200"}`))
			assert.Equal(t, 1.0, value(`corridor_http_requests_total{`+op+`,status="422"}`))
			assert.Equal(t, 2.0, value(`corridor_http_request_duration_seconds_count{`+op+`,status="200"}`))
			assert.Equal(t, 1.0, value(`corridor_idempotency_keys_total{outcome="replayed"}`))
			assert.Equal(t, 1.0, value(`corridor_idempotency_keys_total{outcome="reused"}`))
			// The payout's submission is a queued job.
			assert.Equal(t, 1.0, value(`corridor_jobs_backlog_up`))
			assert.Regexp(t, `(?m)^corridor_jobs_queued\{kind="[^"]+"\} [1-9]`, text)
			assert.Regexp(t, `(?m)^go_goroutines `, text)
			if be == "postgres" {
				assert.Positive(t, value(`corridor_ledger_batch_entries_count`), "ledger batches observed")
				assert.Positive(t, value(`corridor_ledger_commit_duration_seconds_count`))
				assert.Regexp(t, `(?m)^go_sql_max_open_connections\{db_name="corridor"\} 32$`, text)
				assert.Regexp(t, `(?m)^go_sql_wait_count_total\{db_name="corridor"\} `, text)
			}
			// Ids never become labels.
			assert.NotContains(t, text, p.account)
		})
	}
}

// Every series the Grafana dashboard graphs is one the service exports.
func TestDashboardGraphsExportedSeries(t *testing.T) {
	raw, err := os.ReadFile("ops/grafana-dashboard.json")
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	env := newAPIEnv(t, "postgres")
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "http://corridor.test"+BasePath+"/platform/internal-accounts", nil)
	req.Header.Set("Authorization", env.auth)
	env.handler.ServeHTTP(rec, req)
	env.be.metrics.LedgerBatch(1, time.Millisecond)
	env.be.metrics.Idempotency("replayed")
	// One failed Redis command, so the errors series exists.
	down := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	down.AddHook(env.be.metrics.RedisHook())
	require.Error(t, down.Get(context.Background(), "k").Err())
	_ = down.Close()
	mfs, err := env.be.metrics.Registry().Gather()
	require.NoError(t, err)
	exported := map[string]bool{}
	for _, mf := range mfs {
		exported[mf.GetName()] = true
	}
	series := regexp.MustCompile(`\b((?:corridor|go_sql|go|process)_[a-z_]+?)(?:_bucket|_sum|_count)?\b`)
	require.NotEmpty(t, dash.Panels)
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			for _, m := range series.FindAllStringSubmatch(tg.Expr, -1) {
				name := m[1]
				if !exported[name] && !exported[strings.TrimSuffix(name, "_total")] {
					t.Errorf("panel %q graphs %s, which is not exported", p.Title, name)
				}
			}
		}
	}
}
