package redis

import (
	"context"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/corridorpay/corridor/ports"
)

// FailureCounter returns the client as a ports.FailureCounter.
func (c *Client) FailureCounter() *FailureCounter { return &FailureCounter{c: c} }

// FailureCounter keeps each key's count under <prefix>fail:<key>, an
// integer whose TTL is the rest of its window (INCR, then PEXPIRE NX: only
// the first failure of a window sets it). Every call is one round trip.
type FailureCounter struct{ c *Client }

var _ ports.FailureCounter = (*FailureCounter)(nil)

func (f *FailureCounter) key(k string) string { return f.c.prefix + "fail:" + k }

// Failures returns each key's count in its current window.
func (f *FailureCounter) Failures(ctx context.Context, keys ...string) ([]ports.FailureCount, error) {
	pipe := f.c.rdb.Pipeline()
	gets := make([]*goredis.StringCmd, len(keys))
	ttls := make([]*goredis.DurationCmd, len(keys))
	for i, k := range keys {
		gets[i] = pipe.Get(ctx, f.key(k))
		ttls[i] = pipe.PTTL(ctx, f.key(k))
	}
	if _, err := pipe.Exec(ctx); err != nil && err != goredis.Nil {
		return nil, failed("read failure counts", err)
	}
	return counts(gets, ttls), nil
}

// AddFailure counts one failure for each key.
func (f *FailureCounter) AddFailure(ctx context.Context, window time.Duration, keys ...string) ([]ports.FailureCount, error) {
	if window <= 0 {
		return nil, errTTL
	}
	pipe := f.c.rdb.TxPipeline()
	incrs := make([]*goredis.IntCmd, len(keys))
	ttls := make([]*goredis.DurationCmd, len(keys))
	for i, k := range keys {
		incrs[i] = pipe.Incr(ctx, f.key(k))
		pipe.Do(ctx, "PEXPIRE", f.key(k), window.Milliseconds(), "NX")
		ttls[i] = pipe.PTTL(ctx, f.key(k))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, failed("count failures", err)
	}
	out := make([]ports.FailureCount, len(keys))
	for i := range keys {
		out[i] = ports.FailureCount{N: incrs[i].Val(), ResetIn: max(ttls[i].Val(), 0)}
	}
	return out, nil
}

// counts reads GET and PTTL answers: a missing key (or one without a TTL,
// which AddFailure never leaves) counts zero.
func counts(gets []*goredis.StringCmd, ttls []*goredis.DurationCmd) []ports.FailureCount {
	out := make([]ports.FailureCount, len(gets))
	for i := range gets {
		n, err := gets[i].Int64()
		ttl := ttls[i].Val()
		if err != nil || ttl <= 0 {
			continue
		}
		out[i] = ports.FailureCount{N: n, ResetIn: ttl}
	}
	return out
}
