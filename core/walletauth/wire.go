// Package walletauth is embedded-wallet authentication: the session keys
// that only a customer's device holds, and the wire formats that carry
// them (those of the wallet SDKs the reference's clients use, see
// ../shared/reference/WALLET-WIRE.md): the Service-Wallet-Signature stamp,
// the HPKE-sealed session key (encryptedSessionSigningKey) and the wallet
// export bundle. Both directions of each format live here (seal and open,
// stamp and verify), so the service and its wallet client cannot drift.
package walletauth

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hpke"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// StampScheme is the only stamp scheme accepted.
const StampScheme = "SIGNATURE_SCHEME_TK_API_P256"

// hpkeInfo is the HPKE info string of every sealed value.
var hpkeInfo = []byte("turnkey_hpke")

// ErrMalformedStamp: a Service-Wallet-Signature that is not a stamp
// (WALLET_SIGNATURE_MALFORMED); ErrBadSignature: a well-formed stamp whose
// signature does not verify (WALLET_SIGNATURE_INVALID).
var (
	ErrMalformedStamp = errors.New("the Service-Wallet-Signature is not a stamp")
	ErrBadSignature   = errors.New("the stamp's signature does not verify")
)

// ClientKey is a P-256 public key a client sends (clientPublicKey):
// uncompressed (130 hex digits, 04…), to which a new session's private key
// is sealed, or compressed (66 hex digits, 02/03…), which is then itself
// the session's key.
type ClientKey struct {
	Key        *ecdh.PublicKey
	Compressed bool
}

// ParseClientKey reads a clientPublicKey: hex, a real point on P-256.
func ParseClientKey(s string) (ClientKey, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return ClientKey{}, errors.New("must be hex")
	}
	switch {
	case len(b) == 65 && b[0] == 4:
		k, err := ecdh.P256().NewPublicKey(b)
		if err != nil {
			return ClientKey{}, errors.New("is not a point on P-256")
		}
		return ClientKey{Key: k}, nil
	case len(b) == 33 && (b[0] == 2 || b[0] == 3):
		k, err := decompress(b)
		if err != nil {
			return ClientKey{}, err
		}
		return ClientKey{Key: k, Compressed: true}, nil
	}
	return ClientKey{}, errors.New("must be a P-256 public key: 130 hex digits (04…) or 66 (02… or 03…)")
}

// uncompressed turns a compressed SEC1 point (33 bytes) into the
// uncompressed encoding (65 bytes) crypto/ecdh and crypto/ecdsa parse.
func uncompressed(b []byte) ([]byte, error) {
	x, y := elliptic.UnmarshalCompressed(elliptic.P256(), b)
	if x == nil {
		return nil, errors.New("is not a point on P-256")
	}
	out := make([]byte, 65)
	out[0] = 4
	x.FillBytes(out[1:33])
	y.FillBytes(out[33:])
	return out, nil
}

// decompress turns a compressed SEC1 point into an ecdh key (crypto/ecdh
// takes uncompressed points only).
func decompress(b []byte) (*ecdh.PublicKey, error) {
	full, err := uncompressed(b)
	if err != nil {
		return nil, err
	}
	return ecdh.P256().NewPublicKey(full)
}

// CompressedHex is k as a stamp names it: compressed SEC1, lower-case hex.
func CompressedHex(k *ecdh.PublicKey) string {
	b := k.Bytes() // 04 ‖ x ‖ y
	out := make([]byte, 33)
	out[0] = 2 | b[64]&1
	copy(out[1:], b[1:33])
	return hex.EncodeToString(out)
}

// Stamp is a decoded Service-Wallet-Signature.
type Stamp struct {
	// PublicKey is the session key, compressed hex (as sent, lower-cased).
	PublicKey string
	key       *ecdsa.PublicKey
	signature []byte // ASN.1 DER
}

type stampJSON struct {
	PublicKey string `json:"publicKey"`
	Scheme    string `json:"scheme"`
	Signature string `json:"signature"`
}

// ParseStamp decodes a Service-Wallet-Signature value: base64url without
// padding of the JSON {publicKey, scheme, signature} (any field order).
// Anything else is ErrMalformedStamp.
func ParseStamp(header string) (Stamp, error) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(header))
	if err != nil || len(raw) > 4096 {
		return Stamp{}, ErrMalformedStamp
	}
	var j stampJSON
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil || dec.More() || j.Scheme != StampScheme {
		return Stamp{}, ErrMalformedStamp
	}
	pub, err := hex.DecodeString(j.PublicKey)
	if err != nil || len(pub) != 33 {
		return Stamp{}, ErrMalformedStamp
	}
	key, err := stampKey(pub)
	if err != nil {
		return Stamp{}, ErrMalformedStamp
	}
	sig, err := hex.DecodeString(j.Signature)
	if err != nil || len(sig) == 0 || len(sig) > 80 {
		return Stamp{}, ErrMalformedStamp
	}
	return Stamp{PublicKey: strings.ToLower(j.PublicKey), key: key, signature: sig}, nil
}

