package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Observer is what the HTTP adapter reports for metrics: every answered
// request by operation ("METHOD /pattern", or "unmatched") and status, and
// Idempotency-Key outcomes (replayed, in_use, reused).
type Observer interface {
	Request(operation string, status int, took time.Duration)
	Idempotency(outcome string)
}

func (s *server) observeIdempotency(outcome string) {
	if s.d.Observer != nil {
		s.d.Observer.Idempotency(outcome)
	}
}

// operationOf names a request for metrics with bounded cardinality: the
// route pattern that served it (ids stay out), or the fixed path of the
// health routes, or "unmatched".
func operationOf(r *http.Request, ri *requestInfo) string {
	switch {
	case ri.operation != "":
		return ri.operation
	case r.URL.Path == healthzPath || r.URL.Path == readyzPath:
		return r.Method + " " + r.URL.Path
	}
	return "unmatched"
}

// traceparent is a W3C trace context header: version 00 (or a later one,
// read as 00), a 32-hex trace id and a 16-hex parent span id, neither all
// zeros, and 2-hex flags. A malformed one is ignored.
func traceparent(h string) (traceID, spanID string, ok bool) {
	h = strings.TrimSpace(h)
	if len(h) < 55 || (len(h) > 55 && h[55] != '-') {
		return "", "", false
	}
	version, trace, span, flags := h[0:2], h[3:35], h[36:52], h[53:55]
	if h[2] != '-' || h[35] != '-' || h[52] != '-' || version == "ff" || (version == "00" && len(h) != 55) {
		return "", "", false
	}
	if !lowerHex(version) || !lowerHex(trace) || !lowerHex(span) || !lowerHex(flags) ||
		trace == strings.Repeat("0", 32) || span == strings.Repeat("0", 16) {
		return "", "", false
	}
	return trace, span, true
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ContextLogHandler wraps a slog handler so every record logged with a
// request's context carries its request_id, and its trace_id and span_id
// when the request came with a traceparent. The service's root logger is
// wrapped with it, so core's logs of a request carry them too.
func ContextLogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(contextHandler); ok {
		return h
	}
	return contextHandler{h}
}

type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, rec slog.Record) error {
	if ri := infoFrom(ctx); ri != nil {
		rec.AddAttrs(slog.String("request_id", ri.id))
		if ri.traceID != "" {
			rec.AddAttrs(slog.String("trace_id", ri.traceID), slog.String("span_id", ri.spanID))
		}
	}
	return h.Handler.Handle(ctx, rec)
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}
