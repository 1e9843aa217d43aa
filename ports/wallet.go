package ports

import (
	"context"
	"errors"
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
// must be a stamp over exactly payloadToSign, made with the session key of
// a verified credential on the internal account internalAccountID of the
// platform platformID. The sandbox adapter accepts a fixed literal; the
// wallet-auth issue brings real stamp verification behind this port.
type WalletSignatureVerifier interface {
	Verify(ctx context.Context, platformID, internalAccountID, payloadToSign, signature string) error
}
