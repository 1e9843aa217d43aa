package walletauth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ports"
)

// Retry is a signed-retry request's two headers: both empty on the first
// call.
type Retry struct {
	RequestID string
	Signature string
}

// First reports whether this is the first call of a signed-retry
// operation: no Request-Id. A Service-Wallet-Signature sent without one is
// ignored, as the spec says of the initial call (the reference's 401
// REQUEST_ID_MISSING for it cannot coexist with that).
func (r Retry) First() bool { return r.RequestID == "" }

// Activity types bound into payloadToSign.
const (
	ActivityDeleteSession  = "ACTIVITY_TYPE_DELETE_SESSIONS"
	ActivityRefreshSession = "ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2"
)

// session reads the platform's session and the credential that issued it
// (404 when unknown).
func (s *Service) session(ctx context.Context, platformID, id string) (ports.WalletSession, ports.AuthMethod, error) {
	read := s.store.Read()
	sess, err := read.WalletSessions().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return sess, ports.AuthMethod{}, fault.NotFound("NOT_FOUND", "session "+id+" not found")
	}
	if err != nil {
		return sess, ports.AuthMethod{}, fmt.Errorf("read session %s: %w", id, err)
	}
	m, err := credential(ctx, read, platformID, sess.CredentialID)
	return sess, m, err
}

// RevokeSession ends a session, by signed retry: the first call returns the
// challenge (and the issuing credential's type); the retry, stamped by an
// active session of the wallet, revokes it.
func (s *Service) RevokeSession(ctx context.Context, platformID, id string, r Retry) (*RetryChallenge, string, error) {
	sess, m, err := s.session(ctx, platformID, id)
	if err != nil {
		return nil, "", err
	}
	if !sess.Active(s.now()) {
		// As the reference: a revoked or expired session is as unknown as
		// one never issued.
		return nil, "", fault.NotFound("NOT_FOUND", "session "+id+" not found: it was revoked or has expired")
	}
	op := Operation{Type: ActivityDeleteSession, AccountID: sess.AccountID, Parameters: map[string]string{"sessionId": sess.ID}}
	if r.First() {
		c, err := s.BeginRetry(ctx, platformID, op)
		return &c, m.Type, err
	}
	if _, err := s.CompleteRetry(ctx, platformID, op, r.RequestID, r.Signature); err != nil {
		return nil, m.Type, err
	}
	err = s.store.InTx(ctx, func(tx ports.Tx) error { return tx.WalletSessions().Revoke(ctx, platformID, sess.ID, s.now()) })
	return nil, m.Type, err
}

// RefreshSession opens a new session of the same credential for
// clientPublicKey, by signed retry stamped by the active session id (which
// stays active until it expires: a lost response does not lock the client
// out); body is the request body the retry must repeat.
func (s *Service) RefreshSession(ctx context.Context, platformID, id, clientPublicKey string, body []byte, r Retry) (
	*RetryChallenge, IssuedSession, error) {
	client, err := ParseClientKey(clientPublicKey)
	if err != nil {
		return nil, IssuedSession{}, fault.Invalid("clientPublicKey", err.Error())
	}
	sess, m, err := s.session(ctx, platformID, id)
	if err != nil {
		return nil, IssuedSession{}, err
	}
	if !sess.Active(s.now()) {
		return nil, IssuedSession{}, unauthorized(CodeSignatureInvalid, "session "+id+" has expired or was revoked: verify the credential again")
	}
	op := Operation{Type: ActivityRefreshSession, AccountID: sess.AccountID, Body: body, Signer: sess.ID,
		Parameters: map[string]string{"sessionId": sess.ID, "targetPublicKey": clientPublicKey}}
	if r.First() {
		c, err := s.BeginRetry(ctx, platformID, op)
		return &c, IssuedSession{}, err
	}
	if _, err := s.CompleteRetry(ctx, platformID, op, r.RequestID, r.Signature); err != nil {
		return nil, IssuedSession{}, err
	}
	var out IssuedSession
	err = s.store.InTx(ctx, func(tx ports.Tx) error {
		out, err = s.issue(ctx, tx, m, client)
		return err
	})
	return nil, out, err
}

// ActivityDeleteCredential is the activity of revoking a credential.
const ActivityDeleteCredential = "ACTIVITY_TYPE_DELETE_AUTHENTICATORS"

