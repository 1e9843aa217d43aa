package main

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/oidc"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/testkit/oidctest"
	"github.com/corridorpay/corridor/testkit/passkeytest"
)

// The EMAIL_OTP flow through the whole service, on memory and on
// PostgreSQL with Redis holding the single-use values: verify, open the
// session key, and a signed retry whose request id two racing retries
// share: exactly one wins.
func TestWalletSessionFlowOnEveryBackend(t *testing.T) {
	for _, be := range []string{"memory", "postgres+redis"} {
		t.Run(be, func(t *testing.T) {
			env := newAPIEnv(t, be)
			srv := httptest.NewServer(env.handler)
			t.Cleanup(srv.Close)
			a := apiTarget{bases: []string{srv.URL}, auth: env.auth}
			cust := a.created(t, "POST", "/customers", `{"customerType":"INDIVIDUAL","region":"US","email":"ada@example.com"}`)
			r := a.do(t, 0, "GET", "/customers/internal-accounts?type=EMBEDDED_WALLET&customerId="+url.QueryEscape(cust), "")
			wallet := r.json(t)["data"].([]any)[0].(map[string]any)["id"].(string)
			r = a.do(t, 0, "GET", "/auth/credentials?accountId="+url.QueryEscape(wallet), "")
			cred := r.json(t)["data"].([]any)[0].(map[string]any)["id"].(string)

			client, err := ecdh.P256().GenerateKey(rand.Reader)
			require.NoError(t, err)
			r = a.do(t, 0, "POST", "/auth/credentials/"+cred+"/verify",
				fmt.Sprintf(`{"otp":"000000","clientPublicKey":%q}`, hex.EncodeToString(client.PublicKey().Bytes())))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			session := r.json(t)
			key, err := walletauth.OpenSessionKey(client, session["encryptedSessionSigningKey"].(string))
			require.NoError(t, err)

			path := "/auth/sessions/" + session["id"].(string)
			r = a.do(t, 0, "DELETE", path, "")
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
			ch := r.json(t)
			stamp, err := walletauth.Sign(key, []byte(ch["payloadToSign"].(string)))
			require.NoError(t, err)
			replies := concurrently(8, func(i int) apiReply {
				return a.do(t, i, "DELETE", path, "", "Service-Wallet-Signature", stamp, "Request-Id", ch["requestId"].(string))
			})
			won := 0
			for _, rep := range replies {
				switch rep.status {
				case http.StatusNoContent:
					won++
				case http.StatusUnauthorized, http.StatusNotFound:
					// The request id was used, or (arriving after the
					// winner) the session is revoked: 404 as unknown.
				default:
					t.Fatalf("unexpected %d: %s", rep.status, rep.body)
				}
			}
			assert.Equal(t, 1, won, "the request id is single use")
			r = a.do(t, 0, "GET", "/auth/sessions?accountId="+url.QueryEscape(wallet), "")
			assert.Empty(t, r.json(t)["data"])
		})
	}
}

// walletClient drives one wallet's signed retries through the API.
type walletClient struct {
	a      apiTarget
	wallet string
}

// openSession verifies a credential (path, body naming client's public
// key, uncompressed) and opens the session key sealed to client.
func (w walletClient) openSession(t *testing.T, path, body string, client *ecdh.PrivateKey, header ...string) (*ecdsa.PrivateKey, map[string]any) {
	t.Helper()
	r := w.a.do(t, 0, "POST", path, body, header...)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	s := r.json(t)
	key, err := walletauth.OpenSessionKey(client, s["encryptedSessionSigningKey"].(string))
	require.NoError(t, err)
	return key, s
}

// signed runs a signed retry: the first call's 202, then the retry
// stamped with key; it returns the retry's reply.
func (w walletClient) signed(t *testing.T, key *ecdsa.PrivateKey, method, path, body string) apiReply {
	t.Helper()
	r := w.a.do(t, 0, method, path, body)
	require.Equal(t, http.StatusAccepted, r.status, "%s %s: %s", method, path, r.body)
	ch := r.json(t)
	stamp, err := walletauth.Sign(key, []byte(ch["payloadToSign"].(string)))
	require.NoError(t, err)
	return w.a.do(t, 0, method, path, body, "Service-Wallet-Signature", stamp, "Request-Id", ch["requestId"].(string))
}

func newClientKey(t *testing.T) (*ecdh.PrivateKey, string) {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	return k, hex.EncodeToString(k.PublicKey().Bytes())
}

