// Package kyc holds customer verification: the beneficial owners of
// business customers, the documents that back a verification, the
// verifications themselves (KYC for individuals, KYB for businesses)
// decided by a ports.KYCProvider, and the effect of a customer's status on
// what it may do (CanSendOutgoing). The data each region requires is a
// table (requirements.go). Status changes are written as events in the
// unit of work that makes them.
package kyc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/events"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ports"
)

// Customer and beneficial owner statuses (kycStatus / kybStatus).
const (
	StatusUnverified = customers.StatusUnverified
	StatusPending    = customers.StatusPending
	StatusApproved   = customers.StatusApproved
	StatusRejected   = customers.StatusRejected
	StatusHold       = customers.StatusHold
)

// Verification statuses.
const (
	VerificationResolveErrors = "RESOLVE_ERRORS"
	VerificationReady         = "READY_FOR_VERIFICATION"
	VerificationInProgress    = "IN_PROGRESS"
	VerificationManualReview  = "PENDING_MANUAL_REVIEW"
	VerificationApproved      = "APPROVED"
	VerificationRejected      = "REJECTED"
)

// VerificationStatuses is the reference's VerificationStatus enum.
var VerificationStatuses = []string{VerificationResolveErrors, VerificationManualReview, VerificationInProgress,
	VerificationApproved, VerificationRejected, VerificationReady}

// VerificationStatus is a verification's status; stored verifications
// keep it as a string, and every change goes through moveVerification.
type VerificationStatus string

// verificationNew is the status of a verification not yet saved.
const verificationNew VerificationStatus = ""

// verificationTransitions: a submission missing data waits in
// RESOLVE_ERRORS (READY_FOR_VERIFICATION once the data is there), a
// submitted one is IN_PROGRESS or PENDING_MANUAL_REVIEW until the
// provider decides; APPROVED and REJECTED are final.
var verificationTransitions = func() status.Table[VerificationStatus] {
	decided := []VerificationStatus{VerificationInProgress, VerificationManualReview, VerificationApproved, VerificationRejected}
	with := func(extra ...VerificationStatus) []VerificationStatus { return append(extra, decided...) }
	return status.NewTable("verification", []VerificationStatus{verificationNew, VerificationResolveErrors, VerificationReady,
		VerificationInProgress, VerificationManualReview, VerificationApproved, VerificationRejected},
		map[VerificationStatus][]VerificationStatus{
			verificationNew:           with(VerificationResolveErrors),
			VerificationResolveErrors: with(VerificationReady),
			VerificationReady:         with(VerificationResolveErrors),
			VerificationInProgress:    {VerificationResolveErrors, VerificationManualReview, VerificationApproved, VerificationRejected},
			VerificationManualReview:  {VerificationResolveErrors, VerificationInProgress, VerificationApproved, VerificationRejected},
		})
}()

// moveVerification sets v's status to to (staying is no change), or
// returns a status.ErrIllegal error leaving v as it was.
func moveVerification(v *ports.Verification, to VerificationStatus) error {
	if v.Status == string(to) {
		return nil
	}
	return verificationTransitions.Set(&v.Status, to)
}

const (
	customerTypeBusiness    = customers.TypeBusiness
	customerIDPrefix        = "Customer:"
	ownerIDPrefix           = "BeneficialOwner:"
	codeUserNotFound        = "USER_NOT_FOUND"
	codeNotFound            = "NOT_FOUND"
	codeCustomerDeleted     = "CUSTOMER_DELETED"
	codeConflict            = "CONFLICT"
	defaultMaxDocumentBytes = 10 << 20
	defaultLimit            = 20
	maxListLimit            = 100
)

// Options configure a Service.
type Options struct {
	// MaxDocumentBytes bounds an uploaded file (10 MiB when 0).
	MaxDocumentBytes int64
}

// Service runs the KYC use cases.
type Service struct {
	store    ports.Store
	provider ports.KYCProvider
	clock    ports.Clock
	ids      ports.IDs
	opts     Options
}

