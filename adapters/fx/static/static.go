// Package static is an FX rate source from a fixed table: each currency's
// units per US dollar, cross rates through USD. It is the sandbox's (and
// the embedded default's) rate source; a live provider is another adapter
// behind the same port.
package static

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/corridorpay/corridor/ports"
)

// DefaultPerUSD is how many units of each currency one US dollar buys, in
// major units: indicative mid-market values for the currencies corridor
// supports. Stablecoins are at par.
var DefaultPerUSD = map[string]string{
	"USD":  "1",
	"USDC": "1",
	"EUR":  "0.92",
	"GBP":  "0.79",
	"MXN":  "18.20",
	"BRL":  "5.40",
	"INR":  "83.30",
	"NGN":  "1550",
	"AED":  "3.6725",
	"CAD":  "1.36",
	"JPY":  "149.50",
	"BTC":  "0.0000165",
}

// ratePlaces is how many decimal places a cross rate keeps.
const ratePlaces = 12

// Table is ports.FXRates over a fixed table.
type Table struct {
	perUSD    map[string]decimal.Decimal
	updatedAt ports.Clock
}

var _ ports.FXRates = (*Table)(nil)

// New returns a table from units-per-USD values (decimal strings, > 0).
// Rates carry the clock's time as their UpdatedAt.
func New(clock ports.Clock, perUSD map[string]string) (*Table, error) {
	t := &Table{perUSD: make(map[string]decimal.Decimal, len(perUSD)), updatedAt: clock}
	for code, v := range perUSD {
		d, err := decimal.NewFromString(v)
		if err != nil {
			return nil, fmt.Errorf("fx static: rate of %s: %w", code, err)
		}
		if !d.IsPositive() {
			return nil, fmt.Errorf("fx static: rate of %s must be positive, got %s", code, v)
		}
		t.perUSD[code] = d
	}
	if _, ok := t.perUSD["USD"]; !ok {
		t.perUSD["USD"] = decimal.NewFromInt(1)
	}
	return t, nil
}

// Default is New with DefaultPerUSD.
func Default(clock ports.Clock) *Table {
	t, err := New(clock, DefaultPerUSD)
	if err != nil {
		panic(err)
	}
	return t
}

// Parse reads a table override such as "EUR=0.91,GBP=0.78" (as an
// environment variable carries it) over DefaultPerUSD.
func Parse(s string) (map[string]string, error) {
	out := make(map[string]string, len(DefaultPerUSD))
	for k, v := range DefaultPerUSD {
		out[k] = v
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		code, val, ok := strings.Cut(part, "=")
		code, val = strings.ToUpper(strings.TrimSpace(code)), strings.TrimSpace(val)
		if !ok || code == "" || val == "" {
			return nil, fmt.Errorf("fx static: %q is not CODE=units-per-USD", part)
		}
		out[code] = val
	}
	return out, nil
}

// Currencies lists the currencies the table quotes, sorted.
func (t *Table) Currencies() []string {
	out := make([]string, 0, len(t.perUSD))
	for c := range t.perUSD {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Rate returns how many units of to one unit of from buys:
// perUSD[to] / perUSD[from], rounded to 12 decimal places.
func (t *Table) Rate(_ context.Context, from, to string) (ports.Rate, error) {
	f, ok := t.perUSD[from]
	if !ok {
		return ports.Rate{}, fmt.Errorf("fx static: %s: %w", from, ports.ErrNoRate)
	}
	g, ok := t.perUSD[to]
	if !ok {
		return ports.Rate{}, fmt.Errorf("fx static: %s: %w", to, ports.ErrNoRate)
	}
	v := decimal.NewFromInt(1)
	if from != to {
		v = g.DivRound(f, ratePlaces)
	}
	return ports.Rate{From: from, To: to, Value: v.String(), UpdatedAt: t.updatedAt.Now()}, nil
}
