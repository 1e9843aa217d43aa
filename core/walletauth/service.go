package walletauth

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"

	"github.com/corridorpay/corridor/core/codes"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ports"
)

// Credential types.
const (
	TypeEmailOTP = "EMAIL_OTP"
	TypeOAuth    = "OAUTH"
	TypePasskey  = "PASSKEY"
)

// SandboxSignature is the legacy Service-Wallet-Signature the sandbox
// still accepts; SandboxOTP the code it always accepts.
const (
	SandboxSignature = "sandbox-valid-signature"
	SandboxOTP       = "000000"
)

// Defaults of Options.
const (
	DefaultSessionLifetime = 15 * time.Minute
	// DefaultOTPLifetime and DefaultOTPDigits apply to a platform that has
	// not set its own (PATCH /config embeddedWalletConfig).
	DefaultOTPLifetime = platforms.DefaultOTPLifetime
	DefaultOTPDigits   = platforms.DefaultOTPLength
	// MaxOTPTries is how many wrong codes one code survives.
	MaxOTPTries = 5
	// MaxChallenges is how many OTPs one credential may be sent per
	// ChallengeWindow.
	MaxChallenges   = 5
	ChallengeWindow = 15 * time.Minute
)

// Mailer delivers one-time passwords (an SMTP adapter, or the log).
type Mailer interface {
	SendOTP(ctx context.Context, m OTPMail) error
}

// OTPMail is one EMAIL_OTP code to deliver, with its platform's e-mail
// branding (ports.EmbeddedWalletConfig; "" where the platform set none,
// but SenderName, which has a default).
type OTPMail struct {
	To                                                   string
	Code                                                 string
	ExpiresAt                                            time.Time
	AppName, SenderAddress, SenderName, ReplyTo, LogoURL string
}

// Options configure a Service.
type Options struct {
	Sandbox         bool
	SessionLifetime time.Duration
	Logger          *slog.Logger
	// MasterKey (32 bytes) seals wallets' secrets at rest; ExportKey signs
	// export bundles (its public key is published). Without both, export
	// is unavailable (503).
	MasterKey []byte
	ExportKey *ecdsa.PrivateKey
	// OIDCIssuers are the accepted iss values of OAUTH tokens, whose
	// signatures Tokens checks (not needed in the sandbox).
	OIDCIssuers []string
	Tokens      TokenSignatures
	// WebAuthnRPID and WebAuthnOrigins are the passkeys' relying party
	// (without an RP id, passkeys are unavailable: 503).
	WebAuthnRPID    string
	WebAuthnOrigins []string
}

// Service runs embedded-wallet authentication: it issues sessions for
// verified credentials and checks stamps against them.
type Service struct {
	store    ports.Store
	single   ports.SingleUse
	failures ports.FailureCounter
	mailer   Mailer
	clock    ports.Clock
	ids      ports.IDs
	opts     Options
	tokens   TokenSignatures
	webauthn *webauthn.WebAuthn
}

var _ ports.WalletSignatureVerifier = (*Service)(nil)

