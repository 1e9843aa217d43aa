package walletauth_test

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/walletauth"
)

// The vectors of ../shared/reference/WALLET-WIRE.md (the wallet SDKs'
// own fixtures): a change of format cannot pass silently.
const (
	stampKeyHex    = "487f361ddfd73440e707f4daa6775b376859e8a3c9f29b3bb694a12927c0213c"
	stampPubHex    = "02f739f8c77b32f4d5f13265861febd76e7a9c61a1140d296b8c16302508870316"
	stampPayload   = `{"organizationId":"org_2m9F...","parameters":{"userEmail":"jane@example.com","userId":"user_2m9F..."},"timestampMs":"1775681700000","type":"ACTIVITY_TYPE_UPDATE_USER_EMAIL"}`
	stampVector    = "eyJwdWJsaWNLZXkiOiIwMmY3MzlmOGM3N2IzMmY0ZDVmMTMyNjU4NjFmZWJkNzZlN2E5YzYxYTExNDBkMjk2YjhjMTYzMDI1MDg4NzAzMTYiLCJzY2hlbWUiOiJTSUdOQVRVUkVfU0NIRU1FX1RLX0FQSV9QMjU2Iiwic2lnbmF0dXJlIjoiMzA0NjAyMjEwMDllNTI2YWZhY2ZkNzQ1OWFhOWZkNzI1ZWNjYTc1YzRmNTQwYTE3ZTQ5MGZjNDdkMjVkYWZmNDQ3NmI4OTdmMTYwMjIxMDBlNGNiOTg0ZmE3NjZkNzk0YmRiMWU1ZjYxODJmMTM4NjQxM2FkNjEwODgzZjQ5MzZkM2VlMWExNWRiYjE3OGY0In0"
	sessionRecvKey = "20fa65df11f24833790ae283fc9a0c215eecbbc589549767977994dc69d05a56"
	sessionVector  = "w99a5xV6A75TfoAUkZn869fVyDYvgVsKrawMALZXmrauZd8hEv66EkPU1Z42CUaHESQjcA5bqd8dynTGBMLWB9ewtXWPEVbZvocB4Tw2K1vQVp7uwjf"
	sessionPlain   = "67ee05fc3bdf4161bc70701c221d8d77180294cefcfcea64ba83c4d4c732fcb9"
	exportRecvKey  = "ffc6090f14bcf260e5dfe63f45412e60a477bb905956d7cc90195b71c2a544b3"
	exportOrg      = "f9a31c64-d604-42e4-9bef-a773096afad7"
	exportSigner   = "04cf288fe433cc4e1aa0ce1632feac4ea26bf2f5a09dcfe5a42c398e06898710330f0572882f4dbdf0f5304b8fc8703acd69adca9a4bbf7f5d00d20a5e364b2569"
	exportData     = "7b22656e6361707065645075626c6963223a2230343434313065633837653566653266666461313561313866613337376132316133633431633334373666383631333362343238306164373631303266343064356462326463353362343730303763636139336166666330613535316464353134333937643039373931636664393233306663613330343862313731663364363738222c2263697068657274657874223a22656662303538626633666634626534653232323330326266326636303738363062343237346232623031616339343536643362613638646135613235363236303030613839383262313465306261663061306465323966353434353461333739613362653664633364386339343938376131353638633764393566396663346239316265663232316165356562383432333361323833323131346431373962646664636631643066376164656231353766343131613439383430222c226f7267616e697a6174696f6e4964223a2266396133316336342d643630342d343265342d396265662d613737333039366166616437227d"
	exportSig      = "304502203a7dc258590a637e76f6be6ed1a2080eed5614175060b9073f5e36592bdaf610022100ab9955b603df6cf45408067f652da48551652451b91967bf37dd094d13a7bdd4"
	exportMnemonic = "leaf lady until indicate praise final route toast cake minimum insect unknown"
)

func ecdsaKey(t *testing.T, h string) *ecdsa.PrivateKey {
	t.Helper()
	b, err := hex.DecodeString(h)
	require.NoError(t, err)
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), b)
	require.NoError(t, err)
	return k
}

func ecdhKey(t *testing.T, h string) *ecdh.PrivateKey {
	t.Helper()
	b, err := hex.DecodeString(h)
	require.NoError(t, err)
	k, err := ecdh.P256().NewPrivateKey(b)
	require.NoError(t, err)
	return k
}

