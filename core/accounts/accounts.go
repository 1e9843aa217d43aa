// Package accounts reads internal accounts (customer and platform holding
// accounts and embedded wallets) with their ledger balances, and funds them
// in the sandbox.
package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Internal account types (reference InternalAccountType).
const (
	TypeInternalFiat   = "INTERNAL_FIAT"
	TypeInternalCrypto = "INTERNAL_CRYPTO"
	TypeEmbeddedWallet = "EMBEDDED_WALLET"
)

// Types lists every internal account type.
var Types = []string{TypeInternalFiat, TypeInternalCrypto, TypeEmbeddedWallet}

// Internal account statuses (reference InternalAccountStatus), untyped so
// they compare with stored strings.
const (
	StatusPending = "PENDING"
	StatusActive  = "ACTIVE"
	StatusClosed  = "CLOSED"
	StatusFrozen  = "FROZEN"
	StatusFailed  = "FAILED"
)

// Statuses lists every internal account status.
var Statuses = []string{StatusPending, StatusActive, StatusClosed, StatusFrozen, StatusFailed}

// Status is an internal account's status; every change goes through Move.
type Status string

// transitions: an account opening (PENDING) becomes ACTIVE or FAILED; an
// ACTIVE one may be FROZEN and back; any live one may be CLOSED (its
// customer deleted); CLOSED and FAILED are final. Only ACTIVE accounts
// move money.
var transitions = status.NewTable("internal account", []Status{StatusPending, StatusActive, StatusClosed, StatusFrozen, StatusFailed},
	map[Status][]Status{
		StatusPending: {StatusActive, StatusFailed, StatusClosed},
		StatusActive:  {StatusFrozen, StatusClosed},
		StatusFrozen:  {StatusActive, StatusClosed},
	})

// Move changes a (read in the unit of work that writes it) to status to
// at now, or returns a status.ErrIllegal error leaving a as it was.
func Move(a *ports.InternalAccount, to Status, now time.Time) error {
	if err := transitions.Set(&a.Status, to); err != nil {
		return err
	}
	a.UpdatedAt = now
	return nil
}

// HoldingType is the type of the holding account for currency c:
// INTERNAL_CRYPTO for crypto currencies, INTERNAL_FIAT otherwise.
func HoldingType(c money.Currency) string {
	if c.Crypto {
		return TypeInternalCrypto
	}
	return TypeInternalFiat
}

// LedgerAccount is the ledger account that backs an internal account: the
// same id and currency, owned by the same platform, and protected from
// going below zero. Create it in the unit of work that creates a.
func LedgerAccount(a ports.InternalAccount) ledger.Account {
	return ledger.Account{
		ID:         a.ID,
		Currency:   a.Currency,
		Kind:       ledger.KindInternal,
		Flags:      ledger.DebitsMustNotExceedCredits,
		PlatformID: a.PlatformID,
	}
}

// Page size bounds of the customer account list.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Account is an internal account with its ledger balances, in minor units
// of its currency.
type Account = ports.InternalAccountBalance

// Filter narrows the customer account list. Zero values do not filter.
type Filter struct {
	CustomerID string
	Currency   string
	Type       string
}

// Page is one page of accounts.
type Page struct {
	Accounts []Account
	HasMore  bool
	// Next is the position to continue after (set when HasMore).
	Next *ports.Position
	// Total counts every account matching the filter.
	Total int
}

// Service reads and funds internal accounts.
type Service struct {
	store   ports.Store
	ledger  ports.LedgerStore
	clock   ports.Clock
	ids     ports.IDs
	sandbox bool
}

// New returns a Service. sandbox enables Fund.
func New(store ports.Store, ledger ports.LedgerStore, clock ports.Clock, ids ports.IDs, sandbox bool) *Service {
	return &Service{store: store, ledger: ledger, clock: clock, ids: ids, sandbox: sandbox}
}

