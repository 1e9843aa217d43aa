package walletauth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// SandboxPasskeySignature is the legacy assertion signature the sandbox
// still accepts in place of a WebAuthn verification.
const SandboxPasskeySignature = "sandbox-valid-passkey-signature"

// PasskeyChallengeLifetime is how long a passkey challenge waits for its
// assertion.
const PasskeyChallengeLifetime = 5 * time.Minute

// ActivityPasskeyLogin is the activity a passkey challenge's payload
// names: a session for the clientPublicKey it binds.
const ActivityPasskeyLogin = "ACTIVITY_TYPE_STAMP_LOGIN"

// CodePasskeyExists refuses a passkey already registered on the wallet.
const CodePasskeyExists = "PASSKEY_CREDENTIAL_ALREADY_EXISTS"

// PasskeyAttestation is a registration ceremony's result, each binary
// field base64url as the browser's PublicKeyCredential gives it.
type PasskeyAttestation struct {
	CredentialID      string
	ClientDataJSON    string
	AttestationObject string
	Transports        []string
}

// PasskeyAssertion is an authentication ceremony's result (base64url).
type PasskeyAssertion struct {
	CredentialID      string
	ClientDataJSON    string
	AuthenticatorData string
	Signature         string
	UserHandle        string
}

// PasskeyChallenge is a passkey's /challenge answer: the WebAuthn
// challenge (lower-case hex SHA-256 of the session-creation payload, which
// binds clientPublicKey), and the request id /verify echoes.
type PasskeyChallenge struct {
	Challenge string
	RequestID string
	ExpiresAt time.Time
}

// passkeyRecord is a pending passkey challenge in the single-use store.
type passkeyRecord struct {
	AuthMethodID    string    `json:"m"`
	ClientPublicKey string    `json:"k"`
	Challenge       string    `json:"c"`
	ExpiresAt       time.Time `json:"e"`
}

func passkeyKey(requestID string) string { return "walletauth:passkey:" + requestID }

// passkeyUser is the WebAuthn user of one credential. Its handle is the
// one the assertion presents (the platform's front end chose it at
// registration; the credential id and signature are the proof).
type passkeyUser struct {
	handle []byte
	creds  []webauthn.Credential
}

func (u passkeyUser) WebAuthnID() []byte                         { return u.handle }
func (u passkeyUser) WebAuthnName() string                       { return "wallet" }
func (u passkeyUser) WebAuthnDisplayName() string                { return "wallet" }
func (u passkeyUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// passkeyFailure is the 401 of a failed WebAuthn check.
func passkeyFailure(reason string) error {
	return &fault.Error{Kind: fault.KindUnauthorized, Code: "UNAUTHORIZED", Message: "authentication failed: " + reason, Reason: reason}
}

// webAuthnDetail is the library's reason, for the error's reason.
func webAuthnDetail(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		return pe.Details
	}
	return "the WebAuthn data is invalid"
}

// registerPasskey verifies a registration ceremony against challenge (the
// client-chosen, base64url WebAuthn challenge) and returns the credential
// to store: its record (public key, flags, authenticator) and id.
func (s *Service) registerPasskey(challenge string, a PasskeyAttestation) (ports.AuthMethod, error) {
	if s.webauthn == nil {
		return ports.AuthMethod{}, fmt.Errorf("passkeys: no relying party configured: %w", ports.ErrUnavailable)
	}
	transports, _ := json.Marshal(a.Transports)
	body := fmt.Sprintf(`{"id":%q,"rawId":%q,"type":"public-key","response":{"clientDataJSON":%q,"attestationObject":%q,"transports":%s}}`,
		a.CredentialID, a.CredentialID, a.ClientDataJSON, a.AttestationObject, transports)
	parsed, err := protocol.ParseCredentialCreationResponseBody(bytes.NewReader([]byte(body)))
	if err != nil {
		return ports.AuthMethod{}, fault.Invalid("attestation", webAuthnDetail(err))
	}
	user := passkeyUser{handle: []byte("registration")}
	cred, err := s.webauthn.CreateCredential(user, webauthn.SessionData{Challenge: challenge, UserID: user.handle,
		CredParams: webauthn.CredentialParametersDefault(), UserVerification: protocol.VerificationPreferred}, parsed)
	if err != nil {
		return ports.AuthMethod{}, passkeyFailure("passkey registration failed: " + webAuthnDetail(err))
	}
	count := cred.Authenticator.SignCount
	cred.Authenticator.SignCount = 0 // kept in its own column
	record, err := json.Marshal(cred)
	if err != nil {
		return ports.AuthMethod{}, err
	}
	return ports.AuthMethod{Type: TypePasskey, CredentialID: base64.RawURLEncoding.EncodeToString(cred.ID),
		Passkey: record, SignCount: count}, nil
}

