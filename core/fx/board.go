package fx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// DefaultBoardAmount is the sending amount an indication is priced at when
// the request names none (minor units of the sending currency).
const DefaultBoardAmount int64 = 10000

// boardRatePlaces is how many decimal places an indication's rate keeps.
const boardRatePlaces = 12

// Indication is one row of GET /exchange-rates: what paying into Receiving
// from Sending over Rail looks like at SendingAmount.
type Indication struct {
	Sending, Receiving string
	// Rail is the receiving currency's default payout rail.
	Rail          string
	SendingAmount int64
	// ReceivingAmount is what SendingAmount delivers (Price, sending side
	// locked), 0 when it is outside the corridor's limits.
	ReceivingAmount int64
	// MinSending and MaxSending are the least and greatest sending amounts
	// a quote with the sending side locked takes (SendingLimits).
	MinSending, MaxSending int64
	// SendingPerReceiving is the reference's reading of this operation's
	// exchangeRate (its schema and example agree: USD→INR shows 0.012121):
	// sending major units per receiving major unit, the inverse of the
	// applied rate, to 12 places.
	SendingPerReceiving string
	// FixedFees are the fixed fee parts in sending minor units; TotalFees
	// adds the variable fee at SendingAmount (Price's fees).
	FixedFees, TotalFees int64
	UpdatedAt            time.Time
}

// RailTable lists the payout rails in table order (core/rails.Registry):
// a currency's first row is its default rail.
type RailTable interface {
	Specs() []ports.RailSpec
}

// Board lists indicative rates and fees for every corridor.
type Board struct {
	rates ports.FXRates
	rails RailTable
}

// NewBoard returns a Board over a rate source and the rail table.
func NewBoard(rates ports.FXRates, rails RailTable) *Board {
	return &Board{rates: rates, rails: rails}
}

// BoardQuery filters the board: one sending currency ("" = every one),
// receiving currencies (none = every one) and the amount to price.
type BoardQuery struct {
	Sending   string
	Receiving []string
	Amount    int64
}

// List returns an indication per (sending, receiving) pair the query names,
// ordered by sending code, then receiving code (or the order the receiving
// currencies are named in). Same-currency pairs appear only when the
// receiving currency is named. A pair the rate source cannot quote is left
// out. Unknown currencies and negative amounts are 400s naming the
// query parameter.
func (b *Board) List(ctx context.Context, q BoardQuery) ([]Indication, error) {
	var errs fault.Collector
	if q.Sending != "" {
		if _, ok := money.Lookup(q.Sending); !ok {
			errs.Add("sourceCurrency", fmt.Sprintf("%q is not a supported currency", q.Sending))
		}
	}
	for _, r := range q.Receiving {
		if _, ok := money.Lookup(r); !ok {
			errs.Add("destinationCurrency", fmt.Sprintf("%q is not a supported currency", r))
		}
	}
	if q.Amount < 0 || q.Amount > money.MaxAmount {
		errs.Add("sendingAmount", fmt.Sprintf("must be between 0 and %d", money.MaxAmount))
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	senders := money.Codes()
	if q.Sending != "" {
		senders = []string{q.Sending}
	}
	receivers, named := money.Codes(), false
	if len(q.Receiving) > 0 {
		receivers, named = dedupe(q.Receiving), true
	}
	defaults := b.defaultRails()
	var out []Indication
	for _, s := range senders {
		for _, r := range receivers {
			if s == r && !named {
				continue
			}
			ind, err := b.indicate(ctx, s, r, defaults[r], q.Amount)
			if errors.Is(err, ports.ErrNoRate) || errors.Is(err, ErrNoCorridor) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, ind)
		}
	}
	return out, nil
}

func (b *Board) indicate(ctx context.Context, sending, receiving, rail string, amount int64) (Indication, error) {
	c, err := Find(sending, receiving, rail)
	if err != nil {
		return Indication{}, err
	}
	rate, err := b.rates.Rate(ctx, sending, receiving)
	if err != nil {
		return Indication{}, fmt.Errorf("fx board: rate %s→%s: %w", sending, receiving, err)
	}
	t, err := parse(c, rate)
	if err != nil {
		return Indication{}, err
	}
	ind := Indication{
		Sending: sending, Receiving: receiving, Rail: rail, SendingAmount: amount,
		SendingPerReceiving: one.DivRound(t.market.Mul(t.multiplier), boardRatePlaces).String(),
		FixedFees:           t.serviceFee + t.cpFee,
		UpdatedAt:           rate.UpdatedAt,
	}
	// The fees at the amount even when it cannot be priced: they say why.
	ind.TotalFees = ind.FixedFees + decimal.NewFromInt(amount).Mul(t.variable).Floor().IntPart()
	if p, err := Price(c, rate, SideSending, amount); err == nil {
		ind.ReceivingAmount = p.TotalReceiving
	} else if !errors.Is(err, ErrAmount) {
		return Indication{}, err
	}
	// The limits in sending terms, as a quote with the sending side
	// locked takes them.
	if ind.MinSending, ind.MaxSending, err = SendingLimits(c, rate); err != nil {
		return Indication{}, err
	}
	return ind, nil
}

// defaultRails maps each currency to its default payout rail: the first
// row of the rail table that carries it.
func (b *Board) defaultRails() map[string]string {
	out := map[string]string{}
	if b.rails == nil {
		return out
	}
	for _, s := range b.rails.Specs() {
		if _, ok := out[s.Currency]; !ok {
			out[s.Currency] = s.Name
		}
	}
	return out
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
