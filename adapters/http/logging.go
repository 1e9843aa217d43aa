package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"
)

// requestInfo is what the request log line gathers while a request runs.
// One request is served by one goroutine, so it needs no lock.
type requestInfo struct {
	id         string
	platformID string
	operator   bool // the operator's credential authenticated the request
	// operation is the route pattern that served the request (metrics).
	operation string
	// traceID and spanID come from a valid W3C traceparent header.
	traceID, spanID string
	// cause is the internal error behind a 5xx, logged and never sent.
	cause error
	// dependencyDown: the 5xx reports a backing service down (the
	// readiness probe doing its work), logged at WARN, not ERROR.
	dependencyDown bool
}

type requestInfoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	ri, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return ri
}

// noteCause records the internal error behind a 5xx for the log line.
func noteCause(ctx context.Context, err error) {
	if ri := infoFrom(ctx); ri != nil && ri.cause == nil {
		ri.cause = err
	}
}

// requestIDHeader carries the request id (echoed when the client sends a
// sane one, generated otherwise).
const requestIDHeader = "X-Request-Id"

func requestID(r *http.Request) string {
	if id := r.Header.Get(requestIDHeader); id != "" && len(id) <= 64 && isToken(id) {
		return id
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func isToken(s string) bool {
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// statusWriter remembers the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests logs one line per request (method, path, status, duration,
// request id, platform) and turns a panic into a 500. It never logs the
// Authorization header, query strings, bodies or the bearer values some
// paths carry (loggedPath).
func (s *server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri := &requestInfo{id: requestID(r)}
		ri.traceID, ri.spanID, _ = traceparent(r.Header.Get("Traceparent"))
		w.Header().Set(requestIDHeader, ri.id)
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, ri))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler { //nolint:errorlint // sentinel compared as net/http does
					panic(v)
				}
				ri.cause = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
				if sw.status == 0 {
					writeError(sw, r, internalError(nil))
				}
			}
			took := time.Since(start)
			s.logLine(r, ri, sw, took)
			if s.d.Observer != nil {
				s.d.Observer.Request(operationOf(r, ri), max(sw.status, http.StatusOK), took)
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

func (s *server) logLine(r *http.Request, ri *requestInfo, sw *statusWriter, d time.Duration) {
	status := sw.status
	if status == 0 {
		status = http.StatusOK
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("path", loggedPath(r.URL.Path)),
		slog.Int("status", status),
		slog.Duration("duration", d),
		slog.Int64("bytes", sw.bytes),
	}
	if ri.platformID != "" {
		attrs = append(attrs, slog.String("platform", ri.platformID))
	}
	if ri.operator {
		attrs = append(attrs, slog.String("principal", "operator"))
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
		if ri.dependencyDown {
			level = slog.LevelWarn
		}
		if ri.cause != nil {
			attrs = append(attrs, slog.String("error", ri.cause.Error()))
		}
	}
	s.log.LogAttrs(r.Context(), level, "request", attrs...)
}

// bearerSegments precede a path segment that is itself a bearer value:
// an agent's device code redeems its access token, an invitation's code
// claims it (and the inviter's platform pays the claimer).
var bearerSegments = []string{"/agents/device-codes/", "/invitations/"}

// loggedPath is the path as the request log shows it: the segment after
// each of bearerSegments replaced by "{redacted}".
func loggedPath(p string) string {
	for _, pre := range bearerSegments {
		i := strings.Index(p, pre)
		if i < 0 {
			continue
		}
		start := i + len(pre)
		end := strings.IndexByte(p[start:], '/')
		if end < 0 {
			end = len(p) - start
		}
		if end > 0 {
			p = p[:start] + "{redacted}" + p[start+end:]
		}
	}
	return p
}
