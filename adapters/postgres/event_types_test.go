package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

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