// New builds a Service deciding verifications with provider.
func New(store ports.Store, provider ports.KYCProvider, clock ports.Clock, ids ports.IDs, opts Options) *Service {
	if opts.MaxDocumentBytes <= 0 {
		opts.MaxDocumentBytes = defaultMaxDocumentBytes
	}
	return &Service{store: store, provider: provider, clock: clock, ids: ids, opts: opts}
}

// MaxDocumentBytes is the largest file an upload may carry.
func (s *Service) MaxDocumentBytes() int64 { return s.opts.MaxDocumentBytes }

// now is the current time as stores keep it (UTC, microseconds), so a
// response shows the instant a later read does.
func (s *Service) now() time.Time { return ports.Stored(s.clock.Now()) }

// Page is one page of a list.
type Page[T any] struct {
	Rows    []T
	HasMore bool
	// Next is the position after the page's last row (when HasMore).
	Next  *ports.Position
	Total int
}

// listPage checks the limit, runs list, and cuts the extra row that tells
// hasMore.
func listPage[T any](page ports.Page, list func(ports.Page) ([]T, int, error), pos func(T) ports.Position) (Page[T], error) {
	switch {
	case page.Limit == 0:
		page.Limit = defaultLimit
	case page.Limit < 1 || page.Limit > maxListLimit:
		return Page[T]{}, fault.Invalid("limit", fmt.Sprintf("must be between 1 and %d", maxListLimit))
	}
	rows, total, err := list(page)
	if err != nil {
		return Page[T]{}, err
	}
	out := Page[T]{Total: total}
	out.Rows, out.Next = ports.TrimPage(rows, page.Limit, pos)
	out.HasMore = out.Next != nil
	if out.Rows == nil {
		out.Rows = []T{}
	}
	return out, nil
}

// customer reads the platform's live customer: unknown is 404
// USER_NOT_FOUND, deleted 410 CUSTOMER_DELETED. lock takes the row lock
// (inside a unit of work) that serialises a customer's KYC writes.
func customer(ctx context.Context, tx kycTx, platformID, id string, lock bool) (ports.Customer, error) {
	get := tx.Customers().Get
	if lock {
		get = tx.Customers().GetForUpdate
	}
	c, err := get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Customer{}, fault.NotFound(codeUserNotFound, "customer "+id+" not found")
	}
	if err != nil {
		return ports.Customer{}, fmt.Errorf("read customer %s: %w", id, err)
	}
	if c.IsDeleted {
		return ports.Customer{}, fault.New(fault.KindGone, codeCustomerDeleted, "customer "+id+" has been deleted")
	}
	return c, nil
}

// ---- events ----

// event appends the event of a change to resource (its value after the
// change) to the unit of work's outbox.
func (s *Service) event(ctx context.Context, tx kycTx, platformID, typ, resourceID string, resource any, at time.Time) error {
	e, err := events.New(s.ids, platformID, typ, resourceID, resource, at)
	if err != nil {
		return err
	}
	if err := tx.Events().Append(ctx, e); err != nil {
		return fmt.Errorf("record event %s: %w", typ, err)
	}
	return nil
}

// customerEventType is the reference's customer webhook type for a new
// status: CUSTOMER.KYC_* for individuals, CUSTOMER.KYB_* for businesses.
func customerEventType(c ports.Customer, status string) string {
	if c.CustomerType == customerTypeBusiness {
		return "CUSTOMER.KYB_" + status
	}
	return "CUSTOMER.KYC_" + status
}

// kycTx is what this package's helpers use of a unit of work (ports.Tx
// and Store.Read both provide it).
type kycTx interface {
	Customers() ports.CustomerRepo
	BeneficialOwners() ports.BeneficialOwnerRepo
	Verifications() ports.VerificationRepo
	Documents() ports.DocumentRepo
	Events() ports.EventRepo
}
