// Package lookup holds the receiver lookup use case: before paying an
// external account, a platform asks which currencies it takes, at what
// estimated rate from the sender's currency, between which amounts, and
// which payer data the receiving side needs. The answer is stored under a
// Lookup id for the quote that follows.
package lookup

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/shopspring/decimal"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// Error codes.
const (
	CodeAccountNotFound  = "NOT_FOUND"
	CodeCustomerNotFound = "USER_NOT_FOUND"
	CodeCustomerDeleted  = "CUSTOMER_DELETED"
	CodeLookupNotFound   = "LOOKUP_REQUEST_NOT_FOUND"
)

// DefaultSendingCurrency is the sender's currency when neither the sender
// nor the platform names one.
const DefaultSendingCurrency = "USD"

// Service runs receiver lookups.
type Service struct {
	store ports.Store
	fx    ports.FXRates
	clock ports.Clock
	ids   ports.IDs
}

// New builds a Service.
func New(store ports.Store, fx ports.FXRates, clock ports.Clock, ids ports.IDs) *Service {
	return &Service{store: store, fx: fx, clock: clock, ids: ids}
}

// Query is a receiver lookup: the external account and the sender, named
// by customer id or UMA address (at least one).
type Query struct {
	AccountID        string
	CustomerID       string
	SenderUmaAddress string
}

var umaRe = regexp.MustCompile(`^\$[a-z0-9._-]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$`)

// sender is who pays: its currency and whether it is a business.
type sender struct {
	customerID string
	currency   string
	business   bool
}

// Lookup answers a receiver lookup for one of the platform's live external
// accounts and stores the answer: the account's currency with the
// estimated rate from the sender's currency (the sender customer's first
// currency, else the platform's, else USD), the corridor's min and max in
// the receiving currency's minor units, and the payer data required.
func (s *Service) Lookup(ctx context.Context, platformID string, q Query) (ports.Lookup, error) {
	var errs fault.Collector
	if q.CustomerID == "" && q.SenderUmaAddress == "" {
		errs.Add("senderUmaAddress", "give senderUmaAddress or customerId")
		errs.Add("customerId", "give customerId or senderUmaAddress")
	}
	if q.SenderUmaAddress != "" && (len(q.SenderUmaAddress) > 255 || !umaRe.MatchString(q.SenderUmaAddress)) {
		errs.Add("senderUmaAddress", "must be a UMA address ($user@domain)")
	}
	if err := errs.Err(); err != nil {
		return ports.Lookup{}, err
	}
	read := s.store.Read()
	acct, err := read.ExternalAccounts().Get(ctx, platformID, q.AccountID)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Lookup{}, fault.NotFound(CodeAccountNotFound, "external account "+q.AccountID+" not found")
	}
	if err != nil {
		return ports.Lookup{}, fmt.Errorf("lookup: load account %s: %w", q.AccountID, err)
	}
	from, err := s.sender(ctx, read, platformID, q)
	if err != nil {
		return ports.Lookup{}, err
	}
	rate, err := s.fx.Rate(ctx, from.currency, acct.Currency)
	if err != nil {
		return ports.Lookup{}, fmt.Errorf("lookup: rate %s→%s: %w", from.currency, acct.Currency, err)
	}
	if v, err := decimal.NewFromString(rate.Value); err != nil || !v.IsPositive() {
		return ports.Lookup{}, fmt.Errorf("lookup: rate %s→%s is %q, not a positive decimal", from.currency, acct.Currency, rate.Value)
	}
	limits, ok := LimitsFor(from.currency, acct.Currency, acct.Info.AccountType)
	if !ok {
		return ports.Lookup{}, fmt.Errorf("lookup: no corridor limits for %s→%s", from.currency, acct.Currency)
	}
	l := ports.Lookup{
		ID:               s.ids.New("Lookup"),
		PlatformID:       platformID,
		AccountID:        acct.ID,
		CustomerID:       from.customerID,
		SenderUmaAddress: q.SenderUmaAddress,
		SendingCurrency:  from.currency,
		Currencies: []ports.LookupCurrency{{
			Currency: acct.Currency, EstimatedRate: rate.Value, Min: limits.Min, Max: limits.Max,
		}},
		RequiredPayerData: PayerData(acct.Currency, from.business),
		CreatedAt:         s.clock.Now().UTC().Truncate(time.Microsecond),
	}
	err = s.store.InTx(ctx, func(tx ports.Tx) error { return tx.Lookups().Create(ctx, l) })
	if err != nil {
		return ports.Lookup{}, fmt.Errorf("lookup: store %s: %w", l.ID, err)
	}
	return l, nil
}

// sender finds the paying customer (by id, else by UMA address) and its
// currency.
func (s *Service) sender(ctx context.Context, read ports.Tx, platformID string, q Query) (sender, error) {
	var c ports.Customer
	switch {
	case q.CustomerID != "":
		var err error
		c, err = read.Customers().Get(ctx, platformID, q.CustomerID)
		if errors.Is(err, ports.ErrNotFound) {
			return sender{}, fault.NotFound(CodeCustomerNotFound, "customer "+q.CustomerID+" not found")
		}
		if err != nil {
			return sender{}, fmt.Errorf("lookup: load customer %s: %w", q.CustomerID, err)
		}
		if q.SenderUmaAddress != "" && c.UmaAddress != q.SenderUmaAddress {
			return sender{}, fault.Invalid("senderUmaAddress", "is not the UMA address of customer "+q.CustomerID)
		}
	default:
		rows, _, err := read.Customers().List(ctx, ports.CustomerFilter{PlatformID: platformID, UmaAddress: q.SenderUmaAddress}, ports.Page{Limit: 1})
		if err != nil {
			return sender{}, fmt.Errorf("lookup: find sender %s: %w", q.SenderUmaAddress, err)
		}
		if len(rows) == 0 {
			return sender{}, fault.NotFound(CodeCustomerNotFound, "no customer has the UMA address "+q.SenderUmaAddress)
		}
		c = rows[0]
	}
	if c.IsDeleted {
		return sender{}, fault.New(fault.KindGone, CodeCustomerDeleted, "customer "+c.ID+" has been deleted")
	}
	out := sender{customerID: c.ID, business: c.CustomerType == "BUSINESS"}
	switch {
	case len(c.Currencies) > 0:
		out.currency = c.Currencies[0]
	default:
		p, err := read.Platforms().Get(ctx, platformID)
		if err != nil {
			return sender{}, fmt.Errorf("lookup: load platform %s: %w", platformID, err)
		}
		out.currency = DefaultSendingCurrency
		if len(p.Currencies) > 0 {
			out.currency = p.Currencies[0]
		}
	}
	return out, nil
}

// Get returns a stored lookup of the platform, or 404
// LOOKUP_REQUEST_NOT_FOUND.
func (s *Service) Get(ctx context.Context, platformID, id string) (ports.Lookup, error) {
	l, err := s.store.Read().Lookups().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Lookup{}, fault.NotFound(CodeLookupNotFound, "lookup "+id+" not found")
	}
	if err != nil {
		return ports.Lookup{}, fmt.Errorf("lookup: get %s: %w", id, err)
	}
	return l, nil
}
