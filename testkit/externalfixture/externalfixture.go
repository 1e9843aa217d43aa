// Package externalfixture builds valid external accounts of every
// accountType for tests, with a chosen sandbox suffix (the last three
// digits of the primary identifier), and their JSON request bodies.
//
// Check digits (ABA, IBAN, CLABE, CPF) and encodings (bech32m, base58) are
// computed here independently of core/external, so tests that feed these
// fixtures to the core validator cross-check both implementations.
package externalfixture

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/corridorpay/corridor/ports"
)

// DefaultSuffix is a suffix that selects no sandbox scenario.
const DefaultSuffix = "789"

// Currency is the currency a fixture of accountType is created in.
var Currency = map[string]string{
	"USD_ACCOUNT": "USD", "AED_ACCOUNT": "AED", "EUR_ACCOUNT": "EUR", "MXN_ACCOUNT": "MXN",
	"BRL_ACCOUNT": "BRL", "GBP_ACCOUNT": "GBP", "INR_ACCOUNT": "INR", "NGN_ACCOUNT": "NGN",
	"CAD_ACCOUNT": "CAD", "SWIFT_ACCOUNT": "NGN", "SPARK_WALLET": "BTC", "LIGHTNING": "BTC",
	"SOLANA_WALLET": "USDC", "BASE_WALLET": "USDC", "POLYGON_WALLET": "USDC", "ETHEREUM_WALLET": "USDC",
}

// Types lists the accountTypes this package builds.
func Types() []string {
	return []string{"USD_ACCOUNT", "AED_ACCOUNT", "EUR_ACCOUNT", "MXN_ACCOUNT", "BRL_ACCOUNT", "GBP_ACCOUNT",
		"INR_ACCOUNT", "NGN_ACCOUNT", "CAD_ACCOUNT", "SWIFT_ACCOUNT", "SPARK_WALLET", "LIGHTNING",
		"SOLANA_WALLET", "BASE_WALLET", "POLYGON_WALLET", "ETHEREUM_WALLET"}
}

// Individual is a complete INDIVIDUAL beneficiary that every bank variant
// accepts.
func Individual() *ports.Beneficiary {
	return &ports.Beneficiary{
		BeneficiaryType: "INDIVIDUAL", FullName: "Ana Maria Silva", BirthDate: "1990-01-15", Nationality: "US",
		CountryOfResidence: "US",
		Address:            &ports.Address{Line1: "1 Market Street", City: "San Francisco", State: "CA", PostalCode: "94105", Country: "US"},
	}
}

// Info returns a valid accountInfo of accountType whose primary identifier
// ends in suffix (3 digits; "" means DefaultSuffix). variant picks among
// equivalent shapes where a type has several (BRL: the PIX key type;
// LIGHTNING: "address", "invoice" or "bolt12"); "" is the first. It panics
// when the identifier's alphabet cannot end in suffix (base58 has no 0,
// bech32 no 1).
func Info(accountType, suffix string) ports.AccountInfo {
	return InfoVariant(accountType, suffix, "")
}

