package memory

import "github.com/corridorpay/corridor/ledger"

// chainLocked links je into the journal's hash chain: its PrevHash is the
// hash of the last recorded entry (ZeroHash for the first, or after entries
// recorded before the chain existed) and its Hash covers it (ledger.Hash).
// l.mu must be held. The memory ledger records one entry at a time under
// its mutex, so each entry is its own batch.
//
// postLocked calls it on each new journal entry right before appending it.
func (l *Ledger) chainLocked(je *ledger.JournalEntry) {
	prev := ledger.ZeroHash
	if n := len(l.journal); n > 0 {
		prev = l.journal[n-1].Hash
	}
	je.PrevHash = prev
	je.Hash = ledger.Hash(prev, *je)
}
