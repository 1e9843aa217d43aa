package oidc_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/oidc"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/oidctest"
)

const minRefresh = time.Minute

func claims(iss *oidctest.Issuer) map[string]any {
	return map[string]any{"iss": iss.URL(), "sub": "user-1", "aud": "corridor", "nonce": "n-1"}
}

// newKeySets builds KeySets over issuers on a fake clock, logging at debug
// into a buffer the test can read.
func newKeySets(t *testing.T, issuers ...oidc.Issuer) (*oidc.KeySets, *testkit.FakeClock, *testkit.SyncBuffer) {
	t.Helper()
	clock := testkit.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	logs := &testkit.SyncBuffer{}
	ks, err := oidc.New(t.Context(), oidc.Options{
		Issuers:            issuers,
		MinRefreshInterval: minRefresh,
		Now:                clock.Now,
		Logger:             slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	require.NoError(t, err)
	return ks, clock, logs
}

func direct(iss *oidctest.Issuer) oidc.Issuer {
	return oidc.Issuer{Issuer: iss.URL(), JWKSURL: iss.JWKSURL()}
}

// segments splits a compact JWS into its three parts.
func segments(t *testing.T, token string) []string {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	return parts
}

func b64JSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestVerifiesAndCachesTheKeySet(t *testing.T) {
	iss := oidctest.New(t)
	ks, _, _ := newKeySets(t, direct(iss))
	require.Zero(t, iss.Fetches(), "New fetches nothing")

	token := iss.Sign(t, claims(iss))
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), []byte(token)))
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), []byte(iss.Sign(t, claims(iss)))))
	require.Equal(t, 1, iss.Fetches(), "the key set is cached between calls")
}

func TestRotationRefreshesOnceOnUnknownKid(t *testing.T) {
	iss := oidctest.New(t)
	ks, _, logs := newKeySets(t, direct(iss))
	old := iss.Sign(t, claims(iss))
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), []byte(old)))
	require.Equal(t, 1, iss.Fetches())

	iss.Rotate()
	fresh := iss.Sign(t, claims(iss))
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), []byte(fresh)))
	require.Equal(t, 2, iss.Fetches(), "one refresh for the new kid")
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), []byte(fresh)))
	require.Equal(t, 2, iss.Fetches())

	// The rotated-out key is no longer published; the refresh just happened,
	// so its kid does not trigger another.
	err := ks.VerifySignature(t.Context(), iss.URL(), []byte(old))
	require.ErrorIs(t, err, oidc.ErrBadSignature)
	require.Equal(t, 2, iss.Fetches())

	require.Contains(t, logs.String(), "refreshing JWKS on unknown kid")
	for _, tok := range []string{old, fresh} {
		require.NotContains(t, logs.String(), tok)
		require.NotContains(t, err.Error(), segments(t, tok)[1])
	}
}

func TestRefreshOnUnknownKidIsRateLimited(t *testing.T) {
	iss := oidctest.New(t)
	ks, clock, _ := newKeySets(t, direct(iss))
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), []byte(iss.Sign(t, claims(iss)))))
	iss.Rotate()
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), []byte(iss.Sign(t, claims(iss)))))
	require.Equal(t, 2, iss.Fetches())

	iss.Rotate()
	token := []byte(iss.Sign(t, claims(iss)))
	clock.Advance(minRefresh - time.Second)
	err := ks.VerifySignature(t.Context(), iss.URL(), token)
	require.ErrorIs(t, err, oidc.ErrBadSignature)
	require.Contains(t, err.Error(), iss.Kid())
	require.Equal(t, 2, iss.Fetches(), "no refresh within MinRefreshInterval of the last")

	clock.Advance(time.Second)
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), token))
	require.Equal(t, 3, iss.Fetches())
}

