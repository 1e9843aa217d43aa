package memory_test

import (
	"testing"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/storetest"
)

func TestAgentUsageContract(t *testing.T) {
	storetest.RunAgentUsage(t, func(*testing.T) ports.AgentUsageStore { return memory.NewAgentUsageStore() })
}
