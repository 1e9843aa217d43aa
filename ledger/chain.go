package ledger

import (
	"encoding/hex"
	"fmt"
)

// Chain break kinds, as VerifyChain and the stores' journal verification
// report them.
const (
	// BreakHash: the stored hash is not the hash of the entry as stored: the
	// entry (or one of its transfers) was edited after it was recorded.
	BreakHash = "hash"
	// BreakLink: the entry's PrevHash is not the stored hash of the entry
	// before it: an entry was removed, inserted or reordered, or one was
	// edited and re-hashed.
	BreakLink = "link"
	// BreakUnhashed: an entry without a hash follows hashed entries. Only
	// entries recorded before the chain existed may lack one.
	BreakUnhashed = "unhashed"
)

// ChainBreak is where the hash chain does not hold.
type ChainBreak struct {
	Kind    string
	Seq     int64
	EntryID string
	Message string
}

func (b ChainBreak) String() string { return b.Kind + ": " + b.Message }

// ChainCheck walks the journal in Seq order and checks its hash chain,
// keeping only the previous entry's hash. Entries recorded before the chain
// existed (no hash) are counted, not failed, as long as they all come
// first; the first hashed entry after them links to ZeroHash.
type ChainCheck struct {
	// Entries, Hashed and Unhashed count what was added.
	Entries, Hashed, Unhashed int64
	// FirstUnhashed and LastUnhashed are the Seq range of the entries
	// without a hash that predate the chain (0 when there are none).
	FirstUnhashed, LastUnhashed int64
	// Head is the hash of the last hashed entry.
	Head [32]byte

	started bool
	prev    [32]byte
	prevID  string
	buf     []byte
}

// Add checks e against the entries added before it and returns the break
// it shows, if any. After a break the walk goes on from e's stored hash, so
// one edited entry is reported once.
func (c *ChainCheck) Add(e JournalEntry) *ChainBreak {
	c.Entries++
	if e.Hash == ZeroHash {
		c.Unhashed++
		if c.started {
			return &ChainBreak{Kind: BreakUnhashed, Seq: e.Seq, EntryID: e.ID,
				Message: fmt.Sprintf("entry %s (seq %d) has no hash but follows hashed entries (the last %s)", e.ID, e.Seq, c.prevID)}
		}
		if c.FirstUnhashed == 0 {
			c.FirstUnhashed = e.Seq
		}
		c.LastUnhashed = e.Seq
		c.prevID = e.ID
		return nil
	}
	c.Hashed++
	wantPrev, prevID := c.prev, c.prevID
	c.started, c.prev, c.prevID, c.Head = true, e.Hash, e.ID, e.Hash
	c.buf = AppendCanonical(c.buf[:0], e.PrevHash, e)
	if got := sha256Sum(c.buf); got != e.Hash {
		return &ChainBreak{Kind: BreakHash, Seq: e.Seq, EntryID: e.ID,
			Message: fmt.Sprintf("entry %s (seq %d) does not match its hash: stored %s, its content hashes to %s",
				e.ID, e.Seq, short(e.Hash), short(got))}
	}
	if e.PrevHash != wantPrev {
		after := "the start of the chain"
		if prevID != "" {
			after = "entry " + prevID
		}
		return &ChainBreak{Kind: BreakLink, Seq: e.Seq, EntryID: e.ID,
			Message: fmt.Sprintf("entry %s (seq %d) links to %s, but %s has hash %s",
				e.ID, e.Seq, short(e.PrevHash), after, short(wantPrev))}
	}
	return nil
}

func short(h [32]byte) string { return hex.EncodeToString(h[:8]) }
