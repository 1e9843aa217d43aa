package ledger

import (
	"encoding/binary"
	"hash/maphash"
)

// JournalCheck verifies a journal streamed in Seq order, one entry at a
// time: its hash chain (ChainCheck), its replay into every account's
// counters and holds (JournalReplay), and the postings the journal implies
// for each account, folded into a digest per account so a store's own
// postings can be compared without holding them. Its memory is proportional
// to the accounts and holds, not the entries.
//
// The digests are order-independent (a keyed hash per posting, summed), so
// a store may read its postings in any order, e.g. one sequential scan:
// every posting carries the counters after it, which already pin its place
// in its account's history.
type JournalCheck struct {
	Chain ChainCheck

	replay   *JournalReplay
	postings *PostingReplay
	expected map[string]*PostingDigest
	seed     maphash.Seed
	breaks   []ChainBreak
}

// maxChainBreaks bounds what ChainBreaks keeps.
const maxChainBreaks = 50

// NewJournalCheck returns an empty check that expects the anchors (signed
// checkpoints) on the way. Its digests are keyed by a random seed, so a
// forged posting cannot be made to collide.
func NewJournalCheck(anchors ...Anchor) *JournalCheck {
	c := &JournalCheck{replay: NewJournalReplay(), postings: NewPostingReplay(),
		expected: map[string]*PostingDigest{}, seed: maphash.MakeSeed()}
	for _, a := range anchors {
		c.Chain.Expect(a)
	}
	return c
}

// Add checks and replays e.
func (c *JournalCheck) Add(e JournalEntry) {
	if b := c.Chain.Add(e); b != nil && len(c.breaks) < maxChainBreaks {
		c.breaks = append(c.breaks, *b)
	}
	c.replay.Add(e)
	c.postings.Add(e, func(p Posting) {
		d, ok := c.expected[p.AccountID]
		if !ok {
			d = &PostingDigest{}
			c.expected[p.AccountID] = d
		}
		d.add(c.seed, p.Transfer.ID, p.After)
	})
}

// ChainBreaks returns the chain breaks found so far, in Seq order, and
// the anchors the walk did not reach (ChainCheck.Finish): call it once the
// journal has been added.
func (c *JournalCheck) ChainBreaks() []ChainBreak {
	c.breaks = append(c.breaks, c.Chain.Finish()...)
	return c.breaks
}

// Counters returns an account's counters as the journal replays them.
func (c *JournalCheck) Counters(accountID string) Counters { return c.postings.Counters(accountID) }

// Expected returns the digest of the postings the journal implies for an
// account (zero when it has none).
func (c *JournalCheck) Expected(accountID string) PostingDigest {
	if d, ok := c.expected[accountID]; ok {
		return *d
	}
	return PostingDigest{}
}

// Accounts returns the ids of the accounts the journal touches.
func (c *JournalCheck) Accounts() []string {
	out := make([]string, 0, len(c.expected))
	for id := range c.expected {
		out = append(out, id)
	}
	return out
}

// AddStored folds one of a store's own postings (in any order) into d, the
// way Expected folds the journal's.
func (c *JournalCheck) AddStored(d *PostingDigest, transferID string, after Counters) {
	d.add(c.seed, transferID, after)
}

// AddStoredBytes is AddStored with the transfer id as bytes (no copy).
func (c *JournalCheck) AddStoredBytes(d *PostingDigest, transferID []byte, after Counters) {
	d.addBytes(c.seed, transferID, after)
}

// Violations checks the replay against a snapshot of accounts and pending
// transfers (see Verify).
func (c *JournalCheck) Violations(accounts []Account, pendings []PendingTransfer) []Violation {
	return c.replay.Check(accounts, pendings)
}

// PostingDigest folds an account's postings (transfer id and counters
// after each) into a count and the sum of their keyed hashes.
type PostingDigest struct {
	N   int64
	Sum uint64
}

func (d *PostingDigest) add(seed maphash.Seed, transferID string, after Counters) {
	var h maphash.Hash
	h.SetSeed(seed)
	_, _ = h.WriteString(transferID)
	d.fold(&h, after)
}

func (d *PostingDigest) addBytes(seed maphash.Seed, transferID []byte, after Counters) {
	var h maphash.Hash
	h.SetSeed(seed)
	_, _ = h.Write(transferID)
	d.fold(&h, after)
}

// fold hashes the counters after the transfer id already written to h and
// adds the result.
func (d *PostingDigest) fold(h *maphash.Hash, after Counters) {
	var b [32]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(after.DebitsPending))
	binary.LittleEndian.PutUint64(b[8:], uint64(after.DebitsPosted))
	binary.LittleEndian.PutUint64(b[16:], uint64(after.CreditsPending))
	binary.LittleEndian.PutUint64(b[24:], uint64(after.CreditsPosted))
	_, _ = h.Write(b[:])
	d.Sum += h.Sum64()
	d.N++
}
