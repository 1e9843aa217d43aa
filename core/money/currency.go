// Package money holds the currencies and regions corridor knows: a currency's
// code, name, symbol and decimals (minor units), whether it is crypto, and
// which regulatory jurisdiction its fiat accounts belong to. Amounts are int64
// minor units everywhere; this package is the one place that says how many
// decimals a code has.
package money

import (
	"regexp"
	"sort"
)

// MaxAmount is the largest amount, in minor units, that any request may
// name (the reference's bound on lockedCurrencyAmount and on a currency's
// maxAmount): far enough below int64's limit that a sum of a few does not
// overflow.
const MaxAmount int64 = 9_000_000_000_000_000

// Currency describes one currency.
type Currency struct {
	Code     string
	Name     string
	Symbol   string
	Decimals int
	// Crypto currencies are held in INTERNAL_CRYPTO accounts.
	Crypto bool
	// Jurisdiction groups fiat currencies whose accounts share KYC
	// requirements; a customer's fiat currencies must share one. Empty for
	// crypto (allowed with any).
	Jurisdiction string
}

var currencies = map[string]Currency{
	"USD":  {Code: "USD", Name: "United States Dollar", Symbol: "$", Decimals: 2, Jurisdiction: "US"},
	"EUR":  {Code: "EUR", Name: "Euro", Symbol: "€", Decimals: 2, Jurisdiction: "EU"},
	"GBP":  {Code: "GBP", Name: "Pound Sterling", Symbol: "£", Decimals: 2, Jurisdiction: "GB"},
	"MXN":  {Code: "MXN", Name: "Mexican Peso", Symbol: "$", Decimals: 2, Jurisdiction: "MX"},
	"BRL":  {Code: "BRL", Name: "Brazilian Real", Symbol: "R$", Decimals: 2, Jurisdiction: "BR"},
	"INR":  {Code: "INR", Name: "Indian Rupee", Symbol: "₹", Decimals: 2, Jurisdiction: "IN"},
	"NGN":  {Code: "NGN", Name: "Nigerian Naira", Symbol: "₦", Decimals: 2, Jurisdiction: "NG"},
	"AED":  {Code: "AED", Name: "UAE Dirham", Symbol: "د.إ", Decimals: 2, Jurisdiction: "AE"},
	"CAD":  {Code: "CAD", Name: "Canadian Dollar", Symbol: "$", Decimals: 2, Jurisdiction: "CA"},
	"JPY":  {Code: "JPY", Name: "Japanese Yen", Symbol: "¥", Decimals: 0, Jurisdiction: "JP"},
	"USDC": {Code: "USDC", Name: "USD Coin", Symbol: "USDC", Decimals: 6, Crypto: true},
	"BTC":  {Code: "BTC", Name: "Bitcoin", Symbol: "₿", Decimals: 8, Crypto: true},
}

// Lookup returns the currency with the given code.
func Lookup(code string) (Currency, bool) {
	c, ok := currencies[code]
	return c, ok
}

// Codes returns every known currency code, sorted.
func Codes() []string {
	out := make([]string, 0, len(currencies))
	for c := range currencies {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// eurozone lists the countries whose local currency is EUR.
var eurozone = []string{"AT", "BE", "HR", "CY", "EE", "FI", "FR", "DE", "GR", "IE", "IT", "LV", "LT", "LU", "MT", "NL", "PT", "SK", "SI", "ES"}

// regionCurrency maps a country to its local fiat currency, where corridor
// supports it.
var regionCurrency = func() map[string]string {
	m := map[string]string{"US": "USD", "GB": "GBP", "MX": "MXN", "BR": "BRL", "IN": "INR", "NG": "NGN", "AE": "AED", "CA": "CAD", "JP": "JPY"}
	for _, c := range eurozone {
		m[c] = "EUR"
	}
	return m
}()

// DefaultCurrencies is what a customer gets when neither region nor
// currencies say otherwise.
var DefaultCurrencies = []string{"USD", "USDC"}

// CurrenciesForRegion infers a customer's currencies from its region: the
// region's local fiat currency plus USDC. A region without a supported local
// currency gets USD and USDC (the corridor's settlement pair).
func CurrenciesForRegion(region string) []string {
	if c, ok := regionCurrency[region]; ok {
		return []string{c, "USDC"}
	}
	return append([]string(nil), DefaultCurrencies...)
}

var countryRe = regexp.MustCompile(`^[A-Z]{2}$`)

// IsCountry reports whether code is an assigned ISO 3166-1 alpha-2 code.
func IsCountry(code string) bool {
	if !countryRe.MatchString(code) {
		return false
	}
	_, ok := countries[code]
	return ok
}

var countries = func() map[string]struct{} {
	const all = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
		"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
		"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
		"KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT " +
		"MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
		"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG " +
		"UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW"
	m := map[string]struct{}{}
	for i := 0; i+2 <= len(all); i += 3 {
		m[all[i:i+2]] = struct{}{}
	}
	return m
}()
