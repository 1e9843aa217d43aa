package ledger_test

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
)

func hashedEntry() ledger.JournalEntry {
	return ledger.JournalEntry{
		Entry: ledger.Entry{ID: "settle:Transaction:1", Ref: "Transaction:1", Transfers: []ledger.Transfer{
			{ID: "settle:1", Kind: ledger.PostPending, PendingID: "hold:1", DebitAccountID: alice,
				CreditAccountID: ledger.RailSettlementID("ACH", "USD"), Amount: 2500, Currency: "USD", Code: "transfer_out"},
			{ID: "fee:1", Kind: ledger.Single, DebitAccountID: alice, CreditAccountID: feeUSD, Amount: 30,
				Currency: "USD", Timeout: time.Minute, Code: "fee"},
		}},
		Seq:      7,
		PostedAt: time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC),
	}
}

// The canonical form is specified in hash.go; this pins it byte for byte
// so an accidental change of field order or encoding fails here.
func TestHashCanonicalFormIsPinned(t *testing.T) {
	e := ledger.JournalEntry{Entry: ledger.Entry{ID: "e1", Ref: "R", Transfers: []ledger.Transfer{
		{ID: "t1", Kind: ledger.Single, DebitAccountID: "a", CreditAccountID: "b", Amount: -5, Currency: "USD", Code: "c"},
	}}, PostedAt: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)}
	got := ledger.AppendCanonical(nil, ledger.ZeroHash, e)
	field := func(s string) string { return string([]byte{0, 0, 0, byte(len(s))}) + s }
	want := field("corridor.ledger.entry.v1") + field(string(make([]byte, 32))) + field("e1") + field("R") + field("") +
		field("2026-01-02T03:04:05.0000006Z") + field("1") +
		field("t1") + field("single") + field("a") + field("b") + field("-5") + field("USD") + field("") + field("0") + field("c")
	assert.Equal(t, want, string(got))
	sum := ledger.Hash(ledger.ZeroHash, e)
	assert.Len(t, hex.EncodeToString(sum[:]), 64)
}

func TestHashCoversEveryRecordedField(t *testing.T) {
	base := hashedEntry()
	h0 := ledger.Hash(ledger.ZeroHash, base)
	assert.Equal(t, h0, ledger.Hash(ledger.ZeroHash, hashedEntry()), "deterministic")

	// The seq is not part of the hash.
	same := hashedEntry()
	same.Seq = 99
	assert.Equal(t, h0, ledger.Hash(ledger.ZeroHash, same))
	// Neither is the time zone the instant is expressed in.
	same.PostedAt = same.PostedAt.In(time.FixedZone("X", 5*3600))
	assert.Equal(t, h0, ledger.Hash(ledger.ZeroHash, same))

	edits := map[string]func(e *ledger.JournalEntry){
		"id":        func(e *ledger.JournalEntry) { e.ID += "x" },
		"ref":       func(e *ledger.JournalEntry) { e.Ref = "Transaction:2" },
		"reverses":  func(e *ledger.JournalEntry) { e.Reverses = "e0" },
		"postedAt":  func(e *ledger.JournalEntry) { e.PostedAt = e.PostedAt.Add(time.Microsecond) },
		"transfers": func(e *ledger.JournalEntry) { e.Transfers = e.Transfers[:1] },
		"order":     func(e *ledger.JournalEntry) { e.Transfers[0], e.Transfers[1] = e.Transfers[1], e.Transfers[0] },
		"t.id":      func(e *ledger.JournalEntry) { e.Transfers[1].ID = "fee:2" },
		"t.kind":    func(e *ledger.JournalEntry) { e.Transfers[1].Kind = ledger.Pending },
		"t.debit":   func(e *ledger.JournalEntry) { e.Transfers[1].DebitAccountID = bob },
		"t.credit":  func(e *ledger.JournalEntry) { e.Transfers[1].CreditAccountID = bob },
		"t.amount":  func(e *ledger.JournalEntry) { e.Transfers[0].Amount = 2501 },
		"t.cur":     func(e *ledger.JournalEntry) { e.Transfers[1].Currency = "EUR" },
		"t.pending": func(e *ledger.JournalEntry) { e.Transfers[0].PendingID = "hold:2" },
		"t.timeout": func(e *ledger.JournalEntry) { e.Transfers[1].Timeout = time.Second },
		"t.code":    func(e *ledger.JournalEntry) { e.Transfers[1].Code = "fees" },
		// Moving a character between adjacent fields must not collide:
		// every field is length-prefixed.
		"boundary": func(e *ledger.JournalEntry) { e.ID, e.Ref = "settle:Transaction:1T", "ransaction:1" },
	}
	for name, edit := range edits {
		e := hashedEntry()
		e.Transfers = append([]ledger.Transfer(nil), e.Transfers...)
		edit(&e)
		assert.NotEqual(t, h0, ledger.Hash(ledger.ZeroHash, e), name)
	}
	var prev [32]byte
	prev[0] = 1
	assert.NotEqual(t, h0, ledger.Hash(prev, base), "the previous hash is chained in")
}

