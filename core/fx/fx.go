// Package fx prices cross-currency payments: the corridor table (which
// currency pairs and rails corridor quotes, for how long, with which fees and
// limits) and the conversion formula with its rounding rule.
//
// # The exchange rate
//
// The spec describes a quote's exchangeRate as "sending units per receiving
// unit", but the reference's quote examples read the other way: 10000 USD
// cents → 9200 EUR cents at exchangeRate 0.92, 50000 USD cents → 4625000 INR
// paise at 92.5. Corridor follows the examples: a quote's exchangeRate is
// RECEIVING major units per SENDING major unit (0.92 EUR per USD). It is the
// rate applied to the converted part of the payment (the sending amount less
// the fees), so totalReceiving = (totalSending − feesIncluded) × exchangeRate,
// rounded as below. (The reference's examples also ignore their own
// feesIncluded; that part no reading can make exact.)
//
// # The formula
//
// With R the market rate (receiving per sending, major units, from
// ports.FXRates; 1 for a same-currency corridor), m the corridor's
// counterparty multiplier, v its variable fee rate and d the receiving minus
// the sending currency's decimals:
//
//	r  = R × 10^d                        market rate, receiving minor per sending minor
//	a  = r × m                           applied rate, minor per minor
//	SF = floor(FixedFee / r)             service fixed fee, sending minor units
//	CF = floor(CounterpartyFixedFee / r) counterparty fee, sending minor units
//	V  = floor(S × v)                    variable fee on the total sending amount S
//	fees = SF + CF + V
//	P  = S − fees                        the converted principal
//	totalReceiving = floor(P × a)
//
// Fixed fees are defined in the receiving currency (the table's unit, see
// table), so their sending-currency equivalent moves with the rate, as the
// reference says of feesIncluded.
//
// # Rounding
//
// Every step is exact decimal arithmetic (shopspring/decimal) and only the
// final amounts are rounded, each in the customer's favour or by less than
// one minor unit against them:
//   - SENDING locked (S given): the fee parts round down (the customer pays
//     less fee), and totalReceiving rounds down: the receiver absorbs the
//     remainder, less than one receiving minor unit, and never gets more than
//     the exact rate allows.
//   - RECEIVING locked (totalReceiving given): S is the smallest whole sending
//     amount whose principal buys it (P × a ≥ totalReceiving): the sender
//     absorbs the remainder and pays less than one sending minor unit above
//     the exact price (the real S solving (S − SF − CF − S×v) × a =
//     totalReceiving).
//
// Results are checked int64s: a side that would exceed int64, money.MaxAmount or
// the corridor's limits is an *AmountError (ErrAmount): a 400 fault on
// lockedCurrencyAmount (AMOUNT_OUT_OF_RANGE, TRANSACTION_SIZE_LIMIT_EXCEEDED
// over the corridor's maximum, INVALID_INPUT past money.MaxAmount).
package fx

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/shopspring/decimal"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// Locked sides of a quote.
const (
	SideSending   = "SENDING"
	SideReceiving = "RECEIVING"
)

var (
	// ErrNoCorridor: corridor does not pay this currency pair (or a currency
	// is unknown). Callers report it as 400.
	ErrNoCorridor = errors.New("fx: no corridor")
	// ErrAmount: the amount cannot be priced (out of the corridor's limits,
	// not covering the fees, or too large). The error is an *AmountError,
	// which unwraps to the 400 fault to return.
	ErrAmount = errors.New("fx: amount cannot be priced")
)

// Error codes of amounts that cannot be priced (reference Error400 codes).
const (
	CodeAmountOutOfRange = "AMOUNT_OUT_OF_RANGE"
	// CodeSizeLimit: over the corridor's single-payment maximum.
	CodeSizeLimit = "TRANSACTION_SIZE_LIMIT_EXCEEDED"
	CodeInvalid   = "INVALID_INPUT"
)

// AmountField is the request field an amount error names.
const AmountField = "lockedCurrencyAmount"

// AmountError says why an amount cannot be priced. It matches ErrAmount,
// and unwraps to a 400 fault naming lockedCurrencyAmount (with Code), so
// the quote service can return it as it is.
type AmountError struct {
	Code   string
	Reason string
}

func (e *AmountError) Error() string        { return "fx: " + e.Reason }
func (e *AmountError) Is(target error) bool { return target == ErrAmount }

// Unwrap is the 400 the amount error is.
func (e *AmountError) Unwrap() error { return fault.InvalidCode(e.Code, AmountField, e.Reason) }

func amountErr(code, format string, args ...any) error {
	return &AmountError{Code: code, Reason: fmt.Sprintf(format, args...)}
}

// Corridor is one row of the corridor table.
type Corridor struct {
	Sending, Receiving string
	// Rail is the payout rail ("" = any rail of the receiving currency).
	Rail          string
	QuoteLifetime time.Duration
	Fees          Fees
	// Min and Max bound the receiving amount, in its minor units.
	Min, Max int64
}

