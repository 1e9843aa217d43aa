package walletauth_test

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	railsandbox "github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/coretest"
)

// outbox is a Mailer that keeps what it was asked to send.
type outbox struct {
	mu    sync.Mutex
	mails map[string]walletauth.OTPMail // address -> last mail
}

func (o *outbox) SendOTP(_ context.Context, m walletauth.OTPMail) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mails == nil {
		o.mails = map[string]walletauth.OTPMail{}
	}
	o.mails[m.To] = m
	return nil
}

// last is the last code sent to to.
func (o *outbox) last(to string) string { return o.lastMail(to).Code }

func (o *outbox) lastMail(to string) walletauth.OTPMail {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mails[to]
}

type authEnv struct {
	*coretest.Env
	svc    *walletauth.Service
	mail   *outbox
	pid    string
	wallet string
	cred   ports.AuthMethod
	// sandbox is the service's mode.
	sandbox bool
}

func newAuthEnv(t *testing.T, b coretest.Backend, sandbox bool) *authEnv {
	t.Helper()
	return newAuthEnvWith(t, b, walletauth.Options{Sandbox: sandbox})
}

// newAuthEnvWith is newAuthEnv with the service's options.
func newAuthEnvWith(t *testing.T, b coretest.Backend, opts walletauth.Options) *authEnv {
	t.Helper()
	e := coretest.New(t, b, railsandbox.Factory(b.Clock))
	mail := &outbox{}
	svc := walletauth.New(e.Store, memory.NewSingleUse(b.Clock), memory.NewFailureCounter(b.Clock), mail, b.Clock, e.IDs, opts)
	pid := e.Platform("USD")
	c, err := e.Customers.Create(context.Background(), pid, customers.Input{CustomerType: customers.TypeIndividual, Email: ptr("ada@example.com")})
	require.NoError(t, err)
	wallet := e.InternalAccount(ports.InternalAccountFilter{PlatformID: pid, CustomerID: c.ID, Type: "EMBEDDED_WALLET"})
	creds, err := svc.Credentials(context.Background(), pid, wallet.ID)
	require.NoError(t, err)
	require.Len(t, creds, 1)
	return &authEnv{Env: e, svc: svc, mail: mail, pid: pid, wallet: wallet.ID, cred: creds[0], sandbox: opts.Sandbox}
}

func ptr[T any](v T) *T { return &v }

func clientKey(t *testing.T) *ecdh.PrivateKey {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	return k
}

func onBothStores(t *testing.T, fn func(t *testing.T, b coretest.Backend)) {
	t.Run("memory", func(t *testing.T) { fn(t, coretest.Memory()) })
	t.Run("postgres", func(t *testing.T) { fn(t, coretest.Postgres(t)) })
}

