package httpapi

import (
	"net/http"
	"strings"

	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/fault"
)

// agentPrefix is where an agent's access token reaches, and nothing else
// does: the agent operations act for the agent's customer only.
const agentPrefix = BasePath + "/agents/me"

// agentPath reports whether path is an agent operation's.
func agentPath(path string) bool {
	return path == agentPrefix || strings.HasPrefix(path, agentPrefix+"/")
}

// isBearer reports whether an Authorization value is a Bearer credential.
func isBearer(h string) bool {
	scheme, _, _ := strings.Cut(h, " ")
	return strings.EqualFold(scheme, "Bearer")
}

// authenticateAgent admits a request on /agents/me/… made with a live
// agent's access token (Bearer) and puts the agent's Principal in the
// request context. A platform credential (Basic) there is 401, as is an
// unknown or deleted agent's token. Failed tokens count against the
// authentication throttle per client address (the per-token limit, under
// a key of the address), so guessing tokens is as slow as guessing
// secrets. Tokens are looked up on every request (no cache): deleting an
// agent stops its next request on every instance.
func (s *server) authenticateAgent(w http.ResponseWriter, r *http.Request, next http.Handler) {
	h := r.Header.Get("Authorization")
	if !isBearer(h) {
		writeError(w, r, toError(fault.Unauthorized(
			"agent operations take the agent's access token (Authorization: Bearer <accessToken>), not a platform credential")))
		return
	}
	if s.d.Agents == nil {
		writeError(w, r, statusError(http.StatusNotFound, "no such route: "+r.URL.Path))
		return
	}
	_, token, _ := strings.Cut(h, " ")
	throttleID := "agent@" + clientAddress(r)
	if e := s.throttled(r.Context(), throttleID, r); e != nil {
		writeError(w, r, e)
		return
	}
	a, err := s.d.Agents.Authenticate(r.Context(), strings.TrimSpace(token))
	if err != nil {
		if f, ok := fault.As(err); ok && f.Kind == fault.KindUnauthorized {
			if e := s.countFailure(r.Context(), throttleID, r); e != nil {
				writeError(w, r, e)
				return
			}
		}
		writeError(w, r, toError(err))
		return
	}
	if ri := infoFrom(r.Context()); ri != nil {
		ri.platformID = a.PlatformID
	}
	if r.Method != http.MethodGet {
		// A paused agent reads, and initiates nothing.
		if err := agents.Pausable(a); err != nil {
			writeError(w, r, toError(err))
			return
		}
	}
	p := Principal{PlatformID: a.PlatformID, AgentID: a.ID, CustomerID: a.CustomerID, agent: a}
	next.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), p)))
}

// redeemPath reports whether path is a device code's redemption, the one
// agent operation without a credential (the code is the proof).
func redeemPath(path string) bool {
	rest, ok := strings.CutPrefix(path, BasePath+"/agents/device-codes/")
	if !ok {
		return false
	}
	code, ok := strings.CutSuffix(rest, "/redeem")
	return ok && code != "" && !strings.Contains(code, "/")
}

// redeem serves a device code's redemption under the throttle: a code
// that redeems nothing (unknown, spent or expired: 404 or 400) counts as a
// failed attempt of the client's address, so codes cannot be guessed
// faster than credentials (CORRIDOR_AUTH_FAILURES_PER_TOKEN a window per
// address for redemptions, and the address's overall limit).
func (s *server) redeem(w http.ResponseWriter, r *http.Request) {
	throttleID := "device-code@" + clientAddress(r)
	if e := s.throttled(r.Context(), throttleID, r); e != nil {
		writeError(w, r, e)
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	s.limitBody(sw, r)
	if sw.status == http.StatusNotFound || sw.status == http.StatusBadRequest {
		_ = s.countFailure(r.Context(), throttleID, r)
	}
}
