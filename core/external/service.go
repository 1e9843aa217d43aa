// Package external holds the external account use cases: bank accounts
// and wallets outside corridor that a customer or the platform is paid to
// or pulls from. Every accountInfo variant's rules (fields, patterns,
// checksums, rails, beneficiary) are one data table (variants.go); the
// beneficiary's name is checked at creation by a BeneficiaryVerifier; a
// customer has at most one default UMA deposit account.
package external

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ports"
)

// External account statuses (reference ExternalAccountStatus).
const (
	StatusPending     = "PENDING"
	StatusActive      = "ACTIVE"
	StatusUnderReview = "UNDER_REVIEW"
	StatusInactive    = "INACTIVE"
)

// Statuses lists every status.
var Statuses = []string{StatusPending, StatusActive, StatusUnderReview, StatusInactive}

// Status is an external account's status; every change goes through
// Move.
type Status string

// transitions is the status lifecycle: an account starts PENDING (its
// beneficiary check is not done) or ACTIVE; review and deactivation can
// happen from either; a reviewed account goes back to ACTIVE or becomes
// INACTIVE; INACTIVE is final.
var transitions = status.NewTable("external account", []Status{StatusPending, StatusActive, StatusUnderReview, StatusInactive},
	map[Status][]Status{
		StatusPending:     {StatusActive, StatusUnderReview, StatusInactive},
		StatusActive:      {StatusUnderReview, StatusInactive},
		StatusUnderReview: {StatusActive, StatusInactive},
	})

// CanTransition reports whether an account may move from one status to
// another.
func CanTransition(from, to string) bool { return transitions.Allows(Status(from), Status(to)) }

// Move changes a to status to at now, or returns a status.ErrIllegal
// error leaving a as it was.
func Move(a *ports.ExternalAccount, to Status, now time.Time) error {
	if err := transitions.Set(&a.Status, to); err != nil {
		return err
	}
	a.UpdatedAt = now
	return nil
}

// Ownership types (reference OwnershipType).
var ownershipTypes = []string{"FIRST_PARTY", "THIRD_PARTY"}

// Error codes.
const (
	CodeNotFound           = "NOT_FOUND"
	CodeCustomerNotFound   = "USER_NOT_FOUND"
	CodeCustomerDeleted    = "CUSTOMER_DELETED"
	CodeConflict           = "CONFLICT"
	CodeInvalidBankAccount = "INVALID_BANK_ACCOUNT"
)

// Page size bounds of the lists.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// MaxPlatformAccountID bounds platformAccountId.
const MaxPlatformAccountID = 255

// Service runs the external account use cases.
type Service struct {
	store    ports.Store
	clock    ports.Clock
	ids      ports.IDs
	verifier BeneficiaryVerifier
}

// Option configures a Service.
type Option func(*Service)

// WithVerifier sets the beneficiary verifier (default: none, every account
// is UNSUPPORTED).
func WithVerifier(v BeneficiaryVerifier) Option {
	return func(s *Service) { s.verifier = v }
}