// New builds a Service; failures counts OTP challenges (nil: no limit).
func New(store ports.Store, single ports.SingleUse, failures ports.FailureCounter, mailer Mailer,
	clock ports.Clock, ids ports.IDs, opts Options) *Service {
	if opts.SessionLifetime <= 0 {
		opts.SessionLifetime = DefaultSessionLifetime
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{store: store, single: single, failures: failures, mailer: mailer, clock: clock, ids: ids, opts: opts,
		tokens: opts.Tokens}
	if opts.WebAuthnRPID != "" {
		wa, err := webauthn.New(&webauthn.Config{RPID: opts.WebAuthnRPID, RPDisplayName: "corridor", RPOrigins: opts.WebAuthnOrigins})
		if err != nil {
			opts.Logger.Error("passkeys disabled: invalid relying party", "rp_id", opts.WebAuthnRPID, "err", err)
		}
		s.webauthn = wa
	}
	return s
}

func (s *Service) now() time.Time { return ports.Stored(s.clock.Now()) }

// VerifyStamp checks that signature is a stamp over exactly payload made
// with one of sessions, a wallet's active sessions
// (ports.WalletSignatureVerifier). The sandbox also accepts
// SandboxSignature.
func (s *Service) VerifyStamp(sessions []ports.WalletSession, payload, signature string) error {
	if s.sandboxLiteral(signature) {
		return nil
	}
	st, err := ParseStamp(signature)
	if err != nil {
		return ports.ErrWalletSignatureMalformed
	}
	now := s.now()
	for _, sess := range sessions {
		if !sess.Active(now) {
			continue
		}
		if sess.PublicKey == st.PublicKey {
			if st.Verify([]byte(payload)) != nil {
				return ports.ErrWalletSignatureInvalid
			}
			return nil
		}
	}
	return ports.ErrWalletSignatureInvalid
}

// sandboxLiteral reports whether signature is the sandbox's legacy
// SandboxSignature, which it takes in place of a stamp.
func (s *Service) sandboxLiteral(signature string) bool {
	return s.opts.Sandbox && signature == SandboxSignature
}

// IssuedSession is a new session and, for an uncompressed client key, its
// private key sealed to that key.
type IssuedSession struct {
	Session                    ports.WalletSession
	Credential                 ports.AuthMethod
	EncryptedSessionSigningKey string
}

// issue creates a session of credential m for the client's key in tx:
// with an uncompressed key a fresh session key is generated and sealed to
// it; with a compressed key the client's own key is the session's.
func (s *Service) issue(ctx context.Context, tx ports.Tx, m ports.AuthMethod, client ClientKey) (IssuedSession, error) {
	now := s.now()
	out := IssuedSession{Credential: m, Session: ports.WalletSession{ID: s.ids.New("Session"), PlatformID: m.PlatformID,
		AccountID: m.AccountID, CredentialID: m.ID, CreatedAt: now, ExpiresAt: now.Add(s.opts.SessionLifetime)}}
	if client.Compressed {
		out.Session.PublicKey = CompressedHex(client.Key)
	} else {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return out, err
		}
		raw, err := key.Bytes()
		if err != nil {
			return out, err
		}
		if out.EncryptedSessionSigningKey, err = SealSessionKey(client.Key, raw); err != nil {
			return out, err
		}
		pub, err := key.PublicKey.ECDH()
		if err != nil {
			return out, err
		}
		out.Session.PublicKey = CompressedHex(pub)
	}
	if err := tx.WalletSessions().Create(ctx, out.Session); err != nil {
		return out, fmt.Errorf("create session for %s: %w", m.ID, err)
	}
	return out, nil
}

// credential reads the platform's credential id (404 when unknown).
func credential(ctx context.Context, r interface{ AuthMethods() ports.AuthMethodRepo }, platformID, id string) (ports.AuthMethod, error) {
	m, err := r.AuthMethods().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.AuthMethod{}, fault.NotFound("NOT_FOUND", "authentication credential "+id+" not found")
	}
	if err != nil {
		return ports.AuthMethod{}, fmt.Errorf("read credential %s: %w", id, err)
	}
	return m, nil
}

// otpRecord is a pending code as the single-use store keeps it.
type otpRecord struct {
	Hash      []byte    `json:"h"` // SHA-256 of the code
	Tries     int       `json:"t"`
	ExpiresAt time.Time `json:"e"`
}

func otpKey(credentialID string) string { return "walletauth:otp:" + credentialID }

// Challenged is a challenge's answer: the credential and, for a passkey,
// the WebAuthn challenge to sign.
type Challenged struct {
	Method  ports.AuthMethod
	Passkey *PasskeyChallenge
}

