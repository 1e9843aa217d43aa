package fx_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/fx/static"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

type specs []ports.RailSpec

func (s specs) Specs() []ports.RailSpec { return s }

var t0 = time.Date(2025, 2, 5, 12, 0, 0, 0, time.UTC)

func board(t *testing.T) *fx.Board {
	t.Helper()
	b, _ := boardRates(t)
	return b
}

func boardRates(t *testing.T) (*fx.Board, ports.FXRates) {
	t.Helper()
	rates, err := static.New(testkit.NewFakeClock(t0), map[string]string{"EUR": "0.925", "INR": "82.5", "BTC": "0.0000165", "JPY": "149.5"})
	require.NoError(t, err)
	return fx.NewBoard(rates, specs(rails.DefaultSpecs())), rates
}

// Every row's minSendingAmount and maxSendingAmount are the bounds a
// quote with the sending side locked takes: the bound is priced, one unit
// beyond it is refused for its amount (unless it is money.MaxAmount).
func TestBoardLimitsAreWhatQuotesTake(t *testing.T) {
	ctx := context.Background()
	b, rates := boardRates(t)
	rows, err := b.List(ctx, fx.BoardQuery{})
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	for _, ind := range rows {
		c, err := fx.Find(ind.Sending, ind.Receiving, ind.Rail)
		require.NoError(t, err)
		rate, err := rates.Rate(ctx, ind.Sending, ind.Receiving)
		require.NoError(t, err)
		pair := ind.Sending + "→" + ind.Receiving
		_, err = fx.Price(c, rate, fx.SideSending, ind.MinSending)
		require.NoError(t, err, "%s min %d", pair, ind.MinSending)
		if ind.MinSending > 1 {
			_, err = fx.Price(c, rate, fx.SideSending, ind.MinSending-1)
			require.ErrorIs(t, err, fx.ErrAmount, "%s below min", pair)
		}
		_, err = fx.Price(c, rate, fx.SideSending, ind.MaxSending)
		require.NoError(t, err, "%s max %d", pair, ind.MaxSending)
		if ind.MaxSending < money.MaxAmount {
			_, err = fx.Price(c, rate, fx.SideSending, ind.MaxSending+1)
			require.ErrorIs(t, err, fx.ErrAmount, "%s above max %d", pair, ind.MaxSending)
		}
	}
}

func TestBoardIndication(t *testing.T) {
	got, err := board(t).List(context.Background(), fx.BoardQuery{Sending: "USD", Receiving: []string{"INR", "EUR"}, Amount: 10000})
	require.NoError(t, err)
	require.Len(t, got, 2)

	inr := got[0]
	assert.Equal(t, "USD", inr.Sending)
	assert.Equal(t, "INR", inr.Receiving, "in the order named")
	assert.Equal(t, "UPI", inr.Rail, "INR's default rail")
	assert.Equal(t, int64(10000), inr.SendingAmount)
	// a = 82.5 × 0.995 = 82.0875 INR/USD; SF = floor(4000/82.5) = 48,
	// CF = floor(2000/82.5) = 24, V = 30; receiving = floor(9898 × 82.0875)
	// = floor(812502.075) = 812502.
	assert.Equal(t, int64(812502), inr.ReceivingAmount)
	assert.Equal(t, int64(72), inr.FixedFees)
	assert.Equal(t, int64(102), inr.TotalFees)
	assert.Equal(t, "0.012182122735", inr.SendingPerReceiving, "1 / 82.0875: sending per receiving, as the reference's example")
	// UPI row: 100.00 to 100,000.00 INR. Min: need = ceil(10000/82.0875)
	// = 122, S = smallest with S − 72 − floor(0.003 S) ≥ 122 = 194.
	assert.Equal(t, int64(194), inr.MinSending)
	assert.Equal(t, t0, inr.UpdatedAt)

	eur := got[1]
	assert.Equal(t, "SEPA_INSTANT", eur.Rail)
	assert.Equal(t, "1.086513649328", eur.SendingPerReceiving) // 1 / (0.925 × 0.995)
	assert.Positive(t, eur.MaxSending)
	assert.Greater(t, eur.MaxSending, eur.MinSending)
}

func TestBoardFilters(t *testing.T) {
	b := board(t)
	ctx := context.Background()
	// Every pair from USD except USD itself; pairs without a rate left out.
	all, err := b.List(ctx, fx.BoardQuery{Sending: "USD", Amount: fx.DefaultBoardAmount})
	require.NoError(t, err)
	var dests []string
	for _, ind := range all {
		dests = append(dests, ind.Receiving)
	}
	assert.Equal(t, []string{"BTC", "EUR", "INR", "JPY"}, dests)

	// Everything: every ordered pair of quoted currencies.
	every, err := b.List(ctx, fx.BoardQuery{})
	require.NoError(t, err)
	assert.Len(t, every, 5*4)

	// A named same-currency pair is listed at rate 1.
	same, err := b.List(ctx, fx.BoardQuery{Sending: "EUR", Receiving: []string{"EUR", "EUR"}, Amount: 10000})
	require.NoError(t, err)
	require.Len(t, same, 1)
	assert.Equal(t, "1", same[0].SendingPerReceiving)
	assert.Equal(t, int64(10000-25), same[0].ReceivingAmount)

	// An amount outside the limits still lists the corridor, receiving 0.
	tiny, err := b.List(ctx, fx.BoardQuery{Sending: "USD", Receiving: []string{"EUR"}, Amount: 0})
	require.NoError(t, err)
	require.Len(t, tiny, 1)
	assert.Zero(t, tiny[0].ReceivingAmount)
	assert.Equal(t, tiny[0].FixedFees, tiny[0].TotalFees)

	// A currency the rate source lacks gives an empty list, not an error.
	none, err := b.List(ctx, fx.BoardQuery{Sending: "USD", Receiving: []string{"NGN"}, Amount: 10000})
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestBoardErrors(t *testing.T) {
	b := board(t)
	ctx := context.Background()
	for q, field := range map[*fx.BoardQuery]string{
		{Sending: "XYZ"}:                    "sourceCurrency",
		{Sending: "usd"}:                    "sourceCurrency",
		{Receiving: []string{"EUR", "ABC"}}: "destinationCurrency",
		{Amount: -1}:                        "sendingAmount",
		{Amount: money.MaxAmount + 1}:       "sendingAmount",
	} {
		_, err := b.List(ctx, *q)
		f, ok := fault.As(err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, fault.KindInvalid, f.Kind)
		require.NotEmpty(t, f.Fields)
		assert.Equal(t, field, f.Fields[0].Field)
	}
	// Huge amounts price without overflow.
	got, err := b.List(ctx, fx.BoardQuery{Amount: money.MaxAmount})
	require.NoError(t, err)
	for _, ind := range got {
		assert.Zero(t, ind.ReceivingAmount, "%s→%s: above every maximum", ind.Sending, ind.Receiving)
		assert.LessOrEqual(t, ind.MaxSending, money.MaxAmount)
	}
}
