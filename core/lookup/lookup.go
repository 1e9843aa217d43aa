// Package lookup holds the receiver lookup use case: before paying an
// external account or a UMA address, a platform asks which currencies it
// takes, at what estimated rate from the sender's currency, between which
// amounts, and which payer data the receiving side needs. The answer is
// stored under a Lookup id for the quote that follows. Rates and limits come
// from the corridor table (core/fx).
package lookup

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/ports"
)

// Error codes.
const (
	CodeAccountNotFound  = "NOT_FOUND"
	CodeCustomerNotFound = "USER_NOT_FOUND"
	CodeCustomerDeleted  = "CUSTOMER_DELETED"
	CodeLookupNotFound   = "LOOKUP_REQUEST_NOT_FOUND"
	CodeInvalidUma       = "INVALID_UMA_ADDRESS"
	CodeUmaNotFound      = "UMA_NOT_FOUND"
	CodeInvalidReceiver  = "INVALID_RECEIVER"
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
	rails Rails
	uma   ports.UmaDirectory
}

// Rails picks the payout rail of an external account (core/rails.Registry):
// the corridor row, and so the limits, can depend on it.
type Rails interface {
	ForPayout(requested, currency string, info ports.AccountInfo) (ports.Rail, error)
}

// Option configures a Service.
type Option func(*Service)

// WithRails prices external-account lookups on the account's default payout
// rail; without it they use the receiving currency's rail-independent row.
func WithRails(r Rails) Option { return func(s *Service) { s.rails = r } }

// WithUmaDirectory enables UMA receiver lookups (LookupUma).
func WithUmaDirectory(d ports.UmaDirectory) Option { return func(s *Service) { s.uma = d } }

