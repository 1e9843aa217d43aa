package invitations

import "github.com/corridorpay/corridor/core/codes"

// Invitation codes are CodeLength symbols of core/codes: 59.4 bits, so a
// guessed code hits one of a billion live invitations with probability
// about 2^-29.
const CodeLength = 12

// newCode returns a fresh random code.
func newCode() (string, error) { return codes.New(CodeLength) }

// NormalizeCode is how a typed code is looked up (codes.Normalize): a
// code of another length or with a symbol outside the alphabet names no
// invitation and is reported as not found.
func NormalizeCode(s string) (string, bool) { return codes.Normalize(s, CodeLength) }
