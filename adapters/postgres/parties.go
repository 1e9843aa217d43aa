package postgres

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun/schema"

	"github.com/corridorpay/corridor/ports"
)

// The transfer path reads an internal account, an external account and the
// customer owning them before it moves money: one statement per transfer,
// the only statement a transfer does not share with others. Outside a unit
// of work those reads are grouped (see combiner): the calls waiting while a
// group statement runs become the next group statement, one row per call.
// Inside a unit of work the single-call statement runs on its connection,
// so it sees the unit's own writes.
//
// Both statements are prepared with one generic plan (see genericPlans)
// and match primary keys only, each table read through a LATERAL subquery
// with LIMIT 1 that the planner cannot turn into a join: whatever the
// tables' statistics when the plan is made, it has nothing to choose but a
// primary-key lookup per row. (A platform_id or is_deleted condition let
// the planner of an empty, unanalysed table pick an index that walks the
// platform's rows; an unnest joined to a table let it pick a sequential
// scan.) The platform and deletion are checked in Go.

// storePartiesRow is one row of the parties statements: the call's
// ordinal, then each table's columns under its own prefix, NULL (zero)
// where the row is absent.
type storePartiesRow struct {
	Ord      int64            `bun:"ord"`
	Internal storeAccountRow  `bun:"embed:a__"`
	External storeExternalRow `bun:"embed:e__"`
	Customer storeCustomerRow `bun:"embed:c__"`
}

// storePartiesFrom is the statements' FROM clause over u(iid, eid, ord).
const storePartiesFrom = `
	LEFT JOIN LATERAL (SELECT * FROM internal_accounts WHERE id = u.iid LIMIT 1) AS a ON true
	LEFT JOIN LATERAL (SELECT * FROM external_accounts WHERE id = u.eid LIMIT 1) AS e ON true
	LEFT JOIN LATERAL (SELECT * FROM customers WHERE id = a.customer_id AND a.customer_id <> '' LIMIT 1) AS c ON true`

// storePartiesSQL holds the statements, built once from the row models so
// a column added to a model is read here too.
var storePartiesSQL struct {
	once      sync.Once
	one, many string
}

func storePartiesQueries(d schema.Dialect) (one, many string) {
	storePartiesSQL.once.Do(func() {
		cols := func(alias string, typ reflect.Type) string {
			var b strings.Builder
			for i, f := range d.Tables().Get(typ).Fields {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%s.%s AS %s__%s", alias, f.SQLName, alias, f.Name)
			}
			return b.String()
		}
		sel := `SELECT u.ord, ` + cols("a", reflect.TypeFor[storeAccountRow]()) + `, ` +
			cols("e", reflect.TypeFor[storeExternalRow]()) + `, ` + cols("c", reflect.TypeFor[storeCustomerRow]())
		storePartiesSQL.one = sel + `
	FROM (SELECT $1::text AS iid, $2::text AS eid, 1::bigint AS ord) AS u` + storePartiesFrom
		storePartiesSQL.many = sel + `
	FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(iid, eid, ord)` + storePartiesFrom + `
	ORDER BY u.ord`
	})
	return storePartiesSQL.one, storePartiesSQL.many
}

type storeParties struct{ tx *storeTx }

// Get reads the three rows: grouped with concurrent calls outside a unit
// of work, alone inside one.
func (r storeParties) Get(ctx context.Context, platformID, internalID, externalID string) (ports.Parties, error) {
	if r.tx.write || r.tx.parties == nil {
		one, _ := storePartiesQueries(r.tx.db.Dialect())
		var row storePartiesRow
		if err := r.tx.stmts.query(ctx, r.tx.db, &row, one, internalID, externalID); err != nil {
			return ports.Parties{}, fmt.Errorf("read parties %s, %s: %w", internalID, externalID, err)
		}
		return row.parties(platformID), nil
	}
	c := &partiesCall{internalID: internalID, externalID: externalID, done: make(chan partiesResult, 1)}
	r.tx.parties.add(c)
	select {
	case res := <-c.done:
		if res.err != nil {
			return ports.Parties{}, fmt.Errorf("read parties %s, %s: %w", internalID, externalID, res.err)
		}
		return res.row.parties(platformID), nil
	case <-ctx.Done():
		return ports.Parties{}, fmt.Errorf("read parties %s, %s: %w", internalID, externalID, ctx.Err())
	}
}

// parties is row as platformID sees it: another platform's rows and a
// deleted external account are absent.
func (row storePartiesRow) parties(platformID string) ports.Parties {
	var p ports.Parties
	if row.Internal.ID != "" && row.Internal.PlatformID == platformID {
		p.Internal = row.Internal.toPort()
		if row.Customer.ID != "" && row.Customer.PlatformID == platformID {
			p.Customer = row.Customer.toPort()
		}
	}
	if row.External.ID != "" && row.External.PlatformID == platformID && !row.External.IsDeleted {
		p.External = row.External.toPort()
	}
	return p
}

type partiesCall struct {
	internalID, externalID string
	done                   chan partiesResult // buffered
}

type partiesResult struct {
	row storePartiesRow
	err error
}

// partiesGroupTimeout bounds one group statement (it serves many callers,
// so it does not run under any one caller's context).
const partiesGroupTimeout = 10 * time.Second

// partiesMaxGroup bounds the calls of one group statement.
const partiesMaxGroup = 256

// partiesGroupsInFlight bounds the group statements running at once. Two
// measured faster than one: a read group is short, and a transfer waits on
// its read before it can join the ledger's batch, so a second group
// statement keeps the ledger's queue fuller.
const partiesGroupsInFlight = 2

func newPartiesCombiner(stmts *preparedStmts) *combiner[*partiesCall] {
	return &combiner[*partiesCall]{max: partiesGroupsInFlight, maxBatch: partiesMaxGroup, run: func(calls []*partiesCall) {
		readPartiesGroup(stmts, calls)
	}}
}

// readPartiesGroup answers calls with one statement.
func readPartiesGroup(stmts *preparedStmts, calls []*partiesCall) {
	in, ex := make([]string, len(calls)), make([]string, len(calls))
	for i, c := range calls {
		in[i], ex[i] = c.internalID, c.externalID
	}
	ctx, cancel := context.WithTimeout(context.Background(), partiesGroupTimeout)
	defer cancel()
	_, many := storePartiesQueries(stmts.db.Dialect())
	var rows []storePartiesRow
	err := stmts.query(ctx, stmts.db, &rows, many, textArray(in), textArray(ex))
	if err == nil && len(rows) != len(calls) {
		err = fmt.Errorf("parties group: %d rows for %d calls", len(rows), len(calls))
	}
	for i := range rows {
		if err == nil && rows[i].Ord != int64(i+1) {
			err = fmt.Errorf("parties group: row %d is call %d", i+1, rows[i].Ord)
		}
	}
	for i, c := range calls {
		if err != nil {
			c.done <- partiesResult{err: err}
			continue
		}
		c.done <- partiesResult{row: rows[i]}
	}
}