// Challenge starts a credential's re-authentication: an EMAIL_OTP gets a
// new one-time password at its address, as long and as long-lived as the
// platform's configuration says (platforms.OTPSettings; the sandbox skips
// delivery: SandboxOTP is always accepted); a PASSKEY gets a WebAuthn challenge
// bound to clientPublicKey. An OAUTH credential has no challenge step
// (400); too many challenges is 429.
func (s *Service) Challenge(ctx context.Context, platformID, id, clientPublicKey string) (Challenged, error) {
	m, err := credential(ctx, s.store.Read(), platformID, id)
	if err != nil {
		return Challenged{}, err
	}
	switch m.Type {
	case TypeEmailOTP:
	case TypePasskey:
		// A request refused for its own input asks for nothing, so it
		// does not count against the credential's challenges.
		if _, err := ParseClientKey(clientPublicKey); err != nil {
			return Challenged{}, fault.Invalid("clientPublicKey", "a PASSKEY challenge needs the new session's key: "+err.Error())
		}
		if err := s.limitChallenges(ctx, m.ID); err != nil {
			return Challenged{}, err
		}
		c, err := s.passkeyChallenge(ctx, m, clientPublicKey)
		return Challenged{Method: m, Passkey: c}, err
	default:
		return Challenged{}, fault.Invalid("type", m.Type+" credentials have no challenge step: verify them directly with a fresh token")
	}
	if err := s.limitChallenges(ctx, m.ID); err != nil {
		return Challenged{}, err
	}
	p, err := s.store.Read().Platforms().Get(ctx, platformID)
	if err != nil {
		return Challenged{}, fmt.Errorf("challenge %s: read platform: %w", m.ID, err)
	}
	length, lifetime := platforms.OTPSettings(p)
	w := p.EmbeddedWallet
	newCode := randomDigits
	if w.Alphanumeric {
		newCode = codes.New
	}
	code, err := newCode(length)
	if err != nil {
		return Challenged{}, err
	}
	expires := s.now().Add(lifetime)
	hash := sha256.Sum256([]byte(code))
	rec, _ := json.Marshal(otpRecord{Hash: hash[:], ExpiresAt: expires})
	if err := s.single.Put(ctx, otpKey(m.ID), rec, lifetime); err != nil {
		return Challenged{}, fmt.Errorf("challenge %s: %w", m.ID, err)
	}
	if s.opts.Sandbox {
		return Challenged{Method: m}, nil
	}
	mail := OTPMail{To: m.Nickname, Code: code, ExpiresAt: expires, AppName: w.AppName, SenderAddress: w.SenderAddress,
		SenderName: cmp.Or(w.SenderName, platforms.DefaultSenderName), ReplyTo: w.ReplyTo, LogoURL: w.LogoURL}
	if err := s.mailer.SendOTP(ctx, mail); err != nil {
		return Challenged{}, fmt.Errorf("challenge %s: send: %w", m.ID, err)
	}
	return Challenged{Method: m}, nil
}

// limitChallenges refuses a credential's challenge past MaxChallenges per
// ChallengeWindow (429 RATE_LIMITED with the wait).
func (s *Service) limitChallenges(ctx context.Context, credentialID string) error {
	if s.failures == nil {
		return nil
	}
	counts, err := s.failures.AddFailure(ctx, ChallengeWindow, "walletauth:challenge:"+credentialID)
	if err != nil {
		return fmt.Errorf("challenge %s: count: %w", credentialID, err)
	}
	if counts[0].N > MaxChallenges {
		return &fault.Error{Kind: fault.KindTooMany, Code: "RATE_LIMITED",
			Message:    "too many challenges were requested for this credential; retry after the interval in Retry-After",
			RetryAfter: counts[0].ResetIn}
	}
	return nil
}

func randomDigits(n int) (string, error) {
	var b strings.Builder
	for range n {
		d, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			return "", err
		}
		b.WriteByte(byte('0' + d.Int64()))
	}
	return b.String(), nil
}

// errBadOTP is the reference's answer to a wrong, used or expired code.
var errBadOTP = &fault.Error{Kind: fault.KindUnauthorized, Code: "UNAUTHORIZED", Message: "authentication failed: Invalid OTP code",
	Reason: "Invalid OTP code"}

// VerifyRequest is a verify call: the fields of the credential's type.
type VerifyRequest struct {
	// Type, when sent, must be the credential's.
	Type            string
	OTP             string // EMAIL_OTP
	ClientPublicKey string // EMAIL_OTP and OAUTH (a PASSKEY's is bound by its challenge)
	OIDCToken       string // OAUTH
	Assertion       *PasskeyAssertion
	RequestID       string // PASSKEY: the challenge's requestId
}

