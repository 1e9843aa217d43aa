package memory_test

import (
	"testing"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/jobtest"
)

func TestJobQueueContract(t *testing.T) {
	jobtest.Run(t, func(*testing.T) ports.Store { return memory.NewStore(nil) })
}