// Fees is a corridor's fee schedule (see the package doc for how each part
// applies).
type Fees struct {
	// FixedFee is the service's fixed fee, in RECEIVING currency minor units
	// (like every amount in a row); Price converts it to the sending currency.
	FixedFee int64
	// VariableRate is a decimal fraction of the total sending amount, in [0, 1).
	VariableRate string
	// CounterpartyMultiplier is a decimal applied to the market rate (the
	// counterparty's spread; 1 = none), > 0.
	CounterpartyMultiplier string
	// CounterpartyFixedFee is in RECEIVING currency minor units (as the
	// reference's rateDetails.counterpartyFixedFee); Price converts it.
	CounterpartyFixedFee int64
}

// Pricing is a priced quote.
type Pricing struct {
	TotalSending   int64
	TotalReceiving int64
	// Fees is feesIncluded, in sending minor units: Details.ServiceFixedFee
	// + Details.ServiceVariableFeeAmount + CounterpartyFee.
	Fees int64
	// CounterpartyFee is Details.CounterpartyFixedFee (receiving currency)
	// in sending minor units.
	CounterpartyFee int64
	// ExchangeRate, as stored (decimal string): receiving major units per
	// sending major unit, applied to TotalSending − Fees. The API shows
	// its inverse (SendingPerReceiving).
	ExchangeRate string
	// Details: CounterpartyMultiplier and ServiceMultiplier (the market
	// rate, receiving per sending major unit) multiply to ExchangeRate;
	// CounterpartyFixedFee is in receiving minor units; ServiceFixedFee and
	// ServiceVariableFeeAmount are in sending minor units.
	Details ports.RateDetails
}

// SendingPerReceiving is a stored rate (receiving major units per sending
// major unit) as the API shows it: sending currency units per receiving
// currency unit, the spec's reading of a quote's and a transaction's
// exchangeRate (and the reference's prose), rounded half away from zero
// to 12 decimal places as GET /exchange-rates shows its rates. A rate
// that is not a positive decimal is returned as it is.
func SendingPerReceiving(receivingPerSending string) string {
	r, err := decimal.NewFromString(receivingPerSending)
	if err != nil || !r.IsPositive() {
		return receivingPerSending
	}
	return one.DivRound(r, boardRatePlaces).String()
}

// Find returns the corridor for paying receiving from sending over rail
// ("" = the receiving currency's default rail). The returned row carries
// the requested currencies and rail.
//
// How Find picks: a row matches when its Receiving is receiving, its Sending
// is sending or "" (any) and its Rail is rail or "" (any). The most specific
// match gives the fees and limits: naming the sending currency counts 2,
// naming the rail 1 (so a same-currency row beats a rail row: a same-currency
// payment is never charged a spread); on a tie the earlier row wins. The
// quote lifetime is the rail's when a matching row names the rail (how long
// a rate can be held is the rail's property: minutes on an instant rail,
// whichever row prices the payment; a row for the receiving currency beats
// a window-only row without one), else the chosen row's. No match, or an
// unknown currency, is ErrNoCorridor.
func Find(sending, receiving, rail string) (Corridor, error) {
	for _, code := range []string{sending, receiving} {
		if _, ok := money.Lookup(code); !ok {
			return Corridor{}, fmt.Errorf("%w: unknown currency %q", ErrNoCorridor, code)
		}
	}
	best, score, railRow := -1, -1, -1
	for i, c := range table {
		if c.Receiving == "" && c.Rail != "" && c.Rail == rail && railRow < 0 {
			railRow = i // a rail's window only (see table)
			continue
		}
		if c.Receiving != receiving || (c.Sending != "" && c.Sending != sending) || (c.Rail != "" && c.Rail != rail) {
			continue
		}
		s := 0
		if c.Sending != "" {
			s += 2
		}
		if c.Rail != "" {
			s++
		}
		if s > score {
			best, score = i, s
		}
		if c.Rail != "" && (railRow < 0 || table[railRow].Receiving == "" || (c.Sending != "" && table[railRow].Sending == "")) {
			railRow = i
		}
	}
	if best < 0 {
		return Corridor{}, fmt.Errorf("%w: %s to %s over %q", ErrNoCorridor, sending, receiving, rail)
	}
	c := table[best]
	if railRow >= 0 {
		c.QuoteLifetime = table[railRow].QuoteLifetime
	}
	c.Sending, c.Rail = sending, rail
	return c, nil
}

// Corridors returns a copy of the corridor table, in order.
func Corridors() []Corridor { return append([]Corridor(nil), table...) }

var (
	one      = decimal.NewFromInt(1)
	maxInt64 = decimal.NewFromInt(math.MaxInt64)
)