// New builds a Service.
func New(store ports.Store, clock ports.Clock, ids ports.IDs, opts ...Option) *Service {
	s := &Service{store: store, clock: clock, ids: ids, verifier: noVerifier{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// now is the service's time as the stores keep it (UTC, microseconds).
func (s *Service) now() time.Time {
	return ports.Stored(s.clock.Now())
}

// Scope says which of a platform's accounts an operation reaches: the
// customer paths reach every account of the platform (an account created
// there without a customerId is the platform's), the platform paths only
// the platform's own.
type Scope int

const (
	ScopeAll Scope = iota
	ScopePlatform
)

func (sc Scope) allows(a ports.ExternalAccount) bool {
	return sc == ScopeAll || a.CustomerID == ""
}

func errNotFound(id string) error {
	return fault.NotFound(CodeNotFound, "external account "+id+" not found")
}

// Input is a new external account.
type Input struct {
	// CustomerID is the owner; empty: the platform's own account.
	CustomerID               string
	Currency                 string
	PlatformAccountID        string
	OwnershipType            string
	DefaultUmaDepositAccount bool
	Info                     ports.AccountInfo
}

// Create validates and verifies a new account and stores it: ACTIVE, or
// PENDING while its beneficiary check is pending. Setting it as the
// customer's default UMA deposit account clears the previous default in
// the same transaction. The same account (owner, currency, type and
// identifier) twice is 409 CONFLICT.
func (s *Service) Create(ctx context.Context, platformID string, in Input) (ports.ExternalAccount, error) {
	now := s.now()
	var errs fault.Collector
	validate(&errs, in.Currency, &in.Info, now)
	if in.OwnershipType != "" && !slices.Contains(ownershipTypes, in.OwnershipType) {
		errs.Add("ownershipType", "must be FIRST_PARTY or THIRD_PARTY")
	}
	if len(in.PlatformAccountID) > MaxPlatformAccountID {
		errs.Add("platformAccountId", fmt.Sprintf("must be at most %d characters", MaxPlatformAccountID))
	}
	if in.DefaultUmaDepositAccount && in.CustomerID == "" {
		errs.Add("defaultUmaDepositAccount", "only a customer's account can be its default UMA deposit account")
	}
	if err := errs.Err(); err != nil {
		return ports.ExternalAccount{}, err
	}

	ver, err := s.verifier.Verify(ctx, in.Currency, in.Info)
	if err != nil {
		if _, ok := fault.As(err); ok {
			return ports.ExternalAccount{}, err
		}
		return ports.ExternalAccount{}, fmt.Errorf("verify beneficiary: %w", err)
	}
	status := StatusActive
	if ver.Status == VerificationPending {
		status = StatusPending
	}
	a := ports.ExternalAccount{
		ID:                            s.ids.New("ExternalAccount"),
		PlatformID:                    platformID,
		CustomerID:                    in.CustomerID,
		Currency:                      in.Currency,
		Status:                        status,
		PlatformAccountID:             in.PlatformAccountID,
		OwnershipType:                 in.OwnershipType,
		Info:                          in.Info,
		DefaultUmaDepositAccount:      in.DefaultUmaDepositAccount,
		BeneficiaryVerificationStatus: ver.Status,
		BeneficiaryVerifiedName:       ver.VerifiedName,
		CreatedAt:                     now,
		UpdatedAt:                     now,
	}
	err = s.store.InTx(ctx, func(tx ports.Tx) error {
		if a.CustomerID != "" {
			// The customer's row lock serialises its account creations,
			// so the duplicate check below cannot race.
			c, err := tx.Customers().GetForUpdate(ctx, platformID, a.CustomerID)
			if errors.Is(err, ports.ErrNotFound) {
				return fault.NotFound(CodeCustomerNotFound, "customer "+a.CustomerID+" not found")
			}
			if err != nil {
				return fmt.Errorf("load customer %s: %w", a.CustomerID, err)
			}
			if c.IsDeleted {
				return fault.New(fault.KindGone, CodeCustomerDeleted, "customer "+a.CustomerID+" has been deleted")
			}
		}
		if dup, err := findSame(ctx, tx, a); err != nil {
			return err
		} else if dup != "" {
			e := fault.Conflict(CodeConflict, "this external account already exists: "+dup)
			e.Details = map[string]any{"externalAccountId": dup}
			return e
		}
		if err := tx.ExternalAccounts().Create(ctx, a); err != nil {
			return fmt.Errorf("create external account: %w", err)
		}
		return nil
	})
	if err != nil {
		return ports.ExternalAccount{}, err
	}
	return a, nil
}

// identity is what makes two accounts the same: type, identifier and bank.
func identity(info ports.AccountInfo) string {
	parts := []string{info.AccountType, strings.ToUpper(PrimaryIdentifier(info))}
	if v, ok := variantByType[info.AccountType]; ok {
		for _, b := range v.Bank {
			parts = append(parts, strings.ToUpper(*infoField(&info, b)))
		}
	}
	return strings.Join(parts, "|")
}

// scanPage is how many accounts findSame reads per store call.
const scanPage = 200

// findSame returns the id of a live account of the same owner and currency
// with a's identity, or "".
func findSame(ctx context.Context, tx externalTx, a ports.ExternalAccount) (string, error) {
	f := ports.ExternalAccountFilter{PlatformID: a.PlatformID, CustomerID: a.CustomerID, PlatformOnly: a.CustomerID == "", Currency: a.Currency}
	want := identity(a.Info)
	same := ""
	err := ports.Scan(scanPage, func(page ports.Page) ([]ports.ExternalAccount, error) {
		rows, _, err := tx.ExternalAccounts().List(ctx, f, page)
		return rows, err
	}, ports.ExternalAccount.Position, func(r ports.ExternalAccount) bool {
		if identity(r.Info) == want {
			same = r.ID
		}
		return same == ""
	})
	if err != nil {
		return "", fmt.Errorf("find same external account: %w", err)
	}
	return same, nil
}

// Get returns a live account of the platform within scope, or 404.
func (s *Service) Get(ctx context.Context, platformID, id string, scope Scope) (ports.ExternalAccount, error) {
	a, err := s.store.Read().ExternalAccounts().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.ExternalAccount{}, errNotFound(id)
	}
	if err != nil {
		return ports.ExternalAccount{}, fmt.Errorf("get external account %s: %w", id, err)
	}
	if !scope.allows(a) {
		return ports.ExternalAccount{}, errNotFound(id)
	}
	return a, nil
}

// Filter narrows a list. Zero values do not filter.
type Filter struct {
	CustomerID string
	Currency   string
	// PlatformOnly lists the platform's own accounts (CustomerID ignored);
	// otherwise customer accounts.
	PlatformOnly bool
}

// Page is one page of accounts.
type Page struct {
	Accounts []ports.ExternalAccount
	HasMore  bool
	// Next is the position after the page's last row (when HasMore).
	Next  *ports.Position
	Total int
}

// List pages the platform's live customer accounts (all customers' or
// one's) or its own accounts, oldest first.
func (s *Service) List(ctx context.Context, platformID string, f Filter, page ports.Page) (Page, error) {
	switch {
	case page.Limit == 0:
		page.Limit = DefaultLimit
	case page.Limit < 1 || page.Limit > MaxLimit:
		return Page{}, fault.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxLimit))
	}
	if _, ok := money.Lookup(f.Currency); f.Currency != "" && !ok {
		return Page{}, fault.Invalid("currency", "unknown currency "+f.Currency)
	}
	pf := ports.ExternalAccountFilter{PlatformID: platformID, Currency: f.Currency, PlatformOnly: f.PlatformOnly}
	if !f.PlatformOnly {
		pf.CustomerID = f.CustomerID
	}
	rows, total, err := s.store.Read().ExternalAccounts().List(ctx, pf, page)
	if err != nil {
		return Page{}, fmt.Errorf("list external accounts: %w", err)
	}
	out := Page{Total: total}
	out.Accounts, out.Next = ports.TrimPage(rows, page.Limit, ports.ExternalAccount.Position)
	out.HasMore = out.Next != nil
	return out, nil
}

