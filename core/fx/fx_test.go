package fx

import (
	"errors"
	"math/rand"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/ports"
)

func rate(v string) ports.Rate { return ports.Rate{Value: v} }

// Hand-computed examples, one per decimal class (see the package doc's
// formula).
func TestPriceExamples(t *testing.T) {
	cases := []struct {
		name                           string
		sending, receiving, rail       string
		rate, side                     string
		amount                         int64
		totalSending, totalReceiving   int64
		fees, serviceFixed, cp, varFee int64
		exchangeRate                   string
	}{
		// r = 0.92 EUR-cent per USD-cent, a = 0.9154; SF = floor(50/0.92) = 54,
		// CF = floor(25/0.92) = 27, V = floor(10000×0.003) = 30 → fees 111;
		// receiving = floor(9889 × 0.9154) = floor(9052.39) = 9052.
		{"USD→EUR sending", "USD", "EUR", "", "0.92", SideSending, 10000, 10000, 9052, 111, 54, 27, 30, "0.9154"},
		// need = ceil(9200/0.9154) = 10051; smallest S with S − 81 −
		// floor(0.003 S) ≥ 10051 is 10162 (floor(30.486) = 30).
		{"USD→EUR receiving", "USD", "EUR", "", "0.92", SideReceiving, 9200, 10162, 9200, 111, 54, 27, 30, "0.9154"},
		// JPY has 0 decimals: r = 149.5 × 10⁻² = 1.495 yen per cent;
		// SF = floor(75/1.495) = 50, CF = floor(40/1.495) = 26, V = 30;
		// receiving = floor(9894 × 1.487525) = floor(14717.57) = 14717.
		{"USD→JPY sending", "USD", "JPY", "", "149.5", SideSending, 10000, 10000, 14717, 106, 50, 26, 30, "148.7525"},
		// BTC has 8 decimals, Lightning row: r = 16.5 sats per cent;
		// SF = floor(200/16.5) = 12, CF = floor(100/16.5) = 6, V = 20;
		// receiving = floor(9962 × 16.467) = floor(164044.254) = 164044.
		{"USD→BTC lightning", "USD", "BTC", "LIGHTNING", "0.0000165", SideSending, 10000, 10000, 164044, 38, 12, 6, 20, "0.000016467"},
		// USDC has 6 decimals: r = 10000 micro per cent; SF = 50, CF = 25,
		// V = 20; receiving = 9905 × 9980.
		{"USD→USDC sending", "USD", "USDC", "", "1", SideSending, 10000, 10000, 98_851_900, 95, 50, 25, 20, "0.998"},
		// Same currency: rate 1 whatever the source says, fixed fee only.
		{"USD→USD", "USD", "USD", "", "1.3", SideSending, 10000, 10000, 9975, 25, 25, 0, 0, "1"},
		{"USD→USD receiving", "USD", "USD", "RTP", "1", SideReceiving, 9975, 10000, 9975, 25, 25, 0, 0, "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Find(tc.sending, tc.receiving, tc.rail)
			require.NoError(t, err)
			p, err := Price(c, rate(tc.rate), tc.side, tc.amount)
			require.NoError(t, err)
			assert.Equal(t, tc.totalSending, p.TotalSending, "totalSending")
			assert.Equal(t, tc.totalReceiving, p.TotalReceiving, "totalReceiving")
			assert.Equal(t, tc.fees, p.Fees, "fees")
			assert.Equal(t, tc.serviceFixed, p.Details.ServiceFixedFee, "serviceFixedFee")
			assert.Equal(t, tc.cp, p.CounterpartyFee, "counterparty fee in sending units")
			assert.Equal(t, tc.varFee, p.Details.ServiceVariableFeeAmount, "variable fee")
			assert.Equal(t, tc.exchangeRate, p.ExchangeRate)
			assert.Equal(t, c.Fees.CounterpartyFixedFee, p.Details.CounterpartyFixedFee)
			assert.Equal(t, c.Fees.VariableRate, p.Details.ServiceVariableFeeRate)
			assert.Equal(t, c.Fees.CounterpartyMultiplier, p.Details.CounterpartyMultiplier)
		})
	}
}

