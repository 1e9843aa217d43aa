package main

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/walletauth"
)

func runWallet(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := walletCmd(args, &out, &errOut)
	return out.String(), err
}

// keygen → (the service seals a session key to the printed public key) →
// open-session → stamp, and the stamp verifies for the session's key.
func TestWalletCLI(t *testing.T) {
	dir := t.TempDir()
	client, session := filepath.Join(dir, "client.key"), filepath.Join(dir, "session.key")
	out, err := runWallet(t, "keygen", "-o", client)
	require.NoError(t, err)
	uncompressed := regexp.MustCompile(`04[0-9a-f]{128}`).FindString(out)
	require.NotEmpty(t, uncompressed, out)
	_, err = runWallet(t, "keygen", "-o", client)
	assert.ErrorContains(t, err, "already exists and is never overwritten", "an existing key is not overwritten")

	// What the service does on verify: seal a fresh session key.
	clientPub, err := walletauth.ParseClientKey(uncompressed)
	require.NoError(t, err)
	sessionKey, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	raw := sessionKey.Bytes()
	sealed, err := walletauth.SealSessionKey(clientPub.Key, raw)
	require.NoError(t, err)

	out, err = runWallet(t, "open-session", "-key", client, "-sealed", sealed, "-o", session)
	require.NoError(t, err)
	assert.Contains(t, out, "session key written")
	b, err := os.ReadFile(session)
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString(raw), strings.TrimSpace(string(b)))

	stamp, err := runWallet(t, "stamp", "-key", session, "-payload", `{"x":1}`)
	require.NoError(t, err)
	s, err := walletauth.ParseStamp(strings.TrimSpace(stamp))
	require.NoError(t, err)
	require.NoError(t, s.Verify([]byte(`{"x":1}`)))

	pf := filepath.Join(dir, "payload.txt")
	require.NoError(t, os.WriteFile(pf, []byte("{\"x\":1}\n"), 0o600))
	stamp, err = runWallet(t, "stamp", "-key", session, "-payload-file", pf)
	require.NoError(t, err)
	s, err = walletauth.ParseStamp(strings.TrimSpace(stamp))
	require.NoError(t, err)
	require.NoError(t, s.Verify([]byte(`{"x":1}`)), "the file's trailing newline is not signed")

	_, err = runWallet(t, "stamp", "-key", session)
	assert.ErrorContains(t, err, "-payload")
	_, err = runWallet(t, "open-session", "-key", client, "-sealed", "nope", "-o", filepath.Join(dir, "x"))
	assert.Error(t, err)
	_, err = runWallet(t, "frobnicate")
	assert.ErrorContains(t, err, "unknown wallet command")
}