// VerifyCredential checks a credential as its type requires and issues a
// session: an EMAIL_OTP's code, an OAUTH's fresh ID token (identity, nonce
// bound to clientPublicKey, signature), a PASSKEY's assertion over its
// challenge (whose clientPublicKey the session is for).
func (s *Service) VerifyCredential(ctx context.Context, platformID, id string, req VerifyRequest) (IssuedSession, error) {
	m, err := credential(ctx, s.store.Read(), platformID, id)
	if err != nil {
		return IssuedSession{}, err
	}
	if req.Type != "" && req.Type != m.Type {
		return IssuedSession{}, fault.Invalid("type", "credential "+id+" is "+m.Type+", not "+req.Type)
	}
	var errs fault.Collector
	switch m.Type {
	case TypeEmailOTP:
		if !(req.OTP != "") {
			errs.Add("otp", "is required to verify an EMAIL_OTP credential")
		}
		if !(req.ClientPublicKey != "") {
			errs.Add("clientPublicKey", "is required to verify an EMAIL_OTP credential")
		}
	case TypeOAuth:
		if !(req.OIDCToken != "") {
			errs.Add("oidcToken", "is required to verify an OAUTH credential")
		}
		if !(req.ClientPublicKey != "") {
			errs.Add("clientPublicKey", "is required to verify an OAUTH credential")
		}
	case TypePasskey:
		if !(req.Assertion != nil) {
			errs.Add("assertion", "is required to verify a PASSKEY credential")
		}
	}
	if err := errs.Err(); err != nil {
		return IssuedSession{}, err
	}
	switch m.Type {
	case TypeEmailOTP:
		return s.VerifyEmailOTP(ctx, platformID, id, req.OTP, req.ClientPublicKey)
	case TypeOAuth:
		return s.verifyOAuthSession(ctx, m, req)
	case TypePasskey:
		return s.verifyPasskeySession(ctx, m, req)
	}
	return IssuedSession{}, fault.Invalid("type", m.Type+" credentials cannot be verified here")
}

func (s *Service) verifyOAuthSession(ctx context.Context, m ports.AuthMethod, req VerifyRequest) (IssuedSession, error) {
	client, err := ParseClientKey(req.ClientPublicKey)
	if err != nil {
		return IssuedSession{}, fault.Invalid("clientPublicKey", err.Error())
	}
	if err := s.verifyOAuth(ctx, m, req.OIDCToken, req.ClientPublicKey); err != nil {
		return IssuedSession{}, err
	}
	return s.issueIn(ctx, m, client, nil)
}

func (s *Service) verifyPasskeySession(ctx context.Context, m ports.AuthMethod, req VerifyRequest) (IssuedSession, error) {
	key, count, err := s.verifyPasskey(ctx, m, req.RequestID, *req.Assertion)
	if err != nil {
		return IssuedSession{}, err
	}
	client, err := ParseClientKey(key)
	if err != nil {
		return IssuedSession{}, fmt.Errorf("passkey %s: bound key: %w", m.ID, err)
	}
	advance := func(tx ports.Tx) error {
		if count == m.SignCount && count == 0 {
			return nil // an authenticator without a counter
		}
		err := tx.AuthMethods().AdvanceSignCount(ctx, m.PlatformID, m.ID, count, s.now())
		if errors.Is(err, ports.ErrConflict) {
			return passkeyFailure("passkey signature counter did not increase: the authenticator may be cloned")
		}
		return err
	}
	if s.opts.Sandbox && req.Assertion.Signature == SandboxPasskeySignature {
		advance = nil
	}
	return s.issueIn(ctx, m, client, advance)
}

// issueIn issues a session of m for client in one transaction, after
// before (if any) in the same transaction.
func (s *Service) issueIn(ctx context.Context, m ports.AuthMethod, client ClientKey, before func(ports.Tx) error) (IssuedSession, error) {
	var out IssuedSession
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		if before != nil {
			if err := before(tx); err != nil {
				return err
			}
		}
		var err error
		out, err = s.issue(ctx, tx, m, client)
		return err
	})
	return out, err
}