func TestPriceErrors(t *testing.T) {
	usdEUR, err := Find("USD", "EUR", "")
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		c      Corridor
		rate   string
		side   string
		amount int64
		want   error
		code   string
	}{
		"below the minimum":                {usdEUR, "0.92", SideReceiving, 99, ErrAmount, CodeAmountOutOfRange},
		"above the maximum":                {usdEUR, "0.92", SideReceiving, 250_000_01, ErrAmount, CodeSizeLimit},
		"sending above maximum":            {usdEUR, "0.92", SideSending, 1_000_000_00, ErrAmount, CodeSizeLimit},
		"fees not covered":                 {usdEUR, "0.92", SideSending, 100, ErrAmount, CodeAmountOutOfRange},
		"zero":                             {usdEUR, "0.92", SideSending, 0, ErrAmount, CodeInvalid},
		"negative":                         {usdEUR, "0.92", SideReceiving, -5, ErrAmount, CodeInvalid},
		"above money.MaxAmount":            {usdEUR, "0.92", SideSending, money.MaxAmount + 1, ErrAmount, CodeInvalid},
		"money.MaxAmount is out of limits": {usdEUR, "0.92", SideSending, money.MaxAmount, ErrAmount, CodeSizeLimit},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Price(tc.c, rate(tc.rate), tc.side, tc.amount)
			require.ErrorIs(t, err, tc.want)
			var ae *AmountError
			require.ErrorAs(t, err, &ae)
			assert.NotEmpty(t, ae.Reason)
			f, ok := fault.As(err)
			require.True(t, ok, "a 400 the caller can return")
			assert.Equal(t, fault.KindInvalid, f.Kind)
			assert.Equal(t, tc.code, f.Code)
			require.Len(t, f.Fields, 1)
			assert.Equal(t, "lockedCurrencyAmount", f.Fields[0].Field)
		})
	}
	_, err = Price(usdEUR, rate("0"), SideSending, 10000)
	assert.Error(t, err)
	assert.NotErrorIs(t, err, ErrAmount, "a broken rate is not the caller's fault")
	_, isFault := fault.As(err)
	assert.False(t, isFault)
	_, err = Price(usdEUR, rate("abc"), SideSending, 10000)
	assert.Error(t, err)
	_, err = Price(usdEUR, rate("0.92"), "BOTH", 10000)
	assert.Error(t, err)
}

func TestFind(t *testing.T) {
	_, err := Find("USD", "XYZ", "")
	assert.ErrorIs(t, err, ErrNoCorridor)
	_, err = Find("", "USD", "")
	assert.ErrorIs(t, err, ErrNoCorridor)

	// Every known currency can pay every other, same currency included.
	for _, s := range money.Codes() {
		for _, r := range money.Codes() {
			c, err := Find(s, r, "")
			require.NoError(t, err, "%s→%s", s, r)
			assert.Equal(t, s, c.Sending)
			assert.Equal(t, r, c.Receiving)
			if s == r {
				assert.Equal(t, "1", c.Fees.CounterpartyMultiplier, "%s: no spread on a same-currency payment", s)
				assert.Equal(t, "0", c.Fees.VariableRate)
			}
		}
	}

	c, _ := Find("BTC", "USD", "")
	assert.Equal(t, int64(50_000_00), c.Max, "a sending-currency row beats the default")
	c, _ = Find("EUR", "USD", "")
	assert.Equal(t, int64(250_000_00), c.Max)
	assert.Equal(t, 15*time.Minute, c.QuoteLifetime)
	c, _ = Find("EUR", "BTC", "LIGHTNING")
	assert.Equal(t, int64(10_000_000), c.Max, "a rail row beats the default")
	assert.Equal(t, "LIGHTNING", c.Rail)
	c, _ = Find("USD", "USD", "RTP")
	assert.Equal(t, "1", c.Fees.CounterpartyMultiplier, "the same-currency row beats the rail row")
	assert.Equal(t, 5*time.Minute, c.QuoteLifetime, "but the instant rail's window applies")
	c, _ = Find("EUR", "USD", "WIRE")
	assert.Equal(t, 30*time.Minute, c.QuoteLifetime)
	c, _ = Find("USD", "MXN", "UMA")
	assert.Equal(t, 5*time.Minute, c.QuoteLifetime, "the UMA window-only row")
	assert.Equal(t, int64(10_00), c.Min, "fees and limits from the MXN row")
	assert.Equal(t, "0.995", c.Fees.CounterpartyMultiplier)
	c, _ = Find("USD", "BTC", "UMA")
	assert.Equal(t, 5*time.Minute, c.QuoteLifetime, "the rail's window, whichever row prices it")
	assert.Equal(t, int64(100_000_000), c.Max)
	c, _ = Find("EUR", "USD", "NO_SUCH_RAIL")
	assert.Equal(t, 15*time.Minute, c.QuoteLifetime, "an unknown rail gets the default row")
}

