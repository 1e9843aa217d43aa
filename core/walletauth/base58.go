package walletauth

import (
	"crypto/sha256"
	"errors"
	"math/big"
	"strings"
)

// base58check is the Bitcoin alphabet's base58 of a payload followed by
// its checksum (the first 4 bytes of SHA-256(SHA-256(payload))): the
// framing of encryptedSessionSigningKey.

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var errBase58 = errors.New("not base58check")

func base58CheckEncode(payload []byte) string {
	sum := doubleSHA256(payload)
	return base58Encode(append(append([]byte(nil), payload...), sum[:4]...))
}

func base58CheckDecode(s string) ([]byte, error) {
	b, err := base58Decode(s)
	if err != nil || len(b) < 5 {
		return nil, errBase58
	}
	payload, check := b[:len(b)-4], b[len(b)-4:]
	sum := doubleSHA256(payload)
	if string(sum[:4]) != string(check) {
		return nil, errBase58
	}
	return payload, nil
}

func doubleSHA256(b []byte) [32]byte {
	first := sha256.Sum256(b)
	return sha256.Sum256(first[:])
}

func base58Encode(b []byte) string {
	n := new(big.Int).SetBytes(b)
	radix, mod := big.NewInt(58), new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, base58Alphabet[0])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

func base58Decode(s string) ([]byte, error) {
	n, radix := new(big.Int), big.NewInt(58)
	for _, r := range s {
		i := strings.IndexRune(base58Alphabet, r)
		if i < 0 {
			return nil, errBase58
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(i)))
	}
	out := n.Bytes()
	zeros := 0
	for zeros < len(s) && s[zeros] == base58Alphabet[0] {
		zeros++
	}
	return append(make([]byte, zeros), out...), nil
}
