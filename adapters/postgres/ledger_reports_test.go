package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
	"github.com/corridorpay/corridor/testkit/reporttest"
)

func newReportsEnv(t *testing.T, clock *testkit.FakeClock) reporttest.Env {
	db := pgtest.NewDB(t)
	l := postgres.NewLedger(db, clock, postgres.LedgerOptions{})
	t.Cleanup(l.Close)
	return reporttest.Env{Ledger: l, Store: postgres.NewStore(db), Reports: postgres.NewLedgerReports(db)}
}

// TestLedgerReportsContract holds the PostgreSQL reports to the contract
// shared with the memory store.
func TestLedgerReportsContract(t *testing.T) {
	t.Parallel()
	reporttest.Run(t, newReportsEnv)
}

// TestLedgerReportsProperty: point-in-time balances (from the postings
// index), trial balances, exports and statements agree with the journal
// replayed, over random histories.
func TestLedgerReportsProperty(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 2; seed++ {
		reporttest.RunProperty(t, newReportsEnv, 250, seed)
	}
}

// tamperLedger posts a small history through the writer and chains it as
// a hashing writer does.
func tamperLedger(t *testing.T) (*bun.DB, *postgres.LedgerReports, map[string]int64) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.NewDB(t)
	clock := testkit.NewFakeClock(t0)
	l := postgres.NewLedger(db, clock, postgres.LedgerOptions{})
	t.Cleanup(l.Close)
	settle := ledger.RailSettlementID("ACH", "USD")
	require.NoError(t, l.CreateAccounts(ctx, append(ledger.SystemAccounts([]string{"USD"}, map[string][]string{"ACH": {"USD"}}),
		protected(alice, "USD"), protected(bob, "USD"))...))
	seqs := map[string]int64{}
	for _, e := range []ledger.Entry{
		entry("fund", single("fund", fundUSD, alice, 10_000)),
		entry("pay", single("pay", alice, bob, 1_200)),
		entry("hold", ledger.Transfer{ID: "hold", Kind: ledger.Pending, DebitAccountID: alice, CreditAccountID: settle, Amount: 3_000, Currency: "USD"}),
		entry("settle", ledger.Transfer{ID: "settle", Kind: ledger.PostPending, PendingID: "hold"}),
		entry("pay2", single("pay2", bob, alice, 200)),
		entry("pay3", single("pay3", alice, bob, 50)),
	} {
		clock.Advance(1_000_000_000)
		je, err := l.Post(ctx, e)
		require.NoError(t, err)
		seqs[e.ID] = je.Seq
	}
	r := postgres.NewLedgerReports(db)
	v, err := r.VerifyJournal(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, v.Breaks)
	require.Equal(t, int64(6), v.Hashed)
	require.Equal(t, int64(12), v.Postings)
	return db, r, seqs
}

func verifyBreaks(t *testing.T, r *postgres.LedgerReports) ports.JournalVerification {
	t.Helper()
	v, err := r.VerifyJournal(context.Background(), nil)
	require.NoError(t, err)
	require.NotEmpty(t, v.Breaks, "verification found nothing")
	return v
}