// ListCustomerAccounts returns one page of the platform's customer accounts
// (all customers', or one customer's) with their balances.
func (s *Service) ListCustomerAccounts(ctx context.Context, platformID string, f Filter, page ports.Page) (Page, error) {
	var errs fault.Collector
	checkCurrency(&errs, f.Currency)
	checkType(&errs, f.Type)
	switch {
	case page.Limit == 0:
		page.Limit = DefaultLimit
	case page.Limit < 1 || page.Limit > MaxLimit:
		errs.Add("limit", fmt.Sprintf("must be between 1 and %d", MaxLimit))
	}
	if err := errs.Err(); err != nil {
		return Page{}, err
	}
	rows, total, err := s.store.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{
		PlatformID: platformID,
		CustomerID: f.CustomerID,
		Currency:   f.Currency,
		Type:       f.Type,
	}, page)
	if err != nil {
		return Page{}, fmt.Errorf("list customer accounts: %w", err)
	}
	out := Page{Total: total}
	rows, out.Next = ports.TrimPage(rows, page.Limit, ports.InternalAccount.Position)
	out.HasMore = out.Next != nil
	out.Accounts, err = s.withBalances(ctx, rows)
	if err != nil {
		return Page{}, err
	}
	return out, nil
}

// platformPage is how many platform accounts are read per store call.
const platformPage = 100

// ListPlatformAccounts returns all of the platform's own accounts (not
// customers') with their balances.
func (s *Service) ListPlatformAccounts(ctx context.Context, platformID, currency, typ string) ([]Account, error) {
	var errs fault.Collector
	checkCurrency(&errs, currency)
	checkType(&errs, typ)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	f := ports.InternalAccountFilter{PlatformID: platformID, PlatformOnly: true, Currency: currency, Type: typ}
	var all []ports.InternalAccount
	err := ports.Scan(platformPage, func(page ports.Page) ([]ports.InternalAccount, error) {
		rows, _, err := s.store.Read().InternalAccounts().List(ctx, f, page)
		return rows, err
	}, ports.InternalAccount.Position, func(a ports.InternalAccount) bool { all = append(all, a); return true })
	if err != nil {
		return nil, fmt.Errorf("list platform accounts: %w", err)
	}
	return s.withBalances(ctx, all)
}

// Get returns one of the platform's accounts with its balances; another
// platform's account is not found.
func (s *Service) Get(ctx context.Context, platformID, id string) (Account, error) {
	a, err := s.get(ctx, platformID, id)
	if err != nil {
		return Account{}, err
	}
	out, err := s.withBalances(ctx, []ports.InternalAccount{a})
	if err != nil {
		return Account{}, err
	}
	return out[0], nil
}

func (s *Service) get(ctx context.Context, platformID, id string) (ports.InternalAccount, error) {
	a, err := s.store.Read().InternalAccounts().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.InternalAccount{}, errAccountNotFound
	}
	if err != nil {
		return ports.InternalAccount{}, fmt.Errorf("get internal account %s: %w", id, err)
	}
	return a, nil
}

var errAccountNotFound = fault.NotFound("NOT_FOUND", "internal account not found")

// withBalances reads the ledger accounts of rows in one call.
func (s *Service) withBalances(ctx context.Context, rows []ports.InternalAccount) ([]Account, error) {
	out := make([]Account, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]string, len(rows))
	for i, a := range rows {
		ids[i] = a.ID
	}
	las, err := s.ledger.Accounts(ctx, ids...)
	if err != nil {
		return nil, fmt.Errorf("read balances: %w", err)
	}
	byID := make(map[string]int, len(las))
	for i, la := range las {
		byID[la.ID] = i
	}
	for i, a := range rows {
		j, ok := byID[a.ID]
		if !ok {
			return nil, fmt.Errorf("internal account %s has no ledger account", a.ID)
		}
		out[i] = ports.WithBalance(a, las[j])
	}
	return out, nil
}

func checkCurrency(errs *fault.Collector, code string) {
	if code == "" {
		return
	}
	if _, ok := money.Lookup(code); !ok {
		errs.Add("currency", "unknown currency "+code)
	}
}

func checkType(errs *fault.Collector, typ string) {
	if typ == "" {
		return
	}
	for _, t := range Types {
		if t == typ {
			return
		}
	}
	errs.Add("type", fmt.Sprintf("must be one of %v", Types))
}
