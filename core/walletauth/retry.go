package walletauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// RetryLifetime is how long a signed-retry challenge waits for its retry.
const RetryLifetime = 5 * time.Minute

// Signed-retry error codes (the reference's 401 codes).
const (
	CodeSignatureMissing   = "WALLET_SIGNATURE_MISSING"
	CodeSignatureMalformed = "WALLET_SIGNATURE_MALFORMED"
	CodeSignatureInvalid   = "WALLET_SIGNATURE_INVALID"
	CodeBodyMismatch       = "WALLET_SIGNATURE_BODY_MISMATCH"
	CodeRequestIDMissing   = "REQUEST_ID_MISSING"
)

// Operation is what a signed retry authorises: an activity type, the
// wallet, the ids it acts on and the exact request body, all bound into
// payloadToSign (so the retry must carry the same body).
type Operation struct {
	Type       string // ACTIVITY_TYPE_…
	AccountID  string
	Parameters map[string]string
	Body       []byte
	// Signer, when set, is the one session that may sign (a session
	// refreshes itself); ExcludeCredential's sessions may not sign (a
	// credential is revoked with a session of another).
	Signer            string
	ExcludeCredential string
}

// RetryChallenge is the first call's 202: what to stamp, and the id to
// echo in Request-Id before ExpiresAt.
type RetryChallenge struct {
	PayloadToSign string
	RequestID     string
	ExpiresAt     time.Time
}

type retryRecord struct {
	Payload     string    `json:"p"`
	Fingerprint string    `json:"f"`
	ExpiresAt   time.Time `json:"e"`
}

// retryKey is where a request id's record is kept: under its platform, so
// another platform's retry naming it finds nothing and cannot consume it.
func retryKey(platformID, requestID string) string {
	return "walletauth:retry:" + platformID + ":" + requestID
}

// allows reports whether sess may sign op (Signer, ExcludeCredential).
func (op Operation) allows(sess ports.WalletSession) bool {
	return (op.Signer == "" || sess.ID == op.Signer) && sess.CredentialID != op.ExcludeCredential
}

// fingerprint binds the operation's type, wallet, ids and body.
func (op Operation) fingerprint() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", op.Type, op.AccountID)
	for _, k := range slices.Sorted(maps.Keys(op.Parameters)) {
		fmt.Fprintf(h, "%s=%s\n", k, op.Parameters[k])
	}
	body := sha256.Sum256(op.Body)
	h.Write(body[:])
	return hex.EncodeToString(h.Sum(nil))
}

// payload is the activity-style JSON the wallet SDKs show: sorted keys,
// timestampMs as a string; its parameters carry the ids, the body's
// digest and the request id.
func (op Operation) payload(platformID, requestID string, now time.Time) (string, error) {
	params := map[string]string{"requestId": requestID}
	for k, v := range op.Parameters {
		params[k] = v
	}
	body := sha256.Sum256(op.Body)
	params["bodyDigest"] = hex.EncodeToString(body[:])
	params["walletId"] = op.AccountID
	b, err := json.Marshal(map[string]any{"organizationId": platformID, "parameters": params,
		"timestampMs": strconv.FormatInt(now.UnixMilli(), 10), "type": op.Type})
	return string(b), err
}

// BeginRetry answers the first call of a signed-retry operation: the
// payload to stamp, bound to op, and its single-use request id.
func (s *Service) BeginRetry(ctx context.Context, platformID string, op Operation) (RetryChallenge, error) {
	now := s.now()
	c := RetryChallenge{RequestID: s.ids.New("Request"), ExpiresAt: now.Add(RetryLifetime)}
	payload, err := op.payload(platformID, c.RequestID, now)
	if err != nil {
		return c, err
	}
	c.PayloadToSign = payload
	rec, _ := json.Marshal(retryRecord{Payload: payload, Fingerprint: op.fingerprint(), ExpiresAt: c.ExpiresAt})
	if err := s.single.Put(ctx, retryKey(platformID, c.RequestID), rec, RetryLifetime); err != nil {
		return c, fmt.Errorf("signed retry: %w", err)
	}
	return c, nil
}

func unauthorized(code, reason string) error {
	return &fault.Error{Kind: fault.KindUnauthorized, Code: code, Message: reason, Reason: reason}
}

// CompleteRetry checks a signed retry: the request id is consumed at once
// (a second use, even racing, is 401), unexpired and issued for this very
// operation (else 401 WALLET_SIGNATURE_BODY_MISMATCH), and the stamp is
// over its payload by an active session of the wallet that op allows (in
// the sandbox, SandboxSignature passes as such a stamp). It returns the
// session that signed (zero for the sandbox literal without one).
func (s *Service) CompleteRetry(ctx context.Context, platformID string, op Operation, requestID, signature string) (ports.WalletSession, error) {
	switch {
	case signature == "" && requestID == "":
		return ports.WalletSession{}, unauthorized(CodeSignatureMissing, "the signed retry needs Service-Wallet-Signature and Request-Id")
	case signature == "":
		return ports.WalletSession{}, unauthorized(CodeSignatureMissing, "Request-Id was sent without Service-Wallet-Signature")
	case requestID == "":
		return ports.WalletSession{}, unauthorized(CodeRequestIDMissing, "Service-Wallet-Signature was sent without Request-Id")
	}
	raw, ok, err := s.single.Consume(ctx, retryKey(platformID, requestID))
	if err != nil {
		return ports.WalletSession{}, fmt.Errorf("signed retry: %w", err)
	}
	var rec retryRecord
	if !ok || json.Unmarshal(raw, &rec) != nil || !s.now().Before(rec.ExpiresAt) {
		return ports.WalletSession{}, unauthorized("UNAUTHORIZED", "the Request-Id is unknown, expired or already used")
	}
	if rec.Fingerprint != op.fingerprint() {
		return ports.WalletSession{}, unauthorized(CodeBodyMismatch, "the retry is not the request the Request-Id was issued for (its body or target differs)")
	}
	sessions, err := s.store.Read().WalletSessions().Active(ctx, platformID, op.AccountID, s.now())
	if err != nil {
		return ports.WalletSession{}, fmt.Errorf("signed retry: %w", err)
	}
	if s.sandboxLiteral(signature) {
		// The spec's legacy literal stands for a valid stamp, here as on a
		// quote's execute; the request id was still consumed and matched.
		for _, sess := range sessions {
			if op.allows(sess) {
				return sess, nil
			}
		}
		return ports.WalletSession{}, nil
	}
	st, err := ParseStamp(signature)
	if err != nil {
		return ports.WalletSession{}, unauthorized(CodeSignatureMalformed, "the Service-Wallet-Signature is not a stamp")
	}
	for _, sess := range sessions {
		if sess.PublicKey == st.PublicKey && op.allows(sess) && st.Verify([]byte(rec.Payload)) == nil {
			return sess, nil
		}
	}
	return ports.WalletSession{}, unauthorized(CodeSignatureInvalid,
		"the Service-Wallet-Signature is not a stamp over payloadToSign by a session allowed to sign it")
}
