package money

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLookupDecimals(t *testing.T) {
	for code, dec := range map[string]int{"USD": 2, "JPY": 0, "USDC": 6, "BTC": 8} {
		c, ok := Lookup(code)
		assert.True(t, ok, code)
		assert.Equal(t, dec, c.Decimals, code)
	}
	_, ok := Lookup("XXX")
	assert.False(t, ok)
}

func TestCurrenciesForRegion(t *testing.T) {
	assert.Equal(t, []string{"USD", "USDC"}, CurrenciesForRegion("US"))
	assert.Equal(t, []string{"EUR", "USDC"}, CurrenciesForRegion("DE"))
	assert.Equal(t, []string{"MXN", "USDC"}, CurrenciesForRegion("MX"))
	assert.Equal(t, []string{"USD", "USDC"}, CurrenciesForRegion("KE"))
}

func TestIsCountry(t *testing.T) {
	assert.True(t, IsCountry("US"))
	assert.True(t, IsCountry("ZW"))
	assert.True(t, IsCountry("AD"))
	assert.False(t, IsCountry("us"))
	assert.False(t, IsCountry("XX"))
	assert.False(t, IsCountry("USA"))
	assert.Equal(t, 249, len(countries))
}
