package kyc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// A verification's life:
//
//	(none) ──POST──► RESOLVE_ERRORS ◄──► READY_FOR_VERIFICATION
//	                      │ POST, nothing missing          (documents or owners
//	                      ▼                                 changed: checked again)
//	        the provider decides every applicant (the customer, and a
//	        business's owners); the worst decision wins:
//	        REJECTED │ REVIEW → PENDING_MANUAL_REVIEW │ PENDING → IN_PROGRESS │ APPROVED
//
// POST again re-checks and re-asks the provider while the verification is
// open (RESOLVE_ERRORS, READY_FOR_VERIFICATION, IN_PROGRESS,
// PENDING_MANUAL_REVIEW); APPROVED and REJECTED are final, and POST then
// reads them. The customer's kycStatus (kybStatus) follows: IN_PROGRESS and
// PENDING_MANUAL_REVIEW make it PENDING, APPROVED and REJECTED set it;
// while data is missing it is left as it is. Each owner's kycStatus
// follows the provider's decision about that owner.

func errVerificationNotFound(id string) error {
	return fault.NotFound(codeNotFound, "verification "+id+" not found")
}

// open reports whether POST /verifications works on v again.
func open(status string) bool {
	return status != VerificationApproved && status != VerificationRejected
}

// Submit starts the customer's verification, resubmits an open one, or
// returns a final one as it is.
func (s *Service) Submit(ctx context.Context, platformID, customerID string) (ports.Verification, error) {
	if customerID == "" {
		return ports.Verification{}, fault.Invalid("customerId", "is required")
	}
	var out ports.Verification
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		now := s.now()
		c, err := customer(ctx, tx, platformID, customerID, true)
		if err != nil {
			return err
		}
		v, err := tx.Verifications().Latest(ctx, platformID, customerID)
		exists := err == nil
		switch {
		case errors.Is(err, ports.ErrNotFound):
			v = ports.Verification{ID: s.ids.New("Verification"), PlatformID: platformID, CustomerID: customerID, CreatedAt: now}
		case err != nil:
			return fmt.Errorf("read verification of %s: %w", customerID, err)
		case !open(v.Status):
			out = v
			return nil
		}
		prev := v.Status
		owners, docs, err := applicantData(ctx, tx, c)
		if err != nil {
			return err
		}
		if missing := Requirements(c, owners, docs); len(missing) > 0 {
			if err := moveVerification(&v, VerificationResolveErrors); err != nil {
				return err
			}
			v.Errors = missing
		} else if err := s.decide(ctx, tx, c, owners, docs, &v, now); err != nil {
			return err
		}
		v.UpdatedAt = now
		if v.Errors == nil {
			v.Errors = []ports.VerificationError{}
		}
		if err := s.saveVerification(ctx, tx, v, exists, prev, now); err != nil {
			return err
		}
		out = v
		return nil
	})
	if err != nil {
		return ports.Verification{}, err
	}
	return out, nil
}

// applicantData reads a customer's owners (businesses only) and the
// documents of the customer and its owners.
func applicantData(ctx context.Context, tx kycTx, c ports.Customer) ([]ports.BeneficialOwner, []ports.Document, error) {
	var owners []ports.BeneficialOwner
	if c.CustomerType == customerTypeBusiness {
		var err error
		if owners, err = allOwners(ctx, tx, c.PlatformID, c.ID); err != nil {
			return nil, nil, err
		}
	}
	docs, _, err := tx.Documents().List(ctx, ports.DocumentFilter{PlatformID: c.PlatformID, CustomerID: c.ID}, ports.Page{})
	if err != nil {
		return nil, nil, fmt.Errorf("list documents of %s: %w", c.ID, err)
	}
	return owners, docs, nil
}

