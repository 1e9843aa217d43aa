package external

import (
	"crypto/sha256"
	"errors"
	"math/big"
	"strings"
)

// ---- bech32 / bech32m (BIP-173, BIP-350) ----

const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// bech32 checksum constants: the final polymod of a valid string.
const (
	bech32Const  = 1
	bech32mConst = 0x2bc830a3
)

var bech32Rev = func() [128]int8 {
	var r [128]int8
	for i := range r {
		r[i] = -1
	}
	for i, c := range bech32Charset {
		r[c] = int8(i)
	}
	return r
}()

func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

func bech32HRPExpand(hrp string) []byte {
	out := make([]byte, 0, len(hrp)*2+1)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]&31)
	}
	return out
}

// Bech32Variant says which checksum a bech32 string carries.
type Bech32Variant int

// The bech32 checksum variants (BIP-173 and BIP-350).
const (
	Bech32 Bech32Variant = iota + 1
	Bech32m
)

var errBech32 = errors.New("not a valid bech32 string")

// bech32Decode splits s into its human-readable part (lower case) and its
// 5-bit data groups (checksum removed), and says which checksum variant
// matched. Unlike BIP-173 it has no 90-character limit (Lightning invoices
// and Spark addresses are longer).
func bech32Decode(s string) (hrp string, data []byte, v Bech32Variant, err error) {
	if strings.ToLower(s) != s && strings.ToUpper(s) != s {
		return "", nil, 0, errors.New("mixes upper and lower case")
	}
	s = strings.ToLower(s)
	pos := strings.LastIndexByte(s, '1')
	if pos < 1 || pos+7 > len(s) {
		return "", nil, 0, errBech32
	}
	hrp = s[:pos]
	for i := 0; i < len(hrp); i++ {
		if hrp[i] < 33 || hrp[i] > 126 {
			return "", nil, 0, errBech32
		}
	}
	for _, c := range s[pos+1:] {
		if c >= 128 || bech32Rev[c] < 0 {
			return "", nil, 0, errors.New("has a character outside the bech32 alphabet")
		}
		data = append(data, byte(bech32Rev[c]))
	}
	switch bech32Polymod(append(bech32HRPExpand(hrp), data...)) {
	case bech32Const:
		v = Bech32
	case bech32mConst:
		v = Bech32m
	default:
		return "", nil, 0, errors.New("has a wrong checksum")
	}
	return hrp, data[:len(data)-6], v, nil
}

// Bech32Encode is bech32Decode's inverse: hrp, the 5-bit groups of data
// and v's checksum. Tests build fixtures with it and core/quotes the
// sandbox's funding addresses and invoices, so both pass this validator.
func Bech32Encode(hrp string, data []byte, v Bech32Variant) string {
	c := uint32(bech32Const)
	if v == Bech32m {
		c = bech32mConst
	}
	values := append(bech32HRPExpand(hrp), data...)
	mod := bech32Polymod(append(values, 0, 0, 0, 0, 0, 0)) ^ c
	var b strings.Builder
	b.WriteString(hrp)
	b.WriteByte('1')
	for _, d := range data {
		b.WriteByte(bech32Charset[d])
	}
	for i := range 6 {
		b.WriteByte(bech32Charset[(mod>>(5*(5-i)))&31])
	}
	return b.String()
}

// convertBits regroups bits (8→5 or 5→8). Going to fewer bits pads the
// last group; going back, leftover padding must be zero and short.
func convertBits(data []byte, from, to uint, pad bool) ([]byte, bool) {
	var acc, bits uint
	var out []byte
	maxv := uint(1)<<to - 1
	for _, v := range data {
		if uint(v)>>from != 0 {
			return nil, false
		}
		acc = acc<<from | uint(v)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte((acc>>bits)&maxv))
		}
	}
	if pad {
		if bits > 0 {
			out = append(out, byte((acc<<(to-bits))&maxv))
		}
	} else if bits >= from || (acc<<(to-bits))&maxv != 0 {
		return nil, false
	}
	return out, true
}

// Bits5 regroups bytes into the padded 5-bit groups bech32 data is made of.
func Bits5(b []byte) []byte {
	out, _ := convertBits(b, 8, 5, true) // 8-bit input always regroups
	return out
}

// ---- base58 (Bitcoin alphabet) ----

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var base58Rev = func() [128]int8 {
	var r [128]int8
	for i := range r {
		r[i] = -1
	}
	for i, c := range base58Alphabet {
		r[c] = int8(i)
	}
	return r
}()

// base58Decode decodes s; leading '1's are leading zero bytes.
func base58Decode(s string) ([]byte, bool) {
	if s == "" {
		return nil, false
	}
	n := new(big.Int)
	radix := big.NewInt(58)
	zeros := 0
	for i, c := range s {
		if c >= 128 || base58Rev[c] < 0 {
			return nil, false
		}
		if c == '1' && zeros == i {
			zeros++
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(base58Rev[c])))
	}
	return append(make([]byte, zeros), n.Bytes()...), true
}

// Base58Encode is base58Decode's inverse (fixtures and sandbox addresses,
// as Bech32Encode).
func Base58Encode(b []byte) string {
	n := new(big.Int).SetBytes(b)
	radix := big.NewInt(58)
	mod := new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// base58CheckDecode decodes a base58check string: payload then the first 4
// bytes of SHA-256(SHA-256(payload)).
func base58CheckDecode(s string) ([]byte, bool) {
	b, ok := base58Decode(s)
	if !ok || len(b) < 5 {
		return nil, false
	}
	payload, sum := b[:len(b)-4], b[len(b)-4:]
	h1 := sha256.Sum256(payload)
	h2 := sha256.Sum256(h1[:])
	if string(h2[:4]) != string(sum) {
		return nil, false
	}
	return payload, true
}
