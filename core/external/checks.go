package external

import (
	"net/mail"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/crypto/sha3"

	"github.com/corridorpay/corridor/core/money"
)

// A check validates one field's value beyond its pattern (a checksum, a
// decoding) and returns why it is wrong, or "" when it is right. Checks are
// named in the variant table; each is a pure function.
type check func(v string) string

// ---- bank identifiers ----

var digitsRe = regexp.MustCompile(`^[0-9]+$`)

func digit(c byte) int { return int(c - '0') }

// checkABA is the ABA routing number rule: 9 digits whose first two are an
// assigned Federal Reserve prefix (00-12, 21-32, 61-72, 80) and whose
// digits, weighted 3, 7, 1 repeating, sum to a multiple of 10.
func checkABA(v string) string {
	if len(v) != 9 || !digitsRe.MatchString(v) {
		return "must be 9 digits"
	}
	p := digit(v[0])*10 + digit(v[1])
	if !(p <= 12 || (p >= 21 && p <= 32) || (p >= 61 && p <= 72) || p == 80) {
		return "is not an ABA routing number (unassigned Federal Reserve prefix)"
	}
	weights := [3]int{3, 7, 1}
	sum := 0
	for i := range 9 {
		sum += digit(v[i]) * weights[i%3]
	}
	if sum%10 != 0 {
		return "fails the ABA routing number checksum"
	}
	return ""
}

// ibanLengths is the IBAN length of each country that uses IBANs (SWIFT
// IBAN registry).
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
	"JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25,
	"MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18,
	"NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33,
	"SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// sepaCountries are the countries whose IBANs SEPA reaches (the EU and EEA
// states and the other scheme members).
var sepaCountries = setOf("AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE",
	"IT", "LV", "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE", "IS", "LI", "NO", "CH", "GB",
	"MC", "SM", "VA", "AD", "GI", "AL", "MD", "ME", "MK", "RS")

var ibanShapeRe = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$`)

// checkIBAN is ISO 13616: a country that uses IBANs, that country's
// length, and check digits that make the rearranged number ≡ 1 (mod 97).
func checkIBAN(v string) string {
	if !ibanShapeRe.MatchString(v) {
		return "must be a country code, 2 check digits and 11 to 30 letters or digits"
	}
	n, ok := ibanLengths[v[:2]]
	if !ok {
		return "country " + v[:2] + " does not use IBANs"
	}
	if len(v) != n {
		return "must be " + strconv.Itoa(n) + " characters for country " + v[:2]
	}
	if ibanMod97(v) != 1 {
		return "fails the IBAN check digits (mod 97)"
	}
	return ""
}

// checkSEPAIBAN is checkIBAN for a SEPA country.
func checkSEPAIBAN(v string) string {
	if msg := checkIBAN(v); msg != "" {
		return msg
	}
	if !sepaCountries[v[:2]] {
		return "country " + v[:2] + " is not reachable over SEPA"
	}
	return ""
}

func ibanMod97(v string) int {
	r := strings.ToUpper(v[4:] + v[:4])
	m := 0
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c >= 'A' && c <= 'Z' {
			x := int(c-'A') + 10
			m = (m*100 + x) % 97
		} else {
			m = (m*10 + digit(c)) % 97
		}
	}
	return m
}

// checkCLABE is Mexico's CLABE: 18 digits whose last is the check digit of
// the first 17, weighted 3, 7, 1 repeating (each product taken mod 10).
func checkCLABE(v string) string {
	if len(v) != 18 || !digitsRe.MatchString(v) {
		return "must be 18 digits"
	}
	if clabeCheckDigit(v[:17]) != digit(v[17]) {
		return "fails the CLABE check digit"
	}
	return ""
}

func clabeCheckDigit(first17 string) int {
	weights := [3]int{3, 7, 1}
	sum := 0
	for i := range 17 {
		sum += digit(first17[i]) * weights[i%3] % 10
	}
	return (10 - sum%10) % 10
}

var bicRe = regexp.MustCompile(`^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)

// checkBIC is ISO 9362: institution, an assigned country, location and an
// optional branch.
func checkBIC(v string) string {
	if !bicRe.MatchString(v) {
		return "must be a BIC of 8 or 11 characters"
	}
	if !money.IsCountry(v[4:6]) {
		return "has an unknown country code " + v[4:6]
	}
	return ""
}

