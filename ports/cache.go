package ports

import (
	"context"
	"errors"
	"time"
)

// IdempotencyRecord is what an Idempotency-Key remembers: who claimed it,
// the hash of the request, and, once complete, the response to replay byte
// for byte.
type IdempotencyRecord struct {
	// Scope is the API credential (token id) the key belongs to.
	Scope       string
	Key         string
	RequestHash string
	Completed   bool
	StatusCode  int
	// Header holds the response headers worth replaying (Content-Type…).
	Header map[string]string
	Body   []byte
	// Owner names the attempt holding an unfinished claim (a random token
	// per request); a takeover replaces it. Renew and Release act only for
	// the owner, so an attempt that stalled past its lease cannot extend or
	// drop the claim of the attempt that took over.
	Owner string
	// LockedUntil bounds an in-progress claim: a claim whose holder died is
	// taken over after it (money safety does not depend on it: entries are
	// keyed by the idempotency key, so a re-run cannot post twice). The
	// holder keeps it short and renews it while it runs, so a claim dies
	// with its process.
	LockedUntil time.Time
	CreatedAt   time.Time
	// ExpiresAt is when the key may be forgotten (at least 24 h after use).
	ExpiresAt time.Time
}

// IdempotencyStore is the authoritative record of keys (the database).
type IdempotencyStore interface {
	// Begin claims rec.Scope/rec.Key at time now. It returns (rec, true) when
	// the caller owns the key: it was new, or an unfinished claim's lease
	// had passed. Otherwise it returns the stored record and false.
	Begin(ctx context.Context, rec IdempotencyRecord, now time.Time) (IdempotencyRecord, bool, error)
	// Complete stores the response of an owned claim.
	Complete(ctx context.Context, rec IdempotencyRecord) error
	// Renew moves the lease of an unfinished claim held by owner to until
	// and reports whether it did: false when the key is completed, gone, or
	// held by another owner (taken over after this owner's lease passed).
	Renew(ctx context.Context, scope, key, owner string, until time.Time) (bool, error)
	// Release drops an unfinished claim held by owner (the request ended
	// without a response worth replaying, e.g. a 5xx), so a retry runs
	// again. A completed key, or one held by another owner, stays.
	Release(ctx context.Context, scope, key, owner string) error
	// Purge forgets keys whose ExpiresAt is before now.
	Purge(ctx context.Context, now time.Time) (int, error)
}

// ResponseCache caches completed idempotency records for fast replays
// (Redis, or its memory twin). A miss falls back to the IdempotencyStore.
type ResponseCache interface {
	Get(ctx context.Context, scope, key string) (IdempotencyRecord, bool, error)
	Put(ctx context.Context, rec IdempotencyRecord, ttl time.Duration) error
}

// SingleUse holds single-use values with a TTL (signed-retry request ids,
// WebAuthn challenges, OTPs). Consume returns the value and deletes it
// atomically: of two concurrent consumers exactly one gets it.
type SingleUse interface {
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Consume(ctx context.Context, key string) ([]byte, bool, error)
}

// Pinger reports whether a backing service is reachable (for /readyz).
type Pinger interface {
	Ping(ctx context.Context) error
}

// The claim of a request's Idempotency-Key and the request's reads need not
// wait for each other: for the operations that allow it, the HTTP layer
// starts the claim and the operation at once, and the operation waits for
// the claim's decision (AwaitClaim) before its first write. A request that
// does not own its key (a replay, a key in use or reused, a failed claim)
// thus writes nothing, and its answer is the claim's, not the operation's.
type claimWaitKey struct{}

// ErrNotClaimed is AwaitClaim's answer to a request that does not own its
// Idempotency-Key: it must write nothing.
var ErrNotClaimed = errors.New("the request does not own its Idempotency-Key")

// WithClaimWait returns ctx carrying wait, which blocks until the request's
// Idempotency-Key claim is decided and returns nil when the request owns
// the key (ErrNotClaimed, or the claim's own error, otherwise).
func WithClaimWait(ctx context.Context, wait func(context.Context) error) context.Context {
	return context.WithValue(ctx, claimWaitKey{}, wait)
}

// AwaitClaim waits for the request's Idempotency-Key claim when one is
// still being made (WithClaimWait); nil when there is none or the request
// owns its key. An operation the HTTP layer runs beside its claim calls it
// before its first write, and returns its error unchanged.
func AwaitClaim(ctx context.Context) error {
	if wait, ok := ctx.Value(claimWaitKey{}).(func(context.Context) error); ok {
		return wait(ctx)
	}
	return nil
}
