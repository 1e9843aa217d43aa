package postgres

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/uptrace/bun/schema"
)

// groupedRead answers concurrent reads of one row each by key (outside any
// unit of work) with one prepared statement per group (see combiner): the
// calls waiting while a group statement runs form the next. The statement
// takes one text[] parameter per key column ($1, $2…), one element per
// call, and returns one row per call, in call order, with the call's
// ordinal (1-based) that ord reads back. A row the statement could not find
// comes back with its table's columns NULL (zero), so its caller decides
// what absent means.
//
// Statements for it read each table through a LATERAL subquery with
// LIMIT 1 on its primary key, which the planner cannot turn into a join:
// the one generic plan (see genericPlans) has nothing to choose but a
// primary-key lookup per call, whatever the tables' statistics when it is
// made (an unnest joined to a table lets the planner of an empty,
// unanalysed table pick a sequential scan).
type groupedRead[R any] struct {
	stmts *preparedStmts
	query string
	ord   func(*R) int64
	c     combiner[*groupedCall[R]]
}

type groupedCall[R any] struct {
	keys []string
	done chan groupedResult[R] // buffered
}

type groupedResult[R any] struct {
	row R
	err error
}

// groupTimeout bounds one group statement (it serves many callers, so it
// does not run under any one caller's context).
const groupTimeout = 10 * time.Second

// groupMaxCalls bounds the calls of one group statement.
const groupMaxCalls = 256

// groupsInFlight bounds a grouped read's statements running at once. Two
// measured faster than one for the transfer path's parties read: a read
// group is short, and a transfer waits on its read before it joins the
// ledger's batch, so a second statement keeps the ledger's queue fuller.
const groupsInFlight = 2

func newGroupedRead[R any](stmts *preparedStmts, query string, ord func(*R) int64) *groupedRead[R] {
	g := &groupedRead[R]{stmts: stmts, query: query, ord: ord}
	g.c = combiner[*groupedCall[R]]{max: groupsInFlight, maxBatch: groupMaxCalls, run: g.run}
	return g
}

// get reads the row of keys (one per key column).
func (g *groupedRead[R]) get(ctx context.Context, keys ...string) (R, error) {
	c := &groupedCall[R]{keys: keys, done: make(chan groupedResult[R], 1)}
	g.c.add(c)
	select {
	case res := <-c.done:
		return res.row, res.err
	case <-ctx.Done():
		var zero R
		return zero, ctx.Err()
	}
}

// run answers calls with one statement.
func (g *groupedRead[R]) run(calls []*groupedCall[R]) {
	cols := make([][]string, len(calls[0].keys))
	for k := range cols {
		cols[k] = make([]string, len(calls))
		for i, c := range calls {
			cols[k][i] = c.keys[k]
		}
	}
	args := make([]any, len(cols))
	for k, col := range cols {
		args[k] = textArray(col)
	}
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	var rows []R
	err := g.stmts.query(ctx, g.stmts.db, &rows, g.query, args...)
	if err == nil && len(rows) != len(calls) {
		err = fmt.Errorf("grouped read: %d rows for %d calls", len(rows), len(calls))
	}
	for i := range rows {
		if err == nil && g.ord(&rows[i]) != int64(i+1) {
			err = fmt.Errorf("grouped read: row %d is call %d", i+1, g.ord(&rows[i]))
		}
	}
	for i, c := range calls {
		if err != nil {
			c.done <- groupedResult[R]{err: err}
			continue
		}
		c.done <- groupedResult[R]{row: rows[i]}
	}
}

// storeColumns lists typ's columns as alias.column AS alias__field, the
// names bun's embed:alias__ scans.
func storeColumns(d schema.Dialect, alias string, typ reflect.Type) string {
	var b strings.Builder
	for i, f := range d.Tables().Get(typ).Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s.%s AS %s__%s", alias, f.SQLName, alias, f.Name)
	}
	return b.String()
}
