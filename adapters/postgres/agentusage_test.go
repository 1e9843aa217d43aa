package postgres_test

import (
	"testing"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/pgtest"
	"github.com/corridorpay/corridor/testkit/storetest"
)

func TestAgentUsageContract(t *testing.T) {
	storetest.RunAgentUsage(t, func(t *testing.T) ports.AgentUsageStore {
		return postgres.NewAgentUsageStore(pgtest.NewDB(t))
	})
}
