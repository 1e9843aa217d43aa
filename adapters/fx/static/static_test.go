package static_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/fx/static"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

func TestDefaultCoversEveryCurrency(t *testing.T) {
	tab := static.Default(testkit.NewFakeClock(t0))
	assert.Equal(t, money.Codes(), tab.Currencies())
	for _, from := range money.Codes() {
		for _, to := range money.Codes() {
			r, err := tab.Rate(context.Background(), from, to)
			require.NoError(t, err)
			v, err := decimal.NewFromString(r.Value)
			require.NoError(t, err)
			assert.True(t, v.IsPositive(), "%s→%s = %s", from, to, r.Value)
			assert.Equal(t, t0, r.UpdatedAt)
		}
	}
}

func TestRates(t *testing.T) {
	ctx := context.Background()
	tab, err := static.New(testkit.NewFakeClock(t0), map[string]string{"EUR": "0.8", "MXN": "20", "BTC": "0.00002"})
	require.NoError(t, err)
	for _, c := range []struct{ from, to, want string }{
		{"USD", "USD", "1"},
		{"USD", "MXN", "20"},
		{"MXN", "USD", "0.05"},
		{"EUR", "MXN", "25"},
		{"MXN", "EUR", "0.04"},
		{"USD", "BTC", "0.00002"},
		{"BTC", "USD", "50000"},
		{"EUR", "EUR", "1"},
		{"MXN", "BTC", "0.000001"},
	} {
		r, err := tab.Rate(ctx, c.from, c.to)
		require.NoError(t, err)
		assert.Equal(t, ports.Rate{From: c.from, To: c.to, Value: c.want, UpdatedAt: t0}, r)
	}
	// A non-terminating quotient is rounded to 12 places.
	tab, err = static.New(testkit.NewFakeClock(t0), map[string]string{"A": "3", "B": "1"})
	require.NoError(t, err)
	r, err := tab.Rate(ctx, "A", "B")
	require.NoError(t, err)
	assert.Equal(t, "0.333333333333", r.Value)

	_, err = tab.Rate(ctx, "USD", "XYZ")
	assert.ErrorIs(t, err, ports.ErrNoRate)
	_, err = tab.Rate(ctx, "XYZ", "USD")
	assert.ErrorIs(t, err, ports.ErrNoRate)
}

func TestNewAndParse(t *testing.T) {
	clock := testkit.NewFakeClock(t0)
	_, err := static.New(clock, map[string]string{"EUR": "zero"})
	assert.Error(t, err)
	_, err = static.New(clock, map[string]string{"EUR": "0"})
	assert.Error(t, err)
	_, err = static.New(clock, map[string]string{"EUR": "-1"})
	assert.Error(t, err)

	m, err := static.Parse(" eur=0.91 , GBP=0.78,")
	require.NoError(t, err)
	assert.Equal(t, "0.91", m["EUR"])
	assert.Equal(t, "0.78", m["GBP"])
	assert.Equal(t, static.DefaultPerUSD["MXN"], m["MXN"], "defaults kept")
	_, err = static.Parse("EUR")
	assert.Error(t, err)
	_, err = static.Parse("=1")
	assert.Error(t, err)
	tab, err := static.New(clock, m)
	require.NoError(t, err)
	r, err := tab.Rate(context.Background(), "USD", "EUR")
	require.NoError(t, err)
	assert.Equal(t, "0.91", r.Value)
}
