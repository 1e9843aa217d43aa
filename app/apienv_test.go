package main

import (
	"cmp"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/google/uuid"

	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// apiEnv is the whole service (newHandler, every operation) in process on
// the memory adapters or on a PostgreSQL scratch database, with one
// platform and its credential. Tests that drive the API in process (the
// fuzzer, the race and isolation proofs) start from it.
type apiEnv struct {
	be         *backend
	svc        services
	cfg        Config
	handler    http.Handler
	platformID string
	// auth is the platform's Authorization header value.
	auth string
}

// newAPIEnv opens a "memory", "postgres" or "postgres+redis" backend
// (the caches and single-use values in Redis) behind the real handler
// and provisions one platform (USD and EUR accounts).
func newAPIEnv(t testing.TB, backendName string) *apiEnv {
	t.Helper()
	return newAPIEnvWith(t, backendName, func(*Config) {})
}

// onAPIBackends runs test on memory and on PostgreSQL with Redis, each an
// apiEnv served over HTTP and a target calling it as the platform.
func onAPIBackends(t *testing.T, test func(t *testing.T, env *apiEnv, a apiTarget)) {
	for _, backend := range []string{"memory", "postgres+redis"} {
		t.Run(backend, func(t *testing.T) {
			env := newAPIEnv(t, backend)
			srv := httptest.NewServer(env.handler)
			t.Cleanup(srv.Close)
			test(t, env, apiTarget{bases: []string{srv.URL}, auth: env.auth})
		})
	}
}

// newAPIEnvWith is newAPIEnv with the configuration changed by configure.
func newAPIEnvWith(t testing.TB, backendName string, configure func(*Config)) *apiEnv {
	t.Helper()
	return newAPIEnvClock(t, backendName, system.Clock{}, configure)
}

// newAPIEnvClock is newAPIEnvWith telling time by clock (a fake one moves
// quotes to their expiry and rails to their outcome without sleeping).
func newAPIEnvClock(t testing.TB, backendName string, clock ports.Clock, configure func(*Config)) *apiEnv {
	t.Helper()
	cfg, err := LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	configure(&cfg)
	switch backendName {
	case "postgres":
		cfg.DatabaseURL = pgtest.NewDatabase(t)
	case "postgres+redis":
		// The local Redis unless REDIS_URL names another; an unreachable
		// one fails the test (openBackend), never skips it.
		cfg.DatabaseURL, cfg.RedisURL = pgtest.NewDatabase(t), cmp.Or(os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379/0")
		// Keys of this test only: the authentication throttle's counts of
		// 127.0.0.1 are not shared with tests running beside it.
		cfg.RedisPrefix = "corridor-test:" + uuid.NewString() + ":"
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	be, err := openBackend(ctx, cfg, clock, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.close)
	e := &apiEnv{be: be, svc: newServices(be, cfg, clock), cfg: cfg}
	e.handler = newHandler(be, e.svc, cfg, clock, log)
	e.platformID, e.auth = e.newPlatform(t, "first")
	return e
}

// newPlatform provisions another platform on the same backend and returns
// its id and Authorization header value.
func (e *apiEnv) newPlatform(t testing.TB, name string) (platformID, auth string) {
	t.Helper()
	ctx := context.Background()
	p, err := e.svc.platforms.Create(ctx, name, e.cfg.SandboxUmaDomain, []string{"USD", "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	token, secret, err := e.svc.platforms.IssueCredential(ctx, p.ID, name)
	if err != nil {
		t.Fatal(err)
	}
	return p.ID, basicAuth(token, secret)
}

func basicAuth(user, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+secret))
}