// The EMAIL_OTP flow with real keys: challenge, verify, open the sealed
// session key, stamp, and the stamp verifies for the wallet; then expiry
// and revocation end it.
func TestEmailOTPSession(t *testing.T) {
	onBothStores(t, func(t *testing.T, b coretest.Backend) {
		ctx := context.Background()
		e := newAuthEnv(t, b, false)
		assert.Equal(t, walletauth.TypeEmailOTP, e.cred.Type)
		assert.Equal(t, "ada@example.com", e.cred.Nickname)

		_, err := e.svc.Challenge(ctx, e.pid, e.cred.ID, "")
		require.NoError(t, err)
		code := e.mail.last("ada@example.com")
		require.Len(t, code, walletauth.DefaultOTPDigits)
		client := clientKey(t)
		pub := hex.EncodeToString(client.PublicKey().Bytes())
		_, err = e.svc.VerifyEmailOTP(ctx, e.pid, e.cred.ID, walletauth.SandboxOTP+"1", pub)
		testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")
		issued, err := e.svc.VerifyEmailOTP(ctx, e.pid, e.cred.ID, code, pub)
		require.NoError(t, err, "a wrong try does not burn the code")
		_, err = e.svc.VerifyEmailOTP(ctx, e.pid, e.cred.ID, code, pub)
		testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED") // single use

		require.NotEmpty(t, issued.EncryptedSessionSigningKey)
		sessionKey, err := walletauth.OpenSessionKey(client, issued.EncryptedSessionSigningKey)
		require.NoError(t, err)
		stamp, err := walletauth.Sign(sessionKey, []byte("pay 10"))
		require.NoError(t, err)
		require.NoError(t, e.verify(ctx, e.pid, e.wallet, "pay 10", stamp))
		assert.ErrorIs(t, e.verify(ctx, e.pid, e.wallet, "pay 11", stamp), ports.ErrWalletSignatureInvalid, "another payload")
		assert.ErrorIs(t, e.verify(ctx, e.pid, "InternalAccount:other", "pay 10", stamp), ports.ErrWalletSignatureInvalid,
			"another account's stamp")
		assert.ErrorIs(t, e.verify(ctx, e.pid, e.wallet, "pay 10", "garbage"), ports.ErrWalletSignatureMalformed)
		assert.ErrorIs(t, e.verify(ctx, e.pid, e.wallet, "pay 10", walletauth.SandboxSignature), ports.ErrWalletSignatureMalformed,
			"the sandbox literal outside the sandbox")
		stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		foreign, _ := walletauth.Sign(stranger, []byte("pay 10"))
		assert.ErrorIs(t, e.verify(ctx, e.pid, e.wallet, "pay 10", foreign), ports.ErrWalletSignatureInvalid, "no session has that key")

		sessions, err := e.svc.Sessions(ctx, e.pid, e.wallet)
		require.NoError(t, err)
		require.Len(t, sessions, 1)
		assert.Equal(t, issued.Session.ID, sessions[0].Session.ID)
		assert.Equal(t, e.cred.ID, sessions[0].Credential.ID)

		e.Clock.Advance(walletauth.DefaultSessionLifetime)
		assert.ErrorIs(t, e.verify(ctx, e.pid, e.wallet, "pay 10", stamp), ports.ErrWalletSignatureInvalid, "expired")
		sessions, err = e.svc.Sessions(ctx, e.pid, e.wallet)
		require.NoError(t, err)
		assert.Empty(t, sessions)
	})
}

// A compressed clientPublicKey is the session's key: nothing is sealed.
func TestClientHeldSessionKey(t *testing.T) {
	ctx := context.Background()
	e := newAuthEnv(t, coretest.Memory(), true)
	device, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	devicePub, err := device.PublicKey.ECDH()
	require.NoError(t, err)
	issued, err := e.svc.VerifyEmailOTP(ctx, e.pid, e.cred.ID, walletauth.SandboxOTP, walletauth.CompressedHex(devicePub))
	require.NoError(t, err, "the sandbox code")
	assert.Empty(t, issued.EncryptedSessionSigningKey)
	stamp, err := walletauth.Sign(device, []byte("x"))
	require.NoError(t, err)
	require.NoError(t, e.verify(ctx, e.pid, e.wallet, "x", stamp))
	require.NoError(t, e.verify(ctx, e.pid, e.wallet, "x", walletauth.SandboxSignature), "the sandbox literal")

	_, err = e.svc.VerifyEmailOTP(ctx, e.pid, e.cred.ID, walletauth.SandboxOTP, "04abc")
	fe := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT")
	assert.Equal(t, "clientPublicKey", fe.Fields[0].Field)
	_, err = e.svc.VerifyEmailOTP(ctx, e.pid, "AuthMethod:nope", walletauth.SandboxOTP, walletauth.CompressedHex(devicePub))
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
}