// stampKeys memoises decompressed stamp keys: a session signs many stamps,
// and decompressing its key (a square root mod p) is about a fifth of
// checking one. Bounded: when full it starts again.
var stampKeys struct {
	sync.Mutex
	m map[string]*ecdsa.PublicKey
}

const stampKeysMax = 4096

// stampKey is the P-256 key of a compressed SEC1 point (33 bytes).
func stampKey(compressed []byte) (*ecdsa.PublicKey, error) {
	stampKeys.Lock()
	key, ok := stampKeys.m[string(compressed)]
	stampKeys.Unlock()
	if ok {
		return key, nil
	}
	full, err := uncompressed(compressed)
	if err != nil {
		return nil, err
	}
	if key, err = ecdsa.ParseUncompressedPublicKey(elliptic.P256(), full); err != nil {
		return nil, err
	}
	stampKeys.Lock()
	if len(stampKeys.m) >= stampKeysMax || stampKeys.m == nil {
		stampKeys.m = make(map[string]*ecdsa.PublicKey, 64)
	}
	stampKeys.m[string(compressed)] = key
	stampKeys.Unlock()
	return key, nil
}

// Verify checks the stamp's signature over SHA-256 of payload (high S is
// accepted: browser and Node signers do not normalise it).
func (s Stamp) Verify(payload []byte) error {
	digest := sha256.Sum256(payload)
	if !ecdsa.VerifyASN1(s.key, digest[:], s.signature) {
		return ErrBadSignature
	}
	return nil
}

// Sign stamps payload with the session's private key (the client side; RFC
// 6979 deterministic signing, so a stamp is reproducible).
func Sign(key *ecdsa.PrivateKey, payload []byte) (string, error) {
	digest := sha256.Sum256(payload)
	sig, err := key.Sign(nil, digest[:], crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("stamp: %w", err)
	}
	pub, err := key.PublicKey.ECDH()
	if err != nil {
		return "", fmt.Errorf("stamp: %w", err)
	}
	b, err := json.Marshal(stampJSON{PublicKey: CompressedHex(pub), Scheme: StampScheme, Signature: hex.EncodeToString(sig)})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// suite is the HPKE suite of every sealed value: DHKEM(P-256,
// HKDF-SHA256), HKDF-SHA256, AES-256-GCM.
func suite() (hpke.KDF, hpke.AEAD) { return hpke.HKDFSHA256(), hpke.AES256GCM() }

// seal HPKE-seals plaintext to the receiver, with the encapsulated key and
// the receiver's key (both uncompressed) as additional data. It returns
// the encapsulated key (uncompressed) and the ciphertext.
func seal(to *ecdh.PublicKey, plaintext []byte) (enc, ciphertext []byte, err error) {
	pk, err := hpke.NewDHKEMPublicKey(to)
	if err != nil {
		return nil, nil, err
	}
	kdf, aead := suite()
	enc, sender, err := hpke.NewSender(pk, kdf, aead, hpkeInfo)
	if err != nil {
		return nil, nil, err
	}
	ciphertext, err = sender.Seal(append(append([]byte(nil), enc...), to.Bytes()...), plaintext)
	return enc, ciphertext, err
}

// open is seal's inverse, on the receiver's side.
func open(receiver *ecdh.PrivateKey, enc, ciphertext []byte) ([]byte, error) {
	sk, err := hpke.NewDHKEMPrivateKey(receiver)
	if err != nil {
		return nil, err
	}
	kdf, aead := suite()
	r, err := hpke.NewRecipient(enc, sk, kdf, aead, hpkeInfo)
	if err != nil {
		return nil, err
	}
	return r.Open(append(append([]byte(nil), enc...), receiver.PublicKey().Bytes()...), ciphertext)
}

// SealSessionKey seals a session's 32-byte private key to the client's
// key: base58check of the encapsulated key (compressed) and the
// ciphertext (encryptedSessionSigningKey).
func SealSessionKey(to *ecdh.PublicKey, sessionKey []byte) (string, error) {
	enc, ct, err := seal(to, sessionKey)
	if err != nil {
		return "", fmt.Errorf("seal session key: %w", err)
	}
	encKey, err := ecdh.P256().NewPublicKey(enc)
	if err != nil {
		return "", fmt.Errorf("seal session key: %w", err)
	}
	compressed, _ := hex.DecodeString(CompressedHex(encKey))
	return base58CheckEncode(append(compressed, ct...)), nil
}

// OpenSessionKey opens an encryptedSessionSigningKey with the client's
// private key (the client side) and returns the session's private key.
func OpenSessionKey(receiver *ecdh.PrivateKey, value string) (*ecdsa.PrivateKey, error) {
	payload, err := base58CheckDecode(value)
	if err != nil || len(payload) < 33+16 {
		return nil, errors.New("open session key: not a sealed key")
	}
	encKey, err := decompress(payload[:33])
	if err != nil {
		return nil, fmt.Errorf("open session key: %w", err)
	}
	raw, err := open(receiver, encKey.Bytes(), payload[33:])
	if err != nil {
		return nil, fmt.Errorf("open session key: %w", err)
	}
	return ecdsa.ParseRawPrivateKey(elliptic.P256(), raw)
}