// RevokeCredential revokes a credential, by signed retry stamped by a
// session of another credential of the same wallet (a credential cannot
// revoke itself); its sessions end with it. The wallet's last credential
// cannot be revoked (400).
func (s *Service) RevokeCredential(ctx context.Context, platformID, id string, r Retry) (*RetryChallenge, string, error) {
	read := s.store.Read()
	m, err := credential(ctx, read, platformID, id)
	if err != nil {
		return nil, "", err
	}
	all, err := read.AuthMethods().ListByAccount(ctx, platformID, m.AccountID)
	if err != nil {
		return nil, m.Type, fmt.Errorf("credentials of %s: %w", m.AccountID, err)
	}
	if len(all) <= 1 {
		return nil, m.Type, fault.Invalid("id", "an embedded wallet keeps at least one credential: add another before revoking "+id)
	}
	op := Operation{Type: ActivityDeleteCredential, AccountID: m.AccountID, Parameters: map[string]string{"authenticatorId": m.ID},
		ExcludeCredential: m.ID}
	if r.First() {
		c, err := s.BeginRetry(ctx, platformID, op)
		return &c, m.Type, err
	}
	if _, err := s.CompleteRetry(ctx, platformID, op, r.RequestID, r.Signature); err != nil {
		return nil, m.Type, err
	}
	now := s.now()
	err = s.store.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.AuthMethods().Revoke(ctx, platformID, m.ID, now); err != nil {
			return fmt.Errorf("revoke %s: %w", m.ID, err)
		}
		return tx.WalletSessions().RevokeCredential(ctx, platformID, m.ID, now)
	})
	return nil, m.Type, err
}

// ActivityUpdatePrivacy is the activity of changing a wallet's privacy.
const ActivityUpdatePrivacy = "ACTIVITY_TYPE_UPDATE_WALLET_PRIVACY"

// SetPrivacy turns an embedded wallet's privacy on or off, by signed retry
// stamped by an active session of the wallet; body is the request body the
// retry must repeat.
func (s *Service) SetPrivacy(ctx context.Context, platformID, accountID string, enabled bool, body []byte, r Retry) (*RetryChallenge, error) {
	read := s.store.Read()
	a, err := read.InternalAccounts().Get(ctx, platformID, accountID)
	if errors.Is(err, ports.ErrNotFound) {
		return nil, fault.NotFound("NOT_FOUND", "internal account "+accountID+" not found")
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", accountID, err)
	}
	if a.Type != "EMBEDDED_WALLET" {
		return nil, fault.Invalid("privateEnabled", "applies to EMBEDDED_WALLET accounts only")
	}
	op := Operation{Type: ActivityUpdatePrivacy, AccountID: a.ID, Body: body,
		Parameters: map[string]string{"privateEnabled": fmt.Sprint(enabled)}}
	if r.First() {
		c, err := s.BeginRetry(ctx, platformID, op)
		return &c, err
	}
	if _, err := s.CompleteRetry(ctx, platformID, op, r.RequestID, r.Signature); err != nil {
		return nil, err
	}
	return nil, s.store.InTx(ctx, func(tx ports.Tx) error {
		cur, err := tx.InternalAccounts().Get(ctx, platformID, a.ID)
		if err != nil {
			return fmt.Errorf("read %s: %w", a.ID, err)
		}
		cur.PrivateEnabled, cur.UpdatedAt = enabled, s.now()
		return tx.InternalAccounts().Update(ctx, cur)
	})
}

// ActivityUpdateEmail is the activity of changing the e-mail an EMAIL_OTP
// credential is tied to.
const ActivityUpdateEmail = "ACTIVITY_TYPE_UPDATE_USER_EMAIL"

// EmailChange authorises changing customer customerID's e-mail to next
// when one of its embedded wallets has an EMAIL_OTP credential (tied to
// the e-mail): a signed retry stamped by an active session of that wallet,
// binding the new address and the request body. It returns (nil, nil) when
// the change needs no signature (an unknown customer, no tied credential,
// or the e-mail does not change: the update itself answers) or the retry
// was accepted.
func (s *Service) EmailChange(ctx context.Context, platformID, customerID, next string, body []byte, r Retry) (*RetryChallenge, error) {
	c, err := s.store.Read().Customers().Get(ctx, platformID, customerID)
	if errors.Is(err, ports.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read customer %s: %w", customerID, err)
	}
	if next == "" || next == c.Email {
		return nil, nil
	}
	wallet, err := s.tiedWallet(ctx, platformID, customerID)
	if err != nil || wallet == "" {
		return nil, err
	}
	op := Operation{Type: ActivityUpdateEmail, AccountID: wallet, Body: body,
		Parameters: map[string]string{"customerId": customerID, "userEmail": next}}
	if r.First() {
		c, err := s.BeginRetry(ctx, platformID, op)
		return &c, err
	}
	_, err = s.CompleteRetry(ctx, platformID, op, r.RequestID, r.Signature)
	return nil, err
}