// Five wrong codes burn it; challenges are rate-limited.
func TestOTPLimits(t *testing.T) {
	ctx := context.Background()
	e := newAuthEnv(t, coretest.Memory(), false)
	_, err := e.svc.Challenge(ctx, e.pid, e.cred.ID, "")
	require.NoError(t, err)
	code := e.mail.last("ada@example.com")
	pub := hex.EncodeToString(clientKey(t).PublicKey().Bytes())
	for range walletauth.MaxOTPTries {
		_, err = e.svc.VerifyEmailOTP(ctx, e.pid, e.cred.ID, "x"+code, pub)
		testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")
	}
	_, err = e.svc.VerifyEmailOTP(ctx, e.pid, e.cred.ID, code, pub)
	testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")

	for range walletauth.MaxChallenges - 1 {
		_, err = e.svc.Challenge(ctx, e.pid, e.cred.ID, "")
		require.NoError(t, err)
	}
	_, err = e.svc.Challenge(ctx, e.pid, e.cred.ID, "")
	fe := testkit.RequireFault(t, err, fault.KindTooMany, "RATE_LIMITED")
	assert.Positive(t, fe.RetryAfter)

	// The code expires.
	e.Clock.Advance(walletauth.ChallengeWindow)
	_, err = e.svc.Challenge(ctx, e.pid, e.cred.ID, "")
	require.NoError(t, err)
	code = e.mail.last("ada@example.com")
	e.Clock.Advance(walletauth.DefaultOTPLifetime)
	_, err = e.svc.VerifyEmailOTP(ctx, e.pid, e.cred.ID, code, pub)
	testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")
}

// verify checks a stamp as a payment from the wallet does: against the
// sessions its parties read carries.
func (e *authEnv) verify(ctx context.Context, platformID, accountID, payload, signature string) error {
	p, err := e.Store.Read().Parties().Get(ctx, platformID, accountID, "", e.Env.Clock.Now())
	if err != nil {
		return err
	}
	return e.svc.VerifyStamp(p.Sessions, payload, signature)
}

// A platform's embedded-wallet configuration sets its EMAIL_OTP codes:
// configured for 8 digits and 10 minutes, a code has 8 digits and still
// verifies just before 10 minutes, not at them; another platform keeps the
// defaults.
func TestEmailOTPFollowsPlatformConfig(t *testing.T) {
	onBothStores(t, func(t *testing.T, b coretest.Backend) {
		ctx := context.Background()
		e := newAuthEnv(t, b, false)
		_, err := e.Platforms.UpdateConfig(ctx, e.pid, platforms.ConfigUpdate{OTPLength: ptr(8), OTPExpirationSeconds: ptr(600)})
		require.NoError(t, err)
		pub := hex.EncodeToString(clientKey(t).PublicKey().Bytes())

		_, err = e.svc.Challenge(ctx, e.pid, e.cred.ID, "")
		require.NoError(t, err)
		code := e.mail.last("ada@example.com")
		require.Len(t, code, 8)
		assert.Regexp(t, `^[0-9]{8}$`, code)
		e.Clock.Advance(10*time.Minute - time.Second)
		_, err = e.svc.VerifyEmailOTP(ctx, e.pid, e.cred.ID, code, pub)
		require.NoError(t, err, "alive until 10 minutes")

		_, err = e.svc.Challenge(ctx, e.pid, e.cred.ID, "")
		require.NoError(t, err)
		code = e.mail.last("ada@example.com")
		e.Clock.Advance(10 * time.Minute)
		_, err = e.svc.VerifyEmailOTP(ctx, e.pid, e.cred.ID, code, pub)
		testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")

		// Another platform's wallet gets the defaults.
		other := otherPlatformCredential(t, e, "grace@example.com")
		_, err = e.svc.Challenge(ctx, other.PlatformID, other.ID, "")
		require.NoError(t, err)
		code = e.mail.last("grace@example.com")
		require.Len(t, code, walletauth.DefaultOTPDigits)
		e.Clock.Advance(walletauth.DefaultOTPLifetime)
		_, err = e.svc.VerifyEmailOTP(ctx, other.PlatformID, other.ID, code, pub)
		testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")
	})
}

