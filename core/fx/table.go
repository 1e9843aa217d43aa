package fx

import (
	"time"

	"github.com/corridorpay/corridor/core/rails"
)

// Quote lifetimes: instant rails lock a rate for minutes, batch and wire
// rails (whose settlement takes longer) for longer.
const (
	lifeCrypto  = 2 * time.Minute  // Lightning, Spark
	lifeChain   = 3 * time.Minute  // USDC on Solana, Base, Polygon
	lifeInstant = 5 * time.Minute  // RTP, FedNow, SEPA Instant, SPEI, PIX, Faster Payments, UPI
	lifeBatch   = 15 * time.Minute // ACH, SEPA, bank transfers, SWIFT, the default
	lifeWire    = 30 * time.Minute // same-day wires
)

// fiat is a fiat receiving currency's fee schedule: fixed fees in its minor
// units, 0.3% service fee on the sending amount, 0.5% counterparty spread.
func fiat(fixed, counterparty int64) Fees {
	return Fees{FixedFee: fixed, VariableRate: "0.003", CounterpartyMultiplier: "0.995", CounterpartyFixedFee: counterparty}
}

// crypto is a crypto receiving currency's schedule: 0.2% service fee,
// 0.2% spread.
func crypto(fixed, counterparty int64) Fees {
	return Fees{FixedFee: fixed, VariableRate: "0.002", CounterpartyMultiplier: "0.998", CounterpartyFixedFee: counterparty}
}

// same is the schedule of a same-currency payment: no conversion, so no
// spread and no variable fee, only a fixed fee.
func same(fixed int64) Fees {
	return Fees{FixedFee: fixed, VariableRate: "0", CounterpartyMultiplier: "1"}
}