// passkeyChallenge issues a passkey credential's challenge for
// clientPublicKey: the payload of a session for that key is hashed into
// the WebAuthn challenge, and the pending challenge is kept single-use
// under a new request id.
// (clientPublicKey checked by the caller, before the challenge counts.)
func (s *Service) passkeyChallenge(ctx context.Context, m ports.AuthMethod, clientPublicKey string) (*PasskeyChallenge, error) {
	now := s.now()
	c := &PasskeyChallenge{RequestID: s.ids.New("Request"), ExpiresAt: now.Add(PasskeyChallengeLifetime)}
	op := Operation{Type: ActivityPasskeyLogin, AccountID: m.AccountID, Parameters: map[string]string{
		"authenticatorId": m.ID, "credentialId": m.CredentialID, "publicKey": clientPublicKey,
		"expirationSeconds": strconv.Itoa(int(s.opts.SessionLifetime / time.Second))}}
	payload, err := op.payload(m.PlatformID, c.RequestID, now)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(payload))
	c.Challenge = hex.EncodeToString(sum[:])
	rec, _ := json.Marshal(passkeyRecord{AuthMethodID: m.ID, ClientPublicKey: clientPublicKey, Challenge: c.Challenge, ExpiresAt: c.ExpiresAt})
	if err := s.single.Put(ctx, passkeyKey(c.RequestID), rec, PasskeyChallengeLifetime); err != nil {
		return nil, fmt.Errorf("passkey challenge %s: %w", m.ID, err)
	}
	return c, nil
}

// verifyPasskey consumes the challenge requestID (single-use, unexpired,
// issued for m) and checks the assertion against it and m's public key;
// the signature counter must move forward (a clone is refused, which the
// library only warns of). The sandbox also takes SandboxPasskeySignature
// in place of the WebAuthn check. It returns the clientPublicKey the
// challenge bound and the counter to store.
func (s *Service) verifyPasskey(ctx context.Context, m ports.AuthMethod, requestID string, a PasskeyAssertion) (string, uint32, error) {
	if requestID == "" {
		return "", 0, unauthorized(CodeRequestIDMissing, "a PASSKEY verify needs the challenge's requestId in Request-Id")
	}
	raw, ok, err := s.single.Consume(ctx, passkeyKey(requestID))
	if err != nil {
		return "", 0, fmt.Errorf("passkey verify %s: %w", m.ID, err)
	}
	var rec passkeyRecord
	if !ok || json.Unmarshal(raw, &rec) != nil || !s.now().Before(rec.ExpiresAt) || rec.AuthMethodID != m.ID {
		return "", 0, passkeyFailure("the passkey challenge is unknown, expired, already used or for another credential")
	}
	if s.opts.Sandbox && a.Signature == SandboxPasskeySignature {
		return rec.ClientPublicKey, m.SignCount, nil
	}
	if s.webauthn == nil {
		return "", 0, fmt.Errorf("passkeys: no relying party configured: %w", ports.ErrUnavailable)
	}
	var cred webauthn.Credential
	if err := json.Unmarshal(m.Passkey, &cred); err != nil {
		return "", 0, fmt.Errorf("passkey %s: stored record: %w", m.ID, err)
	}
	cred.Authenticator.SignCount = m.SignCount
	body, _ := json.Marshal(map[string]any{"id": a.CredentialID, "rawId": a.CredentialID, "type": "public-key",
		"response": map[string]string{"clientDataJSON": a.ClientDataJSON, "authenticatorData": a.AuthenticatorData,
			"signature": a.Signature, "userHandle": a.UserHandle}})
	parsed, err := protocol.ParseCredentialRequestResponseBody(bytes.NewReader(body))
	if err != nil {
		return "", 0, fault.Invalid("assertion", webAuthnDetail(err))
	}
	handle := parsed.Response.UserHandle
	if len(handle) == 0 {
		handle = []byte("assertion")
	}
	got, err := s.webauthn.ValidateLogin(passkeyUser{handle: handle, creds: []webauthn.Credential{cred}}, webauthn.SessionData{
		Challenge: base64.RawURLEncoding.EncodeToString([]byte(rec.Challenge)), UserID: handle,
		AllowedCredentialIDs: [][]byte{cred.ID}, UserVerification: protocol.VerificationPreferred}, parsed)
	if err != nil {
		return "", 0, passkeyFailure("passkey assertion failed: " + webAuthnDetail(err))
	}
	if got.Authenticator.CloneWarning {
		return "", 0, passkeyFailure("passkey signature counter did not increase: the authenticator may be cloned")
	}
	return rec.ClientPublicKey, got.Authenticator.SignCount, nil
}