func TestConcurrentCallersShareFetches(t *testing.T) {
	iss := oidctest.New(t)
	ks, _, _ := newKeySets(t, direct(iss))
	verifyAll := func(token string) {
		var wg sync.WaitGroup
		errs := make([]error, 16)
		for n := range errs {
			wg.Go(func() { errs[n] = ks.VerifySignature(t.Context(), iss.URL(), []byte(token)) })
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
	}
	verifyAll(iss.Sign(t, claims(iss)))
	require.Equal(t, 1, iss.Fetches())
	iss.Rotate()
	verifyAll(iss.Sign(t, claims(iss)))
	require.Equal(t, 2, iss.Fetches(), "callers waiting on a refresh use its result")
}

func TestBadSignatures(t *testing.T) {
	iss := oidctest.New(t)
	ks, _, _ := newKeySets(t, direct(iss))
	good := segments(t, iss.Sign(t, claims(iss)))
	header := func(alg string) string {
		return b64JSON(t, map[string]string{"alg": alg, "typ": "JWT", "kid": iss.Kid()})
	}
	tampered := claims(iss)
	tampered["sub"] = "someone-else"

	for name, token := range map[string]string{
		"foreign key":     iss.SignWithForeignKey(t, claims(iss)),
		"tampered claims": good[0] + "." + b64JSON(t, tampered) + "." + good[2],
		"alg none":        header("none") + "." + good[1] + ".",
		"alg none, sig":   header("none") + "." + good[1] + "." + good[2],
		"alg HS256":       header("HS256") + "." + good[1] + "." + good[2],
		"alg mismatch":    header("ES384") + "." + good[1] + "." + good[2],
		"no kid":          b64JSON(t, map[string]string{"alg": "ES256"}) + "." + good[1] + "." + good[2],
		"dummy signed":    oidctest.DummySigned(claims(iss)),
		"not a JWS":       "not-a-token",
		"JSON serialized": `{"payload":"` + good[1] + `","protected":"` + good[0] + `","signature":"` + good[2] + `"}`,
		"empty":           "",
	} {
		t.Run(name, func(t *testing.T) {
			err := ks.VerifySignature(t.Context(), iss.URL(), []byte(token))
			t.Log(err)
			require.ErrorIs(t, err, oidc.ErrBadSignature)
			require.NotErrorIs(t, err, ports.ErrUnavailable)
			require.NotContains(t, err.Error(), good[1], "the token stays out of errors")
		})
	}
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), []byte(strings.Join(good, "."))))
	require.LessOrEqual(t, iss.Fetches(), 2, "at most the first fetch and one refresh (for the dummy's kid)")
}

func TestUnknownIssuer(t *testing.T) {
	iss, other := oidctest.New(t), oidctest.New(t)
	ks, _, _ := newKeySets(t, direct(iss))
	err := ks.VerifySignature(t.Context(), other.URL(), []byte(other.Sign(t, claims(other))))
	require.ErrorIs(t, err, oidc.ErrUnknownIssuer)
	require.Zero(t, iss.Fetches()+other.Fetches())

	// A token of one configured issuer checked as another's fails on its key.
	ks, _, _ = newKeySets(t, direct(iss), direct(other))
	err = ks.VerifySignature(t.Context(), iss.URL(), []byte(other.Sign(t, claims(other))))
	require.ErrorIs(t, err, oidc.ErrBadSignature)
}

func TestDiscovery(t *testing.T) {
	iss := oidctest.New(t)
	ks, _, _ := newKeySets(t, oidc.Issuer{Issuer: iss.URL()})
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), []byte(iss.Sign(t, claims(iss)))))
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), []byte(iss.Sign(t, claims(iss)))))
	require.Equal(t, 1, iss.Fetches())
	iss.Rotate()
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), []byte(iss.Sign(t, claims(iss)))))
	require.Equal(t, 2, iss.Fetches())
}

func TestDiscoveryDocumentMustNameTheIssuer(t *testing.T) {
	iss := oidctest.New(t)
	other := iss.URL() + "/" // discovered at the same address, but not the issuer it names
	ks, _, _ := newKeySets(t, oidc.Issuer{Issuer: other})
	err := ks.VerifySignature(t.Context(), other, []byte(iss.Sign(t, claims(iss))))
	require.ErrorIs(t, err, ports.ErrUnavailable)
	require.Contains(t, err.Error(), "document names issuer")
	require.Zero(t, iss.Fetches())
}

func TestUnreachableIssuer(t *testing.T) {
	iss := oidctest.New(t)
	down := httptest.NewServer(http.NotFoundHandler())
	jwksURL := down.URL + "/jwks"
	down.Close()

	ks, _, _ := newKeySets(t, oidc.Issuer{Issuer: iss.URL(), JWKSURL: jwksURL})
	token := []byte(iss.Sign(t, claims(iss)))
	err := ks.VerifySignature(t.Context(), iss.URL(), token)
	require.ErrorIs(t, err, ports.ErrUnavailable)
	require.NotErrorIs(t, err, oidc.ErrBadSignature)
	require.Contains(t, err.Error(), iss.URL())
	require.Contains(t, err.Error(), jwksURL)
	require.NotContains(t, err.Error(), segments(t, string(token))[1])
	// Within MinRefreshInterval the failure is answered without a new attempt.
	require.ErrorIs(t, ks.VerifySignature(t.Context(), iss.URL(), token), ports.ErrUnavailable)

	// Discovery of an issuer whose server is down.
	iss.Close()
	ks, _, _ = newKeySets(t, oidc.Issuer{Issuer: iss.URL()})
	err = ks.VerifySignature(t.Context(), iss.URL(), token)
	require.ErrorIs(t, err, ports.ErrUnavailable)
	require.Contains(t, err.Error(), "/.well-known/openid-configuration")
}

