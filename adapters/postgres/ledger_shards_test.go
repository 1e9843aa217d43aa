// Writers on different shards keep hash chains of their own, each under
// its own journal lock (LedgerOptions.Shard, migration 0037).

package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// A writer on shard 1 commits while shard 0's journal lock is held; a
// writer on shard 0 waits for it. Each shard's entries chain to the
// shard's own last entry, the journal verifies with one head per shard,
// and a checkpoint signs each head.
func TestShardsChainApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewDB(t)
	clock := testkit.NewFakeClock(t0)
	l0 := postgres.NewLedger(db, clock, postgres.LedgerOptions{})
	l1 := postgres.NewLedger(db, clock, postgres.LedgerOptions{Shard: 1})
	t.Cleanup(l0.Close)
	t.Cleanup(l1.Close)
	const a, b = "InternalAccount:a", "InternalAccount:b"
	require.NoError(t, l0.CreateAccounts(ctx, ledger.Account{ID: fundUSD, Currency: "USD", Kind: ledger.KindSandboxFunding},
		protected(a, "USD"), protected(b, "USD")))
	fund(t, l0, "fund:a", a, 1_000)
	fund(t, l1, "fund:b", b, 1_000)

	holder, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = holder.Rollback() }()
	_, err = holder.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, postgres.JournalLockKey)
	require.NoError(t, err)

	// Shard 1 does not wait for shard 0's lock, even on the same accounts.
	quick, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	je, err := l1.Post(quick, entry("s1-move", single("s1-move", a, b, 100)))
	require.NoError(t, err, "a shard-1 post waited for shard 0's journal lock")
	assert.Equal(t, int16(1), je.Shard)

	done := make(chan error, 1)
	go func() {
		_, err := l0.Post(ctx, entry("s0-move", single("s0-move", b, a, 50)))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a shard-0 post did not wait for shard 0's journal lock (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, holder.Rollback())
	require.NoError(t, <-done)

	journal, err := l0.Journal(ctx, 0, 100)
	require.NoError(t, err)
	require.Len(t, journal, 4)
	last := map[int16][32]byte{}
	for _, e := range journal {
		assert.Equal(t, last[e.Shard], e.PrevHash, "entry %s links to its shard's last entry", e.ID)
		last[e.Shard] = e.Hash
	}
	assert.Equal(t, map[int16][32]byte{0: journal[3].Hash, 1: journal[2].Hash}, last)
	verify(t, l0, db)

	v, err := postgres.NewLedgerReports(db).VerifyJournal(ctx, nil)
	require.NoError(t, err)
	require.True(t, v.OK(), "%v", v.Breaks)
	require.Len(t, v.Chains, 2)
	assert.Equal(t, ledger.ChainHead{Shard: 0, Seq: journal[3].Seq, ID: "s0-move", Hash: journal[3].Hash}, v.Chains[0])
	assert.Equal(t, ledger.ChainHead{Shard: 1, Seq: journal[2].Seq, ID: "s1-move", Hash: journal[2].Hash}, v.Chains[1])

	// Re-chaining shard 1 after the fact is a break of shard 1 alone.
	_, err = db.ExecContext(ctx, `UPDATE ledger_entries SET prev_hash = hash WHERE id = 's1-move'`)
	require.NoError(t, err)
	v, err = postgres.NewLedgerReports(db).VerifyJournal(ctx, nil)
	require.NoError(t, err)
	require.Len(t, v.Breaks, 1)
	assert.Equal(t, "s1-move", v.Breaks[0].EntryID)
}