// Delete removes an account (soft: it is kept, INACTIVE and flagged
// deleted, so past transactions still name it). A deleted default UMA
// deposit account stops being the default.
func (s *Service) Delete(ctx context.Context, platformID, id string, scope Scope) error {
	return s.store.InTx(ctx, func(tx ports.Tx) error {
		a, err := tx.ExternalAccounts().Get(ctx, platformID, id)
		if errors.Is(err, ports.ErrNotFound) {
			return errNotFound(id)
		}
		if err != nil {
			return fmt.Errorf("load external account %s: %w", id, err)
		}
		if !scope.allows(a) {
			return errNotFound(id)
		}
		now := s.now()
		moved := a.Status != StatusInactive
		if moved {
			if err := Move(&a, StatusInactive, now); err != nil {
				return err
			}
		}
		a.IsDeleted = true
		a.DefaultUmaDepositAccount = false
		a.UpdatedAt = now
		err = tx.ExternalAccounts().Update(ctx, a)
		if errors.Is(err, ports.ErrNotFound) {
			return errNotFound(id) // a concurrent delete won
		}
		if err != nil {
			return fmt.Errorf("delete external account %s: %w", id, err)
		}
		if moved {
			return s.statusEvent(ctx, tx, a)
		}
		return nil
	})
}

// SetStatus moves a live account to another status along the lifecycle
// (CanTransition); anything else is 409 CONFLICT.
func (s *Service) SetStatus(ctx context.Context, platformID, id, status string) (ports.ExternalAccount, error) {
	if !slices.Contains(Statuses, status) {
		return ports.ExternalAccount{}, fault.Invalid("status", "must be one of "+strings.Join(Statuses, ", "))
	}
	var out ports.ExternalAccount
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		a, err := tx.ExternalAccounts().Get(ctx, platformID, id)
		if errors.Is(err, ports.ErrNotFound) {
			return errNotFound(id)
		}
		if err != nil {
			return fmt.Errorf("load external account %s: %w", id, err)
		}
		if a.Status == status {
			out = a
			return nil
		}
		if err := Move(&a, Status(status), s.now()); err != nil {
			return fault.Conflict(CodeConflict, "external account "+id+" cannot go from "+a.Status+" to "+status)
		}
		if err := tx.ExternalAccounts().Update(ctx, a); err != nil {
			return fmt.Errorf("update external account %s: %w", id, err)
		}
		out = a
		return s.statusEvent(ctx, tx, a)
	})
	return out, err
}

// EventStatusUpdated is the webhook type of an external account's status
// change.
const EventStatusUpdated = "EXTERNAL_ACCOUNT.STATUS_UPDATED"

// statusEvent records, in the unit of work that changed it, the event of
// a's new status (a as it now is).
func (s *Service) statusEvent(ctx context.Context, tx ports.Tx, a ports.ExternalAccount) error {
	e, err := ports.NewEvent(s.ids.New("Webhook"), a.PlatformID, EventStatusUpdated, a.ID, a, a.UpdatedAt)
	if err != nil {
		return err
	}
	if err := tx.Events().Append(ctx, e); err != nil {
		return fmt.Errorf("record %s of %s: %w", EventStatusUpdated, a.ID, err)
	}
	return nil
}

// externalTx is what this package's helpers use of a unit of work (ports.Tx
// and Store.Read both provide it).
type externalTx interface {
	Customers() ports.CustomerRepo
	ExternalAccounts() ports.ExternalAccountRepo
}