// A platform's alphanumeric setting makes codes of letters and digits
// (typed in any case), and its branding reaches the e-mail; stored on
// both stores. A platform without them gets digits, no branding and the
// default sender name.
func TestEmailOTPBrandingAndAlphanumeric(t *testing.T) {
	onBothStores(t, func(t *testing.T, b coretest.Backend) {
		ctx := context.Background()
		e := newAuthEnv(t, b, false)
		_, err := e.svc.Challenge(ctx, e.pid, e.cred.ID, "")
		require.NoError(t, err)
		plain := e.mail.lastMail("ada@example.com")
		assert.Regexp(t, `^[0-9]{6}$`, plain.Code)
		assert.Equal(t, walletauth.OTPMail{To: "ada@example.com", Code: plain.Code, ExpiresAt: plain.ExpiresAt,
			SenderName: platforms.DefaultSenderName}, plain)

		_, err = e.Platforms.UpdateConfig(ctx, e.pid, platforms.ConfigUpdate{OTPLength: ptr(8), OTPAlphanumeric: ptr(true),
			AppName: ptr("Acme Wallet"), SenderAddress: ptr("noreply@acme.example"), SenderName: ptr("Acme"),
			ReplyTo: ptr("support@acme.example"), LogoURL: ptr("https://acme.example/logo.png")})
		require.NoError(t, err)
		_, err = e.svc.Challenge(ctx, e.pid, e.cred.ID, "")
		require.NoError(t, err)
		m := e.mail.lastMail("ada@example.com")
		assert.Regexp(t, `^[2-9A-HJKMNP-Z]{8}$`, m.Code)
		assert.Equal(t, walletauth.OTPMail{To: "ada@example.com", Code: m.Code, ExpiresAt: m.ExpiresAt, AppName: "Acme Wallet",
			SenderAddress: "noreply@acme.example", SenderName: "Acme", ReplyTo: "support@acme.example",
			LogoURL: "https://acme.example/logo.png"}, m)
		pub := hex.EncodeToString(clientKey(t).PublicKey().Bytes())
		_, err = e.svc.VerifyEmailOTP(ctx, e.pid, e.cred.ID, strings.ToLower(m.Code), pub)
		require.NoError(t, err, "a code is compared without regard to case")

		// Unset again: "" clears a text setting.
		_, err = e.Platforms.UpdateConfig(ctx, e.pid, platforms.ConfigUpdate{OTPAlphanumeric: ptr(false), AppName: ptr(""),
			SenderAddress: ptr(""), SenderName: ptr(""), ReplyTo: ptr(""), LogoURL: ptr("")})
		require.NoError(t, err)
		_, err = e.svc.Challenge(ctx, e.pid, e.cred.ID, "")
		require.NoError(t, err)
		m = e.mail.lastMail("ada@example.com")
		assert.Regexp(t, `^[0-9]{8}$`, m.Code)
		assert.Equal(t, platforms.DefaultSenderName, m.SenderName)
		assert.Empty(t, m.AppName+m.SenderAddress+m.ReplyTo+m.LogoURL)
	})
}

// otherPlatformCredential makes another platform with a customer at email in e's
// stores and returns that customer's EMAIL_OTP credential.
func otherPlatformCredential(t *testing.T, e *authEnv, email string) ports.AuthMethod {
	t.Helper()
	ctx := context.Background()
	pid := e.Platform("USD")
	c, err := e.Customers.Create(ctx, pid, customers.Input{CustomerType: customers.TypeIndividual, Email: ptr(email)})
	require.NoError(t, err)
	wallet := e.InternalAccount(ports.InternalAccountFilter{PlatformID: pid, CustomerID: c.ID, Type: "EMBEDDED_WALLET"})
	creds, err := e.svc.Credentials(ctx, pid, wallet.ID)
	require.NoError(t, err)
	require.Len(t, creds, 1)
	return creds[0]
}
