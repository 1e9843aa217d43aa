package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"time"
)

// The journal is tamper-evident: every entry carries Hash = SHA-256 over its
// canonical form, and the canonical form includes PrevHash, the Hash of the
// entry before it in Seq order. Editing, deleting or reordering a recorded
// entry changes its hash or breaks the next entry's link, and VerifyChain
// names the first entry where that shows (ChainCheck).
//
// Canonical form, version 1 (a change of any rule below is a new version tag):
//
//	str("corridor.ledger.entry.v1")
//	str(prev)                       the 32 raw bytes of PrevHash
//	str(ID) str(Ref) str(Reverses)
//	str(PostedAt in UTC, RFC 3339 with nanoseconds: time.RFC3339Nano)
//	int(number of transfers)
//	per transfer, in entry order:
//	  str(ID) str(Kind: "single", "pending", "post_pending", "void_pending")
//	  str(DebitAccountID) str(CreditAccountID) int(Amount) str(Currency)
//	  str(PendingID) int(Timeout in nanoseconds) str(Code)
//
// where str(b) is b's length as a 4-byte big-endian unsigned integer followed
// by b, and int(n) is str of n in base-10 ASCII ("-" for negatives, no
// leading zeros). Fields are fixed in this order and every one is length
// prefixed, so no two different entries encode alike. Transfers are hashed
// as recorded (a post or void carries the accounts, currency and amount it
// resolved). Seq is not hashed: the store assigns it after the hash is
// computed, and the links already fix the order. Events about the money
// movement (ports.Records.Events, the events outbox) are not part of the
// entry and are not hashed.
const hashVersion = "corridor.ledger.entry.v1"

// ZeroHash is the PrevHash of the first entry of a chain, and the Hash of
// an entry recorded before the chain existed.
var ZeroHash [32]byte

// Hash returns the SHA-256 of e's canonical form chained to prev (see
// above). It reads e's identity, PostedAt and transfers only.
func Hash(prev [32]byte, e JournalEntry) [32]byte {
	var buf [512]byte
	return sha256Sum(AppendCanonical(buf[:0], prev, e))
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }

// AppendCanonical appends e's canonical form chained to prev to dst.
func AppendCanonical(dst []byte, prev [32]byte, e JournalEntry) []byte {
	dst = appendField(dst, hashVersion)
	dst = appendBytes(dst, prev[:])
	dst = appendField(dst, e.ID)
	dst = appendField(dst, e.Ref)
	dst = appendField(dst, e.Reverses)
	var ts [40]byte
	dst = appendBytes(dst, e.PostedAt.UTC().AppendFormat(ts[:0], time.RFC3339Nano))
	dst = appendInt(dst, int64(len(e.Transfers)))
	for _, t := range e.Transfers {
		dst = appendField(dst, t.ID)
		dst = appendField(dst, t.Kind.String())
		dst = appendField(dst, t.DebitAccountID)
		dst = appendField(dst, t.CreditAccountID)
		dst = appendInt(dst, t.Amount)
		dst = appendField(dst, t.Currency)
		dst = appendField(dst, t.PendingID)
		dst = appendInt(dst, int64(t.Timeout))
		dst = appendField(dst, t.Code)
	}
	return dst
}

// Chain sets PrevHash and Hash on each of entries in order, the first
// linking to prev, and returns the last hash (prev when entries is empty).
// A store chains each group-committed batch this way under the lock that
// already orders its batches.
func Chain(prev [32]byte, entries []JournalEntry) [32]byte {
	for i := range entries {
		entries[i].PrevHash = prev
		entries[i].Hash = Hash(prev, entries[i])
		prev = entries[i].Hash
	}
	return prev
}

func appendField(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

func appendInt(dst []byte, n int64) []byte {
	var b [20]byte
	return appendBytes(dst, strconv.AppendInt(b[:0], n, 10))
}
