// Package codes makes short random codes people read and type: UMA
// invitation codes and agent device codes. Symbols are digits and
// upper-case letters without 0, 1, I, L and O, which are read or typed for
// one another, drawn uniformly from crypto/rand (rejection sampling):
// log2(31) ≈ 4.95 bits each, so 12 symbols carry 59.4 bits.
package codes

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// Alphabet is the symbols a code is made of.
const Alphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

// New returns n fresh random symbols.
func New(n int) (string, error) {
	const size = len(Alphabet)
	// Bytes at or above limit would favour the first symbols.
	const limit = 256 - 256%size
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("codes: random code: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, Alphabet[int(b)%size])
			}
		}
	}
	return string(out), nil
}

// Normalize is how a typed code of n symbols is looked up: surrounding
// space dropped and letters upper-cased, so "abcd…" finds "ABCD…". A code
// with a symbol outside the alphabet (or of another length) names nothing
// (false).
func Normalize(s string, n int) (string, bool) {
	c := strings.ToUpper(strings.TrimSpace(s))
	if len(c) != n {
		return "", false
	}
	for i := range len(c) {
		if strings.IndexByte(Alphabet, c[i]) < 0 {
			return "", false
		}
	}
	return c, true
}
