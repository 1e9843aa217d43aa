// Package sandbox is the sandbox wallet-signature verifier: it accepts the
// literal ValidSignature for every embedded wallet and refuses anything
// else, so sandbox integrations can exercise the signed execute flow before
// real stamps exist.
package sandbox

import (
	"context"
	"strings"

	"github.com/corridorpay/corridor/ports"
)

// ValidSignature is the one Service-Wallet-Signature value the sandbox
// accepts.
const ValidSignature = "sandbox-valid-signature"

// Verifier implements ports.WalletSignatureVerifier for the sandbox.
type Verifier struct{}

var _ ports.WalletSignatureVerifier = Verifier{}

// Verify accepts ValidSignature. A value with whitespace or control
// characters cannot be a stamp (malformed); any other value is invalid.
func (Verifier) Verify(_ context.Context, _, _, _, signature string) error {
	if signature == ValidSignature {
		return nil
	}
	if strings.TrimSpace(signature) != signature || strings.IndexFunc(signature, func(r rune) bool { return r < 0x21 || r == 0x7f }) >= 0 {
		return ports.ErrWalletSignatureMalformed
	}
	return ports.ErrWalletSignatureInvalid
}