// InfoVariant is Info with a variant (see Info).
func InfoVariant(accountType, suffix, variant string) ports.AccountInfo {
	if suffix == "" {
		suffix = DefaultSuffix
	}
	if len(suffix) != 3 || strings.Trim(suffix, "0123456789") != "" {
		panic("externalfixture: suffix must be 3 digits: " + suffix)
	}
	bank := Individual()
	switch accountType {
	case "USD_ACCOUNT":
		return ports.AccountInfo{AccountType: accountType, AccountNumber: "12345" + suffix,
			RoutingNumber: ABA("02100002"), BankAccountType: "CHECKING", BankName: "Example Bank", Beneficiary: bank}
	case "AED_ACCOUNT":
		return ports.AccountInfo{AccountType: accountType, IBAN: IBAN("AE", "0330000010"+"123456"+suffix), SwiftCode: "EBILAEAD", Beneficiary: bank}
	case "EUR_ACCOUNT":
		return ports.AccountInfo{AccountType: accountType, IBAN: IBAN("DE", "37040044"+"0532013"+suffix), SwiftCode: "COBADEFFXXX", Beneficiary: bank}
	case "MXN_ACCOUNT":
		return ports.AccountInfo{AccountType: accountType, ClabeNumber: clabeEnding(suffix), Beneficiary: bank}
	case "BRL_ACCOUNT":
		info := ports.AccountInfo{AccountType: accountType, TaxID: CPF("123456789"), Beneficiary: bank}
		switch variant {
		case "", "EMAIL":
			info.PixKeyType, info.PixKey = "EMAIL", "ana"+suffix+"@example.com"
		case "PHONE":
			info.PixKeyType, info.PixKey = "PHONE", "+55119876"+"54"+suffix
		case "CPF":
			info.PixKeyType, info.PixKey = "CPF", cpfEnding(suffix)
		case "RANDOM":
			info.PixKeyType, info.PixKey = "RANDOM", "9f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4"+suffix
		default:
			panic("externalfixture: no BRL variant " + variant)
		}
		return info
	case "GBP_ACCOUNT":
		return ports.AccountInfo{AccountType: accountType, SortCode: "040004", AccountNumber: "12345" + suffix, Beneficiary: bank}
	case "INR_ACCOUNT":
		if variant == "UPI" {
			return ports.AccountInfo{AccountType: accountType, VPA: "ana" + suffix + "@upi", Rail: "UPI", Beneficiary: bank}
		}
		return ports.AccountInfo{AccountType: accountType, AccountNumber: "000111222" + suffix, IFSC: "HDFC0001234",
			Rail: "NEFT", BankName: "Example Bank", Beneficiary: bank}
	case "NGN_ACCOUNT":
		return ports.AccountInfo{AccountType: accountType, AccountNumber: "0123456" + suffix, BankName: "Example Bank", Beneficiary: bank}
	case "CAD_ACCOUNT":
		return ports.AccountInfo{AccountType: accountType, BankCode: "001", BranchCode: "00011", AccountNumber: "1234" + suffix, Beneficiary: bank}
	case "SWIFT_ACCOUNT":
		return ports.AccountInfo{AccountType: accountType, Country: "NG", SwiftCode: "DEUTDEFF", BankName: "Example Bank",
			AccountNumber: "1234567" + suffix, Beneficiary: bank}
	case "SPARK_WALLET":
		return ports.AccountInfo{AccountType: accountType, Address: SparkAddress(suffix)}
	case "LIGHTNING":
		switch variant {
		case "", "address":
			return ports.AccountInfo{AccountType: accountType, LightningAddress: "ana" + suffix + "@wallet.example"}
		case "invoice":
			return ports.AccountInfo{AccountType: accountType, Invoice: Bolt11(suffix)}
		case "bolt12":
			return ports.AccountInfo{AccountType: accountType, Bolt12: "lno1qgsqvgnwgcg35z6ee2h3yczraddm72xrfua9uve2rlrm9deu7xyfzrc" + bech32Tail(suffix)}
		}
		panic("externalfixture: no LIGHTNING variant " + variant)
	case "SOLANA_WALLET":
		return ports.AccountInfo{AccountType: accountType, Address: SolanaAddress(suffix)}
	case "BASE_WALLET", "POLYGON_WALLET", "ETHEREUM_WALLET":
		return ports.AccountInfo{AccountType: accountType, Address: "0x52908400098527886e0f7030069857d2e4169" + suffix}
	}
	panic("externalfixture: unknown accountType " + accountType)
}

// ---- check digits ----

// ABA completes 8 digits with the ABA check digit (weights 3, 7, 1).
func ABA(first8 string) string {
	w := []int{3, 7, 1, 3, 7, 1, 3, 7}
	sum := 0
	for i := range 8 {
		sum += int(first8[i]-'0') * w[i]
	}
	return first8 + string(rune('0'+(10-sum%10)%10))
}

// IBAN builds the IBAN of country and bban with its mod-97 check digits.
func IBAN(country, bban string) string {
	s := bban + country + "00"
	var num strings.Builder
	for _, c := range s {
		if c >= 'A' && c <= 'Z' {
			fmt.Fprintf(&num, "%d", c-'A'+10)
		} else {
			num.WriteRune(c)
		}
	}
	n, _ := new(big.Int).SetString(num.String(), 10)
	check := 98 - new(big.Int).Mod(n, big.NewInt(97)).Int64()
	return fmt.Sprintf("%s%02d%s", country, check, bban)
}

// CLABE completes 17 digits with the CLABE check digit.
func CLABE(first17 string) string {
	return first17 + string(rune('0'+clabeDigit(first17)))
}

