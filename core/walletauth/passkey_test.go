package walletauth_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/coretest"
	"github.com/corridorpay/corridor/testkit/passkeytest"
)

func newPasskeyEnv(t *testing.T, b coretest.Backend, sandbox bool) *authEnv {
	t.Helper()
	return newAuthEnvWith(t, b, walletauth.Options{Sandbox: sandbox, WebAuthnRPID: passkeytest.RPID,
		WebAuthnOrigins: []string{passkeytest.Origin}})
}

// addPasskey registers dev's passkey on the wallet by signed retry,
// stamped by a session of its EMAIL_OTP credential.
func (e *authEnv) addPasskey(t *testing.T, dev *passkeytest.Device) (ports.AuthMethod, error) {
	t.Helper()
	ctx := context.Background()
	reg := dev.Register(t)
	n := walletauth.NewCredential{Type: walletauth.TypePasskey, AccountID: e.wallet, Nickname: " YubiKey 5C ", Challenge: reg.Challenge,
		Attestation: &walletauth.PasskeyAttestation{CredentialID: reg.CredentialID, ClientDataJSON: reg.ClientDataJSON,
			AttestationObject: reg.AttestationObject, Transports: []string{"usb"}}}
	body, _ := json.Marshal(n)
	c, _, err := e.svc.CreateCredential(ctx, e.pid, n, body, walletauth.Retry{})
	if err != nil {
		return ports.AuthMethod{}, err
	}
	require.NotNil(t, c)
	key, _ := e.session(t)
	_, m, err := e.svc.CreateCredential(ctx, e.pid, n, body, walletauth.Retry{RequestID: c.RequestID, Signature: stampOf(t, key, c.PayloadToSign)})
	return m, err
}

// loginPasskey runs challenge → assertion → verify with dev.
func (e *authEnv) loginPasskey(t *testing.T, m ports.AuthMethod, dev *passkeytest.Device) (walletauth.IssuedSession, error) {
	t.Helper()
	ctx := context.Background()
	pub := walletauth.CompressedHex(clientKey(t).PublicKey())
	c, err := e.svc.Challenge(ctx, e.pid, m.ID, pub)
	require.NoError(t, err)
	require.NotNil(t, c.Passkey)
	a := dev.Assert(t, c.Passkey.Challenge)
	return e.svc.VerifyCredential(ctx, e.pid, m.ID, walletauth.VerifyRequest{Type: walletauth.TypePasskey, RequestID: c.Passkey.RequestID,
		Assertion: asserted(a)})
}

// The PASSKEY flow with a virtual authenticator: registration, a
// challenge bound to the client key, an assertion that opens a session
// for exactly that key, and a counter that moves forward.
func TestPasskeyCredentialFlow(t *testing.T) {
	onBothStores(t, func(t *testing.T, b coretest.Backend) {
		ctx := context.Background()
		e := newPasskeyEnv(t, b, false)
		dev := passkeytest.New()
		m, err := e.addPasskey(t, dev)
		require.NoError(t, err)
		assert.Equal(t, walletauth.TypePasskey, m.Type)
		assert.Equal(t, "YubiKey 5C", m.Nickname)
		assert.Equal(t, dev.CredentialID(), m.CredentialID)

		client := clientKey(t)
		c, err := e.svc.Challenge(ctx, e.pid, m.ID, walletauth.CompressedHex(client.PublicKey()))
		require.NoError(t, err)
		assert.Regexp(t, "^[0-9a-f]{64}$", c.Passkey.Challenge)
		assert.Equal(t, e.Env.Clock.Now().Add(5*time.Minute).UTC(), c.Passkey.ExpiresAt.UTC())
		a := dev.Assert(t, c.Passkey.Challenge)
		issued, err := e.svc.VerifyCredential(ctx, e.pid, m.ID, walletauth.VerifyRequest{RequestID: c.Passkey.RequestID,
			Assertion: asserted(a)})
		require.NoError(t, err)
		assert.Equal(t, walletauth.CompressedHex(client.PublicKey()), issued.Session.PublicKey, "the session is the challenge's key")

		dev.SetCounter(7)
		_, err = e.loginPasskey(t, m, dev)
		require.NoError(t, err)
		got, err := e.Store.Read().AuthMethods().Get(ctx, e.pid, m.ID)
		require.NoError(t, err)
		assert.Equal(t, uint32(7), got.SignCount)

		_, err = e.addPasskey(t, dev)
		var fe *fault.Error
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, walletauth.CodePasskeyExists, fe.Code)
		_, err = e.addPasskey(t, passkeytest.New())
		require.NoError(t, err, "another passkey")
	})
}

