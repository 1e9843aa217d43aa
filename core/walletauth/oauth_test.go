package walletauth_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/oidc"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/coretest"
	"github.com/corridorpay/corridor/testkit/oidctest"
)

// oauthEnv is a production-mode service whose accepted issuer is a test
// issuer serving its JWKS over httptest.
type oauthEnv struct {
	*authEnv
	iss *oidctest.Issuer
}

func newOAuthEnv(t *testing.T, b coretest.Backend, sandbox bool) *oauthEnv {
	t.Helper()
	iss := oidctest.New(t)
	keys, err := oidc.New(t.Context(), oidc.Options{Issuers: []oidc.Issuer{{Issuer: iss.URL(), JWKSURL: iss.JWKSURL()}}})
	require.NoError(t, err)
	e := newAuthEnvWith(t, b, walletauth.Options{Sandbox: sandbox, OIDCIssuers: []string{iss.URL()}, Tokens: keys})
	return &oauthEnv{authEnv: e, iss: iss}
}

// claims are valid claims of one identity, issued now.
func (e *oauthEnv) claims() map[string]any {
	now := e.Env.Clock.Now()
	return map[string]any{"iss": e.iss.URL(), "sub": "user-42", "aud": "corridor-app", "email": "ada@example.com",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// with is claims with some changed (a nil value deletes the claim).
func with(c map[string]any, changes map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range c {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// addOAuth adds an OAUTH credential for token by signed retry, stamped by
// a session of the wallet's EMAIL_OTP credential.
func (e *authEnv) addOAuth(t *testing.T, token string) (ports.AuthMethod, error) {
	t.Helper()
	ctx := context.Background()
	n := walletauth.NewCredential{Type: walletauth.TypeOAuth, AccountID: e.wallet, OIDCToken: token}
	body, _ := json.Marshal(n)
	c, _, err := e.svc.CreateCredential(ctx, e.pid, n, body, walletauth.Retry{})
	if err != nil {
		return ports.AuthMethod{}, err
	}
	require.NotNil(t, c, "a wallet with a credential adds another by signed retry")
	key, _ := e.session(t)
	_, m, err := e.svc.CreateCredential(ctx, e.pid, n, body, walletauth.Retry{RequestID: c.RequestID, Signature: stampOf(t, key, c.PayloadToSign)})
	return m, err
}

// verifyOAuth verifies m with a token of claims whose nonce binds a fresh
// client key (nonce, when set in claims, wins).
func (e *oauthEnv) verifyOAuth(t *testing.T, m ports.AuthMethod, claims map[string]any) (walletauth.IssuedSession, error) {
	t.Helper()
	pub := walletauth.CompressedHex(clientKey(t).PublicKey())
	claims = with(map[string]any{"nonce": walletauth.Nonce(pub)}, claims)
	return e.svc.VerifyCredential(context.Background(), e.pid, m.ID, walletauth.VerifyRequest{Type: walletauth.TypeOAuth,
		OIDCToken: e.iss.Sign(t, claims), ClientPublicKey: pub})
}

func requireReason(t *testing.T, err error, reason string) {
	t.Helper()
	var fe *fault.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, fault.KindUnauthorized, fe.Kind)
	assert.Equal(t, "UNAUTHORIZED", fe.Code)
	assert.Contains(t, fe.Reason, reason)
}

func requireInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var fe *fault.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, fault.KindInvalid, fe.Kind, "%v", err)
	assert.Contains(t, err.Error(), field)
}

// The OAUTH flow with a real issuer: registration binds the token's
// identity, verify opens a session whose stamps verify, the same identity
// twice is refused, and a rotated key set is fetched on its new kid.
func TestOAuthCredentialFlow(t *testing.T) {
	onBothStores(t, func(t *testing.T, b coretest.Backend) {
		e := newOAuthEnv(t, b, false)
		m, err := e.addOAuth(t, e.iss.Sign(t, e.claims()))
		require.NoError(t, err)
		assert.Equal(t, walletauth.TypeOAuth, m.Type)
		assert.Equal(t, "ada@example.com", m.Nickname)
		assert.Equal(t, []string{e.iss.URL(), "user-42", "corridor-app"}, []string{m.Issuer, m.Subject, m.Audience})

		issued, err := e.verifyOAuth(t, m, e.claims())
		require.NoError(t, err)
		assert.Equal(t, m.ID, issued.Session.CredentialID)
		assert.Empty(t, issued.EncryptedSessionSigningKey, "a compressed key is the session key")

		e.iss.Rotate()
		_, err = e.verifyOAuth(t, m, e.claims())
		require.NoError(t, err, "a new kid refreshes the key set")

		_, err = e.addOAuth(t, e.iss.Sign(t, e.claims()))
		var fe *fault.Error
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, walletauth.CodeOAuthExists, fe.Code)
		other, err := e.addOAuth(t, e.iss.Sign(t, with(e.claims(), map[string]any{"sub": "user-43"})))
		require.NoError(t, err, "another identity of the same issuer")
		assert.NotEqual(t, m.ID, other.ID)
	})
}