func chainOf(n int) []ledger.JournalEntry {
	es := make([]ledger.JournalEntry, n)
	for i := range es {
		e := hashedEntry()
		e.ID = e.ID + ":" + string(rune('a'+i))
		e.Seq = int64(i + 1)
		es[i] = e
	}
	return es
}

func TestChainLinksEachEntryToThePreviousOne(t *testing.T) {
	es := chainOf(4)
	head := ledger.Chain(ledger.ZeroHash, es)
	assert.Equal(t, ledger.ZeroHash, es[0].PrevHash)
	for i := 1; i < len(es); i++ {
		assert.Equal(t, es[i-1].Hash, es[i].PrevHash)
		assert.Equal(t, ledger.Hash(es[i].PrevHash, es[i]), es[i].Hash)
	}
	assert.Equal(t, es[3].Hash, head)

	// Chaining in two batches gives the same chain as one.
	again := chainOf(4)
	mid := ledger.Chain(ledger.ZeroHash, again[:2])
	assert.Equal(t, head, ledger.Chain(mid, again[2:]))

	var c ledger.ChainCheck
	for _, e := range es {
		require.Nil(t, c.Add(e))
	}
	assert.Equal(t, int64(4), c.Hashed)
	assert.Equal(t, head, c.Head)
}

func TestChainCheckNamesTheFirstBreak(t *testing.T) {
	check := func(es []ledger.JournalEntry) (*ledger.ChainBreak, ledger.ChainCheck) {
		var c ledger.ChainCheck
		var first *ledger.ChainBreak
		for _, e := range es {
			if b := c.Add(e); b != nil && first == nil {
				first = b
			}
		}
		return first, c
	}

	t.Run("edited amount", func(t *testing.T) {
		es := chainOf(5)
		ledger.Chain(ledger.ZeroHash, es)
		es[2].Transfers = append([]ledger.Transfer(nil), es[2].Transfers...)
		es[2].Transfers[0].Amount++
		b, _ := check(es)
		require.NotNil(t, b)
		assert.Equal(t, ledger.BreakHash, b.Kind)
		assert.Equal(t, es[2].ID, b.EntryID)
		assert.Equal(t, int64(3), b.Seq)
	})
	t.Run("edited and re-hashed", func(t *testing.T) {
		es := chainOf(5)
		ledger.Chain(ledger.ZeroHash, es)
		es[2].Ref = "Transaction:forged"
		es[2].Hash = ledger.Hash(es[2].PrevHash, es[2])
		b, _ := check(es)
		require.NotNil(t, b)
		assert.Equal(t, ledger.BreakLink, b.Kind)
		assert.Equal(t, es[3].ID, b.EntryID)
		assert.Contains(t, b.Message, es[2].ID)
	})
	t.Run("deleted entry", func(t *testing.T) {
		es := chainOf(5)
		ledger.Chain(ledger.ZeroHash, es)
		es = append(es[:1], es[2:]...)
		b, _ := check(es)
		require.NotNil(t, b)
		assert.Equal(t, ledger.BreakLink, b.Kind)
		assert.Equal(t, "settle:Transaction:1:c", b.EntryID)
	})
	t.Run("hashes stripped from the start", func(t *testing.T) {
		es := chainOf(5)
		ledger.Chain(ledger.ZeroHash, es[2:])
		b, c := check(es)
		require.NotNil(t, b, "no released version predates the chain: an unhashed entry is a break")
		assert.Equal(t, ledger.BreakUnhashed, b.Kind)
		assert.Equal(t, es[0].ID, b.EntryID)
		assert.Equal(t, int64(2), c.Unhashed)
		assert.Equal(t, int64(3), c.Hashed)
	})
	t.Run("hash removed inside the chain", func(t *testing.T) {
		es := chainOf(5)
		ledger.Chain(ledger.ZeroHash, es)
		es[3].Hash, es[3].PrevHash = ledger.ZeroHash, ledger.ZeroHash
		b, _ := check(es)
		require.NotNil(t, b)
		assert.Equal(t, ledger.BreakUnhashed, b.Kind)
		assert.Equal(t, es[3].ID, b.EntryID)
	})
}

