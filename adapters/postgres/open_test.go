package postgres_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// A URL naming a database that does not exist says so, and how to make
// it: a newcomer's first start on a fresh server meets it.
func TestOpenNamesAMissingDatabase(t *testing.T) {
	u, err := url.Parse(pgtest.BaseURL())
	require.NoError(t, err)
	u.Path = "/corridor_no_such_database"
	_, err = postgres.Open(context.Background(), u.String())
	require.ErrorContains(t, err, `database "corridor_no_such_database" does not exist`)
	require.ErrorContains(t, err, "create the database first (createdb NAME")
}
