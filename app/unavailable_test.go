package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// A database at its connection limit makes requests wait for nothing: they
// are answered 503 with Retry-After, never 500. The service runs as a role
// allowed one connection, so every request that needs a second one meets
// PostgreSQL's too_many_connections (53300).
func TestDatabaseAtItsConnectionLimitAnswers503(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	admin, err := postgres.Open(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	role := "corridor_limited_" + hex.EncodeToString(suffix)
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN CONNECTION LIMIT 1",
		"GRANT ALL ON SCHEMA public TO " + role,
		"GRANT ALL ON ALL TABLES IN SCHEMA public TO " + role,
		"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO " + role,
	} {
		_, err := admin.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ?", role)
		_, _ = admin.ExecContext(context.Background(), "DROP OWNED BY "+role)
		_, _ = admin.ExecContext(context.Background(), "DROP ROLE IF EXISTS "+role)
	})
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.User(role)

	cfg, err := LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	cfg.DatabaseURL = u.String()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	be, err := openBackend(ctx, cfg, system.Clock{}, log)
	require.NoError(t, err)
	t.Cleanup(be.close)
	svc := newServices(be, cfg, system.Clock{})
	p, err := svc.platforms.Create(ctx, "limited", cfg.SandboxUmaDomain, []string{"USD"})
	require.NoError(t, err)
	token, secret, err := svc.platforms.IssueCredential(ctx, p.ID, "limited")
	require.NoError(t, err)
	srv := httptest.NewServer(newHandler(be, svc, cfg, system.Clock{}, log))
	t.Cleanup(srv.Close)

	const n = 16
	replies := make([]apiReply, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", srv.URL+BasePath+"/customers?limit=5", nil)
			req.SetBasicAuth(token, secret)
			resp, err := http.DefaultClient.Do(req)
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			replies[i] = apiReply{status: resp.StatusCode, header: resp.Header, body: body}
		}()
	}
	wg.Wait()
	unavailable := 0
	for _, r := range replies {
		switch r.status {
		case http.StatusOK:
		case http.StatusServiceUnavailable:
			unavailable++
			assert.Equal(t, "1", r.header.Get("Retry-After"))
			assert.Equal(t, "SERVICE_UNAVAILABLE", r.json(t)["code"], "%s", r.body)
		default:
			t.Errorf("status %d: %s", r.status, r.body)
		}
	}
	assert.Positive(t, unavailable, "some request met the connection limit")
}
