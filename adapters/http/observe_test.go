package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logLines returns the JSON log lines that carry request id id.
func logLines(t *testing.T, h *apiHarness, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["request_id"] == id {
			out = append(out, m)
		}
	}
	return out
}

func TestRequestIDAndTraceContextInLogs(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	const trace, span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"

	r := h.get(tn, "/no/such/route", "Traceparent", "00-"+trace+"-"+span+"-01", "X-Request-Id", "req-abc.1")
	require.Equal(t, http.StatusNotFound, r.status)
	assert.Equal(t, "req-abc.1", r.header.Get("X-Request-Id"), "a sane request id is echoed")
	lines := logLines(t, h, "req-abc.1")
	require.NotEmpty(t, lines)
	for _, l := range lines {
		assert.Equal(t, trace, l["trace_id"])
		assert.Equal(t, span, l["span_id"])
	}

	// A malformed traceparent is ignored; an unfit request id is replaced.
	for _, bad := range []string{
		"00-" + strings.ToUpper(trace) + "-" + span + "-01",
		"00-" + strings.Repeat("0", 32) + "-" + span + "-01",
		"ff-" + trace + "-" + span + "-01",
		"00-" + trace + "-" + span,
		"00-" + trace + "-" + span + "-01-extra",
	} {
		r = h.get(tn, "/platform/internal-accounts", "Traceparent", bad, "X-Request-Id", "has space")
		require.Equal(t, http.StatusOK, r.status)
		id := r.header.Get("X-Request-Id")
		require.NotEqual(t, "has space", id)
		require.Regexp(t, `^[0-9a-f]{24}$`, id)
		lines = logLines(t, h, id)
		require.NotEmpty(t, lines, bad)
		assert.NotContains(t, lines[0], "trace_id", bad)
	}
	// A later version may carry more fields.
	r = h.get(tn, "/platform/internal-accounts", "Traceparent", "01-"+trace+"-"+span+"-01-more")
	lines = logLines(t, h, r.header.Get("X-Request-Id"))
	require.NotEmpty(t, lines)
	assert.Equal(t, trace, lines[0]["trace_id"])
}
