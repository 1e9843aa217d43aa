package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// readyTimeout bounds one readiness check.
const readyTimeout = 2 * time.Second

// healthz answers 200 while the process is up.
func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
}

// The probes' paths, outside the versioned base path.
const (
	healthzPath = "/healthz"
	readyzPath  = "/readyz"
)

// readyz answers 200 when the backing services (database, cache) are
// reachable, 503 otherwise; the cause is logged, not sent.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r) {
		return
	}
	if s.d.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := s.d.Ready(ctx); err != nil {
			// A dependency down, named in the logged cause, polled every
			// few seconds while it lasts: not a failure of the service.
			if ri := infoFrom(r.Context()); ri != nil {
				ri.dependencyDown = true
			}
			e := statusError(http.StatusServiceUnavailable, "the service is not ready")
			e.cause = fmt.Errorf("readiness check: %w", err)
			writeError(w, r, e)
			return
		}
	}
	writeJSON(w, http.StatusOK, []byte(`{"status":"ready"}`))
}

func allowGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	writeError(w, r, statusError(http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed here"))
	return false
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
