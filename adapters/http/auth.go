package httpapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/corridorpay/corridor/core/fault"
)

// Principal is who an authenticated request acts for: the platform and the
// API credential (token id) it used.
type Principal struct {
	PlatformID string
	TokenID    string
}

type principalKey struct{}

// principal returns the request's authenticated principal (the zero value
// on the unauthenticated health, docs and OpenAPI routes).
func principal(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}

func withPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// parseBasic reads "Basic base64(tokenId:secret)" from an Authorization
// header value.
func parseBasic(h string) (tokenID, secret string, err error) {
	if h == "" {
		return "", "", fault.Unauthorized("missing Authorization header")
	}
	scheme, cred, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Basic") {
		return "", "", fault.Unauthorized("Authorization header is not Basic")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return "", "", fault.Unauthorized("malformed Basic credentials")
	}
	tokenID, secret, ok := strings.Cut(string(raw), ":")
	if !ok || tokenID == "" {
		return "", "", fault.Unauthorized("malformed Basic credentials")
	}
	return tokenID, secret, nil
}

// authenticate requires a valid platform API credential (HTTP Basic) and
// puts its Principal in the request context. Failures are 401 with the
// failed check as `reason` and a WWW-Authenticate challenge.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokenID, secret, err := parseBasic(r.Header.Get("Authorization"))
		if err == nil {
			var cred Principal
			c, aerr := s.d.Platforms.Authenticate(r.Context(), tokenID, secret)
			if aerr == nil {
				cred = Principal{PlatformID: c.PlatformID, TokenID: c.TokenID}
				if ri := infoFrom(r.Context()); ri != nil {
					ri.platformID = cred.PlatformID
				}
				next.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), cred)))
				return
			}
			err = aerr
		}
		writeError(w, r, toError(err))
	})
}
