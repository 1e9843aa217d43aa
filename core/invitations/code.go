package invitations

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// Invitation codes are CodeLength symbols drawn uniformly (crypto/rand,
// rejection sampling) from codeAlphabet: digits and upper-case letters
// without 0, 1, I, L and O, which are read or typed for one another. 31
// symbols × 12 = 59.4 bits, so a guessed code hits one of a billion live
// invitations with probability about 2^-29.
const (
	codeAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
	CodeLength   = 12
)

// newCode returns a fresh random code.
func newCode() (string, error) {
	const n = len(codeAlphabet)
	// Bytes at or above limit would favour the first symbols.
	const limit = 256 - 256%n
	out := make([]byte, 0, CodeLength)
	buf := make([]byte, 2*CodeLength)
	for len(out) < CodeLength {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("invitations: random code: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < CodeLength {
				out = append(out, codeAlphabet[int(b)%n])
			}
		}
	}
	return string(out), nil
}

// NormalizeCode is how a typed code is looked up: surrounding space
// dropped and letters upper-cased, so "abcd…" finds "ABCD…". A code with
// a symbol outside the alphabet (or of another length) names no
// invitation and is reported as not found.
func NormalizeCode(s string) (string, bool) {
	c := strings.ToUpper(strings.TrimSpace(s))
	if len(c) != CodeLength {
		return "", false
	}
	for i := range len(c) {
		if strings.IndexByte(codeAlphabet, c[i]) < 0 {
			return "", false
		}
	}
	return c, true
}
