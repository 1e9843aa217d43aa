package walletauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/coretest"
)

// session opens a session with a client-held key and returns the key.
func (e *authEnv) session(t *testing.T) (*ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	pub, err := key.PublicKey.ECDH()
	require.NoError(t, err)
	code := walletauth.SandboxOTP
	if !e.sandbox { // a code is e-mailed
		_, err = e.svc.Challenge(context.Background(), e.pid, e.cred.ID, "")
		require.NoError(t, err)
		code = e.mail.last(e.cred.Nickname)
	}
	issued, err := e.svc.VerifyEmailOTP(context.Background(), e.pid, e.cred.ID, code, walletauth.CompressedHex(pub))
	require.NoError(t, err)
	return key, issued.Session.ID
}

func stampOf(t *testing.T, key *ecdsa.PrivateKey, payload string) string {
	t.Helper()
	s, err := walletauth.Sign(key, []byte(payload))
	require.NoError(t, err)
	return s
}

// The signed retry: single use (sequential and racing), bound to the
// operation and its body, unexpired, stamped by an allowed session.
func TestSignedRetry(t *testing.T) {
	onBothStores(t, func(t *testing.T, b coretest.Backend) {
		ctx := context.Background()
		e := newAuthEnv(t, b, true)
		key, _ := e.session(t)
		op := walletauth.Operation{Type: "ACTIVITY_TYPE_TEST", AccountID: e.wallet, Parameters: map[string]string{"x": "1"}, Body: []byte(`{"a":1}`)}

		c, err := e.svc.BeginRetry(ctx, e.pid, op)
		require.NoError(t, err)
		assert.Regexp(t, `^Request:`, c.RequestID)
		assert.Contains(t, c.PayloadToSign, `"type":"ACTIVITY_TYPE_TEST"`)
		assert.Contains(t, c.PayloadToSign, c.RequestID)
		assert.Equal(t, walletauth.RetryLifetime, c.ExpiresAt.Sub(e.Clock.Now().UTC().Truncate(1000)))
		stamp := stampOf(t, key, c.PayloadToSign)

		other := op
		other.Body = []byte(`{"a":2}`)
		_, err = e.svc.CompleteRetry(ctx, e.pid, other, c.RequestID, stamp)
		testkit.RequireFault(t, err, fault.KindUnauthorized, walletauth.CodeBodyMismatch)
		_, err = e.svc.CompleteRetry(ctx, e.pid, op, c.RequestID, stamp)
		testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED") // consumed by the mismatched try

		// Another platform naming the request id finds nothing, and does
		// not use it up: the platform's own retry still passes.
		c, err = e.svc.BeginRetry(ctx, e.pid, op)
		require.NoError(t, err)
		stamp = stampOf(t, key, c.PayloadToSign)
		_, err = e.svc.CompleteRetry(ctx, "Platform:another", op, c.RequestID, stamp)
		testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")
		_, err = e.svc.CompleteRetry(ctx, e.pid, op, c.RequestID, stamp)
		require.NoError(t, err)

		c, err = e.svc.BeginRetry(ctx, e.pid, op)
		require.NoError(t, err)
		stamp = stampOf(t, key, c.PayloadToSign)
		// Two retries race: exactly one succeeds.
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { _, errs[i] = e.svc.CompleteRetry(ctx, e.pid, op, c.RequestID, stamp) })
		}
		wg.Wait()
		assert.True(t, (errs[0] == nil) != (errs[1] == nil), "exactly one: %v", errs)
		_, err = e.svc.CompleteRetry(ctx, e.pid, op, c.RequestID, stamp)
		testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")

		// Missing headers, a malformed stamp, an expired challenge, a stamp
		// by a key that is no session of this wallet.
		_, err = e.svc.CompleteRetry(ctx, e.pid, op, "", stamp)
		testkit.RequireFault(t, err, fault.KindUnauthorized, walletauth.CodeRequestIDMissing)
		_, err = e.svc.CompleteRetry(ctx, e.pid, op, c.RequestID, "")
		testkit.RequireFault(t, err, fault.KindUnauthorized, walletauth.CodeSignatureMissing)
		c, _ = e.svc.BeginRetry(ctx, e.pid, op)
		_, err = e.svc.CompleteRetry(ctx, e.pid, op, c.RequestID, "not-a-stamp")
		testkit.RequireFault(t, err, fault.KindUnauthorized, walletauth.CodeSignatureMalformed)
		c, _ = e.svc.BeginRetry(ctx, e.pid, op)
		stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		_, err = e.svc.CompleteRetry(ctx, e.pid, op, c.RequestID, stampOf(t, stranger, c.PayloadToSign))
		testkit.RequireFault(t, err, fault.KindUnauthorized, walletauth.CodeSignatureInvalid)
		c, _ = e.svc.BeginRetry(ctx, e.pid, op)
		e.Clock.Advance(walletauth.RetryLifetime)
		_, err = e.svc.CompleteRetry(ctx, e.pid, op, c.RequestID, stampOf(t, key, c.PayloadToSign))
		testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")
	})
}