// The tamper test: rows edited directly in PostgreSQL are named by
// verification. Each case gets its own database.
func TestVerifyJournalNamesTamperedRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("transfer amount", func(t *testing.T) {
		db, r, seqs := tamperLedger(t)
		_, err := db.ExecContext(ctx, `UPDATE ledger_transfers SET amount = amount + 1 WHERE id = 'pay'`)
		require.NoError(t, err)
		v := verifyBreaks(t, r)
		first := v.Breaks[0]
		assert.Equal(t, ledger.BreakHash, first.Kind)
		assert.Equal(t, "pay", first.EntryID)
		assert.Equal(t, seqs["pay"], first.Seq)
		assert.Contains(t, first.Message, "pay")
	})
	t.Run("posting counters", func(t *testing.T) {
		db, r, seqs := tamperLedger(t)
		_, err := db.ExecContext(ctx, `UPDATE ledger_postings SET credits_posted = credits_posted + 500
			WHERE account_id = ? AND transfer_id = 'pay2'`, alice)
		require.NoError(t, err)
		v := verifyBreaks(t, r)
		first := v.Breaks[0]
		assert.Equal(t, ports.BreakPosting, first.Kind)
		assert.Equal(t, "pay2", first.EntryID)
		assert.Equal(t, seqs["pay2"], first.Seq)
		assert.Equal(t, alice, first.AccountID)
		for _, b := range v.Breaks {
			assert.NotEqual(t, ledger.BreakHash, b.Kind, "the journal itself is intact")
		}
	})
	t.Run("deleted entry", func(t *testing.T) {
		db, r, seqs := tamperLedger(t)
		_, err := db.ExecContext(ctx, `DELETE FROM ledger_transfers WHERE entry_id = 'pay2'`)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, `DELETE FROM ledger_entries WHERE id = 'pay2'`)
		require.NoError(t, err)
		v := verifyBreaks(t, r)
		first := v.Breaks[0]
		assert.Equal(t, ledger.BreakLink, first.Kind)
		assert.Equal(t, "pay3", first.EntryID, "the entry after the hole")
		assert.Equal(t, seqs["pay3"], first.Seq)
		var counters []string
		for _, b := range v.Breaks {
			if b.Kind == ports.BreakCounter {
				counters = append(counters, b.AccountID)
			}
		}
		assert.ElementsMatch(t, []string{alice, bob}, counters)
	})
	t.Run("account counters", func(t *testing.T) {
		db, r, _ := tamperLedger(t)
		_, err := db.ExecContext(ctx, `UPDATE ledger_accounts SET credits_posted = credits_posted + 7 WHERE id = ?`, bob)
		require.NoError(t, err)
		v := verifyBreaks(t, r)
		var found bool
		for _, b := range v.Breaks {
			if b.Kind == ports.BreakCounter && b.AccountID == bob {
				found = true
			}
		}
		assert.True(t, found, "breaks: %+v", v.Breaks)
	})
	t.Run("hash removed", func(t *testing.T) {
		db, r, seqs := tamperLedger(t)
		_, err := db.ExecContext(ctx, `UPDATE ledger_entries SET hash = NULL, prev_hash = NULL WHERE id = 'pay2'`)
		require.NoError(t, err)
		v := verifyBreaks(t, r)
		assert.Equal(t, ledger.BreakUnhashed, v.Breaks[0].Kind)
		assert.Equal(t, "pay2", v.Breaks[0].EntryID)
		assert.Equal(t, seqs["pay2"], v.Breaks[0].Seq)
		assert.Len(t, v.Breaks, 1, "the entry after it is not blamed: %+v", v.Breaks)
	})
}

// TestLedgerTamper: stripped hashes and a re-chained forgery are caught.
func TestLedgerTamper(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := func(env reporttest.Env) *bun.DB {
		return postgres.ReportsDBForTest(env.Reports.(*postgres.LedgerReports))
	}
	reporttest.RunTamper(t, newReportsEnv, reporttest.Tamper{
		StripHashes: func(t *testing.T, env reporttest.Env) {
			_, err := db(env).ExecContext(ctx, `UPDATE ledger_entries SET hash = NULL, prev_hash = NULL`)
			require.NoError(t, err)
		},
		Forge: func(t *testing.T, env reporttest.Env, transferID string, delta int64) {
			d := db(env)
			var debit, credit string
			require.NoError(t, d.QueryRowContext(ctx, `UPDATE ledger_transfers SET amount = amount + ? WHERE id = ?
				RETURNING debit_account_id, credit_account_id`, delta, transferID).Scan(&debit, &credit))
			for _, q := range []struct{ sql, account string }{
				{`UPDATE ledger_postings SET debits_posted = debits_posted + ? WHERE transfer_id = ? AND account_id = ?`, debit},
				{`UPDATE ledger_postings SET credits_posted = credits_posted + ? WHERE transfer_id = ? AND account_id = ?`, credit},
			} {
				_, err := d.ExecContext(ctx, q.sql, delta, transferID, q.account)
				require.NoError(t, err)
			}
			_, err := d.ExecContext(ctx, `UPDATE ledger_accounts SET debits_posted = debits_posted + ? WHERE id = ?`, delta, debit)
			require.NoError(t, err)
			_, err = d.ExecContext(ctx, `UPDATE ledger_accounts SET credits_posted = credits_posted + ? WHERE id = ?`, delta, credit)
			require.NoError(t, err)
			require.NoError(t, postgres.RechainForTest(ctx, d))
		},
	})
}
