package ledger_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
)

func checkpointKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return pub, priv
}

func TestCheckpointRoundTrip(t *testing.T) {
	pub, priv := checkpointKey(t)
	es := chainOf(3)
	head := ledger.Chain(ledger.ZeroHash, es)
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	cp := ledger.SignCheckpoint(priv, ledger.ChainHead{Seq: es[2].Seq, ID: es[2].ID, Hash: head}, at)
	assert.Equal(t, ledger.KeyID(pub), cp.KeyID)
	assert.NotContains(t, string(cp.SignedBytes()), "shard", "a checkpoint of shard 0 signs what it always did")

	var file bytes.Buffer
	require.NoError(t, ledger.AppendCheckpoint(&file, cp))
	require.NoError(t, ledger.AppendCheckpoint(&file, cp))
	read, err := ledger.ReadCheckpoints(&file)
	require.NoError(t, err)
	require.Len(t, read, 2)
	anchors, err := ledger.CheckpointAnchors(read, pub)
	require.NoError(t, err)
	assert.Equal(t, head, anchors[0].Head)
	assert.Equal(t, es[2].Seq, anchors[0].Seq)

	// Another key, or any edited field, does not verify.
	other, _ := checkpointKey(t)
	_, err = cp.Verify(other)
	assert.ErrorIs(t, err, ledger.ErrCheckpointSignature)
	for name, edit := range map[string]func(c *ledger.Checkpoint){
		"seq":     func(c *ledger.Checkpoint) { c.Seq++ },
		"entry":   func(c *ledger.Checkpoint) { c.EntryID += "x" },
		"head":    func(c *ledger.Checkpoint) { c.Head = "00" + c.Head[2:] },
		"time":    func(c *ledger.Checkpoint) { c.At = c.At.Add(time.Second) },
		"shard":   func(c *ledger.Checkpoint) { c.Shard = 1 },
		"garbled": func(c *ledger.Checkpoint) { c.Signature = "not base64!" },
	} {
		forged := cp
		edit(&forged)
		_, err := forged.Verify(pub)
		assert.ErrorIs(t, err, ledger.ErrCheckpointSignature, name)
	}
	_, err = ledger.ReadCheckpoints(bytes.NewBufferString("\n\n"))
	assert.ErrorContains(t, err, "no checkpoint")
	_, err = ledger.ReadCheckpoints(bytes.NewBufferString("{\"seq\":1}\nnot json\n"))
	assert.ErrorContains(t, err, "line 2")
}

// A chain recomputed end to end is consistent with itself; only an anchor
// from before the rewrite tells.
func TestChainCheckAnchors(t *testing.T) {
	es := chainOf(5)
	ledger.Chain(ledger.ZeroHash, es)
	anchor := ledger.Anchor{Seq: es[3].Seq, Head: es[3].Hash, Source: "the checkpoint"}

	walk := func(es []ledger.JournalEntry, anchors ...ledger.Anchor) []ledger.ChainBreak {
		c := ledger.NewJournalCheck(anchors...)
		for _, e := range es {
			c.Add(e)
		}
		return c.ChainBreaks()
	}
	assert.Empty(t, walk(es, anchor))

	forged := chainOf(5)
	forged[1].Transfers = append([]ledger.Transfer(nil), forged[1].Transfers...)
	forged[1].Transfers[0].Amount++
	ledger.Chain(ledger.ZeroHash, forged)
	assert.Empty(t, walk(forged), "a recomputed chain verifies on its own")
	bs := walk(forged, anchor)
	require.Len(t, bs, 1)
	assert.Equal(t, ledger.BreakCheckpoint, bs[0].Kind)
	assert.Equal(t, es[3].ID, bs[0].EntryID)
	assert.Contains(t, bs[0].Message, "rewritten")

	// A journal cut short before the anchor.
	bs = walk(es[:3], anchor)
	require.Len(t, bs, 1)
	assert.Equal(t, ledger.BreakCheckpoint, bs[0].Kind)
	assert.Contains(t, bs[0].Message, "ends at seq")
}
