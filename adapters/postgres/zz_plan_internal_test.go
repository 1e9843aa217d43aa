package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/testkit"
)

func TestZZPlan(t *testing.T) {
	ctx := context.Background()
	db := scratchDB(t)
	l := NewLedger(db, testkit.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), LedgerOptions{})
	defer l.Close()
	fund := ledger.SandboxFundingID("USD")
	accts := []ledger.Account{{ID: fund, Currency: "USD", Kind: ledger.KindSandboxFunding}}
	for i := range 50 {
		accts = append(accts, ledger.Account{ID: fmt.Sprintf("A%02d", i), Currency: "USD", Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits})
	}
	if err := l.CreateAccounts(ctx, accts...); err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		id := fmt.Sprintf("e%05d", i)
		if _, err := l.Post(ctx, ledger.Entry{ID: id, Ref: "x", Transfers: []ledger.Transfer{{ID: id, Kind: ledger.Single, DebitAccountID: fund, CreditAccountID: fmt.Sprintf("A%02d", i%50), Amount: 1, Currency: "USD"}},
			Outbox: []ledger.OutboxMessage{{Topic: "t", Key: id, Payload: []byte("{}")}}}); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = db.ExecContext(ctx, "ANALYZE")
	q := db.QueryGen().FormatQuery(loadQuery, pgdialect.Array([]string{}), pgdialect.Array([]string{"h1"}), pgdialect.Array([]string{fund, "A01", "A02"}),
		journalLock, pgdialect.Array([]string{"n1", "n2", "e00005"}), pgdialect.Array([]string{}))
	q = strings.Replace(q, "BEGIN;", "SET enable_seqscan = off; EXPLAIN (ANALYZE, TIMING OFF) ", 1)
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		fmt.Println(s)
	}
}
