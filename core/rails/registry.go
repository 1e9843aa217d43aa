// Package rails is the registry of payment rails: which rails exist, which
// currency and external account types each reaches, whether it is instant or
// can pull, and how long it takes to settle, all as data (ports.RailSpec),
// each row served by a rail adapter (ports.Rail). Adding a corridor is adding
// a row and, for a new provider, an adapter; core code asks the registry.
package rails

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// Registry finds the rail for a movement. It is immutable once built and
// safe for concurrent use.
type Registry struct {
	// rows keep the table's order: it decides the default rail.
	rows  []row
	byKey map[key]int
	names map[string]bool
}

type row struct {
	spec ports.RailSpec
	rail ports.Rail
}

type key struct{ name, currency string }

// New builds a registry from rail adapters, one per table row; each
// adapter's Spec() is its row, and the order of rs is the table's order
// (see DefaultSpecs). Two adapters for the same rail and currency, an
// unknown currency or a row without account types are configuration errors.
func New(rs ...ports.Rail) (*Registry, error) {
	r := &Registry{byKey: map[key]int{}, names: map[string]bool{}}
	var errs []error
	for _, rail := range rs {
		s := rail.Spec()
		k := key{s.Name, s.Currency}
		switch {
		case s.Name == "":
			errs = append(errs, errors.New("rails: a rail has no name"))
			continue
		case !knownCurrency(s.Currency):
			errs = append(errs, fmt.Errorf("rails: %s moves unknown currency %q", s.Name, s.Currency))
			continue
		case len(s.AccountTypes) == 0:
			errs = append(errs, fmt.Errorf("rails: %s/%s reaches no account type", s.Name, s.Currency))
			continue
		case s.SettlementDelay < 0:
			errs = append(errs, fmt.Errorf("rails: %s/%s has a negative settlement delay", s.Name, s.Currency))
			continue
		}
		if _, dup := r.byKey[k]; dup {
			errs = append(errs, fmt.Errorf("rails: %s/%s is registered twice", s.Name, s.Currency))
			continue
		}
		r.byKey[k] = len(r.rows)
		r.names[s.Name] = true
		r.rows = append(r.rows, row{spec: s, rail: rail})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

func knownCurrency(code string) bool {
	_, ok := money.Lookup(code)
	return ok
}

// Specs returns every row, in table order.
func (r *Registry) Specs() []ports.RailSpec {
	out := make([]ports.RailSpec, len(r.rows))
	for i, row := range r.rows {
		out[i] = row.spec
	}
	return out
}

// SettlementRails is the registry's rail → currencies map, for the ledger's
// settlement accounts.
func (r *Registry) SettlementRails() map[string][]string { return SettlementRails(r.Specs()) }

// Rail returns the adapter of the named rail in a currency. A rail name may
// carry several currencies (BANK_TRANSFER moves NGN, AED and CAD), so the
// currency is part of the lookup.
func (r *Registry) Rail(name, currency string) (ports.Rail, bool) {
	i, ok := r.byKey[key{name, currency}]
	if !ok {
		return nil, false
	}
	return r.rows[i].rail, true
}

// ForAccount is the default payout rail for an external account of the
// given currency and account type (a transfer-out without paymentRail): the
// first matching row of the table. No rail reaching it is a 400 naming
// destination.accountId.
func (r *Registry) ForAccount(currency, accountType string) (ports.Rail, error) {
	for _, row := range r.rows {
		if reaches(row.spec, currency, accountType) {
			return row.rail, nil
		}
	}
	return nil, fault.Invalid("destination.accountId",
		fmt.Sprintf("no payment rail reaches a %s in %s", accountType, currency))
}

// ForPull is the rail that debits an external account of the given
// currency and type for a transfer-in: the first matching pull-capable row.
// An account no rail can pull from is a 400 naming source.accountId (the
// funds must be pushed to the internal account's payment instructions).
func (r *Registry) ForPull(currency, accountType string) (ports.Rail, error) {
	for _, row := range r.rows {
		if row.spec.Pull && reaches(row.spec, currency, accountType) {
			return row.rail, nil
		}
	}
	return nil, fault.Invalid("source.accountId",
		fmt.Sprintf("no payment rail can pull from a %s in %s; deposit to the internal account's payment instructions instead", accountType, currency))
}

// Validate checks that the requested rail can pay out to an external
// account of the given currency and type, and returns its adapter. A rail
// that does not exist or cannot reach the account is a 400 naming
// destination.paymentRail.
func (r *Registry) Validate(name, currency, accountType string) (ports.Rail, error) {
	if !r.names[name] {
		return nil, fault.Invalid("destination.paymentRail", fmt.Sprintf("unknown payment rail %q", name))
	}
	i, ok := r.byKey[key{name, currency}]
	if !ok {
		return nil, fault.Invalid("destination.paymentRail",
			fmt.Sprintf("%s does not carry %s (it carries %v)", name, currency, r.currenciesOf(name)))
	}
	if !reaches(r.rows[i].spec, currency, accountType) {
		return nil, fault.Invalid("destination.paymentRail",
			fmt.Sprintf("%s cannot reach a %s", name, accountType))
	}
	return r.rows[i].rail, nil
}

// ForPayout picks the payout rail of a transfer-out to the account info
// describes. The account's own fields narrow the rails of its type
// (external.PaymentRails: an INR account without a vpa cannot take UPI).
// The requested rail wins when it reaches the account (else a 400 naming
// destination.paymentRail); without one, the rail the account names
// (accountInfo.rail, INR's NEFT or RTGS); else the first table row that
// reaches it.
func (r *Registry) ForPayout(requested, currency string, info ports.AccountInfo) (ports.Rail, error) {
	allowed := external.PaymentRails(info) // empty: every rail of the type (wallets)
	fits := func(name string) bool { return len(allowed) == 0 || contains(allowed, name) }
	if requested != "" {
		rail, err := r.Validate(requested, currency, info.AccountType)
		if err != nil {
			return nil, err
		}
		if !fits(requested) {
			return nil, fault.Invalid("destination.paymentRail",
				fmt.Sprintf("%s cannot reach this account; it can be paid over %s", requested, strings.Join(allowed, ", ")))
		}
		return rail, nil
	}
	if info.Rail != "" && fits(info.Rail) {
		if i, ok := r.byKey[key{info.Rail, currency}]; ok && reaches(r.rows[i].spec, currency, info.AccountType) {
			return r.rows[i].rail, nil
		}
	}
	for _, row := range r.rows {
		if reaches(row.spec, currency, info.AccountType) && fits(row.spec.Name) {
			return row.rail, nil
		}
	}
	return nil, fault.Invalid("destination.accountId",
		fmt.Sprintf("no payment rail reaches this %s in %s", info.AccountType, currency))
}

func (r *Registry) currenciesOf(name string) []string {
	var out []string
	for _, row := range r.rows {
		if row.spec.Name == name {
			out = append(out, row.spec.Currency)
		}
	}
	sort.Strings(out)
	return out
}

func reaches(s ports.RailSpec, currency, accountType string) bool {
	return s.Currency == currency && contains(s.AccountTypes, accountType)
}

// FromSpecs builds a registry with one adapter per row of specs, made by
// newRail (for example the sandbox adapter, or a real provider for some
// rows and the sandbox for the rest).
func FromSpecs(specs []ports.RailSpec, newRail func(ports.RailSpec) ports.Rail) (*Registry, error) {
	rs := make([]ports.Rail, len(specs))
	for i, s := range specs {
		rs[i] = newRail(s)
	}
	return New(rs...)
}