func TestStampVector(t *testing.T) {
	digest := sha256.Sum256([]byte(stampPayload))
	require.Equal(t, "95fbdc6633ab9b1a4038c3e19c28d68179dddb1072c1ca10a0e963c3a47bc36f", hex.EncodeToString(digest[:]),
		"the payload is the reference's example, byte for byte")
	stamp, err := walletauth.Sign(ecdsaKey(t, stampKeyHex), []byte(stampPayload))
	require.NoError(t, err)
	assert.Equal(t, stampVector, stamp, "deterministic signing reproduces the SDK's stamp byte for byte")

	s, err := walletauth.ParseStamp(stampVector)
	require.NoError(t, err)
	assert.Equal(t, stampPubHex, s.PublicKey)
	require.NoError(t, s.Verify([]byte(stampPayload)))
	assert.ErrorIs(t, s.Verify([]byte(stampPayload+" ")), walletauth.ErrBadSignature)
}

func TestStampFieldOrderAndHighS(t *testing.T) {
	raw, err := base64.RawURLEncoding.DecodeString(stampVector)
	require.NoError(t, err)
	var m map[string]string
	require.NoError(t, json.Unmarshal(raw, &m))
	// Another SDK's field order.
	reordered := `{"signature":"` + m["signature"] + `","scheme":"` + m["scheme"] + `","publicKey":"` + m["publicKey"] + `"}`
	s, err := walletauth.ParseStamp(base64.RawURLEncoding.EncodeToString([]byte(reordered)))
	require.NoError(t, err)
	require.NoError(t, s.Verify([]byte(stampPayload)))

	// The vector's S is high (its DER integer needs a leading zero,
	// 0x00e4…): accepted, as browser and Node signers do not normalise.
	assert.Contains(t, m["signature"], "022100e4")
}

func TestStampMalformed(t *testing.T) {
	good, _ := base64.RawURLEncoding.DecodeString(stampVector)
	for name, header := range map[string]string{
		"empty":           "",
		"not base64":      "%%%",
		"padded":          base64.URLEncoding.EncodeToString(good),
		"not json":        base64.RawURLEncoding.EncodeToString([]byte("hello")),
		"other scheme":    base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(good), "TK_API_P256", "TK_API_ED25519", 1))),
		"unknown field":   base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(good), `{"publicKey"`, `{"x":1,"publicKey"`, 1))),
		"uncompressed":    base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(good), stampPubHex, "04"+strings.Repeat("00", 64), 1))),
		"off-curve key":   base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(good), stampPubHex, "02"+strings.Repeat("ff", 32), 1))),
		"signature!hex":   base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(good), `"signature":"30`, `"signature":"zz`, 1))),
		"missing fields":  base64.RawURLEncoding.EncodeToString([]byte(`{"scheme":"SIGNATURE_SCHEME_TK_API_P256"}`)),
		"trailing object": base64.RawURLEncoding.EncodeToString(append(append([]byte(nil), good...), []byte(`{}`)...)),
	} {
		_, err := walletauth.ParseStamp(header)
		assert.ErrorIs(t, err, walletauth.ErrMalformedStamp, name)
	}
}

func TestSessionKeyVector(t *testing.T) {
	k, err := walletauth.OpenSessionKey(ecdhKey(t, sessionRecvKey), sessionVector)
	require.NoError(t, err)
	raw, err := k.Bytes()
	require.NoError(t, err)
	assert.Equal(t, sessionPlain, hex.EncodeToString(raw))

	// A changed character breaks the checksum; another receiver cannot open.
	_, err = walletauth.OpenSessionKey(ecdhKey(t, sessionRecvKey), sessionVector[:10]+"2"+sessionVector[11:])
	assert.Error(t, err)
	_, err = walletauth.OpenSessionKey(ecdhKey(t, exportRecvKey), sessionVector)
	assert.Error(t, err)
}

func TestSessionKeySealThenOpen(t *testing.T) {
	client, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	session, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	raw, err := session.Bytes()
	require.NoError(t, err)
	sealed, err := walletauth.SealSessionKey(client.PublicKey(), raw)
	require.NoError(t, err)
	opened, err := walletauth.OpenSessionKey(client, sealed)
	require.NoError(t, err)
	assert.True(t, opened.Equal(session))
	// The opened key signs stamps that verify against its public key.
	stamp, err := walletauth.Sign(opened, []byte("payload"))
	require.NoError(t, err)
	s, err := walletauth.ParseStamp(stamp)
	require.NoError(t, err)
	sessionPub, err := session.PublicKey.ECDH()
	require.NoError(t, err)
	assert.Equal(t, walletauth.CompressedHex(sessionPub), s.PublicKey)
	require.NoError(t, s.Verify([]byte("payload")))
}