// terms are a corridor's parsed fee schedule at one market rate.
type terms struct {
	market     decimal.Decimal // R, receiving per sending, major units
	multiplier decimal.Decimal // m
	variable   decimal.Decimal // v
	minorRate  decimal.Decimal // r = R × 10^d
	applied    decimal.Decimal // a = r × m
	serviceFee int64           // SF, sending minor units
	cpFee      int64           // CF, sending minor units
}

func parse(c Corridor, rate ports.Rate) (terms, error) {
	sc, ok := money.Lookup(c.Sending)
	if !ok {
		return terms{}, fmt.Errorf("%w: unknown currency %q", ErrNoCorridor, c.Sending)
	}
	rc, ok := money.Lookup(c.Receiving)
	if !ok {
		return terms{}, fmt.Errorf("%w: unknown currency %q", ErrNoCorridor, c.Receiving)
	}
	var t terms
	var err error
	if c.Sending == c.Receiving {
		t.market = one
	} else if t.market, err = decimal.NewFromString(rate.Value); err != nil || !t.market.IsPositive() {
		return terms{}, fmt.Errorf("fx: rate %s→%s is %q, not a positive decimal", c.Sending, c.Receiving, rate.Value)
	}
	if t.multiplier, err = decimal.NewFromString(c.Fees.CounterpartyMultiplier); err != nil || !t.multiplier.IsPositive() {
		return terms{}, fmt.Errorf("fx: corridor %s→%s: counterparty multiplier %q is not a positive decimal", c.Sending, c.Receiving, c.Fees.CounterpartyMultiplier)
	}
	if t.variable, err = decimal.NewFromString(c.Fees.VariableRate); err != nil || t.variable.IsNegative() || t.variable.GreaterThanOrEqual(one) {
		return terms{}, fmt.Errorf("fx: corridor %s→%s: variable rate %q is not a decimal in [0, 1)", c.Sending, c.Receiving, c.Fees.VariableRate)
	}
	if c.Fees.FixedFee < 0 || c.Fees.CounterpartyFixedFee < 0 {
		return terms{}, fmt.Errorf("fx: corridor %s→%s: negative fixed fee", c.Sending, c.Receiving)
	}
	t.minorRate = t.market.Shift(int32(rc.Decimals - sc.Decimals))
	t.applied = t.minorRate.Mul(t.multiplier)
	// A fee converts to at most its receiving amount ÷ a positive rate: a
	// non-int64 result means a broken row or rate, not a bad request.
	sf, ok1 := toInt64(floorDiv(decimal.NewFromInt(c.Fees.FixedFee), t.minorRate))
	cf, ok2 := toInt64(floorDiv(decimal.NewFromInt(c.Fees.CounterpartyFixedFee), t.minorRate))
	if !ok1 || !ok2 {
		return terms{}, fmt.Errorf("fx: corridor %s→%s: fixed fees overflow at rate %s", c.Sending, c.Receiving, t.market)
	}
	t.serviceFee, t.cpFee = sf, cf
	return t, nil
}

// AppliedRate is the rate a quote over c converts at (the ExchangeRate of
// Price): the market rate times the counterparty multiplier, receiving major
// units per sending major unit.
func AppliedRate(c Corridor, rate ports.Rate) (string, error) {
	t, err := parse(c, rate)
	if err != nil {
		return "", err
	}
	return t.market.Mul(t.multiplier).String(), nil
}