// New builds a Service.
func New(store ports.Store, fx ports.FXRates, clock ports.Clock, ids ports.IDs, opts ...Option) *Service {
	s := &Service{store: store, fx: fx, clock: clock, ids: ids}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Query is a receiver lookup: the external account and the sender, named
// by customer id or UMA address (at least one).
type Query struct {
	AccountID        string
	CustomerID       string
	SenderUmaAddress string
}

// umaRe is a UMA address: "$", a lower-case user part, "@", a domain of
// dot-separated DNS labels (1-63 characters that start and end with a
// letter or digit).
var umaRe = regexp.MustCompile(`^\$[a-z0-9._-]{1,64}@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// MaxUmaAddress is the longest UMA address accepted.
const MaxUmaAddress = 255

// ValidUmaAddress reports whether s is a well-formed UMA address
// ($user@domain, user in lower case).
func ValidUmaAddress(s string) bool { return len(s) <= MaxUmaAddress && umaRe.MatchString(s) }

// CanonicalUmaAddress is a valid UMA address with its domain in lower
// case (domains ignore case; the user part is lower case already), so one
// address has one spelling: stored, compared and unique as such.
func CanonicalUmaAddress(s string) string {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return s
	}
	return s[:at] + strings.ToLower(s[at:])
}

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
	if err := checkSender(q.CustomerID, q.SenderUmaAddress); err != nil {
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
	rail := ""
	if s.rails != nil {
		// No rail reaching the account leaves the default row: the quote
		// that follows reports the missing rail.
		if r, err := s.rails.ForPayout("", acct.Currency, acct.Info); err == nil {
			rail = r.Spec().Name
		}
	}
	offer, err := s.offer(ctx, from.currency, acct.Currency, rail)
	if err != nil {
		return ports.Lookup{}, err
	}
	l := ports.Lookup{
		ID:                s.ids.New("Lookup"),
		PlatformID:        platformID,
		AccountID:         acct.ID,
		CustomerID:        from.customerID,
		SenderUmaAddress:  q.SenderUmaAddress,
		SendingCurrency:   from.currency,
		Currencies:        []ports.LookupCurrency{offer},
		RequiredPayerData: PayerData(acct.Currency, from.business),
	}
	return s.save(ctx, l)
}

// UmaQuery is a UMA receiver lookup: the receiver's address and the
// sender, named by customer id or UMA address (at least one).
type UmaQuery struct {
	ReceiverUmaAddress string
	CustomerID         string
	SenderUmaAddress   string
}

// LookupUma answers a receiver lookup for a UMA address through the UMA
// directory and stores it: every currency the receiver takes (that a
// corridor reaches) with its estimated rate and limits, and the payer data
// those currencies require. A malformed address is 400 INVALID_UMA_ADDRESS;
// a well-formed one nobody answers at is 404 UMA_NOT_FOUND.
func (s *Service) LookupUma(ctx context.Context, platformID string, q UmaQuery) (ports.Lookup, error) {
	if !ValidUmaAddress(q.ReceiverUmaAddress) {
		e := fault.New(fault.KindInvalid, CodeInvalidUma, "receiverUmaAddress: "+q.ReceiverUmaAddress+" is not a UMA address ($user@domain)")
		e.Fields = []fault.FieldError{{Field: "receiverUmaAddress", Message: "must be a UMA address ($user@domain)"}}
		return ports.Lookup{}, e
	}
	if err := checkSender(q.CustomerID, q.SenderUmaAddress); err != nil {
		return ports.Lookup{}, err
	}
	if s.uma == nil {
		// No UMA client is configured (production without one): no
		// receiver can be found.
		return ports.Lookup{}, fault.NotFound(CodeUmaNotFound, "no UMA directory is configured: "+q.ReceiverUmaAddress+" cannot be reached")
	}
	read := s.store.Read()
	from, err := s.sender(ctx, read, platformID, Query{CustomerID: q.CustomerID, SenderUmaAddress: q.SenderUmaAddress})
	if err != nil {
		return ports.Lookup{}, err
	}
	recv, err := s.uma.Receiver(ctx, q.ReceiverUmaAddress)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Lookup{}, fault.NotFound(CodeUmaNotFound, "no UMA receiver at "+q.ReceiverUmaAddress)
	}
	if err != nil {
		return ports.Lookup{}, fmt.Errorf("lookup: resolve %s: %w", q.ReceiverUmaAddress, err)
	}
	l := ports.Lookup{
		ID:                 s.ids.New("Lookup"),
		PlatformID:         platformID,
		ReceiverUmaAddress: recv.Address,
		CustomerID:         from.customerID,
		SenderUmaAddress:   q.SenderUmaAddress,
		SendingCurrency:    from.currency,
	}
	for _, cur := range recv.Currencies {
		offer, err := s.offer(ctx, from.currency, cur, "")
		if errors.Is(err, fx.ErrNoCorridor) || errors.Is(err, ports.ErrNoRate) {
			continue // a currency corridor cannot pay
		}
		if err != nil {
			return ports.Lookup{}, err
		}
		l.Currencies = append(l.Currencies, offer)
		l.RequiredPayerData = mergePayerData(l.RequiredPayerData, PayerData(cur, from.business))
	}
	if len(l.Currencies) == 0 {
		return ports.Lookup{}, fault.New(fault.KindInvalid, CodeInvalidReceiver,
			q.ReceiverUmaAddress+" takes no currency corridor can pay")
	}
	return s.save(ctx, l)
}

// checkSender requires a sender (customer id or UMA address) and a
// well-formed UMA address.
func checkSender(customerID, senderUma string) error {
	var errs fault.Collector
	if customerID == "" && senderUma == "" {
		errs.Add("senderUmaAddress", "give senderUmaAddress or customerId")
		errs.Add("customerId", "give customerId or senderUmaAddress")
	}
	if senderUma != "" && !ValidUmaAddress(senderUma) {
		errs.Add("senderUmaAddress", "must be a UMA address ($user@domain)")
	}
	return errs.Err()
}

// offer is what paying into receiving from sending over rail looks like:
// the corridor's applied rate (the rate a quote would convert at now) and
// its limits.
func (s *Service) offer(ctx context.Context, sending, receiving, rail string) (ports.LookupCurrency, error) {
	c, err := fx.Find(sending, receiving, rail)
	if err != nil {
		return ports.LookupCurrency{}, fmt.Errorf("lookup: corridor %s→%s: %w", sending, receiving, err)
	}
	rate, err := s.fx.Rate(ctx, sending, receiving)
	if err != nil {
		return ports.LookupCurrency{}, fmt.Errorf("lookup: rate %s→%s: %w", sending, receiving, err)
	}
	applied, err := fx.AppliedRate(c, rate)
	if err != nil {
		return ports.LookupCurrency{}, fmt.Errorf("lookup: %w", err)
	}
	return ports.LookupCurrency{Currency: receiving, EstimatedRate: applied, Min: c.Min, Max: c.Max}, nil
}

// save stamps and stores a lookup.
func (s *Service) save(ctx context.Context, l ports.Lookup) (ports.Lookup, error) {
	l.CreatedAt = ports.Stored(s.clock.Now())
	err := s.store.InTx(ctx, func(tx ports.Tx) error { return tx.Lookups().Create(ctx, l) })
	if err != nil {
		return ports.Lookup{}, fmt.Errorf("lookup: store %s: %w", l.ID, err)
	}
	return l, nil
}

// mergePayerData adds fields not yet asked for; a field mandatory for any
// currency is mandatory.
func mergePayerData(have, more []ports.PayerDataField) []ports.PayerDataField {
	for _, f := range more {
		found := false
		for i := range have {
			if have[i].Name == f.Name {
				have[i].Mandatory = have[i].Mandatory || f.Mandatory
				found = true
			}
		}
		if !found {
			have = append(have, f)
		}
	}
	return have
}

// sender finds the paying customer (by id, else by UMA address) and its
// currency.
func (s *Service) sender(ctx context.Context, read lookupTx, platformID string, q Query) (sender, error) {
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

// lookupTx is what this package's helpers use of a unit of work (ports.Tx
// and Store.Read both provide it).
type lookupTx interface {
	Platforms() ports.PlatformRepo
	Customers() ports.CustomerRepo
	ExternalAccounts() ports.ExternalAccountRepo
	Lookups() ports.LookupRepo
}