// tiedWallet is the customer's embedded wallet that has an EMAIL_OTP
// credential ("" when none).
func (s *Service) tiedWallet(ctx context.Context, platformID, customerID string) (string, error) {
	read := s.store.Read()
	rows, _, err := read.InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: platformID, CustomerID: customerID,
		Type: "EMBEDDED_WALLET"}, ports.Page{Limit: 10})
	if err != nil {
		return "", fmt.Errorf("wallets of %s: %w", customerID, err)
	}
	for _, a := range rows {
		ms, err := read.AuthMethods().ListByAccount(ctx, platformID, a.ID)
		if err != nil {
			return "", fmt.Errorf("credentials of %s: %w", a.ID, err)
		}
		for _, m := range ms {
			if m.Type == TypeEmailOTP {
				return a.ID, nil
			}
		}
	}
	return "", nil
}

// ActivityCreateCredential is the activity of adding a credential.
const ActivityCreateCredential = "ACTIVITY_TYPE_CREATE_AUTHENTICATORS"

// Codes refusing a credential the wallet already has.
const (
	CodeEmailOTPExists = "EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS"
	CodeOAuthExists    = "OAUTH_CREDENTIAL_ALREADY_EXISTS"
)

// NewCredential is a credential to add to an embedded wallet: its type
// and that type's material.
type NewCredential struct {
	Type      string
	AccountID string
	OIDCToken string // OAUTH: an ID token of the identity to bind
	// PASSKEY: the passkey's name, the registration's WebAuthn challenge
	// (base64url, chosen by the platform) and the ceremony's result.
	Nickname    string
	Challenge   string
	Attestation *PasskeyAttestation
}

// check refuses missing material (400 naming each field).
func (n NewCredential) check() error {
	var errs fault.Collector
	transfers.CheckID(&errs, "accountId", n.AccountID, "InternalAccount:")
	switch n.Type {
	case TypeEmailOTP:
	case TypeOAuth:
		if n.OIDCToken == "" {
			errs.Add("oidcToken", "is required for an OAUTH credential")
		}
	case TypePasskey:
		if name := strings.TrimSpace(n.Nickname); name == "" || utf8.RuneCountInString(name) > 100 {
			errs.Add("nickname", "is required for a PASSKEY credential: 1 to 100 characters")
		}
		if n.Challenge == "" {
			errs.Add("challenge", "is required for a PASSKEY credential")
		} else if _, err := base64.RawURLEncoding.DecodeString(n.Challenge); err != nil {
			errs.Add("challenge", "must be the registration's WebAuthn challenge as the browser encodes it: base64url without padding")
		}
		if n.Attestation == nil {
			errs.Add("attestation", "is required for a PASSKEY credential")
		}
	default:
		errs.Add("type", n.Type+" credentials cannot be added here: EMAIL_OTP, OAUTH or PASSKEY")
	}
	return errs.Err()
}