// The table's rows are well formed, and every instant rail of the rail table
// quotes for at most 5 minutes while slower rails quote longer.
func TestTable(t *testing.T) {
	for _, c := range table {
		if c.Receiving == "" {
			assert.NotEmpty(t, c.Rail, "a row without a receiving currency is a rail's window")
			assert.Zero(t, c.Fees, "%+v", c)
			assert.Positive(t, c.QuoteLifetime)
			continue
		}
		_, ok := money.Lookup(c.Receiving)
		assert.True(t, ok, "%+v", c)
		if c.Sending != "" {
			_, ok := money.Lookup(c.Sending)
			assert.True(t, ok, "%+v", c)
		}
		assert.Positive(t, c.Min, "%+v", c)
		assert.GreaterOrEqual(t, c.Max, c.Min, "%+v", c)
		assert.Positive(t, c.QuoteLifetime)
		_, err := parse(Corridor{Sending: "USD", Receiving: c.Receiving, Fees: c.Fees}, rate("1"))
		assert.NoError(t, err, "%+v", c)
	}
	for _, s := range rails.DefaultSpecs() {
		c, err := Find("USD", s.Currency, s.Name)
		require.NoError(t, err)
		if s.Instant {
			assert.LessOrEqual(t, c.QuoteLifetime, 5*time.Minute, "%s/%s", s.Name, s.Currency)
			assert.GreaterOrEqual(t, c.QuoteLifetime, time.Minute, "%s/%s", s.Name, s.Currency)
		} else {
			assert.Greater(t, c.QuoteLifetime, 5*time.Minute, "%s/%s", s.Name, s.Currency)
		}
	}
}

// perUSD are indicative rates (as adapters/fx/static's) the property test
// crosses to get realistic rates between every pair.
var perUSD = map[string]string{
	"USD": "1", "USDC": "1", "EUR": "0.92", "GBP": "0.79", "MXN": "18.20", "BRL": "5.40", "INR": "83.30",
	"NGN": "1550", "AED": "3.6725", "CAD": "1.36", "JPY": "149.50", "BTC": "0.0000165",
}

func crossRate(from, to string) string {
	f, _ := decimal.NewFromString(perUSD[from])
	g, _ := decimal.NewFromString(perUSD[to])
	return g.DivRound(f, 12).String()
}

// randomRate is a positive decimal between 1e-12 and 1e6 with up to 12
// places.
func randomRate(rng *rand.Rand) string {
	d := decimal.New(1+rng.Int63n(1_000_000_000), int32(-rng.Intn(16)))
	if d.LessThan(decimal.New(1, -12)) {
		d = decimal.New(1, -12)
	}
	return d.String()
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.Intn(len(xs))] }

// amountFor draws amounts near the corridor's limits (in the locked side's
// currency) and across the whole int64 range up to past money.MaxAmount.
func amountFor(rng *rand.Rand, c Corridor, side string, p Pricing, havePricing bool) int64 {
	switch rng.Intn(6) {
	case 0:
		return c.Min + rng.Int63n(3) - 1
	case 1:
		return c.Max + rng.Int63n(3) - 1
	case 2:
		if havePricing && side == SideSending {
			return p.TotalSending + rng.Int63n(3) - 1
		}
		return c.Min + rng.Int63n(c.Max-c.Min+1)
	case 3:
		return money.MaxAmount - rng.Int63n(3) + 1
	case 4:
		return 1 + rng.Int63n(1000)
	default:
		// Log-uniform over 1..9e15.
		return 1 + rng.Int63n(int64(1)<<uint(1+rng.Intn(53)))
	}
}

// TestPriceProperties checks the formula's promises on thousands of random
// quotes across 0/2/6/8-decimal currencies, both locked sides, every
// corridor row, amounts near the limits and up to money.MaxAmount.
func TestPriceProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(20250205))
	codes := money.Codes()
	railNames := []string{""}
	for _, c := range table {
		if c.Rail != "" {
			railNames = append(railNames, c.Rail)
		}
	}
	const n = 30000
	priced := map[string]int{}
	for i := 0; i < n; i++ {
		s, r := pick(rng, codes), pick(rng, codes)
		if rng.Intn(6) == 0 {
			r = s
		}
		c, err := Find(s, r, pick(rng, railNames))
		require.NoError(t, err)
		rt := crossRate(s, r)
		if rng.Intn(4) == 0 {
			rt = randomRate(rng)
		}
		side := pick(rng, []string{SideSending, SideReceiving})
		var ref Pricing
		var have bool
		if side == SideSending {
			// Aim near the sending amounts that hit the receiving limits.
			if p, err := Price(c, rate(rt), SideReceiving, c.Min); err == nil && rng.Intn(2) == 0 {
				ref, have = p, true
			} else if p, err := Price(c, rate(rt), SideReceiving, c.Max); err == nil {
				ref, have = p, true
			}
		}
		amount := amountFor(rng, c, side, ref, have)
		p, err := Price(c, rate(rt), side, amount)
		if err != nil {
			require.ErrorIs(t, err, ErrAmount, "%s→%s %s %s %d at %s", s, r, c.Rail, side, amount, rt)
			continue
		}
		priced[side]++
		checkPricing(t, c, rt, side, amount, p)
	}
	// The draws must exercise both sides, not just produce errors.
	assert.Greater(t, priced[SideSending], n/10, "priced sending-locked quotes")
	assert.Greater(t, priced[SideReceiving], n/10, "priced receiving-locked quotes")
}