// ---- Brazilian tax ids and PIX keys ----

// checkCPF is the CPF rule: 11 digits, not all equal, with two mod-11
// check digits.
func checkCPF(v string) string {
	if len(v) != 11 || !digitsRe.MatchString(v) {
		return "must be a CPF of 11 digits"
	}
	if strings.Count(v, v[:1]) == 11 {
		return "is not a valid CPF"
	}
	for _, n := range []int{9, 10} {
		sum := 0
		for i := range n {
			sum += digit(v[i]) * (n + 1 - i)
		}
		d := sum * 10 % 11 % 10
		if d != digit(v[n]) {
			return "fails the CPF check digits"
		}
	}
	return ""
}

// checkCNPJ is the CNPJ rule: 14 digits, not all equal, with two mod-11
// check digits.
func checkCNPJ(v string) string {
	if len(v) != 14 || !digitsRe.MatchString(v) {
		return "must be a CNPJ of 14 digits"
	}
	if strings.Count(v, v[:1]) == 14 {
		return "is not a valid CNPJ"
	}
	w := []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	for _, n := range []int{12, 13} {
		sum := 0
		for i := range n {
			sum += digit(v[i]) * w[len(w)-n+i]
		}
		d := 0
		if r := sum % 11; r >= 2 {
			d = 11 - r
		}
		if d != digit(v[n]) {
			return "fails the CNPJ check digits"
		}
	}
	return ""
}

// checkTaxIDBR is a Brazilian tax id: a CPF (11 digits) or a CNPJ (14).
func checkTaxIDBR(v string) string {
	switch len(v) {
	case 11:
		return checkCPF(v)
	case 14:
		return checkCNPJ(v)
	}
	return "must be a CPF (11 digits) or a CNPJ (14 digits)"
}

var (
	pixPhoneRe = regexp.MustCompile(`^\+55[1-9][0-9][0-9]{8,9}$`)
	uuidRe     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// pixKeyChecks is how a PIX key of each pixKeyType is written (the Central
// Bank's DICT formats).
var pixKeyChecks = map[string]check{
	"CPF":  checkCPF,
	"CNPJ": checkCNPJ,
	"EMAIL": func(v string) string {
		if msg := checkEmail(v); msg != "" {
			return msg
		}
		if len(v) > 77 {
			return "an e-mail PIX key is at most 77 characters"
		}
		return ""
	},
	"PHONE": func(v string) string {
		if !pixPhoneRe.MatchString(v) {
			return "a phone PIX key is +55, a 2-digit area code and an 8 or 9 digit number"
		}
		return ""
	},
	"RANDOM": func(v string) string {
		if !uuidRe.MatchString(v) {
			return "a random PIX key is a UUID"
		}
		return ""
	},
}

// ---- contact details ----

var (
	e164Re   = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)
	domainRe = regexp.MustCompile(`^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,63}$`)
)

func checkEmail(v string) string {
	a, err := mail.ParseAddress(v)
	if err != nil || a.Address != v || a.Name != "" {
		return "must be an e-mail address"
	}
	at := strings.LastIndexByte(v, '@')
	if !domainRe.MatchString(v[at+1:]) {
		return "must be an e-mail address with a domain"
	}
	return ""
}

func checkE164(v string) string {
	if !e164Re.MatchString(v) {
		return "must be an E.164 phone number (+ and up to 15 digits)"
	}
	return ""
}

func checkCountry(v string) string {
	if !money.IsCountry(v) {
		return "must be an ISO 3166-1 alpha-2 country code"
	}
	return ""
}

// ---- wallets ----

var evmRe = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// checkEVM is an EVM (Ethereum, Base, Polygon) address: 0x and 40 hex
// digits, not the zero address; when it mixes cases, the EIP-55 checksum
// (Keccak-256 of the lower-case hex) must hold.
func checkEVM(v string) string {
	if !evmRe.MatchString(v) {
		return "must be 0x followed by 40 hexadecimal digits"
	}
	hex := v[2:]
	if strings.Trim(hex, "0") == "" {
		return "must not be the zero address"
	}
	lower := strings.ToLower(hex)
	if hex == lower || hex == strings.ToUpper(hex) {
		return ""
	}
	if eip55(lower) != hex {
		return "fails the EIP-55 mixed-case checksum"
	}
	return ""
}