// Revoking a session needs a stamp; afterwards its stamps fail. Refreshing
// needs a stamp by that session and opens another.
func TestRevokeAndRefreshSessions(t *testing.T) {
	ctx := context.Background()
	e := newAuthEnv(t, coretest.Memory(), true)
	key, id := e.session(t)
	key2, id2 := e.session(t)

	c, typ, err := e.svc.RevokeSession(ctx, e.pid, id, walletauth.Retry{})
	require.NoError(t, err)
	assert.Equal(t, walletauth.TypeEmailOTP, typ)
	_, _, err = e.svc.RevokeSession(ctx, e.pid, id, walletauth.Retry{RequestID: c.RequestID, Signature: stampOf(t, key2, c.PayloadToSign)})
	require.NoError(t, err, "another session of the wallet may revoke it")
	require.ErrorIs(t, e.verify(ctx, e.pid, e.wallet, "p", stampOf(t, key, "p")), ports.ErrWalletSignatureInvalid)
	_, _, err = e.svc.RevokeSession(ctx, e.pid, id, walletauth.Retry{})
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND") // revoked: as unknown as never issued

	client := clientKey(t)
	pub := hex.EncodeToString(client.PublicKey().Bytes())
	body := []byte(`{"clientPublicKey":"` + pub + `"}`)
	_, _, err = e.svc.RefreshSession(ctx, e.pid, id, pub, body, walletauth.Retry{})
	testkit.RequireFault(t, err, fault.KindUnauthorized, walletauth.CodeSignatureInvalid) // revoked
	c, _, err = e.svc.RefreshSession(ctx, e.pid, id2, pub, body, walletauth.Retry{})
	require.NoError(t, err)
	_, _, err = e.svc.RefreshSession(ctx, e.pid, id2, pub, []byte(`{}`), walletauth.Retry{RequestID: c.RequestID, Signature: stampOf(t, key2, c.PayloadToSign)})
	testkit.RequireFault(t, err, fault.KindUnauthorized, walletauth.CodeBodyMismatch)
	c, _, _ = e.svc.RefreshSession(ctx, e.pid, id2, pub, body, walletauth.Retry{})
	_, issued, err := e.svc.RefreshSession(ctx, e.pid, id2, pub, body, walletauth.Retry{RequestID: c.RequestID, Signature: stampOf(t, key2, c.PayloadToSign)})
	require.NoError(t, err)
	fresh, err := walletauth.OpenSessionKey(client, issued.EncryptedSessionSigningKey)
	require.NoError(t, err)
	require.NoError(t, e.verify(ctx, e.pid, e.wallet, "p", stampOf(t, fresh, "p")))
	_, _, err = e.svc.RevokeSession(ctx, e.pid, "Session:nope", walletauth.Retry{})
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
}

// A credential is revoked only with a session of another credential of
// the wallet; its sessions end at once; the last one stays.
func TestRevokeCredential(t *testing.T) {
	onBothStores(t, func(t *testing.T, b coretest.Backend) {
		ctx := context.Background()
		e := newAuthEnv(t, b, true)
		_, _, err := e.svc.RevokeCredential(ctx, e.pid, e.cred.ID, walletauth.Retry{})
		fe := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT")
		assert.Contains(t, fe.Message, "at least one credential")

		// A second credential (a passkey, as registration would store it).
		now := e.Clock.Now()
		passkey := ports.AuthMethod{ID: e.IDs.New("AuthMethod"), PlatformID: e.pid, AccountID: e.wallet, Type: walletauth.TypePasskey,
			Nickname: "laptop", CredentialID: "cred-1", CreatedAt: now, UpdatedAt: now}
		require.NoError(t, e.Store.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Create(ctx, passkey) }))
		emailKey, _ := e.session(t) // a session of the EMAIL_OTP credential

		c, typ, err := e.svc.RevokeCredential(ctx, e.pid, e.cred.ID, walletauth.Retry{})
		require.NoError(t, err)
		assert.Equal(t, walletauth.TypeEmailOTP, typ)
		_, _, err = e.svc.RevokeCredential(ctx, e.pid, e.cred.ID, walletauth.Retry{RequestID: c.RequestID, Signature: stampOf(t, emailKey, c.PayloadToSign)})
		testkit.RequireFault(t, err, fault.KindUnauthorized, walletauth.CodeSignatureInvalid) // its own session

		// A session of the passkey (as its verify would open) revokes the
		// EMAIL_OTP credential, whose sessions end with it at once.
		passKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		passPub, _ := passKey.PublicKey.ECDH()
		require.NoError(t, e.Store.InTx(ctx, func(tx ports.Tx) error {
			return tx.WalletSessions().Create(ctx, ports.WalletSession{ID: e.IDs.New("Session"), PlatformID: e.pid, AccountID: e.wallet,
				CredentialID: passkey.ID, PublicKey: walletauth.CompressedHex(passPub), CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
		}))
		require.NoError(t, e.verify(ctx, e.pid, e.wallet, "p", stampOf(t, emailKey, "p")))
		c, _, err = e.svc.RevokeCredential(ctx, e.pid, e.cred.ID, walletauth.Retry{})
		require.NoError(t, err)
		_, _, err = e.svc.RevokeCredential(ctx, e.pid, e.cred.ID, walletauth.Retry{RequestID: c.RequestID, Signature: stampOf(t, passKey, c.PayloadToSign)})
		require.NoError(t, err)
		assert.ErrorIs(t, e.verify(ctx, e.pid, e.wallet, "p", stampOf(t, emailKey, "p")), ports.ErrWalletSignatureInvalid,
			"the revoked credential's sessions ended")
		creds, err := e.svc.Credentials(ctx, e.pid, e.wallet)
		require.NoError(t, err)
		require.Len(t, creds, 1)
		assert.Equal(t, passkey.ID, creds[0].ID)
		_, _, err = e.svc.RevokeCredential(ctx, e.pid, passkey.ID, walletauth.Retry{})
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT") // now the last one

		// An EMAIL_OTP credential is added back, by signed retry with the
		// passkey's session, once; it is tied to the customer's e-mail.
		body := []byte(`{"type":"EMAIL_OTP"}`)
		c, _, err = e.svc.CreateCredential(ctx, e.pid, walletauth.NewCredential{Type: walletauth.TypeEmailOTP, AccountID: e.wallet}, body, walletauth.Retry{})
		require.NoError(t, err)
		require.NotNil(t, c)
		_, m, err := e.svc.CreateCredential(ctx, e.pid, walletauth.NewCredential{Type: walletauth.TypeEmailOTP, AccountID: e.wallet}, body, walletauth.Retry{RequestID: c.RequestID, Signature: stampOf(t, passKey, c.PayloadToSign)})
		require.NoError(t, err)
		assert.Equal(t, "ada@example.com", m.Nickname)
		_, _, err = e.svc.CreateCredential(ctx, e.pid, walletauth.NewCredential{Type: walletauth.TypeEmailOTP, AccountID: e.wallet}, body, walletauth.Retry{})
		testkit.RequireFault(t, err, fault.KindInvalid, walletauth.CodeEmailOTPExists)
	})
}

