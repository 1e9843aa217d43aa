package agents

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/corridorpay/corridor/core/codes"
)

// Device codes are DeviceCodeSymbols symbols of core/codes (59.4 bits),
// shown in groups of four ("7KQ4-M2PX-9HTR") and accepted in any case,
// with or without the dashes and spaces. Only their SHA-256 is stored.
// They are single use and live DeviceCodeLifetime; redeeming is throttled
// per client address (adapters/http), so guessing one of a million live
// codes at the throttle's rate takes longer than the universe is old.
const (
	DeviceCodeSymbols  = 12
	DeviceCodeLifetime = 24 * time.Hour
	deviceCodeGroup    = 4
)

// Access tokens are AccessTokenPrefix and 256 random bits in hex; only
// their SHA-256 is stored (a fast hash suits a 256-bit random secret).
const (
	AccessTokenPrefix = "agt_"
	accessTokenBytes  = 32
)

// newDeviceCode returns a fresh code in its shown form.
func newDeviceCode() (string, error) {
	c, err := codes.New(DeviceCodeSymbols)
	if err != nil {
		return "", err
	}
	return groupCode(c), nil
}

// groupCode shows a code's symbols in dash-separated groups of four.
func groupCode(c string) string {
	var parts []string
	for i := 0; i < len(c); i += deviceCodeGroup {
		parts = append(parts, c[i:min(i+deviceCodeGroup, len(c))])
	}
	return strings.Join(parts, "-")
}

// NormalizeDeviceCode is a typed code in its shown form, or false when it
// cannot be one (then it names no code: 404).
func NormalizeDeviceCode(s string) (string, bool) {
	c, ok := codes.Normalize(strings.NewReplacer("-", "", " ", "").Replace(s), DeviceCodeSymbols)
	if !ok {
		return "", false
	}
	return groupCode(c), true
}

// codeHash is what a device code is stored and looked up as.
func codeHash(shown string) []byte {
	h := sha256.Sum256([]byte(shown))
	return h[:]
}

// newAccessToken returns a fresh token and its hash.
func newAccessToken() (token string, hash []byte, err error) {
	raw := make([]byte, accessTokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", nil, fmt.Errorf("agents: random token: %w", err)
	}
	token = AccessTokenPrefix + hex.EncodeToString(raw)
	return token, TokenHash(token), nil
}

// TokenHash is what an access token is stored and looked up as.
func TokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