// The OAUTH and PASSKEY flows through the whole service with real keys, a
// test OIDC issuer and a virtual authenticator, on memory and on
// PostgreSQL + Redis: each credential is added by a signed retry, verified
// into a session whose sealed key opens and stamps the next operation; a
// credential cannot be revoked with its own session, only another's.
func TestOAuthAndPasskeyFlowsOnEveryBackend(t *testing.T) {
	for _, be := range []string{"memory", "postgres+redis"} {
		t.Run(be, func(t *testing.T) {
			iss := oidctest.New(t)
			env := newAPIEnvWith(t, be, func(c *Config) {
				c.OIDCIssuers = []oidc.Issuer{{Issuer: iss.URL(), JWKSURL: iss.JWKSURL()}}
				c.WebAuthnRPID, c.WebAuthnOrigins = passkeytest.RPID, []string{passkeytest.Origin}
			})
			srv := httptest.NewServer(env.handler)
			t.Cleanup(srv.Close)
			a := apiTarget{bases: []string{srv.URL}, auth: env.auth}
			cust := a.created(t, "POST", "/customers", `{"customerType":"INDIVIDUAL","region":"US","email":"ada@example.com"}`)
			r := a.do(t, 0, "GET", "/customers/internal-accounts?type=EMBEDDED_WALLET&customerId="+url.QueryEscape(cust), "")
			w := walletClient{a: a, wallet: r.json(t)["data"].([]any)[0].(map[string]any)["id"].(string)}
			r = a.do(t, 0, "GET", "/auth/credentials?accountId="+url.QueryEscape(w.wallet), "")
			emailCred := r.json(t)["data"].([]any)[0].(map[string]any)["id"].(string)
			client, pub := newClientKey(t)
			emailKey, _ := w.openSession(t, "/auth/credentials/"+emailCred+"/verify",
				fmt.Sprintf(`{"type":"EMAIL_OTP","otp":"000000","clientPublicKey":%q}`, pub), client)

			// OAUTH: added with the EMAIL_OTP session, verified with a nonce-bound token.
			claims := func(nonce string) map[string]any {
				now := time.Now()
				return map[string]any{"iss": iss.URL(), "sub": "user-42", "aud": "corridor-app", "email": "ada@gmail.example",
					"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "nonce": nonce}
			}
			r = w.signed(t, emailKey, "POST", "/auth/credentials",
				fmt.Sprintf(`{"type":"OAUTH","accountId":%q,"oidcToken":%q}`, w.wallet, iss.Sign(t, claims(""))))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			oauthCred := r.json(t)
			assert.Equal(t, "OAUTH", oauthCred["type"])
			assert.Equal(t, "ada@gmail.example", oauthCred["nickname"])
			client, pub = newClientKey(t)
			oauthKey, oauthSession := w.openSession(t, "/auth/credentials/"+oauthCred["id"].(string)+"/verify",
				fmt.Sprintf(`{"type":"OAUTH","oidcToken":%q,"clientPublicKey":%q}`, iss.Sign(t, claims(walletauth.Nonce(pub))), pub), client)
			assert.Equal(t, "OAUTH", oauthSession["type"])

			// PASSKEY: registered with the OAUTH session, then challenge → assertion → verify.
			dev := passkeytest.New()
			reg := dev.Register(t)
			r = w.signed(t, oauthKey, "POST", "/auth/credentials", fmt.Sprintf(
				`{"type":"PASSKEY","accountId":%q,"nickname":"YubiKey","challenge":%q,"attestation":{"credentialId":%q,"clientDataJson":%q,"attestationObject":%q,"transports":["usb"]}}`,
				w.wallet, reg.Challenge, reg.CredentialID, reg.ClientDataJSON, reg.AttestationObject))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			pkCred := r.json(t)["id"].(string)
			client, pub = newClientKey(t)
			r = a.do(t, 0, "POST", "/auth/credentials/"+pkCred+"/challenge", fmt.Sprintf(`{"clientPublicKey":%q}`, pub))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			ch := r.json(t)
			assert.Equal(t, reg.CredentialID, ch["credentialId"])
			assertion, _ := json.Marshal(dev.Assert(t, ch["challenge"].(string)))
			pkKey, _ := w.openSession(t, "/auth/credentials/"+pkCred+"/verify",
				fmt.Sprintf(`{"type":"PASSKEY","assertion":%s}`, assertion), client, "Request-Id", ch["requestId"].(string))

			// A credential is revoked only with another credential's session.
			r = w.signed(t, pkKey, "DELETE", "/auth/credentials/"+pkCred, "")
			require.Equal(t, http.StatusUnauthorized, r.status, "%s", r.body)
			r = w.signed(t, pkKey, "DELETE", "/auth/credentials/"+oauthCred["id"].(string), "")
			require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
			r = a.do(t, 0, "PATCH", "/internal-accounts/"+w.wallet, `{"privateEnabled":true}`,
				"Service-Wallet-Signature", mustStamp(t, oauthKey, "x"), "Request-Id", "Request:00000000-0000-0000-0000-000000000000")
			require.Equal(t, http.StatusUnauthorized, r.status, "the revoked credential's session ended: %s", r.body)
			r = w.signed(t, pkKey, "PATCH", "/internal-accounts/"+w.wallet, `{"privateEnabled":true}`)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			assert.Equal(t, true, r.json(t)["privateEnabled"])
		})
	}
}

func mustStamp(t *testing.T, key *ecdsa.PrivateKey, payload string) string {
	t.Helper()
	s, err := walletauth.Sign(key, []byte(payload))
	require.NoError(t, err)
	return s
}