// decide asks the provider about every applicant, sets v's outcome, and
// writes the statuses that follow from it: each owner's, the customer's,
// and the documents' submitted flag.
func (s *Service) decide(ctx context.Context, tx kycTx, c ports.Customer, owners []ports.BeneficialOwner, docs []ports.Document, v *ports.Verification, now time.Time) error {
	of := func(holderID string) []ports.Document {
		return slices.DeleteFunc(slices.Clone(docs), func(d ports.Document) bool { return d.HolderID != holderID })
	}
	var main ports.KYCDecision
	var err error
	if c.CustomerType == customerTypeBusiness {
		main, err = s.provider.VerifyBusiness(ctx, c, owners, of(c.ID))
	} else {
		main, err = s.provider.VerifyIndividual(ctx, c, of(c.ID))
	}
	if err != nil {
		return fmt.Errorf("kyc provider: verify %s: %w", c.ID, err)
	}
	decisions := []ports.KYCDecision{withDefaultReason(main, c.ID)}
	for _, o := range owners {
		d, err := s.provider.VerifyOwner(ctx, o, of(o.ID))
		if err != nil {
			return fmt.Errorf("kyc provider: verify %s: %w", o.ID, err)
		}
		decisions = append(decisions, withDefaultReason(d, o.ID))
		if err := s.setOwnerStatus(ctx, tx, o, statusOf(d.Status), now); err != nil {
			return err
		}
	}
	decided, errs := outcome(decisions)
	if err := moveVerification(v, decided); err != nil {
		return err
	}
	v.Errors = errs
	v.SubmittedAt = &now
	if err := tx.Documents().MarkSubmitted(ctx, c.PlatformID, c.ID, now); err != nil {
		return fmt.Errorf("mark documents of %s submitted: %w", c.ID, err)
	}
	return s.setCustomerStatus(ctx, tx, c, customerStatus(v.Status), now)
}

// withDefaultReason makes sure a rejection says why.
func withDefaultReason(d ports.KYCDecision, resourceID string) ports.KYCDecision {
	if d.Status == ports.KYCRejected && len(d.Errors) == 0 {
		d.Errors = []ports.VerificationError{{ResourceID: resourceID, Type: ErrApplicantRejected, Reason: "The KYC provider rejected the applicant"}}
	}
	return d
}

// outcome combines the applicants' decisions, the worst winning. Only a
// rejection carries errors (the spec: none when APPROVED or IN_PROGRESS).
func outcome(ds []ports.KYCDecision) (VerificationStatus, []ports.VerificationError) {
	has := func(status string) bool {
		return slices.ContainsFunc(ds, func(d ports.KYCDecision) bool { return d.Status == status })
	}
	switch {
	case has(ports.KYCRejected):
		var errs []ports.VerificationError
		for _, d := range ds {
			if d.Status == ports.KYCRejected {
				errs = append(errs, d.Errors...)
			}
		}
		return VerificationRejected, errs
	case has(ports.KYCReview):
		return VerificationManualReview, nil
	case has(ports.KYCPending):
		return VerificationInProgress, nil
	}
	return VerificationApproved, nil
}

// statusOf maps a provider decision to a kycStatus.
func statusOf(decision string) string {
	switch decision {
	case ports.KYCApproved:
		return StatusApproved
	case ports.KYCRejected:
		return StatusRejected
	}
	return StatusPending
}

// customerStatus is the customer's status under a verification status ("":
// unchanged).
func customerStatus(verification string) string {
	switch verification {
	case VerificationApproved:
		return StatusApproved
	case VerificationRejected:
		return StatusRejected
	case VerificationInProgress, VerificationManualReview:
		return StatusPending
	}
	return ""
}

func (s *Service) setCustomerStatus(ctx context.Context, tx kycTx, c ports.Customer, status string, now time.Time) error {
	if status == "" || status == c.KYCStatus {
		return nil
	}
	c.KYCStatus, c.UpdatedAt = status, now
	if err := tx.Customers().Update(ctx, c); err != nil {
		return fmt.Errorf("update status of %s: %w", c.ID, err)
	}
	return s.event(ctx, tx, c.PlatformID, customerEventType(c, status), c.ID, c, now)
}

