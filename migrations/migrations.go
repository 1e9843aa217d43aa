// Package migrations holds corridor's PostgreSQL schema as ordered SQL files,
// embedded in the binary and applied on start (or by `corridor migrate`).
// Files are named NNNN_description.sql and applied once each, in order.
package migrations

import "embed"

// FS holds the migration files.
//
//go:embed *.sql
var FS embed.FS
