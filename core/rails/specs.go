package rails

import (
	"time"

	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// Sandbox settlement delays. The default table runs on the sandbox's
// compressed timescale (seconds where the real rail takes hours or business
// days) so a sandbox transfer completes while someone watches; a production
// deployment supplies its own table with the rails' real delays.
const (
	batchDelay = 10 * time.Second // ACH, SEPA, NEFT, bank transfers
	wireDelay  = 5 * time.Second  // WIRE, RTGS, SWIFT: same-day gross settlement
	chainDelay = 5 * time.Second  // a chain without fast finality (Ethereum)
)

// DefaultSpecs is corridor's rail table: one row per rail and currency. The
// order matters: for a destination without a paymentRail, the first row
// whose currency and account type match is the default rail (so USD goes on
// ACH, EUR on SEPA_INSTANT, INR on UPI when the account has a vpa). Adding
// a corridor is adding a row.
//
// Pull marks the rails that can debit an external account for transfer-in
// (ACH debit, SEPA direct debit); the others only push.
//
// SWIFT reaches a SWIFT_ACCOUNT in every fiat currency corridor knows; it
// comes last so a currency's local rail stays its default.
func DefaultSpecs() []ports.RailSpec {
	usd := []string{"USD_ACCOUNT"}
	eur := []string{"EUR_ACCOUNT"}
	inr := []string{"INR_ACCOUNT"}
	specs := []ports.RailSpec{
		{Name: "ACH", Currency: "USD", AccountTypes: usd, Pull: true, SettlementDelay: batchDelay},
		{Name: "RTP", Currency: "USD", AccountTypes: usd, Instant: true},
		{Name: "FEDNOW", Currency: "USD", AccountTypes: usd, Instant: true},
		{Name: "WIRE", Currency: "USD", AccountTypes: usd, SettlementDelay: wireDelay},
		{Name: "SEPA_INSTANT", Currency: "EUR", AccountTypes: eur, Instant: true},
		{Name: "SEPA", Currency: "EUR", AccountTypes: eur, Pull: true, SettlementDelay: batchDelay},
		{Name: "SPEI", Currency: "MXN", AccountTypes: []string{"MXN_ACCOUNT"}, Instant: true},
		{Name: "PIX", Currency: "BRL", AccountTypes: []string{"BRL_ACCOUNT"}, Instant: true},
		{Name: "FASTER_PAYMENTS", Currency: "GBP", AccountTypes: []string{"GBP_ACCOUNT"}, Instant: true},
		{Name: "UPI", Currency: "INR", AccountTypes: inr, Instant: true},
		{Name: "NEFT", Currency: "INR", AccountTypes: inr, SettlementDelay: batchDelay},
		{Name: "RTGS", Currency: "INR", AccountTypes: inr, SettlementDelay: wireDelay},
		{Name: "BANK_TRANSFER", Currency: "NGN", AccountTypes: []string{"NGN_ACCOUNT"}, SettlementDelay: batchDelay},
		{Name: "BANK_TRANSFER", Currency: "AED", AccountTypes: []string{"AED_ACCOUNT"}, SettlementDelay: batchDelay},
		{Name: "BANK_TRANSFER", Currency: "CAD", AccountTypes: []string{"CAD_ACCOUNT"}, SettlementDelay: batchDelay},
		{Name: "LIGHTNING", Currency: "BTC", AccountTypes: []string{"LIGHTNING", "LIGHTNING_ACCOUNT"}, Instant: true},
		{Name: "SPARK", Currency: "BTC", AccountTypes: []string{"SPARK_WALLET"}, Instant: true},
		{Name: "SOLANA", Currency: "USDC", AccountTypes: []string{"SOLANA_WALLET"}, Instant: true},
		{Name: "BASE", Currency: "USDC", AccountTypes: []string{"BASE_WALLET"}, Instant: true},
		{Name: "POLYGON", Currency: "USDC", AccountTypes: []string{"POLYGON_WALLET"}, Instant: true},
		{Name: "ETHEREUM", Currency: "USDC", AccountTypes: []string{"ETHEREUM_WALLET"}, SettlementDelay: chainDelay},
	}
	for _, code := range money.Codes() {
		if c, _ := money.Lookup(code); !c.Crypto {
			specs = append(specs, ports.RailSpec{Name: "SWIFT", Currency: code, AccountTypes: []string{"SWIFT_ACCOUNT"}, SettlementDelay: wireDelay})
		}
	}
	// UMA payments settle instantly with the receiving institution, in
	// every currency: one settlement account (money in flight) per currency.
	for _, code := range money.Codes() {
		specs = append(specs, ports.RailSpec{Name: UMA, Currency: code, AccountTypes: []string{UMAAccountType}, Instant: true})
	}
	return specs
}

// UMA is the rail of payments to and from UMA addresses; UMAAccountType is
// the pseudo account type it reaches (no external account stands behind a
// UMA address).
const (
	UMA            = "UMA"
	UMAAccountType = "UMA_ADDRESS"
)

// SettlementRails maps each rail to the currencies it carries: the ledger
// keeps one settlement account (money in flight) per pair. It is derived from
// the rail table so the ledger's accounts and the rails never disagree.
func SettlementRails(specs []ports.RailSpec) map[string][]string {
	out := map[string][]string{}
	for _, s := range specs {
		if !contains(out[s.Name], s.Currency) {
			out[s.Name] = append(out[s.Name], s.Currency)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// WithSettlementDelay returns a copy of specs in which every rail that
// settles later (SettlementDelay > 0) settles after d instead: the sandbox's
// one settlement setting. Instant rails keep settling at the next check.
// The sandbox's timed outcomes (the 30-second and 6-minute scenarios) are
// not settlement delays and keep their times.
func WithSettlementDelay(specs []ports.RailSpec, d time.Duration) []ports.RailSpec {
	out := make([]ports.RailSpec, len(specs))
	for i, s := range specs {
		if s.SettlementDelay > 0 {
			s.SettlementDelay = d
		}
		out[i] = s
	}
	return out
}
