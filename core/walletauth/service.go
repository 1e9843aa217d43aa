package walletauth

import (
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

	"github.com/corridorpay/corridor/core/fault"
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
	DefaultOTPLifetime     = 5 * time.Minute
	DefaultOTPDigits       = 6
	// MaxOTPTries is how many wrong codes one code survives.
	MaxOTPTries = 5
	// MaxChallenges is how many OTPs one credential may be sent per
	// ChallengeWindow.
	MaxChallenges   = 5
	ChallengeWindow = 15 * time.Minute
)

// Mailer delivers one-time passwords (an SMTP adapter, or the log).
type Mailer interface {
	SendOTP(ctx context.Context, to, code string, expiresAt time.Time) error
}

// Options configure a Service.
type Options struct {
	Sandbox         bool
	SessionLifetime time.Duration
	OTPLifetime     time.Duration
	OTPDigits       int
	Logger          *slog.Logger
	// MasterKey (32 bytes) seals wallets' secrets at rest; ExportKey signs
	// export bundles (its public key is published). Without both, export
	// is unavailable (503).
	MasterKey []byte
	ExportKey *ecdsa.PrivateKey
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
}

var _ ports.WalletSignatureVerifier = (*Service)(nil)

// New builds a Service; failures counts OTP challenges (nil: no limit).
func New(store ports.Store, single ports.SingleUse, failures ports.FailureCounter, mailer Mailer,
	clock ports.Clock, ids ports.IDs, opts Options) *Service {
	if opts.SessionLifetime <= 0 {
		opts.SessionLifetime = DefaultSessionLifetime
	}
	if opts.OTPLifetime <= 0 {
		opts.OTPLifetime = DefaultOTPLifetime
	}
	if opts.OTPDigits <= 0 {
		opts.OTPDigits = DefaultOTPDigits
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, single: single, failures: failures, mailer: mailer, clock: clock, ids: ids, opts: opts}
}

func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

// Verify checks that signature is a stamp over exactly payload made with
// an active session of the platform's account (ports.WalletSignatureVerifier).
// The sandbox also accepts SandboxSignature.
func (s *Service) Verify(ctx context.Context, platformID, accountID, payload, signature string) error {
	if s.opts.Sandbox && signature == SandboxSignature {
		return nil
	}
	st, err := ParseStamp(signature)
	if err != nil {
		return ports.ErrWalletSignatureMalformed
	}
	sessions, err := s.store.Read().WalletSessions().Active(ctx, platformID, accountID, s.now())
	if err != nil {
		return fmt.Errorf("wallet signature: sessions of %s: %w", accountID, err)
	}
	for _, sess := range sessions {
		if sess.PublicKey == st.PublicKey {
			if st.Verify([]byte(payload)) != nil {
				return ports.ErrWalletSignatureInvalid
			}
			return nil
		}
	}
	return ports.ErrWalletSignatureInvalid
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

// Challenge sends a new one-time password to an EMAIL_OTP credential's
// address (the sandbox skips delivery: SandboxOTP is always accepted). An
// OAUTH credential has no challenge step; too many challenges is 429.
func (s *Service) Challenge(ctx context.Context, platformID, id string) (ports.AuthMethod, error) {
	m, err := credential(ctx, s.store.Read(), platformID, id)
	if err != nil {
		return m, err
	}
	if m.Type != TypeEmailOTP {
		return m, fault.Invalid("type", m.Type+" credentials have no challenge step here: verify them directly")
	}
	if err := s.limitChallenges(ctx, m.ID); err != nil {
		return m, err
	}
	code, err := randomDigits(s.opts.OTPDigits)
	if err != nil {
		return m, err
	}
	expires := s.now().Add(s.opts.OTPLifetime)
	hash := sha256.Sum256([]byte(code))
	rec, _ := json.Marshal(otpRecord{Hash: hash[:], ExpiresAt: expires})
	if err := s.single.Put(ctx, otpKey(m.ID), rec, s.opts.OTPLifetime); err != nil {
		return m, fmt.Errorf("challenge %s: %w", m.ID, err)
	}
	if s.opts.Sandbox {
		return m, nil
	}
	if err := s.mailer.SendOTP(ctx, m.Nickname, code, expires); err != nil {
		return m, fmt.Errorf("challenge %s: send: %w", m.ID, err)
	}
	return m, nil
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
			Message:    "too many one-time passwords were requested for this credential; retry after the interval in Retry-After",
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
	var out IssuedSession
	err = s.store.InTx(ctx, func(tx ports.Tx) error {
		out, err = s.issue(ctx, tx, m, client)
		return err
	})
	return out, err
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
	got := sha256.Sum256([]byte(otp))
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

// checkAccountID refuses an accountId that is not an internal account id
// (400 naming accountId).
func checkAccountID(id string) error {
	var errs fault.Collector
	transfers.CheckID(&errs, "accountId", id, "InternalAccount:")
	return errs.Err()
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