// Price prices amount (minor units of the locked side's currency) over
// corridor c at the market rate, by the formula and rounding rule of the
// package doc.
func Price(c Corridor, rate ports.Rate, side string, amount int64) (Pricing, error) {
	if side != SideSending && side != SideReceiving {
		return Pricing{}, fmt.Errorf("fx: locked side %q is neither %s nor %s", side, SideSending, SideReceiving)
	}
	t, err := parse(c, rate)
	if err != nil {
		return Pricing{}, err
	}
	if amount <= 0 || amount > money.MaxAmount {
		return Pricing{}, amountErr(CodeInvalid, "must be between 1 and %d", money.MaxAmount)
	}
	var sending, receiving decimal.Decimal
	switch side {
	case SideSending:
		sending = decimal.NewFromInt(amount)
		p := t.principal(sending)
		if !p.IsPositive() {
			return Pricing{}, amountErr(CodeAmountOutOfRange, "%s does not cover the fees of %s", format(amount, c.Sending), format(sending.Sub(p).IntPart(), c.Sending))
		}
		receiving = p.Mul(t.applied).Floor()
	case SideReceiving:
		receiving = decimal.NewFromInt(amount)
		sending = t.sendingFor(receiving)
	}
	if receiving.LessThan(decimal.NewFromInt(c.Min)) {
		return Pricing{}, amountErr(CodeAmountOutOfRange, "the receiver would get %s, below the corridor minimum of %s", formatDec(receiving, c.Receiving), format(c.Min, c.Receiving))
	}
	if receiving.GreaterThan(decimal.NewFromInt(c.Max)) {
		return Pricing{}, amountErr(CodeSizeLimit, "the receiver would get %s, above the corridor maximum of %s", formatDec(receiving, c.Receiving), format(c.Max, c.Receiving))
	}
	totalSending, ok := toInt64(sending)
	if !ok || totalSending > money.MaxAmount {
		return Pricing{}, amountErr(CodeInvalid, "the sending amount would exceed %d minor units of %s", money.MaxAmount, c.Sending)
	}
	totalReceiving, _ := toInt64(receiving) // ≤ c.Max
	variableFee := sending.Mul(t.variable).Floor().IntPart()
	return Pricing{
		TotalSending:    totalSending,
		TotalReceiving:  totalReceiving,
		Fees:            t.serviceFee + t.cpFee + variableFee,
		CounterpartyFee: t.cpFee,
		ExchangeRate:    t.market.Mul(t.multiplier).String(),
		Details: ports.RateDetails{
			CounterpartyMultiplier:   t.multiplier.String(),
			CounterpartyFixedFee:     c.Fees.CounterpartyFixedFee,
			ServiceMultiplier:        t.market.String(),
			ServiceFixedFee:          t.serviceFee,
			ServiceVariableFeeRate:   t.variable.String(),
			ServiceVariableFeeAmount: variableFee,
		},
	}, nil
}

// principal is what sending amount s converts once the fees are taken:
// s − fixed fees − floor(s × variable rate).
func (t terms) principal(s decimal.Decimal) decimal.Decimal {
	return s.Sub(decimal.NewFromInt(t.serviceFee + t.cpFee)).Sub(s.Mul(t.variable).Floor())
}

// sendingFor is the smallest sending amount that delivers at least
// receiving: its principal must reach ceil(receiving / applied rate).
func (t terms) sendingFor(receiving decimal.Decimal) decimal.Decimal {
	need := ceilDiv(receiving, t.applied)
	// principal() is nondecreasing in s with steps of 0 or 1 (v < 1), so
	// it takes the value need at the smallest s reaching it; estimate s
	// from the real solution and step to it.
	fixed := decimal.NewFromInt(t.serviceFee + t.cpFee)
	s := ceilDiv(need.Add(fixed), one.Sub(t.variable))
	for t.principal(s).LessThan(need) {
		s = s.Add(one)
	}
	for s.GreaterThan(one) && t.principal(s.Sub(one)).GreaterThanOrEqual(need) {
		s = s.Sub(one)
	}
	return s
}

// SendingLimits are the least and the greatest sending amount that Price
// accepts with the sending side locked over c at rate: the least delivers
// the corridor's Min, the greatest delivers at most its Max (one unit
// more would deliver more than Max; where the rate turns one sending unit
// into several receiving ones, the amount that buys exactly Max with the
// receiving side locked may be above it). A bound beyond money.MaxAmount
// is money.MaxAmount.
func SendingLimits(c Corridor, rate ports.Rate) (least, greatest int64, err error) {
	t, err := parse(c, rate)
	if err != nil {
		return 0, 0, err
	}
	limit := decimal.NewFromInt(money.MaxAmount)
	least = decimal.Min(t.sendingFor(decimal.NewFromInt(c.Min)), limit).IntPart()
	greatest = decimal.Min(t.sendingFor(decimal.NewFromInt(c.Max).Add(one)).Sub(one), limit).IntPart()
	return least, greatest, nil
}

// floorDiv is floor(x / y) for x ≥ 0, y > 0, exactly (QuoRem at precision 0
// truncates, which is floor for non-negative operands).
func floorDiv(x, y decimal.Decimal) decimal.Decimal {
	q, _ := x.QuoRem(y, 0)
	return q
}

// ceilDiv is ceil(x / y) for x ≥ 0, y > 0, exactly.
func ceilDiv(x, y decimal.Decimal) decimal.Decimal {
	q, r := x.QuoRem(y, 0)
	if r.IsPositive() {
		q = q.Add(one)
	}
	return q
}

// toInt64 converts a whole decimal, reporting whether it fits an int64.
func toInt64(d decimal.Decimal) (int64, bool) {
	if d.GreaterThan(maxInt64) || d.LessThan(maxInt64.Neg()) {
		return 0, false
	}
	return d.IntPart(), true
}

// format shows minor units in major units with the code ("EUR 1.00").
func format(minor int64, code string) string {
	return formatDec(decimal.NewFromInt(minor), code)
}

func formatDec(minor decimal.Decimal, code string) string {
	c, _ := money.Lookup(code)
	return code + " " + minor.Shift(int32(-c.Decimals)).StringFixed(int32(c.Decimals))
}
