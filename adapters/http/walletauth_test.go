package httpapi_test

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/walletauth"
)

// The whole EMAIL_OTP story over HTTP with real keys: list the wallet's
// credential, verify with the sandbox code and a fresh client key, open
// the sealed session key, and execute a quote from the embedded wallet
// with a real stamp over its payloadToSign.
func TestEmailOTPSessionExecutesAWalletQuote(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	creds := h.get(f.tn, "/auth/credentials?accountId="+url.QueryEscape(f.wallet.ID)).object(t)["data"].([]any)
	require.Len(t, creds, 1)
	cred := creds[0].(map[string]any)
	assert.Equal(t, "EMAIL_OTP", cred["type"])
	assert.Equal(t, "ada@example.com", cred["nickname"])
	id := cred["id"].(string)

	r := h.post(f.tn, "/auth/credentials/"+id+"/challenge", `{}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	client, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	pub := hex.EncodeToString(client.PublicKey().Bytes())
	requireError(t, h.post(f.tn, "/auth/credentials/"+id+"/verify", fmt.Sprintf(`{"otp":"123456","clientPublicKey":%q}`, pub)),
		http.StatusUnauthorized, "UNAUTHORIZED")
	requireError(t, h.post(f.tn, "/auth/credentials/"+id+"/verify", `{"otp":"000000","clientPublicKey":"04zz"}`),
		http.StatusBadRequest, "INVALID_INPUT", "clientPublicKey")
	requireError(t, h.post(f.tn, "/auth/credentials/"+id+"/verify", fmt.Sprintf(`{"type":"OAUTH","otp":"000000","clientPublicKey":%q}`, pub)),
		http.StatusBadRequest, "INVALID_INPUT", "type")
	r = h.post(f.tn, "/auth/credentials/"+id+"/verify", fmt.Sprintf(`{"type":"EMAIL_OTP","otp":"000000","clientPublicKey":%q}`, pub))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	session := r.object(t)
	assert.Regexp(t, `^Session:`, session["id"])
	key, err := walletauth.OpenSessionKey(client, session["encryptedSessionSigningKey"].(string))
	require.NoError(t, err)

	listed := h.get(f.tn, "/auth/sessions?accountId="+url.QueryEscape(f.wallet.ID)).object(t)["data"].([]any)
	require.Len(t, listed, 1)
	assert.NotContains(t, listed[0].(map[string]any), "encryptedSessionSigningKey", "a list never carries keys")

	q := h.createQuote(f, quoteBody(f.wallet.ID, f.dest.ID, ""))
	payload := q["paymentInstructions"].([]any)[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)["payloadToSign"].(string)
	stamp, err := walletauth.Sign(key, []byte(payload))
	require.NoError(t, err)
	r = h.post(f.tn, executePath(q["id"].(string)), "", "Service-Wallet-Signature", stamp)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "PROCESSING", r.object(t)["status"])
}

// Another platform sees no credential or session, and cannot challenge
// or verify a credential it does not own; a bad accountId is 400.
func TestWalletAuthIsPlatformScoped(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	other := h.tenant("USD")
	path := "/auth/credentials?accountId=" + url.QueryEscape(f.wallet.ID)
	assert.Empty(t, h.get(other, path).object(t)["data"])
	assert.Empty(t, h.get(other, "/auth/sessions?accountId="+url.QueryEscape(f.wallet.ID)).object(t)["data"])
	creds, err := h.store.Read().AuthMethods().ListByAccount(context.Background(), f.tn.platformID, f.wallet.ID)
	require.NoError(t, err)
	requireError(t, h.post(other, "/auth/credentials/"+creds[0].ID+"/challenge", `{}`), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.post(other, "/auth/credentials/"+creds[0].ID+"/verify", `{"otp":"000000","clientPublicKey":"02f45f2a22c908b9ce09a7150e514afd24627c401c38a4afc164e1ea783adaaa31"}`),
		http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.get(f.tn, "/auth/sessions?accountId=Customer:1"), http.StatusBadRequest, "INVALID_INPUT", "accountId")
	for _, list := range []string{"/auth/sessions", "/auth/credentials"} {
		requireError(t, h.get(f.tn, list+"?accountId=InternalAccount:not-a-uuid"), http.StatusBadRequest, "INVALID_INPUT", "accountId")
	}
}

// Revoking and refreshing sessions over HTTP, by signed retry: 202 with
// payloadToSign, then the stamped retry; a replayed Request-Id, a swapped
// body and a missing header are 401.
func TestSessionSignedRetries(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	creds, err := h.store.Read().AuthMethods().ListByAccount(context.Background(), f.tn.platformID, f.wallet.ID)
	require.NoError(t, err)
	verify := func() (map[string]any, *ecdh.PrivateKey) {
		client, err := ecdh.P256().GenerateKey(rand.Reader)
		require.NoError(t, err)
		r := h.post(f.tn, "/auth/credentials/"+creds[0].ID+"/verify",
			fmt.Sprintf(`{"otp":"000000","clientPublicKey":%q}`, hex.EncodeToString(client.PublicKey().Bytes())))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		return r.object(t), client
	}
	first, client := verify()
	key, err := walletauth.OpenSessionKey(client, first["encryptedSessionSigningKey"].(string))
	require.NoError(t, err)
	second, _ := verify()

	// Revoke the second session with the first one's key.
	path := "/auth/sessions/" + second["id"].(string)
	r := h.del(f.tn, path)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	ch := r.object(t)
	assert.Equal(t, "EMAIL_OTP", ch["type"])
	stamp, err := walletauth.Sign(key, []byte(ch["payloadToSign"].(string)))
	require.NoError(t, err)
	// A signature without Request-Id is a first call: the spec has the
	// signature ignored there, so it is another challenge.
	r = h.send(request{method: http.MethodDelete, path: path, auth: &f.tn, header: map[string]string{"Service-Wallet-Signature": stamp}})
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	assert.NotEqual(t, ch["requestId"], r.object(t)["requestId"])
	requireError(t, h.send(request{method: http.MethodDelete, path: path, auth: &f.tn,
		header: map[string]string{"Request-Id": ch["requestId"].(string)}}), http.StatusUnauthorized, "WALLET_SIGNATURE_MISSING")
	// (Refused before the request id is looked at: it stays usable.)
	retry := request{method: http.MethodDelete, path: path, auth: &f.tn,
		header: map[string]string{"Service-Wallet-Signature": stamp, "Request-Id": ch["requestId"].(string)}}
	r = h.send(retry)
	require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
	// Replayed: the session is revoked now, and a revoked session is as
	// unknown as one never issued (a replayed request id on a live target
	// is 401: TestSignedRetry).
	requireError(t, h.send(retry), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.del(f.tn, path), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	listed := h.get(f.tn, "/auth/sessions?accountId="+url.QueryEscape(f.wallet.ID)).object(t)["data"].([]any)
	require.Len(t, listed, 1)
	assert.Equal(t, first["id"], listed[0].(map[string]any)["id"])

	// Refresh the first session; the retry must repeat the body.
	refresh := "/auth/sessions/" + first["id"].(string) + "/refresh"
	next, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	body := fmt.Sprintf(`{"clientPublicKey":%q}`, hex.EncodeToString(next.PublicKey().Bytes()))
	r = h.post(f.tn, refresh, body)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	ch = r.object(t)
	stamp, err = walletauth.Sign(key, []byte(ch["payloadToSign"].(string)))
	require.NoError(t, err)
	other, _ := ecdh.P256().GenerateKey(rand.Reader)
	swapped := fmt.Sprintf(`{"clientPublicKey":%q}`, hex.EncodeToString(other.PublicKey().Bytes()))
	requireError(t, h.post(f.tn, refresh, swapped, "Service-Wallet-Signature", stamp, "Request-Id", ch["requestId"].(string)),
		http.StatusUnauthorized, "WALLET_SIGNATURE_BODY_MISMATCH")
	r = h.post(f.tn, refresh, body)
	ch = r.object(t)
	stamp, _ = walletauth.Sign(key, []byte(ch["payloadToSign"].(string)))
	r = h.post(f.tn, refresh, body, "Service-Wallet-Signature", stamp, "Request-Id", ch["requestId"].(string))
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	fresh, err := walletauth.OpenSessionKey(next, r.object(t)["encryptedSessionSigningKey"].(string))
	require.NoError(t, err)
	pub, _ := fresh.PublicKey.ECDH()
	assert.NotEqual(t, first["id"], r.object(t)["id"])
	assert.Len(t, walletauth.CompressedHex(pub), 66)
}

// The wallet's last credential cannot be revoked; another platform's is
// not found.
func TestRevokeCredentialOverHTTP(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	creds, err := h.store.Read().AuthMethods().ListByAccount(context.Background(), f.tn.platformID, f.wallet.ID)
	require.NoError(t, err)
	requireError(t, h.del(f.tn, "/auth/credentials/"+creds[0].ID), http.StatusBadRequest, "INVALID_INPUT", "id")
	requireError(t, h.del(h.tenant("USD"), "/auth/credentials/"+creds[0].ID), http.StatusNotFound, "REFERENCE_NOT_FOUND")
}

// Wallet privacy by signed retry: 202, then 200 with the account.
func TestUpdateWalletPrivacy(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	key, _ := h.walletSession(t, f)

	path := "/internal-accounts/" + f.wallet.ID
	patch := func(body string, header map[string]string) apiResponse {
		return h.send(request{method: http.MethodPatch, path: path, body: body, hasBody: true, auth: &f.tn, header: header})
	}
	r := patch(`{"privateEnabled":true}`, nil)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	ch := r.object(t)
	stamp, err := walletauth.Sign(key, []byte(ch["payloadToSign"].(string)))
	require.NoError(t, err)
	headers := map[string]string{"Service-Wallet-Signature": stamp, "Request-Id": ch["requestId"].(string)}
	requireError(t, patch(`{"privateEnabled":false}`, headers), http.StatusUnauthorized, "WALLET_SIGNATURE_BODY_MISMATCH")
	r = patch(`{"privateEnabled":true}`, nil)
	ch = r.object(t)
	stamp, _ = walletauth.Sign(key, []byte(ch["payloadToSign"].(string)))
	r = patch(`{"privateEnabled":true}`, map[string]string{"Service-Wallet-Signature": stamp, "Request-Id": ch["requestId"].(string)})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, true, r.object(t)["privateEnabled"])
	requireError(t, h.send(request{method: http.MethodPatch, path: "/internal-accounts/" + f.acct.ID, body: `{"privateEnabled":true}`,
		hasBody: true, auth: &f.tn}), http.StatusBadRequest, "INVALID_INPUT", "privateEnabled")
}

// Export by signed retry: the mnemonic opens with the client's key and
// the deployment's export key.
func TestExportWalletOverHTTP(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	key, client := h.walletSession(t, f)
	pub := hex.EncodeToString(client.PublicKey().Bytes())

	path, body := "/internal-accounts/"+f.wallet.ID+"/export", fmt.Sprintf(`{"clientPublicKey":%q}`, pub)
	r := h.post(f.tn, path, body)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	ch := r.object(t)
	stamp, err := walletauth.Sign(key, []byte(ch["payloadToSign"].(string)))
	require.NoError(t, err)
	r = h.post(f.tn, path, body, "Service-Wallet-Signature", stamp, "Request-Id", ch["requestId"].(string))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	out := r.object(t)
	assert.Equal(t, f.wallet.ID, out["id"])
	secret, err := walletauth.OpenExport(client, &testExportKey.PublicKey, f.tn.platformID, out["encryptedWalletCredentials"].(string))
	require.NoError(t, err)
	assert.Len(t, strings.Fields(string(secret)), 24)
	requireError(t, h.post(f.tn, "/internal-accounts/"+f.acct.ID+"/export", body), http.StatusNotFound, "REFERENCE_NOT_FOUND")
}

// Changing the e-mail an EMAIL_OTP credential is tied to needs a signed
// retry; the customer and the credential change together.
func TestEmailChangeNeedsASignedRetry(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	ctx := context.Background()
	key, _ := h.walletSession(t, f)

	path := customerPath(f.cust.ID)
	patch := func(email string, header map[string]string) apiResponse {
		return h.send(request{method: http.MethodPatch, path: path, hasBody: true, auth: &f.tn, header: header,
			body: fmt.Sprintf(`{"customerType":"INDIVIDUAL","email":%q}`, email)})
	}
	r := patch("grace@example.com", nil)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	ch := r.object(t)
	stamp, err := walletauth.Sign(key, []byte(ch["payloadToSign"].(string)))
	require.NoError(t, err)
	signed := map[string]string{"Service-Wallet-Signature": stamp, "Request-Id": ch["requestId"].(string)}
	requireError(t, patch("mallory@example.com", signed), http.StatusUnauthorized, "WALLET_SIGNATURE_BODY_MISMATCH")
	got := h.get(f.tn, path).object(t)
	assert.Equal(t, "ada@example.com", got["email"], "nothing changed")

	r = patch("grace@example.com", nil)
	ch = r.object(t)
	stamp, _ = walletauth.Sign(key, []byte(ch["payloadToSign"].(string)))
	r = patch("grace@example.com", map[string]string{"Service-Wallet-Signature": stamp, "Request-Id": ch["requestId"].(string)})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "grace@example.com", r.object(t)["email"])
	creds, err := h.store.Read().AuthMethods().ListByAccount(ctx, f.tn.platformID, f.wallet.ID)
	require.NoError(t, err)
	assert.Equal(t, "grace@example.com", creds[0].Nickname, "the credential follows")

	// The same e-mail again needs no signature.
	r = patch("grace@example.com", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
}

// An EMAIL_OTP credential is added back after the wallet's only one was
// revoked (with a passkey's session): one per wallet, signed retry while
// another credential exists.
func TestCreateEmailOTPCredential(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	body := fmt.Sprintf(`{"type":"EMAIL_OTP","accountId":%q}`, f.wallet.ID)
	requireError(t, h.post(f.tn, "/auth/credentials", body), http.StatusBadRequest, "EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS")
	requireError(t, h.post(f.tn, "/auth/credentials", fmt.Sprintf(`{"type":"OAUTH","accountId":%q}`, f.wallet.ID)),
		http.StatusBadRequest, "INVALID_INPUT", "oidcToken")
	requireError(t, h.post(f.tn, "/auth/credentials", fmt.Sprintf(`{"type":"PASSKEY","accountId":%q}`, f.wallet.ID)),
		http.StatusBadRequest, "INVALID_INPUT", "nickname", "challenge", "attestation")
	requireError(t, h.post(f.tn, "/auth/credentials", fmt.Sprintf(`{"type":"SMS_OTP","accountId":%q}`, f.wallet.ID)),
		http.StatusBadRequest, "INVALID_INPUT", "type")
	requireError(t, h.post(f.tn, "/auth/credentials", fmt.Sprintf(`{"type":"OAUTH","accountId":%q,"oidcToken":"sandbox-valid-oidc-token"}`, f.wallet.ID)),
		http.StatusBadRequest, "INVALID_INPUT", "oidcToken")
	requireError(t, h.post(f.tn, "/auth/credentials", fmt.Sprintf(`{"type":"EMAIL_OTP","accountId":%q}`, f.acct.ID)),
		http.StatusNotFound, "REFERENCE_NOT_FOUND")
}

// walletSession verifies the fixture wallet's EMAIL_OTP credential with the
// sandbox code and a fresh client key, and returns the opened session key
// and the client key it was sealed to.
func (h *transferHarness) walletSession(t *testing.T, f quoteFixture) (*ecdsa.PrivateKey, *ecdh.PrivateKey) {
	t.Helper()
	creds, err := h.store.Read().AuthMethods().ListByAccount(context.Background(), f.tn.platformID, f.wallet.ID)
	require.NoError(t, err)
	client, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	r := h.post(f.tn, "/auth/credentials/"+creds[0].ID+"/verify",
		fmt.Sprintf(`{"otp":"000000","clientPublicKey":%q}`, hex.EncodeToString(client.PublicKey().Bytes())))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	key, err := walletauth.OpenSessionKey(client, r.object(t)["encryptedSessionSigningKey"].(string))
	require.NoError(t, err)
	return key, client
}
