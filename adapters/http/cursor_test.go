package httpapi

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

func TestCursorRoundTrip(t *testing.T) {
	key := []byte("k1")
	for _, p := range []ports.Position{
		{CreatedAt: time.Date(2025, 10, 13, 12, 0, 0, 123456789, time.UTC), ID: "InternalAccount:abc"},
		{CreatedAt: time.Unix(0, 0).UTC(), ID: "x|with|bars"},
		{CreatedAt: time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC), ID: "Customer:1"},
	} {
		s := encodeCursor(key, p)
		assert.NotContains(t, s, p.ID, "cursors are opaque enough not to show the id in clear")
		got, err := decodeCursor(key, s)
		require.NoError(t, err)
		assert.True(t, p.CreatedAt.Equal(got.CreatedAt))
		assert.Equal(t, p.ID, got.ID)
	}
}

func TestCursorRejectsForgeries(t *testing.T) {
	key := []byte("k1")
	good := encodeCursor(key, ports.Position{CreatedAt: time.Unix(100, 0), ID: "InternalAccount:a"})
	raw, err := base64.RawURLEncoding.DecodeString(good)
	require.NoError(t, err)
	flipped := append([]byte(nil), raw...)
	flipped[3] ^= 0x01
	// A payload the client wrote itself, with a made-up tag.
	forged := base64.RawURLEncoding.EncodeToString(append([]byte("v1|0|InternalAccount:b"), make([]byte, 32)...))

	for name, s := range map[string]string{
		"empty":        "",
		"not base64":   "***",
		"too short":    base64.RawURLEncoding.EncodeToString([]byte("short")),
		"flipped bit":  base64.RawURLEncoding.EncodeToString(flipped),
		"truncated":    good[:len(good)-2],
		"forged":       forged,
		"padded":       good + "==",
		"other key":    encodeCursor([]byte("k2"), ports.Position{CreatedAt: time.Unix(100, 0), ID: "InternalAccount:a"}),
		"long garbage": strings.Repeat("A", 500),
		"invalid char": good[:5] + "!" + good[6:],
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeCursor(key, s)
			f, ok := fault.As(err)
			require.Truef(t, ok, "want a fault, got %v", err)
			assert.Equal(t, fault.KindInvalid, f.Kind)
			assert.Equal(t, "cursor", f.Fields[0].Field)
		})
	}
}

func TestScopedCursorKey(t *testing.T) {
	key := []byte("k1")
	p := ports.Position{CreatedAt: time.Unix(100, 0), ID: "Transaction:a"}
	desc := scopedCursorKey(key, "transactions", "desc")
	_, err := decodeCursor(desc, encodeCursor(desc, p))
	require.NoError(t, err, "a cursor opens under its own scope")
	for _, other := range [][]byte{
		scopedCursorKey(key, "transactions", "asc"),
		scopedCursorKey(key, "ledger", "entries", "", "", "", ""),
		scopedCursorKey([]byte("k2"), "transactions", "desc"),
	} {
		_, err := decodeCursor(other, encodeCursor(desc, p))
		assert.Error(t, err, "another list, filter or server key refuses it")
	}
	// The parts are joined with "|" (the format cursors already handed out
	// were signed under).
	assert.Equal(t, scopedCursorKey(key, "ledger|accounts|USD"), scopedCursorKey(key, "ledger", "accounts", "USD"))
}
