// Package customers holds the customer use cases: create, get, update
// (PATCH), delete and list a platform's customers, individuals and
// businesses, with every rule of the reference's Customer resource. Creating
// a customer (or enabling a currency, or adding an e-mail) also opens the
// customer's internal accounts, its embedded wallet with its EMAIL_OTP
// credential, and their ledger accounts, all in one store transaction.
package customers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// DefaultUmaDomain is the UMA domain of generated addresses when neither
// the platform nor Options name one.
const DefaultUmaDomain = "sandbox.local"

// Options configure a Service.
type Options struct {
	// UmaDomain is the domain of generated UMA addresses ($user@domain)
	// for platforms that have no UmaDomain of their own.
	UmaDomain string
	// Directory, when set, is the UMA directory lookups and quotes reach
	// (the sandbox receivers): an address it answers for is taken, so no
	// customer may have it (one address would route two ways).
	Directory ports.UmaDirectory
}

// Service runs the customer use cases.
type Service struct {
	store   ports.Store
	ledger  Ledger
	clock   ports.Clock
	ids     ports.IDs
	opts    Options
	watcher Watcher
}

// Watcher learns, inside an update's unit of work, that a customer's data
// changed: the KYC service checks again a verification that waits on data
// (core/kyc), as it does when documents or owners change.
type Watcher interface {
	CustomerUpdated(ctx context.Context, tx ports.Tx, c ports.Customer, now time.Time) error
}

// SetWatcher makes w hear of every update (none when unset).
func (s *Service) SetWatcher(w Watcher) { s.watcher = w }

// New builds a Service; ledger reads the balances a deletion checks.
func New(store ports.Store, ledger Ledger, clock ports.Clock, ids ports.IDs, opts Options) *Service {
	if opts.UmaDomain == "" {
		opts.UmaDomain = DefaultUmaDomain
	}
	return &Service{store: store, ledger: ledger, clock: clock, ids: ids, opts: opts}
}

// Error codes of the reference used by this package.
const (
	CodeNotFound         = "USER_NOT_FOUND"
	CodeDeleted          = "CUSTOMER_DELETED"
	CodeUmaAddressExists = "UMA_ADDRESS_EXISTS"
	CodeConflict         = "CONFLICT"
)

// now is the service's current time as stores keep it: UTC, to the
// microsecond, so a response shows the same instant a later read does.
func (s *Service) now() time.Time {
	return ports.Stored(s.clock.Now())
}

func errNotFound(id string) error {
	return fault.NotFound(CodeNotFound, "customer "+id+" not found")
}

func errDeleted(id string) error {
	return fault.New(fault.KindGone, CodeDeleted, "customer "+id+" has been deleted")
}

// load reads the platform's customer for update, mapping a missing one to
// 404 USER_NOT_FOUND and a deleted one to 410 CUSTOMER_DELETED.
func load(ctx context.Context, tx customerTx, platformID, id string) (ports.Customer, error) {
	c, err := tx.Customers().GetForUpdate(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Customer{}, errNotFound(id)
	}
	if err != nil {
		return ports.Customer{}, fmt.Errorf("load customer %s: %w", id, err)
	}
	if c.IsDeleted {
		return ports.Customer{}, errDeleted(id)
	}
	return c, nil
}

// checkDirectory refuses an explicit umaAddress that the UMA directory
// already answers for (409 UMA_ADDRESS_EXISTS, as a customer's would be).
func (s *Service) checkDirectory(ctx context.Context, address string) error {
	if s.opts.Directory == nil || address == "" {
		return nil
	}
	_, err := s.opts.Directory.Receiver(ctx, address)
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("uma directory: %s: %w", address, err)
	}
	e := fault.Conflict(CodeUmaAddressExists, "UMA address "+address+" is taken: it is a receiver of the UMA directory")
	e.Fields = []fault.FieldError{{Field: "umaAddress", Message: "is taken by a receiver of the UMA directory"}}
	return e
}

// storeConflict turns a store uniqueness violation into the reference's 409.
func storeConflict(err error, c ports.Customer) error {
	var ce *ports.ConflictError
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Constraint {
	case ports.UniqueUmaAddress:
		e := fault.Conflict(CodeUmaAddressExists, "UMA address "+c.UmaAddress+" is already taken")
		e.Fields = []fault.FieldError{{Field: "umaAddress", Message: "is already taken"}}
		return e
	case ports.UniquePlatformCustomerID:
		e := fault.Conflict(CodeConflict, "platformCustomerId "+c.PlatformCustomerID+" is already used by another customer")
		e.Fields = []fault.FieldError{{Field: "platformCustomerId", Message: "is already used by another customer"}}
		return e
	}
	return err
}

// customerTx is what this package's helpers use of a unit of work (ports.Tx
// and Store.Read both provide it).
type customerTx interface {
	Platforms() ports.PlatformRepo
	Customers() ports.CustomerRepo
	InternalAccounts() ports.InternalAccountRepo
	AuthMethods() ports.AuthMethodRepo
	LedgerAccounts() ports.LedgerAccountCreator
	Transactions() ports.TransactionRepo
}
