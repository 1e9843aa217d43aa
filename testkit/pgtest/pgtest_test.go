package pgtest

import (
	"context"
	"testing"
)

func TestScratchDatabaseIsMigrated(t *testing.T) {
	db := NewDB(t)
	var n int
	if err := db.QueryRowContext(context.Background(), "SELECT count(*) FROM schema_migrations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no migration recorded")
	}
}