func TestExportVector(t *testing.T) {
	bundle, err := json.Marshal(map[string]string{"version": "v1.0.0", "data": exportData, "dataSignature": exportSig,
		"enclaveQuorumPublic": exportSigner})
	require.NoError(t, err)
	signer, err := walletauth.ParsePublicKeyHex(exportSigner)
	require.NoError(t, err)
	secret, err := walletauth.OpenExport(ecdhKey(t, exportRecvKey), signer, exportOrg, string(bundle))
	require.NoError(t, err)
	assert.Equal(t, exportMnemonic, string(secret))

	_, err = walletauth.OpenExport(ecdhKey(t, exportRecvKey), signer, "another-org", string(bundle))
	assert.Error(t, err)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, err = walletauth.OpenExport(ecdhKey(t, exportRecvKey), &other.PublicKey, exportOrg, string(bundle))
	assert.ErrorContains(t, err, "not signed by the export key")
}

func TestExportSealThenOpen(t *testing.T) {
	client, _ := ecdh.P256().GenerateKey(rand.Reader)
	signer, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	bundle, err := walletauth.SealExport(signer, client.PublicKey(), "Platform:1", []byte(exportMnemonic))
	require.NoError(t, err)
	secret, err := walletauth.OpenExport(client, &signer.PublicKey, "Platform:1", bundle)
	require.NoError(t, err)
	assert.Equal(t, exportMnemonic, string(secret))
}

func TestParseClientKey(t *testing.T) {
	client, _ := ecdh.P256().GenerateKey(rand.Reader)
	full := hex.EncodeToString(client.PublicKey().Bytes())
	k, err := walletauth.ParseClientKey(full)
	require.NoError(t, err)
	assert.False(t, k.Compressed)
	assert.True(t, k.Key.Equal(client.PublicKey()))
	short := walletauth.CompressedHex(client.PublicKey())
	k, err = walletauth.ParseClientKey(short)
	require.NoError(t, err)
	assert.True(t, k.Compressed)
	assert.True(t, k.Key.Equal(client.PublicKey()))
	for name, bad := range map[string]string{
		"empty": "", "not hex": "zz", "too short": full[:64], "bad prefix": "05" + full[2:],
		"off curve": "04" + strings.Repeat("11", 64), "compressed off curve": "02" + strings.Repeat("ff", 32),
	} {
		_, err := walletauth.ParseClientKey(bad)
		assert.Error(t, err, name)
	}
}

func FuzzParseStamp(f *testing.F) {
	f.Add(stampVector)
	f.Add("")
	f.Add("e30")
	f.Fuzz(func(t *testing.T, header string) {
		s, err := walletauth.ParseStamp(header)
		if err != nil {
			require.ErrorIs(t, err, walletauth.ErrMalformedStamp)
			return
		}
		_ = s.Verify([]byte(stampPayload)) // never panics
	})
}

func FuzzParseClientKey(f *testing.F) {
	f.Add(stampPubHex)
	f.Add("04" + strings.Repeat("00", 64))
	f.Fuzz(func(t *testing.T, s string) {
		k, err := walletauth.ParseClientKey(s)
		if err == nil {
			require.NotNil(t, k.Key)
		}
	})
}

// Session keys with leading zero bytes survive the base58check framing
// (its leading-zero rule), and an all-zero scalar is refused on opening.
func TestBase58CheckRoundTrip(t *testing.T) {
	client, _ := ecdh.P256().GenerateKey(rand.Reader)
	for _, zeros := range []int{0, 1, 2, 31} {
		key := make([]byte, 32)
		key[31] = 7
		key[zeros] |= 1
		sealed, err := walletauth.SealSessionKey(client.PublicKey(), key)
		require.NoError(t, err)
		opened, err := walletauth.OpenSessionKey(client, sealed)
		require.NoError(t, err, "%d leading zeros", zeros)
		raw, err := opened.Bytes()
		require.NoError(t, err)
		assert.Equal(t, key, raw)
	}
	sealed, err := walletauth.SealSessionKey(client.PublicKey(), make([]byte, 32))
	require.NoError(t, err)
	_, err = walletauth.OpenSessionKey(client, sealed)
	assert.Error(t, err, "an all-zero scalar is no private key")
}
