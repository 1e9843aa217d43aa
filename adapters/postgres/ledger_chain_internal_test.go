package postgres

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/testkit"
)

// RechainForTest recomputes the journal's whole hash chain in seq order
// from ZeroHash, as the writer chains it: what someone who rewrote an
// entry would do to hide it (and how tests chain entries they wrote
// directly).
var RechainForTest = rechainForTest

func rechainForTest(ctx context.Context, db *bun.DB) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		es, err := loadEntries(ctx, tx, `ORDER BY seq`)
		if err != nil {
			return err
		}
		ledger.Chain(ledger.ZeroHash, es)
		for _, e := range es {
			if _, err := tx.ExecContext(ctx, `UPDATE ledger_entries SET hash = ?, prev_hash = ? WHERE id = ?`,
				e.Hash[:], e.PrevHash[:], e.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// chainBatch links a batch to the hash of the last committed entry, read
// after the journal lock is granted: a batch that waited for the lock sees
// the entry the lock holder committed, even though its own statement (and
// transaction) started before that commit.
func TestChainBatchLinksToTheCommittedHead(t *testing.T) {
	ctx := context.Background()
	db := scratchDB(t)
	clock := testkit.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	now := clock.Now()
	batch := []ledger.Entry{
		{ID: "e1", Ref: "Test:e1", Transfers: []ledger.Transfer{{ID: "t1", Kind: ledger.Single, DebitAccountID: "a", CreditAccountID: "b", Amount: 5, Currency: "USD"}}},
		{ID: "e2", Ref: "Test:e2", Transfers: []ledger.Transfer{{ID: "t2", Kind: ledger.Single, DebitAccountID: "b", CreditAccountID: "a", Amount: 3, Currency: "USD"}}},
	}

	// An empty journal: the batch starts the chain.
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	hashes, prevs, err := chainBatch(ctx, tx, batch, now)
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	want := []ledger.JournalEntry{{Entry: batch[0], PostedAt: now}, {Entry: batch[1], PostedAt: now}}
	ledger.Chain(ledger.ZeroHash, want)
	assert.Equal(t, want[0].Hash[:], hashes[0])
	assert.Equal(t, ledger.ZeroHash[:], prevs[0])
	assert.Equal(t, want[1].Hash[:], hashes[1])
	assert.Equal(t, want[0].Hash[:], prevs[1])

	// The lock holder commits an entry with a hash while the batch waits.
	holder, err := db.BeginTx(ctx, &sql.TxOptions{})
	require.NoError(t, err)
	_, err = holder.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, journalLock)
	require.NoError(t, err)
	head := [32]byte{1, 2, 3}
	waiter, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = waiter.Rollback() }()
	_, err = waiter.ExecContext(ctx, `SELECT 1`) // the waiter's transaction is under way
	require.NoError(t, err)
	type result struct {
		hashes, prevs [][]byte
		err           error
	}
	done := make(chan result, 1)
	go func() {
		h, p, err := chainBatch(ctx, waiter, batch, now)
		done <- result{h, p, err}
	}()
	select {
	case <-done:
		t.Fatal("chainBatch did not wait for the journal lock")
	case <-time.After(200 * time.Millisecond):
	}
	_, err = holder.ExecContext(ctx, `INSERT INTO ledger_entries (id, ref, posted_at, hash, prev_hash) VALUES ('e0', '', ?, ?, ?)`,
		now, head[:], ledger.ZeroHash[:])
	require.NoError(t, err)
	require.NoError(t, holder.Commit())
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, head[:], r.prevs[0], "the batch links to the entry committed while it waited")
	want = []ledger.JournalEntry{{Entry: batch[0], PostedAt: now}, {Entry: batch[1], PostedAt: now}}
	ledger.Chain(head, want)
	assert.Equal(t, want[1].Hash[:], r.hashes[1])
}

// scratchDB is testkit/pgtest.NewDB for this package's internal tests
// (pgtest imports this package).
func scratchDB(t *testing.T) *bun.DB {
	t.Helper()
	ctx := context.Background()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	admin, err := Open(ctx, base)
	require.NoError(t, err, "PostgreSQL unreachable")
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "corridor_t_" + hex.EncodeToString(b[:])
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/" + name
	db, err := Open(ctx, u.String())
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = db.Close()
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = admin.Close()
	})
	_, err = Migrate(ctx, db, nil)
	require.NoError(t, err)
	return db
}

// COPY text output arrives in arbitrary pieces; rows, fields, NULLs and
// escapes come out whole.
func TestCopyRowWriterSplitsRows(t *testing.T) {
	var got [][]string
	w := &copyRowWriter{fields: make([][]byte, 3), fn: func(f [][]byte) error {
		row := make([]string, len(f))
		for i, b := range f {
			if b == nil {
				row[i] = "<null>"
			} else {
				row[i] = string(b)
			}
		}
		got = append(got, row)
		return nil
	}}
	stream := "a\tb\\tc\t\\N\n1\t\\\\x\\n\t\\x41\\101\n"
	for i := 0; i < len(stream); i += 5 {
		_, err := w.Write([]byte(stream[i:min(i+5, len(stream))]))
		require.NoError(t, err)
	}
	require.NoError(t, w.err)
	assert.Empty(t, w.partial)
	assert.Equal(t, [][]string{{"a", "b\tc", "<null>"}, {"1", "\\x\n", "AA"}}, got)
	_, err := w.Write([]byte("only\ttwo\n"))
	assert.Error(t, err)
	n, err := parseInt([]byte("-1234567"))
	require.NoError(t, err)
	assert.Equal(t, int64(-1234567), n)
	_, err = parseInt([]byte("12a"))
	assert.Error(t, err)
}

// chainBatch links a batch's accepted entries into the journal's hash
// chain (ledger/hash.go) and returns, in accepted order, each entry's hash
// and previous hash for ledger_entries' hash and prev_hash columns.
//
// The chain is per group-commit batch: ledger_chain_tail takes the journal
// lock (the transaction-scoped advisory lock the journal insert takes
// anyway, so taking it a statement earlier changes no lock order) and reads
// the hash of the last committed entry; the batch's entries then chain in
// order after it, in Go. Batches are already serialised by that lock, so
// chaining serialises nothing more, and it costs one round trip per batch,
// not per entry. postedAt is the batch's time as written (posted_at).
//
// The writer does the same inside its load statement (ledger_batch.go),
// so chaining costs it no round trip; this standalone form re-chains a
// journal in tests (RechainForTest).
func chainBatch(ctx context.Context, tx bun.Tx, accepted []ledger.Entry, postedAt time.Time) (hashes, prevs [][]byte, err error) {
	var head []byte
	if err := tx.QueryRowContext(ctx, `SELECT hash FROM ledger_chain_tail(?, 0::smallint)`, journalLock).Scan(&head); err != nil {
		return nil, nil, fmt.Errorf("chain head: %w", err)
	}
	prev := ledger.ZeroHash
	switch len(head) {
	case 0: // an empty journal, or its last entry predates the chain
	case len(prev):
		copy(prev[:], head)
	default:
		return nil, nil, fmt.Errorf("%w: the last entry's hash has %d bytes", errLedgerInternal, len(head))
	}
	hashes, prevs = make([][]byte, len(accepted)), make([][]byte, len(accepted))
	for i, e := range accepted {
		je := ledger.JournalEntry{Entry: e, PostedAt: postedAt}
		h := ledger.Hash(prev, je)
		hashes[i], prevs[i] = append([]byte(nil), h[:]...), append([]byte(nil), prev[:]...)
		prev = h
	}
	return hashes, prevs, nil
}
