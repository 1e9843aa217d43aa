package postgres_test

import (
	"testing"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/cachetest"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

func TestIdempotencyContract(t *testing.T) {
	cachetest.RunIdempotency(t, func(t *testing.T) ports.IdempotencyStore {
		return postgres.NewIdempotencyStore(pgtest.NewDB(t))
	})
}
