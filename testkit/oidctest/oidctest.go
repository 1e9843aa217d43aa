// Package oidctest is an OpenID Connect issuer for tests: an httptest
// server publishing a discovery document and a JWKS, and minting ES256
// ID tokens with its current key.
package oidctest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

const (
	jwksPath      = "/jwks"
	discoveryPath = "/.well-known/openid-configuration"
)

// Issuer is an httptest server publishing a JWKS (and
// /.well-known/openid-configuration) and minting tokens.
type Issuer struct {
	srv     *httptest.Server
	fetches atomic.Int64

	mu   sync.Mutex
	keys int // keys made so far, for kids
	key  *ecdsa.PrivateKey
	kid  string
	jwks []byte // the JWKS document publishing key
}

// New starts the issuer with one P-256 (ES256) key with a kid; t.Cleanup
// closes its server.
func New(t testing.TB) *Issuer {
	t.Helper()
	i := &Issuer{}
	i.Rotate()
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+jwksPath, i.serveJWKS)
	mux.HandleFunc("GET "+discoveryPath, i.serveDiscovery)
	i.srv = httptest.NewServer(mux)
	t.Cleanup(i.srv.Close)
	return i
}

// URL is the issuer value (`iss`): the server's URL.
func (i *Issuer) URL() string { return i.srv.URL }

// JWKSURL is where the issuer publishes its JWKS.
func (i *Issuer) JWKSURL() string { return i.srv.URL + jwksPath }

// Close stops the server early, making the issuer unreachable.
func (i *Issuer) Close() { i.srv.Close() }

// Fetches is how many times the JWKS was served.
func (i *Issuer) Fetches() int { return int(i.fetches.Load()) }

// Kid is the key ID of the current key.
func (i *Issuer) Kid() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.kid
}

// Rotate makes a new key with a new kid current; the JWKS then publishes
// only the new key.
func (i *Issuer) Rotate() {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(fmt.Sprintf("oidctest: generate key: %v", err))
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.keys++
	kid := fmt.Sprintf("oidctest-key-%d", i.keys)
	doc, err := publish(&key.PublicKey, kid)
	if err != nil {
		panic(fmt.Sprintf("oidctest: publish key: %v", err))
	}
	i.key, i.kid, i.jwks = key, kid, doc
}

// publish returns the JWKS document holding pub alone, as kid.
func publish(pub *ecdsa.PublicKey, kid string) ([]byte, error) {
	k, err := jwk.Import(pub)
	if err != nil {
		return nil, err
	}
	for name, v := range map[string]any{jwk.KeyIDKey: kid, jwk.AlgorithmKey: jwa.ES256(), jwk.KeyUsageKey: "sig"} {
		if err := k.Set(name, v); err != nil {
			return nil, err
		}
	}
	set := jwk.NewSet()
	if err := set.AddKey(k); err != nil {
		return nil, err
	}
	return json.Marshal(set)
}

// Sign returns claims as a compact JWS signed ES256 with the current key,
// its header naming the current kid and typ JWT.
func (i *Issuer) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	i.mu.Lock()
	key, kid := i.key, i.kid
	i.mu.Unlock()
	return sign(t, key, kid, claims)
}

// SignWithForeignKey returns claims signed by a key NOT in the JWKS but
// naming the current kid: its signature does not match.
func (i *Issuer) SignWithForeignKey(t testing.TB, claims map[string]any) string {
	t.Helper()
	foreign, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("oidctest: generate key: %v", err)
	}
	return sign(t, foreign, i.Kid(), claims)
}

func sign(t testing.TB, key *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatalf("oidctest: encode claims: %v", err)
	}
	hdr := jws.NewHeaders()
	if err := hdr.Set(jws.KeyIDKey, kid); err != nil {
		t.Fatalf("oidctest: header kid: %v", err)
	}
	if err := hdr.Set(jws.TypeKey, "JWT"); err != nil {
		t.Fatalf("oidctest: header typ: %v", err)
	}
	// A raw *ecdsa.PrivateKey carries no kid of its own, so the header's
	// stays (a jwk.Key's kid would override it).
	token, err := jws.Sign(payload, jws.WithKey(jwa.ES256(), key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatalf("oidctest: sign: %v", err)
	}
	return string(token)
}

func (i *Issuer) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	i.mu.Lock()
	doc := i.jwks
	i.mu.Unlock()
	i.fetches.Add(1)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc)
}

func (i *Issuer) serveDiscovery(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"issuer":                                i.URL(),
		"jwks_uri":                              i.JWKSURL(),
		"response_types_supported":              []string{"id_token"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"ES256"},
	})
}

// DummySigned returns a JWT-shaped token (header
// {"alg":"RS256","typ":"JWT","kid":"sandbox"}) with claims and a dummy
// signature segment: for code that does not verify signatures (sandbox).
func DummySigned(claims map[string]any) string {
	payload, err := json.Marshal(claims)
	if err != nil {
		panic(fmt.Sprintf("oidctest: encode claims: %v", err))
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT","kid":"sandbox"}`)) + "." +
		enc.EncodeToString(payload) + "." + enc.EncodeToString([]byte("sandbox-signature"))
}