// table is corridor's corridor table. Every amount in a row (fixed fees,
// Min, Max) is in the RECEIVING currency's minor units, so a row for any
// sending currency means the same thing whatever pays into it; Price
// converts the fixed fees into the sending currency at the market rate.
//
// Each receiving currency has a default row (any sending currency, any
// rail), which makes every known currency payable from every other; a
// same-currency row per currency (rate 1, a smaller fixed fee); rows per
// instant rail (short quote lifetimes), window-only rail rows, and rows for
// particular senders.
// Find picks the most specific matching row: a row naming the rail beats
// one naming the sending currency, which beats the default (see Find).
// Adding a corridor is adding a row.
var table = []Corridor{
	// Defaults per receiving currency.
	{Receiving: "USD", QuoteLifetime: lifeBatch, Fees: fiat(50, 25), Min: 1_00, Max: 250_000_00},
	{Receiving: "EUR", QuoteLifetime: lifeBatch, Fees: fiat(50, 25), Min: 1_00, Max: 250_000_00},
	{Receiving: "GBP", QuoteLifetime: lifeBatch, Fees: fiat(40, 20), Min: 1_00, Max: 200_000_00},
	{Receiving: "CAD", QuoteLifetime: lifeBatch, Fees: fiat(70, 35), Min: 1_00, Max: 250_000_00},
	{Receiving: "MXN", QuoteLifetime: lifeBatch, Fees: fiat(10_00, 5_00), Min: 10_00, Max: 5_000_000_00},
	{Receiving: "BRL", QuoteLifetime: lifeBatch, Fees: fiat(2_50, 1_25), Min: 5_00, Max: 1_000_000_00},
	{Receiving: "INR", QuoteLifetime: lifeBatch, Fees: fiat(40_00, 20_00), Min: 100_00, Max: 20_000_000_00},
	{Receiving: "NGN", QuoteLifetime: lifeBatch, Fees: fiat(750_00, 400_00), Min: 1_000_00, Max: 100_000_000_00},
	{Receiving: "AED", QuoteLifetime: lifeBatch, Fees: fiat(1_75, 1_00), Min: 5_00, Max: 1_000_000_00},
	{Receiving: "JPY", QuoteLifetime: lifeBatch, Fees: fiat(75, 40), Min: 100, Max: 30_000_000},
	// USDC's and BTC's default rails (Solana; Lightning/Spark) are instant.
	{Receiving: "USDC", QuoteLifetime: lifeChain, Fees: crypto(500_000, 250_000), Min: 1_000_000, Max: 1_000_000_000_000},
	{Receiving: "BTC", QuoteLifetime: lifeCrypto, Fees: crypto(500, 250), Min: 1_000, Max: 100_000_000},

	// Same currency: no conversion.
	{Sending: "USD", Receiving: "USD", QuoteLifetime: lifeBatch, Fees: same(25), Min: 1_00, Max: 250_000_00},
	{Sending: "EUR", Receiving: "EUR", QuoteLifetime: lifeBatch, Fees: same(25), Min: 1_00, Max: 250_000_00},
	{Sending: "GBP", Receiving: "GBP", QuoteLifetime: lifeBatch, Fees: same(20), Min: 1_00, Max: 200_000_00},
	{Sending: "CAD", Receiving: "CAD", QuoteLifetime: lifeBatch, Fees: same(35), Min: 1_00, Max: 250_000_00},
	{Sending: "MXN", Receiving: "MXN", QuoteLifetime: lifeBatch, Fees: same(5_00), Min: 10_00, Max: 5_000_000_00},
	{Sending: "BRL", Receiving: "BRL", QuoteLifetime: lifeBatch, Fees: same(1_25), Min: 5_00, Max: 1_000_000_00},
	{Sending: "INR", Receiving: "INR", QuoteLifetime: lifeBatch, Fees: same(20_00), Min: 100_00, Max: 20_000_000_00},
	{Sending: "NGN", Receiving: "NGN", QuoteLifetime: lifeBatch, Fees: same(400_00), Min: 1_000_00, Max: 100_000_000_00},
	{Sending: "AED", Receiving: "AED", QuoteLifetime: lifeBatch, Fees: same(1_00), Min: 5_00, Max: 1_000_000_00},
	{Sending: "JPY", Receiving: "JPY", QuoteLifetime: lifeBatch, Fees: same(40), Min: 100, Max: 30_000_000},
	{Sending: "USDC", Receiving: "USDC", QuoteLifetime: lifeChain, Fees: same(100_000), Min: 1_000_000, Max: 1_000_000_000_000},
	{Sending: "BTC", Receiving: "BTC", QuoteLifetime: lifeCrypto, Fees: same(100), Min: 1_000, Max: 100_000_000},

	// Instant and wire rails.
	{Receiving: "USD", Rail: "RTP", QuoteLifetime: lifeInstant, Fees: fiat(50, 25), Min: 1_00, Max: 250_000_00},
	{Receiving: "USD", Rail: "FEDNOW", QuoteLifetime: lifeInstant, Fees: fiat(50, 25), Min: 1_00, Max: 250_000_00},
	{Receiving: "USD", Rail: "WIRE", QuoteLifetime: lifeWire, Fees: fiat(15_00, 10_00), Min: 100_00, Max: 10_000_000_00},
	{Receiving: "EUR", Rail: "SEPA_INSTANT", QuoteLifetime: lifeInstant, Fees: fiat(50, 25), Min: 1_00, Max: 100_000_00},
	{Receiving: "GBP", Rail: "FASTER_PAYMENTS", QuoteLifetime: lifeInstant, Fees: fiat(40, 20), Min: 1_00, Max: 200_000_00},
	{Receiving: "MXN", Rail: "SPEI", QuoteLifetime: lifeInstant, Fees: fiat(10_00, 5_00), Min: 10_00, Max: 5_000_000_00},
	{Receiving: "BRL", Rail: "PIX", QuoteLifetime: lifeInstant, Fees: fiat(2_50, 1_25), Min: 5_00, Max: 1_000_000_00},
	{Receiving: "INR", Rail: "UPI", QuoteLifetime: lifeInstant, Fees: fiat(40_00, 20_00), Min: 100_00, Max: 100_000_00},
	{Receiving: "BTC", Rail: "LIGHTNING", QuoteLifetime: lifeCrypto, Fees: crypto(200, 100), Min: 1_000, Max: 10_000_000},
	{Receiving: "BTC", Rail: "SPARK", QuoteLifetime: lifeCrypto, Fees: crypto(300, 150), Min: 1_000, Max: 100_000_000},
	{Receiving: "USDC", Rail: "SOLANA", QuoteLifetime: lifeChain, Fees: crypto(500_000, 250_000), Min: 1_000_000, Max: 1_000_000_000_000},
	{Receiving: "USDC", Rail: "BASE", QuoteLifetime: lifeChain, Fees: crypto(500_000, 250_000), Min: 1_000_000, Max: 1_000_000_000_000},
	{Receiving: "USDC", Rail: "POLYGON", QuoteLifetime: lifeChain, Fees: crypto(500_000, 250_000), Min: 1_000_000, Max: 1_000_000_000_000},
	{Receiving: "USDC", Rail: "ETHEREUM", QuoteLifetime: lifeBatch, Fees: crypto(5_000_000, 2_500_000), Min: 10_000_000, Max: 1_000_000_000_000},

	// Lightning's channel limits bind a bitcoin-to-bitcoin payment too.
	{Sending: "BTC", Receiving: "BTC", Rail: "LIGHTNING", QuoteLifetime: lifeCrypto, Fees: same(50), Min: 1_000, Max: 10_000_000},

	// Window-only rows: no receiving currency, so no fees or limits (those
	// are in receiving units); they set their rail's quote lifetime for
	// every currency. UMA payments settle over Lightning.
	{Rail: rails.UMA, QuoteLifetime: lifeInstant},

	// Payments funded in bitcoin settle over Lightning/Spark: smaller fiat
	// payouts.
	{Sending: "BTC", Receiving: "USD", QuoteLifetime: lifeCrypto, Fees: fiat(50, 25), Min: 1_00, Max: 50_000_00},
	{Sending: "BTC", Receiving: "MXN", QuoteLifetime: lifeCrypto, Fees: fiat(10_00, 5_00), Min: 10_00, Max: 1_000_000_00},
}