func oauthCredential(t *testing.T, sandbox bool) (*oauthEnv, ports.AuthMethod) {
	t.Helper()
	e := newOAuthEnv(t, coretest.Memory(), sandbox)
	m, err := e.addOAuth(t, e.iss.Sign(t, e.claims()))
	require.NoError(t, err)
	return e, m
}

func TestOAuthStaleIssuedAt(t *testing.T) {
	e, m := oauthCredential(t, false)
	old := e.Env.Clock.Now().Add(-66 * time.Second).Unix()
	_, err := e.verifyOAuth(t, m, with(e.claims(), map[string]any{"iat": old}))
	requireReason(t, err, "stale")
	_, err = e.verifyOAuth(t, m, with(e.claims(), map[string]any{"iat": e.Env.Clock.Now().Add(-64 * time.Second).Unix()}))
	require.NoError(t, err, "60 s plus 5 s of skew")
	_, err = e.verifyOAuth(t, m, with(e.claims(), map[string]any{"iat": e.Env.Clock.Now().Add(time.Minute).Unix()}))
	requireReason(t, err, "future")
}

func TestOAuthWrongAudience(t *testing.T) {
	e, m := oauthCredential(t, false)
	_, err := e.verifyOAuth(t, m, with(e.claims(), map[string]any{"aud": "another-app"}))
	requireReason(t, err, "aud")
	_, err = e.verifyOAuth(t, m, with(e.claims(), map[string]any{"aud": []string{"corridor-app"}}))
	require.NoError(t, err, "a one-element array is the same audience")
	_, err = e.verifyOAuth(t, m, with(e.claims(), map[string]any{"aud": []string{"corridor-app", "x"}}))
	requireInvalid(t, err, "aud")
}

func TestOAuthWrongSubject(t *testing.T) {
	e, m := oauthCredential(t, false)
	_, err := e.verifyOAuth(t, m, with(e.claims(), map[string]any{"sub": "user-43"}))
	requireReason(t, err, "sub")
}

func TestOAuthWrongNonce(t *testing.T) {
	e, m := oauthCredential(t, false)
	_, err := e.verifyOAuth(t, m, with(e.claims(), map[string]any{"nonce": walletauth.Nonce("02" + "ab")}))
	requireReason(t, err, "nonce")
	_, err = e.verifyOAuth(t, m, with(e.claims(), map[string]any{"nonce": ""}))
	requireReason(t, err, "nonce")
}

func TestOAuthExpired(t *testing.T) {
	e, m := oauthCredential(t, false)
	_, err := e.verifyOAuth(t, m, with(e.claims(), map[string]any{"exp": e.Env.Clock.Now().Add(-10 * time.Second).Unix()}))
	requireReason(t, err, "expired")
}

func TestOAuthUnknownIssuer(t *testing.T) {
	e, m := oauthCredential(t, false)
	stranger := oidctest.New(t)
	c := with(e.claims(), map[string]any{"iss": stranger.URL()})
	_, err := e.addOAuth(t, stranger.Sign(t, c))
	requireInvalid(t, err, "oidcToken")
	pub := walletauth.CompressedHex(clientKey(t).PublicKey())
	_, err = e.svc.VerifyCredential(context.Background(), e.pid, m.ID, walletauth.VerifyRequest{
		OIDCToken: stranger.Sign(t, with(c, map[string]any{"nonce": walletauth.Nonce(pub)})), ClientPublicKey: pub})
	requireReason(t, err, "issuer")
}

func TestOAuthSignatureMismatch(t *testing.T) {
	e, m := oauthCredential(t, false)
	pub := walletauth.CompressedHex(clientKey(t).PublicKey())
	forged := e.iss.SignWithForeignKey(t, with(e.claims(), map[string]any{"nonce": walletauth.Nonce(pub)}))
	_, err := e.svc.VerifyCredential(context.Background(), e.pid, m.ID, walletauth.VerifyRequest{OIDCToken: forged, ClientPublicKey: pub})
	requireReason(t, err, "signature")
	_, err = e.svc.VerifyCredential(context.Background(), e.pid, m.ID, walletauth.VerifyRequest{
		OIDCToken: oidctest.DummySigned(with(e.claims(), map[string]any{"nonce": walletauth.Nonce(pub)})), ClientPublicKey: pub})
	requireReason(t, err, "signature")
}

