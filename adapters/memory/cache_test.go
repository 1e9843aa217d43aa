package memory_test

import (
	"testing"
	"time"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/cachetest"
)

var cacheT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestIdempotencyStoreContract(t *testing.T) {
	cachetest.RunIdempotency(t, func(*testing.T) ports.IdempotencyStore {
		return memory.NewIdempotencyStore()
	})
}

func TestResponseCacheContract(t *testing.T) {
	cachetest.RunResponseCache(t, func(*testing.T) (ports.ResponseCache, cachetest.Advance) {
		clock := testkit.NewFakeClock(cacheT0)
		return memory.NewResponseCache(clock), clock.Advance
	})
}

func TestSingleUseContract(t *testing.T) {
	cachetest.RunSingleUse(t, func(*testing.T) (ports.SingleUse, cachetest.Advance) {
		clock := testkit.NewFakeClock(cacheT0)
		return memory.NewSingleUse(clock), clock.Advance
	})
}

func TestFailureCounterContract(t *testing.T) {
	cachetest.RunFailureCounter(t, func(t *testing.T) (ports.FailureCounter, cachetest.Advance) {
		clock := testkit.NewFakeClock(cacheT0)
		return memory.NewFailureCounter(clock), clock.Advance
	})
}
