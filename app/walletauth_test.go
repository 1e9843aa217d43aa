package main

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/walletauth"
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
				case http.StatusUnauthorized:
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
