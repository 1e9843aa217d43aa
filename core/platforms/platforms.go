// Package platforms creates platforms (the API's tenants) with their
// internal accounts, issues their Basic API credentials, and authenticates
// requests made with them.
package platforms

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// DefaultCurrencies are the currencies a platform holds internal accounts in
// when none are given.
var DefaultCurrencies = []string{"USD", "EUR", "MXN", "BRL", "GBP", "USDC", "BTC"}

// Service creates platforms, keeps their configuration and manages their
// API credentials.
type Service struct {
	store  ports.Store
	ledger ports.LedgerStore
	clock  ports.Clock
	ids    ports.IDs
	// sandbox allows an http webhook endpoint on a loopback host.
	sandbox bool
	// endpointChanged hears of webhook endpoint changes in their unit of
	// work.
	endpointChanged EndpointChanged
}

// Option configures a Service.
type Option func(*Service)

// Sandbox says the deployment is a sandbox: a webhook endpoint may then be
// plain http to a loopback host (a receiver on the developer's machine).
func Sandbox(on bool) Option { return func(s *Service) { s.sandbox = on } }

// OnEndpointChange gives the Service the hook told of every webhook
// endpoint change (NoEndpointHook by default).
func OnEndpointChange(hook EndpointChanged) Option {
	return func(s *Service) {
		if hook != nil {
			s.endpointChanged = hook
		}
	}
}

// New returns a Service.
func New(store ports.Store, ledger ports.LedgerStore, clock ports.Clock, ids ports.IDs, opts ...Option) *Service {
	s := &Service{store: store, ledger: ledger, clock: clock, ids: ids, endpointChanged: NoEndpointHook{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Create creates a platform and, in the same unit of work, one internal
// account per currency with its ledger account. The system accounts the
// currencies need (sandbox funding, fee revenue, FX position) are created
// first; creating them is idempotent.
func (s *Service) Create(ctx context.Context, name, umaDomain string, currencies []string) (ports.Platform, error) {
	name = strings.TrimSpace(name)
	var errs fault.Collector
	if name == "" {
		errs.Add("name", "must not be empty")
	}
	if len(currencies) == 0 {
		currencies = DefaultCurrencies
	}
	seen := map[string]bool{}
	var curs []money.Currency
	for i, code := range currencies {
		c, ok := money.Lookup(code)
		switch {
		case !ok:
			errs.Add(fmt.Sprintf("currencies[%d]", i), "unknown currency "+code)
		case seen[code]:
			errs.Add(fmt.Sprintf("currencies[%d]", i), "duplicate currency "+code)
		default:
			seen[code] = true
			curs = append(curs, c)
		}
	}
	if err := errs.Err(); err != nil {
		return ports.Platform{}, err
	}

	codes := make([]string, len(curs))
	for i, c := range curs {
		codes[i] = c.Code
	}
	if err := s.createSystemAccounts(ctx, codes); err != nil {
		return ports.Platform{}, err
	}

	now := s.clock.Now().UTC()
	p := ports.Platform{
		ID:         s.ids.New("Platform"),
		Name:       name,
		UmaDomain:  strings.TrimSpace(umaDomain),
		Currencies: codes,
		CreatedAt:  now,
		UpdatedAt:  now,
	}
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Platforms().Create(ctx, p); err != nil {
			return fmt.Errorf("create platform: %w", err)
		}
		for _, c := range curs {
			if err := s.openAccount(ctx, tx, p.ID, c, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return ports.Platform{}, err
	}
	return p, nil
}

// createSystemAccounts creates the system ledger accounts the currencies
// need (idempotent), before a unit of work opens accounts in them.
func (s *Service) createSystemAccounts(ctx context.Context, codes []string) error {
	if err := s.ledger.CreateAccounts(ctx, ledger.SystemAccounts(codes, nil)...); err != nil {
		return fmt.Errorf("create system ledger accounts: %w", err)
	}
	return nil
}

// openAccount opens the platform's internal account in currency c, with
// its ledger account, in tx.
func (s *Service) openAccount(ctx context.Context, tx ports.Tx, platformID string, c money.Currency, now time.Time) error {
	a := ports.InternalAccount{
		ID:         s.ids.New("InternalAccount"),
		PlatformID: platformID,
		Type:       accounts.HoldingType(c),
		Status:     accounts.StatusActive,
		Currency:   c.Code,
		CreatedAt:  now,
		UpdatedAt:  now,
	}
	if err := tx.InternalAccounts().Create(ctx, a); err != nil {
		return fmt.Errorf("create platform %s account: %w", c.Code, err)
	}
	if err := tx.LedgerAccounts().Create(ctx, accounts.LedgerAccount(a)); err != nil {
		return fmt.Errorf("create ledger account for %s: %w", a.ID, err)
	}
	return nil
}

// Get returns a platform or a 404 fault.
func (s *Service) Get(ctx context.Context, id string) (ports.Platform, error) {
	p, err := s.store.Read().Platforms().Get(ctx, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Platform{}, fault.NotFound("NOT_FOUND", "platform not found")
	}
	if err != nil {
		return ports.Platform{}, fmt.Errorf("get platform %s: %w", id, err)
	}
	return p, nil
}

// List returns every platform.
func (s *Service) List(ctx context.Context) ([]ports.Platform, error) {
	ps, err := s.store.Read().Platforms().List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list platforms: %w", err)
	}
	return ps, nil
}
