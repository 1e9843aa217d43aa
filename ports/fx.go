package ports

import (
	"context"
	"errors"
	"time"
)

// ErrNoRate is returned for a currency pair the rate source does not quote.
var ErrNoRate = errors.New("no exchange rate")

// Rate is an exchange rate between two currencies, in major units.
type Rate struct {
	From, To string
	// Value is how many units of To one unit of From buys, as a decimal
	// string (core parses it with shopspring/decimal; never a float).
	Value     string
	UpdatedAt time.Time
}

// FXRates gives indicative exchange rates (for lookups and quotes).
type FXRates interface {
	// Rate returns the rate from one currency to another, or an error
	// wrapping ErrNoRate for a pair it does not quote.
	Rate(ctx context.Context, from, to string) (Rate, error)
}