func (s *Service) setOwnerStatus(ctx context.Context, tx kycTx, o ports.BeneficialOwner, status string, now time.Time) error {
	if status == o.KYCStatus {
		return nil
	}
	o.KYCStatus, o.UpdatedAt = status, now
	if err := tx.BeneficialOwners().Update(ctx, o); err != nil {
		return fmt.Errorf("update status of %s: %w", o.ID, err)
	}
	// The reference has no webhook type for an owner's status: the
	// customer's and the verification's events tell the platform.
	return nil
}

// saveVerification writes v (created when new) and records a
// VERIFICATION.* event when its status changed to one the reference's
// verification webhook carries (not READY_FOR_VERIFICATION: its
// WebhookType lists it, but no webhook sends it).
func (s *Service) saveVerification(ctx context.Context, tx kycTx, v ports.Verification, exists bool, prev string, now time.Time) error {
	write := tx.Verifications().Update
	if !exists {
		write = tx.Verifications().Create
	}
	if err := write(ctx, v); err != nil {
		return fmt.Errorf("save verification %s: %w", v.ID, err)
	}
	if v.Status == prev || v.Status == VerificationReady {
		return nil
	}
	return s.event(ctx, tx, v.PlatformID, "VERIFICATION."+v.Status, v.ID, v, now)
}

// CustomerUpdated checks again the verification of a customer an update
// (PATCH) changed, in the update's unit of work, which has c locked: the
// customers.Watcher of the customers service.
func (s *Service) CustomerUpdated(ctx context.Context, tx ports.Tx, c ports.Customer, now time.Time) error {
	return s.recheck(ctx, tx, c, now)
}

// recheck runs again the requirements of a customer's verification that
// waits on data (RESOLVE_ERRORS or READY_FOR_VERIFICATION), after the
// customer, its documents or its owners changed, so the verification shows
// what is still missing (or READY_FOR_VERIFICATION: submit it again). c is
// locked.
func (s *Service) recheck(ctx context.Context, tx kycTx, c ports.Customer, now time.Time) error {
	v, err := tx.Verifications().Latest(ctx, c.PlatformID, c.ID)
	if errors.Is(err, ports.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read verification of %s: %w", c.ID, err)
	}
	if v.Status != VerificationResolveErrors && v.Status != VerificationReady {
		return nil
	}
	owners, docs, err := applicantData(ctx, tx, c)
	if err != nil {
		return err
	}
	prev := v.Status
	v.Errors = Requirements(c, owners, docs)
	next := VerificationStatus(VerificationResolveErrors)
	if len(v.Errors) == 0 {
		next, v.Errors = VerificationReady, []ports.VerificationError{}
	}
	if err := moveVerification(&v, next); err != nil {
		return err
	}
	v.UpdatedAt = now
	return s.saveVerification(ctx, tx, v, true, prev, now)
}

// GetVerification returns the platform's verification.
func (s *Service) GetVerification(ctx context.Context, platformID, id string) (ports.Verification, error) {
	v, err := s.store.Read().Verifications().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Verification{}, errVerificationNotFound(id)
	}
	if err != nil {
		return ports.Verification{}, fmt.Errorf("get verification %s: %w", id, err)
	}
	return v, nil
}

// ListVerifications pages the platform's verifications, oldest first,
// filtered by customer and status.
func (s *Service) ListVerifications(ctx context.Context, platformID string, f ports.VerificationFilter, page ports.Page) (Page[ports.Verification], error) {
	if f.Status != "" && !slices.Contains(VerificationStatuses, f.Status) {
		return Page[ports.Verification]{}, fault.Invalid("verificationStatus", "must be one of "+strings.Join(VerificationStatuses, ", "))
	}
	f.PlatformID = platformID
	return listPage(page, func(p ports.Page) ([]ports.Verification, int, error) {
		return s.store.Read().Verifications().List(ctx, f, p)
	}, func(v ports.Verification) ports.Position { return ports.Position{CreatedAt: v.CreatedAt, ID: v.ID} })
}
