package money

// SettlementRails lists, per payment rail, the currencies that move on it.
// Each pair gets a settlement account in the ledger (money in flight on that
// rail). Adding a corridor's rail is adding a row here.
var SettlementRails = map[string][]string{
	"ACH":             {"USD"},
	"WIRE":            {"USD"},
	"RTP":             {"USD"},
	"SEPA":            {"EUR"},
	"SEPA_INSTANT":    {"EUR"},
	"SPEI":            {"MXN"},
	"PIX":             {"BRL"},
	"FASTER_PAYMENTS": {"GBP"},
	"IMPS":            {"INR"},
	"UPI":             {"INR"},
	"NIP":             {"NGN"},
	"UAEFTS":          {"AED"},
	"LIGHTNING":       {"BTC"},
	"SPARK":           {"BTC"},
	"SOLANA":          {"USDC"},
	"BASE":            {"USDC"},
	"POLYGON":         {"USDC"},
}