// flakyJWKS serves iss's JWKS, or a failure while its mode says so.
type flakyJWKS struct {
	iss  *oidctest.Issuer
	mode atomic.Value // "ok", "500", "garbage"
	hits atomic.Int64
}

func (f *flakyJWKS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.hits.Add(1)
	switch f.mode.Load() {
	case "500":
		http.Error(w, "boom", http.StatusInternalServerError)
	case "garbage":
		_, _ = io.WriteString(w, `{"keys": [{"kty": "nope"`)
	default:
		res, err := http.Get(f.iss.JWKSURL())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer func() { _ = res.Body.Close() }()
		_, _ = io.Copy(w, res.Body)
	}
}

func TestFailedFetchesAreUnavailableAndRetried(t *testing.T) {
	for _, mode := range []string{"500", "garbage"} {
		t.Run(mode, func(t *testing.T) {
			iss := oidctest.New(t)
			flaky := &flakyJWKS{iss: iss}
			flaky.mode.Store(mode)
			srv := httptest.NewServer(flaky)
			t.Cleanup(srv.Close)
			ks, clock, _ := newKeySets(t, oidc.Issuer{Issuer: iss.URL(), JWKSURL: srv.URL})
			token := []byte(iss.Sign(t, claims(iss)))

			err := ks.VerifySignature(t.Context(), iss.URL(), token)
			require.ErrorIs(t, err, ports.ErrUnavailable)
			require.Contains(t, err.Error(), srv.URL)
			require.Equal(t, int64(1), flaky.hits.Load())

			flaky.mode.Store("ok")
			require.ErrorIs(t, ks.VerifySignature(t.Context(), iss.URL(), token), ports.ErrUnavailable)
			require.Equal(t, int64(1), flaky.hits.Load(), "no retry within MinRefreshInterval")

			clock.Advance(minRefresh)
			require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), token))
			require.Equal(t, int64(2), flaky.hits.Load())
		})
	}
}

func TestCancelledCallerDoesNotCountAsAFailure(t *testing.T) {
	iss := oidctest.New(t)
	ks, _, _ := newKeySets(t, direct(iss))
	token := []byte(iss.Sign(t, claims(iss)))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_ = ks.VerifySignature(ctx, iss.URL(), token) // may fail: its context is done
	require.NoError(t, ks.VerifySignature(t.Context(), iss.URL(), token))
}

func TestClosedKeySetsAreUnavailable(t *testing.T) {
	iss := oidctest.New(t)
	ctx, cancel := context.WithCancel(t.Context())
	ks, err := oidc.New(ctx, oidc.Options{Issuers: []oidc.Issuer{direct(iss)}})
	require.NoError(t, err)
	cancel()
	err = ks.VerifySignature(t.Context(), iss.URL(), []byte(iss.Sign(t, claims(iss))))
	require.ErrorIs(t, err, ports.ErrUnavailable)
}

func TestNewRejectsBadOptions(t *testing.T) {
	for name, o := range map[string]oidc.Options{
		"empty issuer":         {Issuers: []oidc.Issuer{{JWKSURL: "https://idp.example/jwks"}}},
		"duplicate issuer":     {Issuers: []oidc.Issuer{{Issuer: "https://idp.example"}, {Issuer: "https://idp.example"}}},
		"undiscoverable":       {Issuers: []oidc.Issuer{{Issuer: "idp.example"}}},
		"relative JWKS URL":    {Issuers: []oidc.Issuer{{Issuer: "https://idp.example", JWKSURL: "/jwks"}}},
		"negative min refresh": {MinRefreshInterval: -time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := oidc.New(t.Context(), o)
			require.Error(t, err)
		})
	}
	// An issuer value need not be a URL when its JWKS URL is given.
	_, err := oidc.New(t.Context(), oidc.Options{Issuers: []oidc.Issuer{{Issuer: "accounts.google.com", JWKSURL: "https://idp.example/jwks"}}})
	require.NoError(t, err)
}
