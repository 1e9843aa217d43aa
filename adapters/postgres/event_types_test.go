package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// The events trigger names a transaction's events with SQL functions that
// must say what ports.TransactionEventType and TransactionRefundEventType
// say, for every type and status (and one neither knows).
func TestEventTypeFunctionsMatchPorts(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	statuses := append(slices.Clone(transactions.Statuses), "SOMETHING_ELSE", "")
	for _, typ := range []string{"INCOMING", "OUTGOING"} {
		for _, status := range statuses {
			var got, gotRefund string
			require.NoError(t, db.QueryRowContext(ctx,
				"SELECT coalesce(transaction_event_type(?, ?), ''), coalesce(transaction_refund_event_type(?, ?), '')",
				typ, status, typ, status).Scan(&got, &gotRefund))
			require.Equal(t, ports.TransactionEventType(typ, status), got, "%s %s", typ, status)
			require.Equal(t, ports.TransactionRefundEventType(typ, status), gotRefund, "%s refund %s", typ, status)
		}
	}
}

// The statement triggers (migrations/0039) record the events of every
// change of one statement through transaction_event_types, which must list
// what ports.TransactionEventTypes lists, in its order, for every change of
// status and refund status, and for a new transaction.
func TestEventTypesOfAChangeMatchPorts(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	statuses := append(slices.Clone(transactions.Statuses), "SOMETHING_ELSE")
	refunds := []string{"", "PENDING", "COMPLETED", "FAILED"}
	var typs, prevs, sts, prevRefunds, rfs []string
	var fresh []bool
	for _, typ := range []string{"INCOMING", "OUTGOING"} {
		for _, prev := range append([]string{""}, statuses...) {
			for _, st := range statuses {
				for _, prevRefund := range refunds {
					for _, rf := range refunds {
						if prev == "" && prevRefund != "" {
							continue // a new transaction has no earlier refund
						}
						typs, prevs, sts, prevRefunds, rfs = append(typs, typ), append(prevs, prev), append(sts, st),
							append(prevRefunds, prevRefund), append(rfs, rf)
						fresh = append(fresh, prev == "")
					}
				}
			}
		}
	}
	var got []string
	require.NoError(t, db.NewRaw(`SELECT coalesce((SELECT string_agg(e.typ, ',' ORDER BY e.k)
			FROM transaction_event_types(c.typ, c.st, NULLIF(c.rf, ''), NULLIF(c.prev, ''), NULLIF(c.prev_refund, ''), c.fresh) AS e), '')
		FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bool[]) WITH ORDINALITY AS c(typ, prev, st, prev_refund, rf, fresh, ord)
		ORDER BY c.ord`, pgdialect.Array(typs), pgdialect.Array(prevs), pgdialect.Array(sts), pgdialect.Array(prevRefunds),
		pgdialect.Array(rfs), pgdialect.Array(fresh)).Scan(ctx, &got))
	require.Len(t, got, len(typs))
	for i := range typs {
		want := strings.Join(ports.TransactionEventTypes(typs[i], prevs[i], sts[i], prevRefunds[i], rfs[i]), ",")
		require.Equal(t, want, got[i], "%s %q→%s, refund %q→%q", typs[i], prevs[i], sts[i], prevRefunds[i], rfs[i])
	}
}
