package external

import (
	"strings"

	"github.com/corridorpay/corridor/ports"
)

// PrimaryIdentifier is the identifier that names an external account: its
// account number, IBAN, CLABE, PIX key, wallet address, Lightning address
// or invoice… (the first present of its variant's Primary fields). Empty
// for an unknown accountType.
func PrimaryIdentifier(info ports.AccountInfo) string {
	v, ok := variantByType[info.AccountType]
	if !ok {
		return ""
	}
	for _, name := range v.Primary {
		if p := infoField(&info, name); p != nil && *p != "" {
			return *p
		}
	}
	return ""
}

// PrimaryField is the accountInfo field PrimaryIdentifier read (for error
// messages naming it), or "".
func PrimaryField(info ports.AccountInfo) string {
	v, ok := variantByType[info.AccountType]
	if !ok {
		return ""
	}
	for _, name := range v.Primary {
		if p := infoField(&info, name); p != nil && *p != "" {
			return name
		}
	}
	return ""
}

// SandboxSuffix is the sandbox scenario an account selects: the last three
// characters of its primary identifier when they are digits, else "" (the
// default scenario). For an identifier with a domain part (an e-mail PIX
// key, a Lightning address, a UPI vpa) only the user part before the last
// '@' counts, so "ana105@example.com" selects 105.
//
// Some identifier alphabets cannot end in every suffix: base58 (Solana) has
// no 0, and bech32 (Spark addresses, Lightning invoices) has no 1 and ends
// in a checksum, so their suffixes are found by trying payloads.
func SandboxSuffix(info ports.AccountInfo) string {
	id := PrimaryIdentifier(info)
	if at := strings.LastIndexByte(id, '@'); at >= 0 {
		id = id[:at]
	}
	if len(id) < 3 {
		return ""
	}
	s := id[len(id)-3:]
	for i := 0; i < 3; i++ {
		if s[i] < '0' || s[i] > '9' {
			return ""
		}
	}
	return s
}
