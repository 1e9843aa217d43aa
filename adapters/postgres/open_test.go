package postgres_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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

// A URL may name a Unix socket by its directory, as libpq and psql take
// it (host=/var/run/postgresql, with the port from the URL or a port
// parameter): on one machine that saves the TCP stack on every round trip.
func TestOpenThroughASocketDirectory(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.BaseURL())
	require.NoError(t, err)
	var dirs, port string
	require.NoError(t, db.QueryRowContext(ctx, "SHOW unix_socket_directories").Scan(&dirs))
	require.NoError(t, db.QueryRowContext(ctx, "SHOW port").Scan(&port))
	require.NoError(t, db.Close())
	dir := strings.TrimSpace(strings.Split(dirs, ",")[0])
	// The tests' server runs on this machine (.ci/run starts it there).
	_, err = os.Stat(filepath.Join(dir, ".s.PGSQL."+port))
	require.NoError(t, err, "the test server's socket must be on this machine (DATABASE_URL %s)", pgtest.BaseURL())
	base, err := url.Parse(pgtest.BaseURL())
	require.NoError(t, err)
	for _, form := range []struct{ host, query string }{
		{"", "host=" + dir + "&port=" + port},
		{":" + port, "host=" + dir},
		{"", "host=" + filepath.Join(dir, ".s.PGSQL."+port)},
	} {
		u := *base
		u.Host = form.host
		u.RawQuery = form.query // no sslmode: a socket is not asked for TLS
		db, err := postgres.Open(ctx, u.String())
		require.NoError(t, err, u.String())
		var local bool
		require.NoError(t, db.QueryRowContext(ctx, "SELECT inet_client_addr() IS NULL").Scan(&local), u.String())
		assert.True(t, local, "%s: connected through the socket", u.String())
		require.NoError(t, db.Close())
	}
}