// asserted is a virtual authenticator's assertion as the service takes it.
func asserted(a passkeytest.Assertion) *walletauth.PasskeyAssertion {
	return &walletauth.PasskeyAssertion{CredentialID: a.CredentialID, ClientDataJSON: a.ClientDataJSON,
		AuthenticatorData: a.AuthenticatorData, Signature: a.Signature, UserHandle: a.UserHandle}
}

func passkeyCredential(t *testing.T, sandbox bool) (*authEnv, ports.AuthMethod, *passkeytest.Device) {
	t.Helper()
	e := newPasskeyEnv(t, coretest.Memory(), sandbox)
	dev := passkeytest.New()
	m, err := e.addPasskey(t, dev)
	require.NoError(t, err)
	return e, m, dev
}

// A counter that does not move forward is refused (the library only warns).
func TestPasskeyCounterRegression(t *testing.T) {
	e, m, dev := passkeyCredential(t, false)
	dev.SetCounter(5)
	_, err := e.loginPasskey(t, m, dev)
	require.NoError(t, err)
	dev.SetCounter(5)
	_, err = e.loginPasskey(t, m, dev)
	requireReason(t, err, "counter")
	dev.SetCounter(2)
	_, err = e.loginPasskey(t, m, dev)
	requireReason(t, err, "counter")
}

// A challenge is single-use, expires, and binds its credential.
func TestPasskeyChallengeRules(t *testing.T) {
	ctx := context.Background()
	e, m, dev := passkeyCredential(t, false)
	pub := walletauth.CompressedHex(clientKey(t).PublicKey())
	verify := func(c *walletauth.PasskeyChallenge, a passkeytest.Assertion) error {
		_, err := e.svc.VerifyCredential(ctx, e.pid, m.ID, walletauth.VerifyRequest{RequestID: c.RequestID,
			Assertion: asserted(a)})
		return err
	}
	c, err := e.svc.Challenge(ctx, e.pid, m.ID, pub)
	require.NoError(t, err)
	a := dev.Assert(t, c.Passkey.Challenge)
	require.NoError(t, verify(c.Passkey, a))
	requireReason(t, verify(c.Passkey, a), "already used")

	c, err = e.svc.Challenge(ctx, e.pid, m.ID, pub)
	require.NoError(t, err)
	a = dev.Assert(t, c.Passkey.Challenge)
	e.Env.Clock.Advance(walletauth.PasskeyChallengeLifetime + time.Second)
	requireReason(t, verify(c.Passkey, a), "expired")

	c, err = e.svc.Challenge(ctx, e.pid, m.ID, pub)
	require.NoError(t, err)
	other, err := e.svc.Challenge(ctx, e.pid, m.ID, pub)
	require.NoError(t, err)
	requireReason(t, verify(c.Passkey, dev.Assert(t, other.Passkey.Challenge)), "assertion failed")

	_, err = e.svc.VerifyCredential(ctx, e.pid, m.ID, walletauth.VerifyRequest{Assertion: &walletauth.PasskeyAssertion{}})
	var fe *fault.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, walletauth.CodeRequestIDMissing, fe.Code)
	_, err = e.svc.Challenge(ctx, e.pid, m.ID, "")
	requireInvalid(t, err, "clientPublicKey")
}

