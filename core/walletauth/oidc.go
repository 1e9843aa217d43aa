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
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// TokenSignatures checks an OIDC ID token's signature against the keys its
// issuer publishes (a JWKS adapter). It checks only the signature: the
// claims are this package's business.
type TokenSignatures interface {
	VerifySignature(ctx context.Context, issuer string, token []byte) error
}

// OIDC timing rules: iat at most IATMaxAge old, exp in the future, both
// with TokenSkew of clock skew.
const (
	IATMaxAge = 60 * time.Second
	TokenSkew = 5 * time.Second
	// SandboxOIDCLiteral is the old fixed sandbox token, refused now.
	SandboxOIDCLiteral = "sandbox-valid-oidc-token"
	// maxTokenLen bounds what is decoded (real ID tokens are ~1-2 KB).
	maxTokenLen = 16 << 10
)

// Claims are the OIDC claims the rules read.
type Claims struct {
	Issuer   string
	Subject  string
	Audience string // the one audience (a string, or a one-element array)
	IssuedAt time.Time
	Expiry   time.Time
	Nonce    string
	Email    string
}

// errJWT is the pre-check's refusal: 400 naming oidcToken.
func errJWT(reason string) error { return fault.Invalid("oidcToken", reason) }

// ParseJWT is the pre-check every OIDC token passes before any other
// check: three base64url segments (no padding), a JSON header naming a
// signing algorithm other than "none", and a JSON payload whose iss, sub
// and aud are non-empty strings (aud may be a one-element array) and whose
// iat and exp are numbers. Anything else is 400 INVALID_INPUT naming
// oidcToken. The signature is not checked here.
func ParseJWT(token string) (Claims, error) {
	if token == SandboxOIDCLiteral {
		return Claims{}, errJWT("the fixed sandbox token is no longer accepted: send a JWT-shaped token with valid claims")
	}
	if len(token) > maxTokenLen {
		return Claims{}, errJWT(fmt.Sprintf("is longer than %d characters", maxTokenLen))
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[2] == "" {
		return Claims{}, errJWT("is not a JWT: expected three base64url segments separated by dots")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return Claims{}, errJWT("header: " + err.Error())
	}
	if header.Alg == "" || strings.EqualFold(header.Alg, "none") {
		return Claims{}, errJWT("header: alg must name a signing algorithm")
	}
	if _, err := base64.RawURLEncoding.DecodeString(parts[2]); err != nil {
		return Claims{}, errJWT("signature: not base64url")
	}
	var raw map[string]json.RawMessage
	if err := decodeSegment(parts[1], &raw); err != nil {
		return Claims{}, errJWT("payload: " + err.Error())
	}
	return claimsOf(raw)
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return errors.New("not base64url")
	}
	if !utf8.Valid(b) {
		// encoding/json would pass it on with U+FFFD in place of the bytes.
		return errors.New("not valid UTF-8")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil || d.More() {
		return errors.New("not a JSON object")
	}
	return nil
}

// claimsOf reads and type-checks the claims the rules need.
func claimsOf(raw map[string]json.RawMessage) (Claims, error) {
	var c Claims
	for _, f := range []struct {
		name string
		dst  *string
	}{{"iss", &c.Issuer}, {"sub", &c.Subject}} {
		if json.Unmarshal(raw[f.name], f.dst) != nil || *f.dst == "" {
			return c, errJWT("claim " + f.name + " must be a non-empty string")
		}
	}
	var one string
	var many []string
	switch {
	case json.Unmarshal(raw["aud"], &one) == nil && one != "":
		c.Audience = one
	case json.Unmarshal(raw["aud"], &many) == nil && len(many) == 1 && many[0] != "":
		c.Audience = many[0]
	default:
		return c, errJWT("claim aud must be a non-empty string or a one-element array of one")
	}
	var err error
	if c.IssuedAt, err = numericDate(raw, "iat"); err != nil {
		return c, err
	}
	if c.Expiry, err = numericDate(raw, "exp"); err != nil {
		return c, err
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"nonce", &c.Nonce}, {"email", &c.Email}} {
		if v, ok := raw[f.name]; ok && json.Unmarshal(v, f.dst) != nil {
			return c, errJWT("claim " + f.name + " must be a string")
		}
	}
	// The claims are stored (the subject, the e-mail as a credential's
	// nickname) and shown: text, as every other input.
	for _, f := range []struct{ name, v string }{{"iss", c.Issuer}, {"sub", c.Subject}, {"aud", c.Audience},
		{"nonce", c.Nonce}, {"email", c.Email}} {
		if strings.ContainsRune(f.v, 0) {
			return c, errJWT("claim " + f.name + " must not contain NUL characters")
		}
	}
	return c, nil
}

