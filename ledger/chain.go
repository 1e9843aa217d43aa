package ledger

import (
	"encoding/hex"
	"fmt"
	"sort"
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
	// BreakUnhashed: an entry has no hash. The writer hashes every entry
	// (no released version predates the chain), so a missing hash was
	// removed: the evidence of an edit was stripped.
	BreakUnhashed = "unhashed"
	// BreakCheckpoint: the journal does not lead to a signed checkpoint: the
	// entry at the checkpoint's seq has another hash (the journal was
	// rewritten and re-chained after the checkpoint was signed), or the
	// journal ends before it (entries were removed).
	BreakCheckpoint = "checkpoint"
)

// ChainBreak is where the hash chain does not hold.
type ChainBreak struct {
	Kind    string
	Seq     int64
	EntryID string
	Message string
}

func (b ChainBreak) String() string { return b.Kind + ": " + b.Message }

// ChainCheck walks the journal in Seq order and checks its hash chains,
// keeping only each chain's previous hash. The journal holds one chain per
// shard (JournalEntry.Shard; one shard, 0, unless the store runs several
// writers on chains of their own): an entry links to the entry before it
// on its shard. Every entry must be hashed, the first of each shard
// linking to ZeroHash. Anchors (Expect) pin the hash the entry at a seq
// must have, so a chain recomputed end to end, consistent with itself,
// still fails against a checkpoint signed before the rewrite.
type ChainCheck struct {
	// Entries, Hashed and Unhashed count what was added; every unhashed
	// entry is a break.
	Entries, Hashed, Unhashed int64
	// Head is the hash of the last entry added, HeadSeq and HeadID its seq
	// and id (on any shard; Heads has each shard's).
	Head    [32]byte
	HeadSeq int64
	HeadID  string

	chains  map[int16]*chainLink
	buf     []byte
	anchors map[int64]Anchor
}

// chainLink is where one shard's chain stands in the walk.
type chainLink struct {
	head      ChainHead
	prevKnown bool // false after an unhashed entry: its hash is unknown
}

// ChainHead is the last entry of one shard's chain: what a checkpoint
// signs.
type ChainHead struct {
	Shard int16
	Seq   int64
	ID    string
	Hash  [32]byte
}

// Heads returns the head of every shard's chain walked so far, by shard.
func (c *ChainCheck) Heads() []ChainHead {
	out := make([]ChainHead, 0, len(c.chains))
	for _, l := range c.chains {
		out = append(out, l.head)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Shard < out[j].Shard })
	return out
}

// Anchor is the hash the entry at Seq must have, from a signed checkpoint.
type Anchor struct {
	Seq  int64
	Head [32]byte
	// Source names the anchor in messages (e.g. "the checkpoint of
	// 2026-11-25T10:00:00Z").
	Source string
}

// Expect pins the hash of the entry at a.Seq. Call it before adding
// entries.
func (c *ChainCheck) Expect(a Anchor) {
	if c.anchors == nil {
		c.anchors = map[int64]Anchor{}
	}
	c.anchors[a.Seq] = a
}

// Add checks e against the entries added before it and returns the break
// it shows, if any. After a break the walk goes on from e's stored hash, so
// one edited entry is reported once.
func (c *ChainCheck) Add(e JournalEntry) *ChainBreak {
	c.Entries++
	l, ok := c.chains[e.Shard]
	if !ok {
		if c.chains == nil {
			c.chains = map[int16]*chainLink{}
		}
		l = &chainLink{prevKnown: true, head: ChainHead{Shard: e.Shard}}
		c.chains[e.Shard] = l
	}
	wantPrev, prevKnown, prevID := l.head.Hash, l.prevKnown, l.head.ID
	l.head = ChainHead{Shard: e.Shard, Seq: e.Seq, ID: e.ID, Hash: e.Hash}
	c.Head, c.HeadSeq, c.HeadID = e.Hash, e.Seq, e.ID
	if e.Hash == ZeroHash {
		delete(c.anchors, e.Seq) // reached; the break below reports it
		c.Unhashed++
		l.prevKnown = false
		return &ChainBreak{Kind: BreakUnhashed, Seq: e.Seq, EntryID: e.ID,
			Message: fmt.Sprintf("entry %s (seq %d) has no hash: every entry is hashed when it is recorded, so its hash was removed", e.ID, e.Seq)}
	}
	c.Hashed++
	l.prevKnown = true
	anchor, anchored := c.anchors[e.Seq]
	delete(c.anchors, e.Seq) // reached: a break below already reports it
	c.buf = AppendCanonical(c.buf[:0], e.PrevHash, e)
	if got := sha256Sum(c.buf); got != e.Hash {
		return &ChainBreak{Kind: BreakHash, Seq: e.Seq, EntryID: e.ID,
			Message: fmt.Sprintf("entry %s (seq %d) does not match its hash: stored %s, its content hashes to %s",
				e.ID, e.Seq, short(e.Hash), short(got))}
	}
	if prevKnown && e.PrevHash != wantPrev {
		after := "the start of the chain"
		if prevID != "" {
			after = "entry " + prevID
		}
		if e.Shard != 0 {
			after += fmt.Sprintf(" (shard %d)", e.Shard)
		}
		return &ChainBreak{Kind: BreakLink, Seq: e.Seq, EntryID: e.ID,
			Message: fmt.Sprintf("entry %s (seq %d) links to %s, but %s has hash %s",
				e.ID, e.Seq, short(e.PrevHash), after, short(wantPrev))}
	}
	if anchored && anchor.Head != e.Hash {
		return &ChainBreak{Kind: BreakCheckpoint, Seq: e.Seq, EntryID: e.ID,
			Message: fmt.Sprintf("entry %s (seq %d) has hash %s, but %s says %s: the journal was rewritten after it was signed",
				e.ID, e.Seq, short(e.Hash), anchor.Source, short(anchor.Head))}
	}
	return nil
}

// Finish reports the anchors the walk never reached: the journal ends
// before them. Call it after the last Add.
func (c *ChainCheck) Finish() []ChainBreak {
	var out []ChainBreak
	for _, a := range c.anchors {
		out = append(out, ChainBreak{Kind: BreakCheckpoint, Seq: a.Seq,
			Message: fmt.Sprintf("%s names seq %d, but the journal ends at seq %d: entries were removed", a.Source, a.Seq, c.HeadSeq)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	c.anchors = nil
	return out
}

func short(h [32]byte) string { return hex.EncodeToString(h[:8]) }
