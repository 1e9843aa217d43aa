package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/uptrace/bun"
)

// preparedStmts holds server-side prepared statements for the hot reads
// whose planning cost more than running them (the transfer path's parties
// read planned three joined tables for a 0.1 ms lookup). database/sql
// prepares each statement on a connection the first time it runs there,
// and the connection keeps one generic plan for it (see genericPlans), so
// such a statement must read by keys whatever the planner knows of the
// tables (see groupedRead). Statements are written with $n placeholders
// (not bun's ?), and their arguments travel as parameters, never formatted
// into the text.
type preparedStmts struct {
	db *bun.DB
	m  sync.Map // query → *sql.Stmt
}

func newPreparedStmts(db *bun.DB) *preparedStmts { return &preparedStmts{db: db} }

// query runs query with args on the pool, or on idb's connection when idb
// is a transaction, and scans the rows into dest as bun does.
func (p *preparedStmts) query(ctx context.Context, idb bun.IDB, dest any, query string, args ...any) error {
	stmt, done, err := p.on(ctx, idb, query)
	if err != nil {
		return err
	}
	defer done()
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	return p.db.ScanRows(ctx, rows, dest)
}

// exec runs query with args on the pool, or on idb's connection when idb
// is a transaction.
func (p *preparedStmts) exec(ctx context.Context, idb bun.IDB, query string, args ...any) (sql.Result, error) {
	stmt, done, err := p.on(ctx, idb, query)
	if err != nil {
		return nil, err
	}
	defer done()
	return stmt.ExecContext(ctx, args...)
}

// on is query's statement on the pool, or bound to idb's connection when
// idb is a transaction; call done when finished with it.
func (p *preparedStmts) on(ctx context.Context, idb bun.IDB, query string) (stmt *sql.Stmt, done func(), err error) {
	if stmt, err = p.stmt(ctx, query); err != nil {
		return nil, nil, err
	}
	if btx, ok := idb.(bun.Tx); ok {
		bound := btx.Tx.StmtContext(ctx, stmt)
		return bound, func() { _ = bound.Close() }, nil
	}
	return stmt, func() {}, nil
}

func (p *preparedStmts) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := p.m.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := p.db.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	if prev, loaded := p.m.LoadOrStore(query, s); loaded {
		_ = s.Close() // prepared concurrently: keep the first
		return prev.(*sql.Stmt), nil
	}
	return s, nil
}

// textArray is the literal of a text[] parameter of a prepared statement
// ('{…}'): each element double-quoted, with '"' and '\' escaped, so any
// text is safe; the statement casts it ($1::text[]). Nil is the empty
// array.
func textArray(v []string) string {
	n := 2
	for _, s := range v {
		n += len(s) + 3
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		for j := 0; j < len(s); j++ {
			if c := s[j]; c == '"' || c == '\\' {
				b = append(b, '\\')
			}
			b = append(b, s[j])
		}
		b = append(b, '"')
	}
	return string(append(b, '}'))
}