// clabeEnding is a CLABE of bank 002, city 010, ending in suffix: the
// digit before the suffix is chosen so the check digit is suffix[2].
func clabeEnding(suffix string) string {
	for d := '0'; d <= '9'; d++ {
		body := "002010" + "07777777" + string(d) + suffix[:2]
		if clabeDigit(body) == int(suffix[2]-'0') {
			return body + suffix[2:]
		}
	}
	panic("externalfixture: no CLABE ends in " + suffix)
}

func clabeDigit(first17 string) int {
	w := []int{3, 7, 1}
	sum := 0
	for i := range 17 {
		sum += int(first17[i]-'0') * w[i%3] % 10
	}
	return (10 - sum%10) % 10
}

// CPF completes 9 digits with the two CPF check digits.
func CPF(first9 string) string {
	s := first9
	for _, n := range []int{9, 10} {
		sum := 0
		for i := range n {
			sum += int(s[i]-'0') * (n + 1 - i)
		}
		s += string(rune('0' + sum*10%11%10))
	}
	return s
}

// CNPJ completes 12 digits with the two CNPJ check digits.
func CNPJ(first12 string) string {
	w := []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	s := first12
	for _, n := range []int{12, 13} {
		sum := 0
		for i := range n {
			sum += int(s[i]-'0') * w[len(w)-n+i]
		}
		d := 0
		if r := sum % 11; r >= 2 {
			d = 11 - r
		}
		s += string(rune('0' + d))
	}
	return s
}

// cpfEnding finds a valid CPF ending in suffix (its last two digits are
// check digits, so the body is searched).
func cpfEnding(suffix string) string {
	for i := 100000; i < 999999; i++ {
		c := CPF(fmt.Sprintf("%06d", i) + "52" + suffix[:1])
		if strings.HasSuffix(c, suffix) {
			return c
		}
	}
	panic("externalfixture: no CPF ends in " + suffix)
}

// ---- encodings ----

const bech32Chars = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

