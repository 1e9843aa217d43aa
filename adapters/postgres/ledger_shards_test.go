// Writers on different shards keep hash chains of their own, each under
// its own journal lock (LedgerOptions.Shard, migration 0037).

package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// twoShards opens two writers on one database, on shards 0 and 1, with the
// sandbox funding account and the protected accounts named.
func twoShards(t *testing.T, protectedIDs ...string) (*bun.DB, *testkit.FakeClock, *postgres.Ledger, *postgres.Ledger) {
	t.Helper()
	db := pgtest.NewDB(t)
	clock := testkit.NewFakeClock(t0)
	l0 := postgres.NewLedger(db, clock, postgres.LedgerOptions{})
	l1 := postgres.NewLedger(db, clock, postgres.LedgerOptions{Shard: 1})
	t.Cleanup(l0.Close)
	t.Cleanup(l1.Close)
	accts := []ledger.Account{{ID: fundUSD, Currency: "USD", Kind: ledger.KindSandboxFunding}}
	for _, id := range protectedIDs {
		accts = append(accts, protected(id, "USD"))
	}
	require.NoError(t, l0.CreateAccounts(context.Background(), accts...))
	return db, clock, l0, l1
}

// A writer on shard 1 commits while shard 0's journal lock is held; a
// writer on shard 0 waits for it. Each shard's entries chain to the
// shard's own last entry, the journal verifies with one head per shard,
// and a checkpoint signs each head.
func TestShardsChainApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const a, b = "InternalAccount:a", "InternalAccount:b"
	db, _, l0, l1 := twoShards(t, a, b)
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

	// Each shard's entries can be paged on their own.
	one := int16(1)
	onOne, err := postgres.NewLedgerReports(db).Entries(ctx, ports.EntryFilter{Scope: ports.AccountScope{All: true}, Shard: &one, Limit: 10})
	require.NoError(t, err)
	require.Len(t, onOne, 2)
	assert.Equal(t, []string{"fund:b", "s1-move"}, []string{onOne[0].ID, onOne[1].ID})
	assert.Equal(t, int16(1), onOne[1].Shard)

	// Re-chaining shard 1 after the fact is a break of shard 1 alone.
	_, err = db.ExecContext(ctx, `UPDATE ledger_entries SET prev_hash = hash WHERE id = 's1-move'`)
	require.NoError(t, err)
	v, err = postgres.NewLedgerReports(db).VerifyJournal(ctx, nil)
	require.NoError(t, err)
	require.Len(t, v.Breaks, 1)
	assert.Equal(t, "s1-move", v.Breaks[0].EntryID)
}

// A writer whose clock runs behind the last entry of its shard (another
// instance's clock a little ahead) times its batch at that entry, so
// within a shard (posted_at, seq) never goes back and a reader paging the
// journal by it never finds an entry behind its cursor. Another shard's
// entries do not hold it back.
func TestBatchTimeNeverGoesBackWithinAShard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const a = "InternalAccount:a"
	db, clock, l0, l1 := twoShards(t, a)
	assert.Equal(t, t0, fund(t, l0, "first", a, 100).PostedAt)

	ahead := t0.Add(time.Hour)
	_, err := db.ExecContext(ctx, `INSERT INTO ledger_entries (id, ref, posted_at) VALUES ('from-an-instance-ahead', '', ?)`, ahead)
	require.NoError(t, err)
	assert.Equal(t, ahead, fund(t, l0, "behind", a, 100).PostedAt, "timed at the shard's last entry")
	assert.Equal(t, t0, fund(t, l1, "other-shard", a, 100).PostedAt, "shard 1 is not held back by shard 0")

	clock.Advance(2 * time.Hour)
	assert.Equal(t, t0.Add(2*time.Hour), fund(t, l0, "later", a, 100).PostedAt)
}
