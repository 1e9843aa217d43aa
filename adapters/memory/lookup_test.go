package memory_test

import (
	"testing"
	"time"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/lookuptest"
)

func TestLookupContract(t *testing.T) {
	lookuptest.Run(t, func(*testing.T) ports.Store {
		return memory.NewStore(memory.NewLedger(testkit.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))))
	})
}