func polymod(values []byte) uint32 {
	gen := []uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		b := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (b>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

// Bech32 encodes 5-bit groups under hrp; m selects bech32m.
func Bech32(hrp string, data []byte, m bool) string {
	var values []byte
	for _, c := range hrp {
		values = append(values, byte(c)>>5)
	}
	values = append(values, 0)
	for _, c := range hrp {
		values = append(values, byte(c)&31)
	}
	values = append(values, data...)
	k := uint32(1)
	if m {
		k = 0x2bc830a3
	}
	mod := polymod(append(values, 0, 0, 0, 0, 0, 0)) ^ k
	out := []byte(hrp + "1")
	for _, d := range data {
		out = append(out, bech32Chars[d])
	}
	for i := range 6 {
		out = append(out, bech32Chars[(mod>>(5*(5-i)))&31])
	}
	return string(out)
}

func to5(b []byte) []byte {
	var out []byte
	acc, bits := 0, 0
	for _, x := range b {
		acc = acc<<8 | int(x)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out = append(out, byte(acc>>bits&31))
		}
	}
	if bits > 0 {
		out = append(out, byte(acc<<(5-bits)&31))
	}
	return out
}

// grind tries payloads until make(i) ends in suffix.
func grind(suffix string, make func(i int) string) string {
	if strings.Contains(suffix, "1") {
		panic("externalfixture: a bech32 string cannot end in " + suffix + " (no 1 in its alphabet)")
	}
	for i := 0; i < 1<<22; i++ {
		if s := make(i); strings.HasSuffix(s, suffix) {
			return s
		}
	}
	panic("externalfixture: nothing ends in " + suffix)
}

// SparkAddress is a mainnet Spark address (spark1…, bech32m of the
// protobuf {1: 33-byte identity key}) ending in suffix.
func SparkAddress(suffix string) string {
	return grind(suffix, func(i int) string {
		key := make([]byte, 33)
		key[0] = 0x02
		for j := 1; j < 33; j++ {
			key[j] = byte(j * 7)
		}
		key[29], key[30], key[31], key[32] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		return Bech32("spark", to5(append([]byte{0x0a, 0x21}, key...)), true)
	})
}

// Bolt11 is a well-formed mainnet BOLT 11 invoice for 10µBTC (timestamp,
// a payment hash field and a 65-byte signature; the signature is not a
// real one) ending in suffix.
func Bolt11(suffix string) string {
	return grind(suffix, func(i int) string {
		data := to5([]byte{0x0c, 0xa9, 0x9b, 0x3a, 0x40})[:7] // timestamp
		// Tagged field p (1), length 52 groups: a 32-byte payment hash.
		hash := make([]byte, 32)
		hash[28], hash[29], hash[30], hash[31] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		data = append(data, 1, 1, 20)
		data = append(data, to5(hash)...)
		sig := make([]byte, 65)
		for j := range sig {
			sig[j] = byte(j + 1)
		}
		data = append(data, to5(sig)...)
		return Bech32("lnbc10u", data, false)
	})
}

func bech32Tail(suffix string) string {
	if strings.Contains(suffix, "1") {
		panic("externalfixture: a bech32 string cannot end in " + suffix)
	}
	return suffix
}

const base58Chars = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// SolanaAddress is a 44-character base58 Solana address ending in suffix
// (any 44-character base58 string starting with 2-5 is a 32-byte key).
func SolanaAddress(suffix string) string {
	if strings.Contains(suffix, "0") {
		panic("externalfixture: a base58 string cannot end in " + suffix + " (no 0 in its alphabet)")
	}
	var b strings.Builder
	b.WriteByte('3')
	for i := 0; i < 40; i++ {
		b.WriteByte(base58Chars[(i*37+11)%58])
	}
	b.WriteString(suffix)
	return b.String()
}

// ---- JSON ----

// InfoJSON is accountInfo as a request body object.
func InfoJSON(info ports.AccountInfo) map[string]any {
	m := map[string]any{"accountType": info.AccountType}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("accountNumber", info.AccountNumber)
	set("routingNumber", info.RoutingNumber)
	set("bankAccountType", info.BankAccountType)
	set("bankName", info.BankName)
	set("intermediaryBankName", info.IntermediaryBankName)
	set("intermediaryRoutingNumber", info.IntermediaryRoutingNumber)
	set("fiToFiInformation", info.FiToFiInformation)
	set("iban", info.IBAN)
	set("swiftCode", info.SwiftCode)
	set("clabeNumber", info.ClabeNumber)
	set("pixKey", info.PixKey)
	set("pixKeyType", info.PixKeyType)
	set("taxId", info.TaxID)
	set("sortCode", info.SortCode)
	set("ifsc", info.IFSC)
	set("vpa", info.VPA)
	set("rail", info.Rail)
	set("bankCode", info.BankCode)
	set("branchCode", info.BranchCode)
	set("phoneNumber", info.PhoneNumber)
	set("provider", info.Provider)
	set("region", info.Region)
	set("country", info.Country)
	set("address", info.Address)
	set("vaspName", info.VaspName)
	set("invoice", info.Invoice)
	set("bolt12", info.Bolt12)
	set("lightningAddress", info.LightningAddress)
	if b := info.Beneficiary; b != nil {
		bm := map[string]any{"beneficiaryType": b.BeneficiaryType}
		bset := func(k, v string) {
			if v != "" {
				bm[k] = v
			}
		}
		bset("fullName", b.FullName)
		bset("legalName", b.LegalName)
		bset("registrationNumber", b.RegistrationNumber)
		bset("taxId", b.TaxID)
		bset("birthDate", b.BirthDate)
		bset("nationality", b.Nationality)
		bset("email", b.Email)
		bset("phoneNumber", b.PhoneNumber)
		bset("countryOfResidence", b.CountryOfResidence)
		bset("documentType", b.DocumentType)
		bset("documentNumber", b.DocumentNumber)
		if a := b.Address; a != nil {
			am := map[string]any{}
			for k, v := range map[string]string{"line1": a.Line1, "line2": a.Line2, "city": a.City, "state": a.State, "postalCode": a.PostalCode, "country": a.Country} {
				if v != "" {
					am[k] = v
				}
			}
			bm["address"] = am
		}
		m["beneficiary"] = bm
	}
	return m
}

// Body is a create request body for a customer's account (customerID ""
// leaves customerId out), with extra top-level properties merged in.
func Body(customerID, currency string, info ports.AccountInfo, extra map[string]any) string {
	m := map[string]any{"currency": currency, "accountInfo": InfoJSON(info)}
	if customerID != "" {
		m["customerId"] = customerID
	}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}