func checkPricing(t *testing.T, c Corridor, rt, side string, amount int64, p Pricing) {
	t.Helper()
	ctx := func() string { return c.Sending + "→" + c.Receiving + " " + c.Rail + " " + side + " at " + rt }
	tm, err := parse(c, rate(rt))
	require.NoError(t, err)
	require.Positive(t, p.TotalSending, ctx())
	require.Positive(t, p.TotalReceiving, ctx())
	require.GreaterOrEqual(t, p.Fees, int64(0), ctx())
	require.LessOrEqual(t, p.TotalSending, money.MaxAmount, ctx())
	require.GreaterOrEqual(t, p.TotalReceiving, c.Min, ctx())
	require.LessOrEqual(t, p.TotalReceiving, c.Max, ctx())
	if side == SideSending {
		require.Equal(t, amount, p.TotalSending, ctx())
	} else {
		require.Equal(t, amount, p.TotalReceiving, ctx())
	}
	// Fees are exactly their parts.
	require.Equal(t, p.Details.ServiceFixedFee+p.Details.ServiceVariableFeeAmount+p.CounterpartyFee, p.Fees, ctx())
	S := decimal.NewFromInt(p.TotalSending)
	require.True(t, S.Mul(tm.variable).Floor().Equal(decimal.NewFromInt(p.Details.ServiceVariableFeeAmount)), ctx())

	// The receiver never gets more than the exact rate allows for the
	// principal, and at most one minor unit less (sending side locked).
	principal := decimal.NewFromInt(p.TotalSending - p.Fees)
	require.True(t, principal.IsPositive(), ctx())
	exact := principal.Mul(tm.applied)
	rcv := decimal.NewFromInt(p.TotalReceiving)
	require.True(t, rcv.LessThanOrEqual(exact), "%s: receiver gets %s, exact %s", ctx(), rcv, exact)
	if side == SideSending {
		require.True(t, exact.Sub(rcv).LessThan(one), "%s: receiver loses ≥ 1 unit", ctx())
	} else {
		// The sender pays less than one minor unit above the exact price:
		// at S−1 the real-valued principal ((S−1)(1−v) − SF − CF) would
		// not buy the amount.
		fixed := decimal.NewFromInt(tm.serviceFee + tm.cpFee)
		below := S.Sub(one).Mul(one.Sub(tm.variable)).Sub(fixed).Mul(tm.applied)
		require.True(t, below.LessThan(rcv), "%s: sender pays ≥ 1 unit above the exact price (S=%d)", ctx(), p.TotalSending)
	}

	// Round trips: the other side locked at this quote's amount gives a
	// consistent quote.
	if side == SideSending {
		back, err := Price(c, rate(rt), SideReceiving, p.TotalReceiving)
		require.NoError(t, err, ctx())
		require.LessOrEqual(t, back.TotalSending, p.TotalSending, "%s: buying what S bought costs at most S", ctx())
	} else {
		back, err := Price(c, rate(rt), SideSending, p.TotalSending)
		if errors.Is(err, ErrAmount) {
			// Only the maximum can stop it: S buys at least the amount.
			require.Contains(t, err.Error(), "maximum", ctx())
			return
		}
		require.NoError(t, err, ctx())
		require.GreaterOrEqual(t, back.TotalReceiving, p.TotalReceiving, ctx())
		require.Equal(t, p.Fees, back.Fees, ctx())
	}
}

// The API shows a stored rate (receiving per sending) as its inverse,
// rounded to 12 places; anything that is not a positive decimal stays.
func TestSendingPerReceiving(t *testing.T) {
	for in, want := range map[string]string{
		"0.9154": "1.092418614813", // USD → EUR
		"2":      "0.5",
		"1":      "1",
		"82.5":   "0.012121212121",
		"0":      "0",
		"":       "",
		"x":      "x",
	} {
		assert.Equal(t, want, SendingPerReceiving(in), in)
	}
}
