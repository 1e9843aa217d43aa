package postgres_test

import (
	"testing"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/jobtest"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

func TestJobQueueContract(t *testing.T) {
	jobtest.Run(t, func(t *testing.T) ports.Store { return postgres.NewStore(pgtest.NewDB(t)) })
}
