// Package postgres implements corridor's store ports on PostgreSQL with
// uptrace/bun and the pgdriver.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/corridorpay/corridor/migrations"
)

// DefaultMaxConns is how many connections one instance opens at most when
// Open is given no MaxConns.
const DefaultMaxConns = 32

// Option adjusts Open.
type Option func(*options)

type options struct{ maxConns int }

// MaxConns bounds the instance's connection pool (n > 0). Several
// instances on one server need instances × n plus headroom for migrations,
// the CLI and administration within the server's max_connections.
func MaxConns(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxConns = n
		}
	}
}

// Open connects to dsn (a postgres:// URL) and checks the connection.
func Open(ctx context.Context, dsn string, opts ...Option) (*bun.DB, error) {
	o := options{maxConns: DefaultMaxConns}
	for _, opt := range opts {
		opt(&o)
	}
	connector := pgdriver.NewConnector(pgdriver.WithDSN(dsn), socketFile(dsn), pgdriver.WithTimeout(10*time.Second), genericPlans)
	sqldb := sql.OpenDB(connector)
	sqldb.SetMaxOpenConns(o.maxConns)
	sqldb.SetMaxIdleConns(o.maxConns)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	db := bun.NewDB(sqldb, pgdialect.New())
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		_ = db.Close()
		var pgErr pgdriver.Error
		if errors.As(err, &pgErr) && pgErr.Field('C') == "3D000" { // invalid_catalog_name
			return nil, fmt.Errorf("postgres: %w: create the database first (createdb NAME, or CREATE DATABASE NAME in psql)", err)
		}
		return nil, fmt.Errorf("postgres: ping: %w", err)
	}
	return db, nil
}

// socketFile lets a DSN name a Unix socket as libpq and psql do, by its
// directory (postgres:///test?host=/var/run/postgresql, port 5432 unless
// the URL or a port parameter gives another): the driver dials the socket
// file in it, .s.PGSQL.<port>. A host parameter that names the file itself
// is kept. As with libpq, a socket is never asked for TLS (the driver
// would otherwise ask, unless told sslmode=disable, and a server without
// TLS would refuse).
func socketFile(dsn string) pgdriver.Option {
	return func(conf *pgdriver.Config) {
		if conf.Network != "unix" {
			return
		}
		conf.TLSConfig = nil
		if strings.Contains(filepath.Base(conf.Addr), ".s.PGSQL.") {
			return
		}
		port := "5432"
		if u, err := url.Parse(dsn); err == nil {
			if p := u.Port(); p != "" {
				port = p
			}
			if p := u.Query().Get("port"); p != "" {
				port = p
			}
		}
		delete(conf.ConnParams, "port") // not a setting to send the server
		conf.Addr = filepath.Join(conf.Addr, ".s.PGSQL."+port)
	}
}

// genericPlans makes the connections' prepared statements (preparedStmts:
// key lookups only) run one generic plan from their first execution
// instead of planning each call; PostgreSQL's default plans the first five
// and then keeps planning when a generic plan's estimate looks costlier,
// which for a lookup through LEFT JOINs it does. Statements sent as text
// are planned as before. A plan_cache_mode given in the DSN wins.
func genericPlans(conf *pgdriver.Config) {
	if _, set := conf.ConnParams["plan_cache_mode"]; set {
		return
	}
	params := map[string]any{"plan_cache_mode": "force_generic_plan"}
	for k, v := range conf.ConnParams {
		params[k] = v
	}
	conf.ConnParams = params
}

// migrationLock is the advisory lock key that serialises migration runs of
// several instances starting at once.
const migrationLock = 7_042_025_1013

// Migrate applies the embedded migrations not yet recorded in
// schema_migrations, each in its own transaction, under an advisory lock.
func Migrate(ctx context.Context, db *bun.DB, log *slog.Logger) (applied int, err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: conn: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", migrationLock); err != nil {
		return 0, fmt.Errorf("migrate: lock: %w", err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", migrationLock)
	}()

	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version text PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, fmt.Errorf("migrate: bookkeeping table: %w", err)
	}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return 0, err
	}
	sort.Strings(names)
	for _, name := range names {
		version := strings.TrimSuffix(name, ".sql")
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", version).Scan(&n); err != nil {
			return applied, fmt.Errorf("migrate: read %s: %w", version, err)
		}
		if n > 0 {
			continue
		}
		body, err := migrations.FS.ReadFile(name)
		if err != nil {
			return applied, err
		}
		err = conn.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version) VALUES (?)", version)
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migrate: apply %s: %w", version, err)
		}
		applied++
		if log != nil {
			log.Info("migration applied", "version", version)
		}
	}
	return applied, nil
}
