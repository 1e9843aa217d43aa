// Package operator is the deployment operator's identity: the one
// principal that reads every platform's ledger (system accounts included)
// and verifies the journal. It is a credential of its own, never a
// platform's elevated: a request carries either a platform credential or
// the operator token, not both.
package operator

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/corridorpay/corridor/core/fault"
)

// MinTokenLen is the shortest operator token accepted in configuration.
const MinTokenLen = 16

// Authenticator checks the operator token. Only its SHA-256 is held.
type Authenticator struct {
	hash *[sha256.Size]byte // nil: no operator configured
}

// New returns the authenticator of token (hashed at once; the plaintext is
// not kept) or, when token is empty, of tokenSHA256 (hex), so a deployment
// can configure the digest alone. Both empty: no request is the operator.
func New(token, tokenSHA256 string) (*Authenticator, error) {
	switch {
	case token != "" && tokenSHA256 != "":
		return nil, errors.New("give the operator token or its SHA-256, not both")
	case token != "":
		if len(token) < MinTokenLen {
			return nil, fmt.Errorf("the operator token must be at least %d characters", MinTokenLen)
		}
		h := sha256.Sum256([]byte(token))
		return &Authenticator{hash: &h}, nil
	case tokenSHA256 != "":
		b, err := hex.DecodeString(tokenSHA256)
		if err != nil || len(b) != sha256.Size {
			return nil, errors.New("the operator token's SHA-256 must be 64 hex digits")
		}
		var h [sha256.Size]byte
		copy(h[:], b)
		return &Authenticator{hash: &h}, nil
	}
	return &Authenticator{}, nil
}

// Configured reports whether an operator token is set.
func (a *Authenticator) Configured() bool { return a != nil && a.hash != nil }

// Authenticate checks token as SHA-256 digests in constant time. A wrong
// token, or any token when none is configured, is 401.
func (a *Authenticator) Authenticate(token string) error {
	got := sha256.Sum256([]byte(token))
	if !a.Configured() || subtle.ConstantTimeCompare(got[:], a.hash[:]) != 1 {
		return fault.Unauthorized("the operator token is not valid")
	}
	return nil
}