// eip55 writes a lower-case hex address in its EIP-55 mixed case.
func eip55(lower string) string {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(lower))
	sum := h.Sum(nil)
	out := []byte(lower)
	for i, c := range out {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0xf
		}
		if c >= 'a' && c <= 'f' && nibble >= 8 {
			out[i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

// checkSolana is a Solana address: base58 of a 32-byte public key.
func checkSolana(v string) string {
	if len(v) < 32 || len(v) > 44 {
		return "must be 32 to 44 base58 characters"
	}
	b, ok := base58Decode(v)
	if !ok {
		return "must be base58 (no 0, O, I or l)"
	}
	if len(b) != 32 {
		return "must encode a 32-byte public key"
	}
	return ""
}

// sparkHRPs are the human-readable parts of Spark addresses per network:
// the original long forms and the short forms of later SDKs.
var sparkHRPs = setOf("spark", "sparkt", "sparkrt", "sparks", "sparkl", "sp", "spt", "sprt", "sps", "spl")

// checkSpark is a Spark address as the Spark SDKs write it: bech32m with a
// network prefix (spark1…/sp1… on mainnet; sparkt, sparkrt, sparks, sparkl
// or spt, sprt, sps, spl elsewhere) whose payload is a protobuf message
// starting with field 1, the owner's 33-byte compressed secp256k1 identity
// public key (0x0a 0x21 then 0x02 or 0x03 and 32 bytes). Later fields are
// allowed.
func checkSpark(v string) string {
	hrp, data, variant, err := bech32Decode(v)
	if err != nil {
		return "must be a bech32m Spark address: " + err.Error()
	}
	if !sparkHRPs[hrp] {
		return "must start with a Spark network prefix (spark1 or sp1 on mainnet)"
	}
	if variant != Bech32m {
		return "must use the bech32m checksum"
	}
	payload, ok := convertBits(data, 5, 8, false)
	if !ok || len(payload) < 35 || payload[0] != 0x0a || payload[1] != 0x21 || (payload[2] != 2 && payload[2] != 3) {
		return "must encode a Spark identity public key"
	}
	return ""
}

var lnHRPRe = regexp.MustCompile(`^ln(bcrt|bc|tbs|tb)([0-9]+[munp]?)?$`)

// bolt11MinGroups is the smallest BOLT 11 data part: a 35-bit timestamp
// (7 groups) and the 520-bit signature with its recovery id (104 groups).
const bolt11MinGroups = 7 + 104

// checkBolt11 is a BOLT 11 Lightning invoice: bech32 (no length limit)
// with a prefix ln + network (bc, tb, bcrt, tbs) + optional amount, a
// valid checksum and room for a timestamp and a signature.
func checkBolt11(v string) string {
	hrp, data, variant, err := bech32Decode(v)
	if err != nil {
		return "must be a BOLT 11 invoice: " + err.Error()
	}
	if !lnHRPRe.MatchString(hrp) {
		return "must start with lnbc (or lntb, lnbcrt, lntbs) and an optional amount"
	}
	if variant != Bech32 || len(data) < bolt11MinGroups {
		return "is not a complete BOLT 11 invoice"
	}
	return ""
}

var bolt12Re = regexp.MustCompile(`^lno1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{16,}$`)

// checkBolt12 is a BOLT 12 offer: lno1 and bech32 characters (offers
// carry no checksum).
func checkBolt12(v string) string {
	if !bolt12Re.MatchString(strings.ToLower(v)) || (strings.ToLower(v) != v && strings.ToUpper(v) != v) {
		return "must be a BOLT 12 offer (lno1…)"
	}
	return ""
}

var lnAddressUserRe = regexp.MustCompile(`^[a-z0-9._+-]{1,64}$`)

// checkLightningAddress is a Lightning address (LUD-16): user@domain with
// a lower-case user name.
func checkLightningAddress(v string) string {
	at := strings.LastIndexByte(v, '@')
	if at < 1 || !lnAddressUserRe.MatchString(v[:at]) || !domainRe.MatchString(v[at+1:]) {
		return "must be a Lightning address (user@domain, user in lower case)"
	}
	return ""
}

// ---- helpers ----

func setOf(vs ...string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}
