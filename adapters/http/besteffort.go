package httpapi

import (
	"context"
	"sync/atomic"
	"time"
)

// Calls a request can do without: the response cache (a miss falls back to
// the IdempotencyStore) and the authentication throttle's counts (a
// request whose counts cannot be read or written goes unchecked). Both are
// Redis when it is configured. A Redis that stalls rather than refuses
// (paused, overloaded, a network path dropping packets) answers nothing
// until the client's read timeout, seconds; without a bound every keyed
// request waited that long once for its cache read, again for its cache
// write, and a credential not verified in the last seconds once more for
// its throttle read, while PostgreSQL answered at once. So each such call
// gets bestEffortTimeout, and one that fails (a timeout, a refused
// connection) pauses them all for bestEffortPause: the requests meanwhile
// make none and go straight on, and the first after the pause tries again.
const (
	// bestEffortTimeout bounds one call: a Redis round trip takes well
	// under a millisecond on a local network.
	bestEffortTimeout = 100 * time.Millisecond
	// bestEffortPause is how long calls are skipped after one failed.
	bestEffortPause = 5 * time.Second
)

// bestEffort is the state of those calls: the zero value runs them.
type bestEffort struct {
	// pausedUntil is when calls resume, in Unix nanoseconds (0: never
	// paused, long past).
	pausedUntil atomic.Int64
}

// optionalCall runs f, a call the request can do without (see above), with
// a context bounded by bestEffortTimeout and reports whether it ran and
// succeeded. It skips f while calls are paused. A failure pauses them,
// unless it was ctx that ended (the client went away: nothing wrong with
// the helper).
func (s *server) optionalCall(ctx context.Context, what string, f func(context.Context) error) bool {
	if s.d.Clock.Now().UnixNano() < s.optional.pausedUntil.Load() {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, bestEffortTimeout)
	err := f(cctx)
	cancel()
	if err == nil {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	s.optional.pausedUntil.Store(s.d.Clock.Now().Add(bestEffortPause).UnixNano())
	s.log.WarnContext(ctx, what+" failed: the response cache and the authentication throttle are skipped for a while",
		"error", err, "skipped_for", bestEffortPause.String())
	return false
}