// VerifyEmailOTP checks otp against the credential's pending code (single
// use, at most MaxOTPTries wrong tries; SandboxOTP in the sandbox) and
// issues a session for clientPublicKey.
func (s *Service) VerifyEmailOTP(ctx context.Context, platformID, id, otp, clientPublicKey string) (IssuedSession, error) {
	client, err := ParseClientKey(clientPublicKey)
	if err != nil {
		return IssuedSession{}, fault.Invalid("clientPublicKey", err.Error())
	}
	m, err := credential(ctx, s.store.Read(), platformID, id)
	if err != nil {
		return IssuedSession{}, err
	}
	if m.Type != TypeEmailOTP {
		return IssuedSession{}, fault.Invalid("type", "credential "+id+" is "+m.Type+", not EMAIL_OTP")
	}
	if !(s.opts.Sandbox && otp == SandboxOTP) {
		if err := s.consumeOTP(ctx, m.ID, otp); err != nil {
			return IssuedSession{}, err
		}
	}
	return s.issueIn(ctx, m, client, nil)
}

// consumeOTP takes the pending code; a wrong one puts it back with one
// more try counted, until MaxOTPTries.
func (s *Service) consumeOTP(ctx context.Context, credentialID, otp string) error {
	raw, ok, err := s.single.Consume(ctx, otpKey(credentialID))
	if err != nil {
		return fmt.Errorf("verify %s: %w", credentialID, err)
	}
	var rec otpRecord
	if !ok || json.Unmarshal(raw, &rec) != nil || !s.now().Before(rec.ExpiresAt) {
		return errBadOTP
	}
	// An alphanumeric code is upper case; a typed one may not be.
	got := sha256.Sum256([]byte(strings.ToUpper(otp)))
	if subtle.ConstantTimeCompare(got[:], rec.Hash) == 1 {
		return nil
	}
	rec.Tries++
	if rec.Tries < MaxOTPTries {
		back, _ := json.Marshal(rec)
		if err := s.single.Put(ctx, otpKey(credentialID), back, rec.ExpiresAt.Sub(s.now())); err != nil {
			return fmt.Errorf("verify %s: %w", credentialID, err)
		}
	}
	return errBadOTP
}

// checkAccountID refuses an accountId that is not an internal account id,
// InternalAccount:<uuid> (400 naming accountId, as the reference has it).
func checkAccountID(id string) error {
	var errs fault.Collector
	transfers.CheckID(&errs, "accountId", id, "InternalAccount:")
	if err := errs.Err(); err != nil {
		return err
	}
	if rest := strings.TrimPrefix(id, "InternalAccount:"); len(rest) != 36 || uuid.Validate(rest) != nil {
		return fault.Invalid("accountId", "must be InternalAccount:<uuid>")
	}
	return nil
}

// Credentials lists an account's credentials.
func (s *Service) Credentials(ctx context.Context, platformID, accountID string) ([]ports.AuthMethod, error) {
	if err := checkAccountID(accountID); err != nil {
		return nil, err
	}
	ms, err := s.store.Read().AuthMethods().ListByAccount(ctx, platformID, accountID)
	if err != nil {
		return nil, fmt.Errorf("credentials of %s: %w", accountID, err)
	}
	return ms, nil
}

// Session is an active session with the credential that issued it.
type Session struct {
	Session    ports.WalletSession
	Credential ports.AuthMethod
}

// Sessions lists an account's active sessions (never their keys).
func (s *Service) Sessions(ctx context.Context, platformID, accountID string) ([]Session, error) {
	if err := checkAccountID(accountID); err != nil {
		return nil, err
	}
	read := s.store.Read()
	rows, err := read.WalletSessions().Active(ctx, platformID, accountID, s.now())
	if err != nil {
		return nil, fmt.Errorf("sessions of %s: %w", accountID, err)
	}
	ms, err := read.AuthMethods().ListByAccount(ctx, platformID, accountID)
	if err != nil {
		return nil, fmt.Errorf("sessions of %s: %w", accountID, err)
	}
	byID := map[string]ports.AuthMethod{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	out := make([]Session, 0, len(rows))
	for _, r := range rows {
		out = append(out, Session{Session: r, Credential: byID[r.CredentialID]})
	}
	return out, nil
}
