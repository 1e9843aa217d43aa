package ledger

import (
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Checkpoint anchors the journal outside the database: the seq, id and
// hash of the last entry of one of its chains (Shard; one checkpoint per
// chain, see ChainCheck) at a moment, signed with a key the database does
// not hold (Ed25519). A chain recomputed end to end is consistent with
// itself; it no longer leads to a checkpoint signed before the rewrite.
//
// On disk a checkpoint is one JSON line; a checkpoint file holds one line
// per checkpoint, oldest first (ReadCheckpoints).
type Checkpoint struct {
	Seq     int64     `json:"seq"`
	EntryID string    `json:"entryId"`
	Head    string    `json:"head"` // hex SHA-256 of the entry at Seq
	Shard   int16     `json:"shard,omitempty"`
	At      time.Time `json:"at"`
	// KeyID is the first 16 hex digits of SHA-256 of the public key, so a
	// reader can tell which key signed it.
	KeyID string `json:"keyId"`
	// Signature is the base64 Ed25519 signature of SignedBytes.
	Signature string `json:"signature"`
}

const checkpointDomain = "corridor-ledger-checkpoint/v1"

// SignedBytes is what the signature covers: a domain tag, then seq, entry
// id, head and time (RFC 3339, nanoseconds, UTC), one per line, and the
// shard on a last line when it is not 0 (so checkpoints of the one chain
// read as they always did).
func (c Checkpoint) SignedBytes() []byte {
	lines := []string{checkpointDomain, strconv.FormatInt(c.Seq, 10), c.EntryID,
		strings.ToLower(c.Head), c.At.UTC().Format(time.RFC3339Nano)}
	if c.Shard != 0 {
		lines = append(lines, "shard "+strconv.Itoa(int(c.Shard)))
	}
	return []byte(strings.Join(lines, "\n"))
}

// KeyID names a public key: the first 16 hex digits of its SHA-256.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// SignCheckpoint signs a chain's head (seq, entry id, hash, shard) at time
// at.
func SignCheckpoint(key ed25519.PrivateKey, head ChainHead, at time.Time) Checkpoint {
	c := Checkpoint{Seq: head.Seq, EntryID: head.ID, Head: hex.EncodeToString(head.Hash[:]), Shard: head.Shard, At: at.UTC(),
		KeyID: KeyID(key.Public().(ed25519.PublicKey))}
	c.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, c.SignedBytes()))
	return c
}

// ErrCheckpointSignature: a checkpoint is not signed by the key it is
// checked with.
var ErrCheckpointSignature = errors.New("the checkpoint's signature does not verify with the given key")

// Verify checks the signature with pub and returns the anchor the journal
// must lead to.
func (c Checkpoint) Verify(pub ed25519.PublicKey) (Anchor, error) {
	sig, err := base64.StdEncoding.DecodeString(c.Signature)
	if err != nil || !ed25519.Verify(pub, c.SignedBytes(), sig) {
		return Anchor{}, ErrCheckpointSignature
	}
	a := Anchor{Seq: c.Seq, Source: "the checkpoint of " + c.At.UTC().Format(time.RFC3339Nano)}
	h, err := hex.DecodeString(c.Head)
	if err != nil || len(h) != len(a.Head) || c.Seq <= 0 {
		return Anchor{}, fmt.Errorf("the checkpoint of seq %d is malformed", c.Seq)
	}
	copy(a.Head[:], h)
	return a, nil
}

// AppendCheckpoint writes c as one JSON line.
func AppendCheckpoint(w io.Writer, c Checkpoint) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadCheckpoints reads a checkpoint file: one JSON checkpoint per line,
// blank lines ignored.
func ReadCheckpoints(r io.Reader) ([]Checkpoint, error) {
	var out []Checkpoint
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var c Checkpoint
		if err := json.Unmarshal([]byte(text), &c); err != nil {
			return nil, fmt.Errorf("checkpoint line %d: %w", line, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("the checkpoint file holds no checkpoint")
	}
	return out, nil
}

// CheckpointAnchors verifies every checkpoint's signature with pub and
// returns their anchors; the first that fails names its line.
func CheckpointAnchors(cs []Checkpoint, pub ed25519.PublicKey) ([]Anchor, error) {
	out := make([]Anchor, 0, len(cs))
	for i, c := range cs {
		a, err := c.Verify(pub)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %d (seq %d, key %s; the given key is %s): %w", i+1, c.Seq, c.KeyID, KeyID(pub), err)
		}
		out = append(out, a)
	}
	return out, nil
}
