package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ledger"
)

// chainBatch links a batch's accepted entries into the journal's hash
// chain (ledger/hash.go) and returns, in accepted order, each entry's hash
// and previous hash for ledger_entries' hash and prev_hash columns.
//
// The chain is per group-commit batch: ledger_chain_head takes the journal
// lock (the transaction-scoped advisory lock the journal insert takes
// anyway, so taking it a statement earlier changes no lock order) and reads
// the hash of the last committed entry; the batch's entries then chain in
// order after it, in Go. Batches are already serialised by that lock, so
// chaining serialises nothing more, and it costs one round trip per batch,
// not per entry. postedAt is the batch's time as written (posted_at).
//
// The writer calls it in postBatch right before insertJournal:
//
//	if w.entryHash, w.entryPrev, err = chainBatch(ctx, tx, accepted, now); err != nil {
//		return nil, err
//	}
func chainBatch(ctx context.Context, tx bun.Tx, accepted []ledger.Entry, postedAt time.Time) (hashes, prevs [][]byte, err error) {
	var head []byte
	if err := tx.QueryRowContext(ctx, `SELECT ledger_chain_head(?)`, journalLock).Scan(&head); err != nil {
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