// A challenge refused for its own input (a malformed clientPublicKey)
// does not count against the credential's challenges.
func TestPasskeyRefusedChallengesDoNotCount(t *testing.T) {
	ctx := context.Background()
	e, m, _ := passkeyCredential(t, false)
	for range walletauth.MaxChallenges + 1 {
		_, err := e.svc.Challenge(ctx, e.pid, m.ID, "04zz")
		requireInvalid(t, err, "clientPublicKey")
	}
	_, err := e.svc.Challenge(ctx, e.pid, m.ID, walletauth.CompressedHex(clientKey(t).PublicKey()))
	require.NoError(t, err)
}

// An assertion from another authenticator, or for another relying
// party, fails; the sandbox's legacy signature skips WebAuthn there only.
func TestPasskeyForeignAssertions(t *testing.T) {
	e, m, _ := passkeyCredential(t, false)
	_, err := e.loginPasskey(t, m, passkeytest.New())
	requireReason(t, err, "assertion failed")

	sandbox, sm, _ := passkeyCredential(t, true)
	wrongRP := passkeytest.NewFor("evil.example", "https://evil.example")
	_, err = sandbox.loginPasskey(t, sm, wrongRP)
	requireReason(t, err, "assertion failed")

	ctx := context.Background()
	for _, env := range []struct {
		e       *authEnv
		m       ports.AuthMethod
		succeed bool
	}{{sandbox, sm, true}, {e, m, false}} {
		c, err := env.e.svc.Challenge(ctx, env.e.pid, env.m.ID, walletauth.CompressedHex(clientKey(t).PublicKey()))
		require.NoError(t, err)
		_, err = env.e.svc.VerifyCredential(ctx, env.e.pid, env.m.ID, walletauth.VerifyRequest{RequestID: c.Passkey.RequestID,
			Assertion: &walletauth.PasskeyAssertion{CredentialID: env.m.CredentialID, Signature: walletauth.SandboxPasskeySignature}})
		if env.succeed {
			require.NoError(t, err)
		} else {
			require.Error(t, err)
		}
	}
}

// A registration whose ceremony does not verify is refused.
func TestPasskeyBadRegistration(t *testing.T) {
	ctx := context.Background()
	e := newPasskeyEnv(t, coretest.Memory(), false)
	reg := passkeytest.New().Register(t)
	other := passkeytest.New().Register(t)
	n := walletauth.NewCredential{Type: walletauth.TypePasskey, AccountID: e.wallet, Nickname: "key", Challenge: other.Challenge,
		Attestation: &walletauth.PasskeyAttestation{CredentialID: reg.CredentialID, ClientDataJSON: reg.ClientDataJSON,
			AttestationObject: reg.AttestationObject}}
	_, _, err := e.svc.CreateCredential(ctx, e.pid, n, nil, walletauth.Retry{})
	requireReason(t, err, "registration failed")
	n.Challenge, n.Attestation.AttestationObject = reg.Challenge, "not-cbor"
	_, _, err = e.svc.CreateCredential(ctx, e.pid, n, nil, walletauth.Retry{})
	requireInvalid(t, err, "attestation")
	n.Nickname, n.Attestation = "  ", nil
	_, _, err = e.svc.CreateCredential(ctx, e.pid, n, nil, walletauth.Retry{})
	requireInvalid(t, err, "nickname")
	requireInvalid(t, err, "attestation")
	// A challenge that is not base64url is input to fix (400), not a
	// ceremony that failed (401).
	for _, challenge := range []string{"!!!", reg.Challenge + "=="} {
		n.Nickname, n.Challenge = "key", challenge
		_, _, err = e.svc.CreateCredential(ctx, e.pid, n, nil, walletauth.Retry{})
		requireInvalid(t, err, "challenge")
	}
}