// A malformed token is 400 before any other check, the old sandbox
// literal included; the sandbox takes a dummy signature when the claims
// are valid.
func TestOAuthMalformedAndSandboxTokens(t *testing.T) {
	e, m := oauthCredential(t, true)
	pub := walletauth.CompressedHex(clientKey(t).PublicKey())
	for _, token := range []string{walletauth.SandboxOIDCLiteral, "a.b", "not-a-jwt", "e30.e30.", "e30.e30.c2ln",
		oidctest.DummySigned(with(e.claims(), map[string]any{"iat": "yesterday"})),
		// A NumericDate written as a string, however plausible.
		oidctest.DummySigned(with(e.claims(), map[string]any{"iat": strconv.FormatInt(e.Env.Clock.Now().Unix(), 10), "nonce": walletauth.Nonce(pub)})),
		oidctest.DummySigned(with(e.claims(), map[string]any{"exp": strconv.FormatInt(e.Env.Clock.Now().Add(time.Hour).Unix(), 10), "nonce": walletauth.Nonce(pub)})),
		// Claims that are not text: a NUL, and bytes that are not UTF-8
		// (the payload's e-mail ends in 0xff).
		oidctest.DummySigned(with(e.claims(), map[string]any{"email": "a\x00b@example.com", "nonce": walletauth.Nonce(pub)})),
		oidctest.DummySigned(with(e.claims(), map[string]any{"sub": "user\x00", "nonce": walletauth.Nonce(pub)})),
		invalidUTF8Email(t, with(e.claims(), map[string]any{"nonce": walletauth.Nonce(pub)}))} {
		_, err := e.svc.VerifyCredential(context.Background(), e.pid, m.ID, walletauth.VerifyRequest{OIDCToken: token, ClientPublicKey: pub})
		requireInvalid(t, err, "oidcToken")
	}
	dummy := oidctest.DummySigned(with(e.claims(), map[string]any{"nonce": walletauth.Nonce(pub)}))
	_, err := e.svc.VerifyCredential(context.Background(), e.pid, m.ID, walletauth.VerifyRequest{OIDCToken: dummy, ClientPublicKey: pub})
	require.NoError(t, err, "the sandbox does not check signatures")
	_, err = e.svc.VerifyCredential(context.Background(), e.pid, m.ID, walletauth.VerifyRequest{Type: walletauth.TypePasskey,
		OIDCToken: dummy, ClientPublicKey: pub})
	requireInvalid(t, err, "type")
	_, err = e.svc.VerifyCredential(context.Background(), e.pid, m.ID, walletauth.VerifyRequest{ClientPublicKey: pub})
	requireInvalid(t, err, "oidcToken")
}

// invalidUTF8Email is claims as a dummy-signed token whose e-mail claim
// ends in the byte 0xff.
func invalidUTF8Email(t *testing.T, claims map[string]any) string {
	t.Helper()
	claims["email"] = "ada@example.comXX"
	token := oidctest.DummySigned(claims)
	parts := strings.Split(token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	payload = bytes.Replace(payload, []byte("XX"), []byte{0xff}, 1)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]
}

// The OIDC pre-check never panics and refuses what is not a JWT.
func FuzzParseJWT(f *testing.F) {
	for _, s := range []string{"", "a.b.c", "e30.e30.c2ln", walletauth.SandboxOIDCLiteral,
		oidctest.DummySigned(map[string]any{"iss": "https://i", "sub": "s", "aud": "a", "iat": 1, "exp": 2}),
		oidctest.DummySigned(map[string]any{"iss": "https://i", "sub": "s", "aud": []string{"a"}, "iat": 1.5, "exp": 2e9})} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		c, err := walletauth.ParseJWT(token)
		if err != nil {
			var fe *fault.Error
			require.ErrorAs(t, err, &fe)
			require.Equal(t, fault.KindInvalid, fe.Kind)
			return
		}
		require.NotEmpty(t, c.Issuer)
		require.NotEmpty(t, c.Subject)
		require.NotEmpty(t, c.Audience)
	})
}

// A signed retry replayed after it created the credential is refused as a
// replay (401), not answered with the duplicate's 400.
func TestCreateCredentialRetryReplay(t *testing.T) {
	e := newOAuthEnv(t, coretest.Memory(), false)
	ctx := context.Background()
	n := walletauth.NewCredential{Type: walletauth.TypeOAuth, AccountID: e.wallet, OIDCToken: e.iss.Sign(t, e.claims())}
	body, _ := json.Marshal(n)
	c, _, err := e.svc.CreateCredential(ctx, e.pid, n, body, walletauth.Retry{})
	require.NoError(t, err)
	key, _ := e.session(t)
	retry := walletauth.Retry{RequestID: c.RequestID, Signature: stampOf(t, key, c.PayloadToSign)}
	_, m, err := e.svc.CreateCredential(ctx, e.pid, n, body, retry)
	require.NoError(t, err)
	require.NotEmpty(t, m.ID)

	_, _, err = e.svc.CreateCredential(ctx, e.pid, n, body, retry)
	var fe *fault.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, fault.KindUnauthorized, fe.Kind, "%v", err)
}