// Revoking the second of two credentials with the other's session.
func TestRevokeCredentialWithAnother(t *testing.T) {
	ctx := context.Background()
	e := newAuthEnv(t, coretest.Memory(), true)
	now := e.Clock.Now()
	passkey := ports.AuthMethod{ID: e.IDs.New("AuthMethod"), PlatformID: e.pid, AccountID: e.wallet, Type: walletauth.TypePasskey,
		Nickname: "laptop", CredentialID: "cred-1", CreatedAt: now, UpdatedAt: now}
	require.NoError(t, e.Store.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Create(ctx, passkey) }))
	emailKey, _ := e.session(t)
	// Revoke the passkey with the EMAIL_OTP session instead.
	c, typ, err := e.svc.RevokeCredential(ctx, e.pid, passkey.ID, walletauth.Retry{})
	require.NoError(t, err)
	assert.Equal(t, walletauth.TypePasskey, typ)
	_, _, err = e.svc.RevokeCredential(ctx, e.pid, passkey.ID, walletauth.Retry{RequestID: c.RequestID, Signature: stampOf(t, emailKey, c.PayloadToSign)})
	require.NoError(t, err)
	creds, err := e.svc.Credentials(ctx, e.pid, e.wallet)
	require.NoError(t, err)
	require.Len(t, creds, 1)
	assert.Equal(t, e.cred.ID, creds[0].ID)
	_, _, err = e.svc.RevokeCredential(ctx, e.pid, passkey.ID, walletauth.Retry{})
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
}

// The sandbox takes the spec's legacy literal in place of a stamp on a
// signed retry too; the request id is still single use and bound to the
// operation. Outside the sandbox the literal is no stamp.
func TestSignedRetrySandboxLiteral(t *testing.T) {
	ctx := context.Background()
	for _, sandbox := range []bool{true, false} {
		e := newAuthEnv(t, coretest.Memory(), sandbox)
		e.session(t)
		op := walletauth.Operation{Type: "ACTIVITY_TYPE_TEST", AccountID: e.wallet, Body: []byte(`{"a":1}`)}
		c, err := e.svc.BeginRetry(ctx, e.pid, op)
		require.NoError(t, err)
		_, err = e.svc.CompleteRetry(ctx, e.pid, op, c.RequestID, walletauth.SandboxSignature)
		if !sandbox {
			testkit.RequireFault(t, err, fault.KindUnauthorized, walletauth.CodeSignatureMalformed)
			continue
		}
		require.NoError(t, err)
		_, err = e.svc.CompleteRetry(ctx, e.pid, op, c.RequestID, walletauth.SandboxSignature)
		testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED") // consumed
		c, _ = e.svc.BeginRetry(ctx, e.pid, op)
		other := op
		other.Body = []byte(`{"a":2}`)
		_, err = e.svc.CompleteRetry(ctx, e.pid, other, c.RequestID, walletauth.SandboxSignature)
		testkit.RequireFault(t, err, fault.KindUnauthorized, walletauth.CodeBodyMismatch)
	}
}