// Each shard is a chain of its own: an entry links to the entry before it
// on its shard, whatever other shards wrote in between, and a break on one
// shard names that shard and leaves the other's chain whole.
func TestChainCheckKeepsOneChainPerShard(t *testing.T) {
	es := chainOf(6)
	var zero, one []ledger.JournalEntry
	for i := range es {
		es[i].Shard = int16(i % 2)
	}
	for i := 0; i < len(es); i += 2 {
		zero = append(zero, es[i])
		one = append(one, es[i+1])
	}
	h0 := ledger.Chain(ledger.ZeroHash, zero)
	h1 := ledger.Chain(ledger.ZeroHash, one)
	interleave := func() []ledger.JournalEntry {
		var out []ledger.JournalEntry
		for i := range zero {
			out = append(out, zero[i], one[i])
		}
		return out
	}

	var c ledger.ChainCheck
	for _, e := range interleave() {
		require.Nil(t, c.Add(e))
	}
	assert.Equal(t, []ledger.ChainHead{
		{Shard: 0, Seq: zero[2].Seq, ID: zero[2].ID, Hash: h0},
		{Shard: 1, Seq: one[2].Seq, ID: one[2].ID, Hash: h1},
	}, c.Heads())
	assert.Equal(t, h1, c.Head, "Head is the last entry walked")

	// Shard 1's middle entry removed: shard 1 breaks at its next entry,
	// shard 0 is untouched.
	cut := []ledger.JournalEntry{one[0], one[2]}
	var d ledger.ChainCheck
	var breaks []*ledger.ChainBreak
	for _, e := range append(append([]ledger.JournalEntry(nil), zero...), cut...) {
		if b := d.Add(e); b != nil {
			breaks = append(breaks, b)
		}
	}
	require.Len(t, breaks, 1)
	assert.Equal(t, ledger.BreakLink, breaks[0].Kind)
	assert.Equal(t, cut[1].ID, breaks[0].EntryID)
	assert.Contains(t, breaks[0].Message, "(shard 1)")

	// Chaining one shard's entries onto another's is a break too.
	moved := interleave()
	moved[1].Shard = 0
	var m ledger.ChainCheck
	var first *ledger.ChainBreak
	for _, e := range moved {
		if b := m.Add(e); b != nil && first == nil {
			first = b
		}
	}
	require.NotNil(t, first)
	assert.Equal(t, moved[1].ID, first.EntryID)
}
