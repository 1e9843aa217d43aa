package ports

import (
	"context"
	"errors"
	"time"
)

// Wallet signature failures. A verifier returns one of them (wrapped or
// not) when it refuses a signature; any other error means it could not
// decide (a store or network failure) and the request fails as a 5xx.
var (
	// ErrWalletSignatureMalformed: the value cannot be parsed as a
	// signature at all (bad encoding, structure or fields).
	ErrWalletSignatureMalformed = errors.New("wallet signature malformed")
	// ErrWalletSignatureInvalid: a well-formed signature that does not
	// verify over the payload with a credential of the wallet.
	ErrWalletSignatureInvalid = errors.New("wallet signature invalid")
)

// WalletSignatureVerifier checks that the holder of an embedded wallet
// authorised an operation: signature (the Service-Wallet-Signature header)
// must be a stamp over exactly payloadToSign, made with the key of one of
// sessions (the wallet's active sessions, as Parties reads them).
type WalletSignatureVerifier interface {
	VerifyStamp(sessions []WalletSession, payloadToSign, signature string) error
}

// WalletSession is a session of an embedded wallet's credential: the
// client holds its private key and signs stamps with it; the service
// keeps only the public key.
type WalletSession struct {
	ID           string // "Session:<uuid>"
	PlatformID   string
	AccountID    string // the embedded wallet, InternalAccount:<uuid>
	CredentialID string // the AuthMethod that issued it
	// PublicKey is the session key, compressed SEC1, lower-case hex (as
	// stamps name it).
	PublicKey string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
}

// Active reports whether s can sign at now.
func (s WalletSession) Active(now time.Time) bool {
	return s.RevokedAt == nil && now.Before(s.ExpiresAt)
}

type WalletSessionRepo interface {
	Create(ctx context.Context, s WalletSession) error
	// Get returns the platform's session or ErrNotFound.
	Get(ctx context.Context, platformID, id string) (WalletSession, error)
	// Active returns the account's sessions active at now, oldest first.
	Active(ctx context.Context, platformID, accountID string, now time.Time) ([]WalletSession, error)
	// Revoke ends the platform's session id at at (a revoked one stays
	// as it was); ErrNotFound when it does not exist.
	Revoke(ctx context.Context, platformID, id string, at time.Time) error
	// RevokeCredential ends every session the credential issued.
	RevokeCredential(ctx context.Context, platformID, credentialID string, at time.Time) error
}

// WalletSecret is an embedded wallet's secret (its mnemonic), sealed under
// the deployment's master key: the store never holds it in the clear.
type WalletSecret struct {
	PlatformID string
	AccountID  string
	Sealed     []byte
	CreatedAt  time.Time
}

type WalletSecretRepo interface {
	// Create stores a wallet's secret; a second one for the same wallet is
	// ErrConflict.
	Create(ctx context.Context, s WalletSecret) error
	// Get returns the platform's wallet secret or ErrNotFound.
	Get(ctx context.Context, platformID, accountID string) (WalletSecret, error)
}
