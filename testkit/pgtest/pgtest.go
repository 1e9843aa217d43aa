// Package pgtest gives each test its own scratch PostgreSQL database, migrated,
// so packages run in parallel. The server comes from DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable). An unreachable
// server fails the test: it never skips.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/adapters/postgres"
)

// DefaultURL is used when DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// BaseURL returns the server URL tests use.
func BaseURL() string {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// NewDatabase creates a scratch database, applies the migrations, and drops it
// when the test ends. It returns the database's URL.
func NewDatabase(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	base := BaseURL()
	admin, err := postgres.Open(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: PostgreSQL unreachable at %s: %v", redact(base), err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "corridor_t_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close()
		t.Fatalf("pgtest: create database: %v", err)
	}
	u, _ := url.Parse(base)
	u.Path = "/" + name
	dsn := u.String()
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = admin.Close()
	})
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("pgtest: open scratch database: %v", err)
	}
	defer db.Close()
	if _, err := postgres.Migrate(ctx, db, nil); err != nil {
		t.Fatalf("pgtest: migrate: %v", err)
	}
	return dsn
}

// NewDB is NewDatabase plus an open *bun.DB closed when the test ends.
func NewDB(t testing.TB) *bun.DB {
	t.Helper()
	dsn := NewDatabase(t)
	db, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("pgtest: open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Exec runs each of queries on db, failing the test at the first error.
func Exec(t testing.TB, db bun.IDB, queries ...string) {
	t.Helper()
	for _, q := range queries {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("pgtest: %v\n%s", err, q)
		}
	}
}

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable DATABASE_URL)"
	}
	return u.Redacted()
}
