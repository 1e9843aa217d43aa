package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// flakyRenew fails its first renewals, then reports the claim lost.
type flakyRenew struct {
	ports.IdempotencyStore
	failures int
	calls    atomic.Int64
}

func (f *flakyRenew) Renew(context.Context, string, string, string, time.Time) (bool, error) {
	if int(f.calls.Add(1)) <= f.failures {
		return false, errors.New("database unreachable")
	}
	return false, nil
}

// TestKeepClaimLogsFailuresAndStopsWhenLost: a failed renewal is logged
// and retried at the next tick; a claim found lost ends the renewer.
func TestKeepClaimLogsFailuresAndStopsWhenLost(t *testing.T) {
	logs := &testkit.SyncBuffer{}
	store := &flakyRenew{failures: 2}
	s := &server{
		d: Deps{Idempotency: store, Clock: testkit.NewFakeClock(time.Date(2025, 10, 13, 0, 0, 0, 0, time.UTC)),
			IdempotencyLease: time.Second, IdempotencyRenewEvery: 5 * time.Millisecond},
		log: slog.New(slog.NewTextHandler(logs, nil)),
	}
	stop := s.keepClaim(context.Background(), "tok", "k", "me")
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "claim lost") }, 5*time.Second, 5*time.Millisecond)
	stop()
	stop() // twice is harmless
	assert.Equal(t, 2, strings.Count(logs.String(), "idempotency renew failed"))
	assert.EqualValues(t, 3, store.calls.Load(), "no renewal after the claim was lost")
}

func TestRenewEveryStaysBelowLease(t *testing.T) {
	var d Deps
	leaseDefaults(&d)
	assert.Equal(t, DefaultIdempotencyLease, d.IdempotencyLease)
	assert.Equal(t, DefaultIdempotencyRenewEvery, d.IdempotencyRenewEvery)
	d = Deps{IdempotencyLease: 2 * time.Second, IdempotencyRenewEvery: 5 * time.Second}
	leaseDefaults(&d)
	assert.Equal(t, time.Second, d.IdempotencyRenewEvery, "a renewal interval longer than the lease is capped")
}
