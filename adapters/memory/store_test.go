package memory_test

import (
	"testing"
	"time"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/storetest"
)

func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) (ports.Store, storetest.LedgerReader) {
		l := memory.NewLedger(testkit.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
		return memory.NewStore(l), l
	})
}