// CreateCredential adds a credential to an embedded wallet: at once (201)
// when the wallet has none, else by signed retry stamped by a session of
// the wallet. An EMAIL_OTP is tied to the customer's e-mail (one per
// wallet); an OAUTH is bound to its token's identity (iss, sub, aud; one
// per identity), the token checked as on verify but without a nonce; a
// PASSKEY is its verified registration ceremony (one per credentialId).
// On the retry the material is checked again, after the signature, with
// the token's freshness measured from the first call (whose body the
// request id binds).
func (s *Service) CreateCredential(ctx context.Context, platformID string, n NewCredential, body []byte, r Retry) (
	*RetryChallenge, ports.AuthMethod, error) {
	if err := n.check(); err != nil {
		return nil, ports.AuthMethod{}, err
	}
	read := s.store.Read()
	a, err := read.InternalAccounts().Get(ctx, platformID, n.AccountID)
	if errors.Is(err, ports.ErrNotFound) || (err == nil && a.Type != "EMBEDDED_WALLET") {
		return nil, ports.AuthMethod{}, fault.NotFound("NOT_FOUND", "embedded wallet "+n.AccountID+" not found")
	}
	if err != nil {
		return nil, ports.AuthMethod{}, fmt.Errorf("read %s: %w", n.AccountID, err)
	}
	existing, err := read.AuthMethods().ListByAccount(ctx, platformID, a.ID)
	if err != nil {
		return nil, ports.AuthMethod{}, fmt.Errorf("credentials of %s: %w", a.ID, err)
	}
	issuedFor := s.now()
	if len(existing) > 0 && !r.First() {
		issuedFor = issuedFor.Add(-RetryLifetime)
	}
	m, err := s.material(ctx, a, n, issuedFor)
	if err != nil {
		return nil, ports.AuthMethod{}, err
	}
	if len(existing) > 0 {
		op := Operation{Type: ActivityCreateCredential, AccountID: a.ID, Body: body, Parameters: map[string]string{
			"authenticatorType": m.Type, "identity": m.Nickname + "|" + m.Issuer + "|" + m.Subject + "|" + m.CredentialID}}
		if r.First() {
			if err := alreadyHas(existing, m); err != nil {
				return nil, ports.AuthMethod{}, err
			}
			ch, err := s.BeginRetry(ctx, platformID, op)
			return &ch, ports.AuthMethod{}, err
		}
		// The retry is authorised first: a replayed request id is 401
		// whatever became of the credential it created.
		if _, err := s.CompleteRetry(ctx, platformID, op, r.RequestID, r.Signature); err != nil {
			return nil, ports.AuthMethod{}, err
		}
	}
	if err := alreadyHas(existing, m); err != nil {
		return nil, ports.AuthMethod{}, err
	}
	now := s.now()
	m.ID, m.PlatformID, m.AccountID, m.CreatedAt, m.UpdatedAt = s.ids.New("AuthMethod"), platformID, a.ID, now, now
	err = s.store.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Create(ctx, m) })
	var conflict *ports.ConflictError
	if errors.As(err, &conflict) {
		return nil, ports.AuthMethod{}, alreadyHas([]ports.AuthMethod{m}, m)
	}
	return nil, m, err
}

// material builds the credential n describes from its verified material.
func (s *Service) material(ctx context.Context, a ports.InternalAccount, n NewCredential, issuedFor time.Time) (ports.AuthMethod, error) {
	switch n.Type {
	case TypeEmailOTP:
		c, err := s.store.Read().Customers().Get(ctx, a.PlatformID, a.CustomerID)
		if err != nil || c.Email == "" {
			return ports.AuthMethod{}, fault.Invalid("type", "the wallet's customer has no e-mail to tie an EMAIL_OTP credential to")
		}
		return ports.AuthMethod{Type: TypeEmailOTP, Nickname: c.Email}, nil
	case TypeOAuth:
		c, err := s.checkToken(ctx, n.OIDCToken, issuedFor)
		if err != nil {
			return ports.AuthMethod{}, err
		}
		nick := c.Email
		if nick == "" {
			nick = c.Subject
		}
		return ports.AuthMethod{Type: TypeOAuth, Nickname: nick, Issuer: c.Issuer, Subject: c.Subject, Audience: c.Audience}, nil
	}
	m, err := s.registerPasskey(n.Challenge, *n.Attestation)
	m.Nickname = strings.TrimSpace(n.Nickname)
	return m, err
}

// alreadyHas refuses m when the wallet's credentials hold its twin: a
// second EMAIL_OTP, the same passkey, or the same OIDC identity (400).
func alreadyHas(existing []ports.AuthMethod, m ports.AuthMethod) error {
	for _, o := range existing {
		if o.Type != m.Type {
			continue
		}
		switch {
		case m.Type == TypeEmailOTP:
			return fault.New(fault.KindInvalid, CodeEmailOTPExists, "wallet "+o.AccountID+" already has an EMAIL_OTP credential")
		case m.Type == TypePasskey && o.CredentialID == m.CredentialID:
			return fault.New(fault.KindInvalid, CodePasskeyExists, "this passkey is already registered on wallet "+o.AccountID)
		case m.Type == TypeOAuth && o.Issuer == m.Issuer && o.Subject == m.Subject:
			return fault.New(fault.KindInvalid, CodeOAuthExists, "this OIDC identity is already a credential of wallet "+o.AccountID)
		}
	}
	return nil
}
