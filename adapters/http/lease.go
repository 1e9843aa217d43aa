package httpapi

import (
	"context"
	"crypto/rand"
	"sync"
	"time"
)

// Idempotency-Key claims die with their process: a claim's lease is short
// and renewed while the request runs, so after a crash (kill -9, a lost
// node) a retry takes the key over within about one lease instead of
// waiting out a long one. Money still moves once: the core derives the ids
// of what a keyed request writes from the key.
const (
	// DefaultIdempotencyLease is an in-progress claim's lease
	// (Deps.IdempotencyLease when 0).
	DefaultIdempotencyLease = 10 * time.Second
	// DefaultIdempotencyRenewEvery is how often a running request renews
	// its claim (Deps.IdempotencyRenewEvery when 0).
	DefaultIdempotencyRenewEvery = 3 * time.Second
)

// leaseDefaults fills Deps' lease settings: the defaults where unset, and
// a renewal interval below half the lease.
func leaseDefaults(d *Deps) {
	if d.IdempotencyLease <= 0 {
		d.IdempotencyLease = DefaultIdempotencyLease
	}
	if d.IdempotencyRenewEvery <= 0 {
		d.IdempotencyRenewEvery = DefaultIdempotencyRenewEvery
	}
	d.IdempotencyRenewEvery = min(d.IdempotencyRenewEvery, d.IdempotencyLease/2)
}

// newAttempt names one request's claim (ports.IdempotencyRecord.Owner).
func newAttempt() string { return rand.Text() }

// keepClaim renews owner's claim on scope/key every renewEvery until the
// returned stop is called (stop waits for the renewer to end; calling it
// again is a no-op). A request that ends before the first tick costs no
// round trip. A failed renewal is logged and tried again at the next tick;
// a claim found lost (taken over after a stall, or completed) is not
// renewed again. Renewal lasts as long as the handler runs, even when the
// client has gone (the request's context is then cancelled).
func (s *server) keepClaim(ctx context.Context, scope, key, owner string) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(s.d.IdempotencyRenewEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			until := s.d.Clock.Now().UTC().Add(s.d.IdempotencyLease)
			ok, err := s.d.Idempotency.Renew(ctx, scope, key, owner, until)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				s.log.WarnContext(ctx, "idempotency renew failed", "key", key, "error", err)
			case !ok:
				s.log.WarnContext(ctx, "idempotency claim lost while the request ran", "key", key)
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}