func numericDate(raw map[string]json.RawMessage, name string) (time.Time, error) {
	// A JSON number, not a string: encoding/json would take "1795866084"
	// into a json.Number too.
	var n json.Number
	if v := bytes.TrimSpace(raw[name]); len(v) == 0 || v[0] == '"' || json.Unmarshal(v, &n) != nil {
		return time.Time{}, errJWT("claim " + name + " must be a number")
	}
	f, err := n.Float64()
	if err != nil || f < 0 || f > math.MaxInt32*4 {
		return time.Time{}, errJWT("claim " + name + " is not a plausible NumericDate")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}

// oidcFailure is a 401 naming the failed check.
func oidcFailure(reason string) error {
	return &fault.Error{Kind: fault.KindUnauthorized, Code: "UNAUTHORIZED", Message: "authentication failed: " + reason, Reason: reason}
}

// Nonce is the nonce a verify token must carry: the lower-case hex SHA-256
// of the exact clientPublicKey string sent beside it.
func Nonce(clientPublicKey string) string {
	sum := sha256.Sum256([]byte(clientPublicKey))
	return hex.EncodeToString(sum[:])
}

// checkToken runs the OIDC rules on token: the pre-check (400), an
// accepted issuer (400 on registration, where it is input; 401 on verify),
// the times (iat no more than IATMaxAge old and not in the future, exp not
// past, each with TokenSkew) measured from issuedFor, and the signature
// against the issuer's keys, which the sandbox does not require (its
// tokens carry dummy signatures).
func (s *Service) checkToken(ctx context.Context, token string, issuedFor time.Time) (Claims, error) {
	c, err := ParseJWT(token)
	if err != nil {
		return c, err
	}
	if !slices.Contains(s.opts.OIDCIssuers, c.Issuer) {
		return c, fault.Invalid("oidcToken", "issuer "+c.Issuer+" is not supported here")
	}
	now := s.now()
	switch {
	case c.IssuedAt.After(now.Add(TokenSkew)):
		return c, oidcFailure("OIDC token iat is in the future")
	case issuedFor.Sub(c.IssuedAt) > IATMaxAge+TokenSkew:
		return c, oidcFailure("OIDC token is stale: iat is more than 60 seconds old")
	case !c.Expiry.After(now.Add(-TokenSkew)):
		return c, oidcFailure("OIDC token has expired")
	}
	if s.opts.Sandbox {
		return c, nil
	}
	if s.tokens == nil {
		return c, fmt.Errorf("oidc: no key sets configured: %w", ports.ErrUnavailable)
	}
	if err := s.tokens.VerifySignature(ctx, c.Issuer, []byte(token)); err != nil {
		if errors.Is(err, ports.ErrUnavailable) {
			return c, fmt.Errorf("oidc: keys of %s: %w", c.Issuer, err)
		}
		return c, oidcFailure("OIDC token signature does not verify against the issuer's keys")
	}
	return c, nil
}

// verifyOAuth checks a verify call's token against credential m: the
// rules of checkToken, the identity (iss, sub, aud) of m, and the nonce
// bound to clientPublicKey.
func (s *Service) verifyOAuth(ctx context.Context, m ports.AuthMethod, token, clientPublicKey string) error {
	c, err := s.checkToken(ctx, token, s.now())
	var bad *fault.Error
	if errors.As(err, &bad) && bad.Kind == fault.KindInvalid && c.Issuer != "" && c.Issuer != m.Issuer {
		return oidcFailure("OIDC token issuer does not match the credential")
	}
	if err != nil {
		return err
	}
	switch {
	case c.Issuer != m.Issuer:
		return oidcFailure("OIDC token issuer does not match the credential")
	case c.Subject != m.Subject:
		return oidcFailure("OIDC token sub does not match the credential")
	case c.Audience != m.Audience:
		return oidcFailure("OIDC token aud does not match the credential")
	case c.Nonce != Nonce(clientPublicKey):
		return oidcFailure("OIDC token nonce is not the SHA-256 of clientPublicKey")
	}
	return nil
}
