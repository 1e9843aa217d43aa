// Package invitations is UMA invitations: a platform's customer (the
// inviter) creates an invitation with a short random code; someone with a
// UMA address, on any platform, claims it; the inviter's platform may
// cancel it while it is PENDING; one with an expiresAt expires then, from a
// durable job. Claiming records an INVITATION.CLAIMED event to the
// inviter's platform in the same unit of work as the status change, so
// the event exists if and only if the claim does. amountToSend is shown to
// the invitee and nothing else: no money moves here (the inviter's
// platform sends it after the event).
package invitations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/corridorpay/corridor/core/events"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// Error codes (reference Error400, Error403 and Error404 codes).
const (
	CodeNotFound       = "INVITATION_NOT_FOUND"
	CodeAlreadyClaimed = "INVITATION_ALREADY_CLAIMED"
	CodeCancelled      = "INVITATION_CANCELLED"
	// CodeExpired is the reference's only expiry code among its 400
	// codes; it names no invitation code of its own.
	CodeExpired       = "EXPIRED"
	CodeNotConfigured = "INVITATIONS_NOT_CONFIGURED"
	CodeInvalidUma    = lookup.CodeInvalidUma
	CodeForbidden     = "FORBIDDEN"
)

// EventClaimed is the event type a claim records (reference WebhookType).
const EventClaimed = "INVITATION.CLAIMED"

// KindExpire is the job that expires a PENDING invitation at its
// expiresAt.
const KindExpire = "invitation.expire"

// Limits of the fields a creator sends.
const (
	// MaxFirstName bounds firstName, in bytes.
	MaxFirstName = 255
)

// codeAttempts is how many fresh codes Create tries when one is taken
// (with 59 bits one collision is already unlikely).
const codeAttempts = 3

var errNotFound = fault.NotFound(CodeNotFound, "invitation not found")

// Service creates, reads, claims, cancels and expires invitations.
type Service struct {
	store ports.Store
	clock ports.Clock
	ids   ports.IDs
	log   *slog.Logger
}

// New returns a Service; a nil log logs to slog.Default().
func New(store ports.Store, clock ports.Clock, ids ports.IDs, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{store: store, clock: clock, ids: ids, log: log}
}

// Register registers the expiry job's handler on r.
func (s *Service) Register(r *jobs.Runner) { jobs.HandleJSON(r, KindExpire, s.handleExpire) }

// CreateInput is a new invitation. Nil fields are absent.
type CreateInput struct {
	InviterUma   string
	FirstName    string
	AmountToSend *int64
	ExpiresAt    *time.Time
}

// Create stores a PENDING invitation from the platform's customer whose
// UMA address is InviterUma, with its expiry job when it has an
// expiresAt. A malformed address is 400 INVALID_UMA_ADDRESS; one that is
// not a live customer's of the platform, a bad amount or an expiresAt
// not in the future 400 INVALID_INPUT naming the field; a platform
// without a UMA domain (where the invitation's URL points) 400
// INVITATIONS_NOT_CONFIGURED.
func (s *Service) Create(ctx context.Context, platformID string, in CreateInput) (ports.Invitation, error) {
	now := s.clock.Now()
	if err := checkUma("inviterUma", in.InviterUma); err != nil {
		return ports.Invitation{}, err
	}
	var errs fault.Collector
	if len(in.FirstName) > MaxFirstName {
		errs.Add("firstName", fmt.Sprintf("must be at most %d bytes", MaxFirstName))
	}
	if in.AmountToSend != nil && (*in.AmountToSend <= 0 || *in.AmountToSend > money.MaxAmount) {
		errs.Add("amountToSend", fmt.Sprintf("must be between 1 and %d", money.MaxAmount))
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		errs.Add("expiresAt", "must be in the future")
	}
	if err := errs.Err(); err != nil {
		return ports.Invitation{}, err
	}
	read := s.store.Read()
	p, err := read.Platforms().Get(ctx, platformID)
	if err != nil {
		return ports.Invitation{}, fmt.Errorf("invitations: load platform %s: %w", platformID, err)
	}
	if p.UmaDomain == "" {
		return ports.Invitation{}, fault.New(fault.KindInvalid, CodeNotConfigured,
			"the platform has no UMA domain, so its invitations have no URL; set one")
	}
	inviter, err := s.inviter(ctx, read, platformID, in.InviterUma)
	if err != nil {
		return ports.Invitation{}, err
	}
	inv := ports.Invitation{
		PlatformID: platformID, InviterUma: in.InviterUma, FirstName: in.FirstName,
		Status: StatusPending, CreatedAt: now, UpdatedAt: now,
	}
	if in.AmountToSend != nil {
		inv.AmountToSend, inv.Currency = *in.AmountToSend, currencyOf(inviter, p)
	}
	if in.ExpiresAt != nil {
		inv.ExpiresAt = ports.Stored(*in.ExpiresAt)
	}
	for attempt := 1; ; attempt++ {
		if inv.Code, err = newCode(); err != nil {
			return ports.Invitation{}, err
		}
		inv.URL = "https://" + p.UmaDomain + "/invitations/" + inv.Code
		err = s.store.InTx(ctx, func(tx ports.Tx) error {
			if err := tx.Invitations().Create(ctx, inv); err != nil {
				return err
			}
			if inv.ExpiresAt.IsZero() {
				return nil
			}
			return jobs.Enqueue(ctx, tx.Jobs(), KindExpire, KindExpire+":"+inv.Code, inv.ExpiresAt, expirePayload{Code: inv.Code})
		})
		var ce *ports.ConflictError
		if errors.As(err, &ce) && ce.Constraint == ports.UniqueInvitationCode && attempt < codeAttempts {
			continue
		}
		if err != nil {
			return ports.Invitation{}, fmt.Errorf("invitations: create: %w", err)
		}
		return inv, nil
	}
}

// inviter is the platform's live customer at address.
func (s *Service) inviter(ctx context.Context, read ports.Tx, platformID, address string) (ports.Customer, error) {
	rows, _, err := read.Customers().List(ctx, ports.CustomerFilter{PlatformID: platformID, UmaAddress: address}, ports.Page{Limit: 1})
	if err != nil {
		return ports.Customer{}, fmt.Errorf("invitations: find inviter %s: %w", address, err)
	}
	if len(rows) == 0 || rows[0].IsDeleted {
		return ports.Customer{}, fault.Invalid("inviterUma", "is not the UMA address of a customer of this platform")
	}
	return rows[0], nil
}

// currencyOf is the currency of the inviter's amountToSend: the
// customer's first currency, else the platform's, else the default
// sending currency (as receiver lookups choose the sender's).
func currencyOf(c ports.Customer, p ports.Platform) string {
	switch {
	case len(c.Currencies) > 0:
		return c.Currencies[0]
	case len(p.Currencies) > 0:
		return p.Currencies[0]
	}
	return lookup.DefaultSendingCurrency
}

// checkUma is 400 INVALID_UMA_ADDRESS naming field unless address is a
// well-formed UMA address.
func checkUma(field, address string) error {
	if lookup.ValidUmaAddress(address) {
		return nil
	}
	e := fault.New(fault.KindInvalid, CodeInvalidUma, field+": not a UMA address ($user@domain)")
	e.Fields = []fault.FieldError{{Field: field, Message: "must be a UMA address ($user@domain, user part in lower case)"}}
	return e
}

// Get returns the invitation with code (any platform may read it: the
// invitee's platform shows it before the claim), or 404
// INVITATION_NOT_FOUND.
func (s *Service) Get(ctx context.Context, code string) (ports.Invitation, error) {
	c, ok := NormalizeCode(code)
	if !ok {
		return ports.Invitation{}, errNotFound
	}
	inv, err := s.store.Read().Invitations().Get(ctx, c)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Invitation{}, errNotFound
	}
	if err != nil {
		return ports.Invitation{}, fmt.Errorf("invitations: get %s: %w", c, err)
	}
	return inv, nil
}

// Claim moves a PENDING invitation to CLAIMED for inviteeUma and records
// the INVITATION.CLAIMED event to the inviter's platform in the same unit
// of work. Any platform may claim. Of concurrent claims exactly one wins;
// the others see the winner's status. A claimed, cancelled or expired
// invitation is 400 INVITATION_ALREADY_CLAIMED, INVITATION_CANCELLED or
// EXPIRED; one whose expiresAt has passed expires now (before its job).
func (s *Service) Claim(ctx context.Context, code, inviteeUma string) (ports.Invitation, error) {
	c, ok := NormalizeCode(code)
	if !ok {
		return ports.Invitation{}, errNotFound
	}
	if err := checkUma("inviteeUma", inviteeUma); err != nil {
		return ports.Invitation{}, err
	}
	return s.change(ctx, c, func(inv *ports.Invitation, now time.Time) error {
		if inv.InviterUma == inviteeUma {
			return fault.Invalid("inviteeUma", "is the inviter's own UMA address")
		}
		if err := Move(inv, StatusClaimed, now); err != nil {
			return err
		}
		inv.InviteeUma, inv.ClaimedAt = inviteeUma, now
		return nil
	}, func(ctx context.Context, tx ports.Tx, inv ports.Invitation) error {
		e, err := events.New(s.ids, inv.PlatformID, EventClaimed, inv.Code, inv, inv.UpdatedAt)
		if err != nil {
			return err
		}
		return tx.Events().Append(ctx, e)
	}, "")
}

// Cancel moves the platform's PENDING invitation to CANCELLED: 403
// FORBIDDEN when another platform created it, 400 (the code of its
// status, as Claim) when it is no longer PENDING.
func (s *Service) Cancel(ctx context.Context, platformID, code string) (ports.Invitation, error) {
	c, ok := NormalizeCode(code)
	if !ok {
		return ports.Invitation{}, errNotFound
	}
	return s.change(ctx, c, func(inv *ports.Invitation, now time.Time) error {
		return Move(inv, StatusCancelled, now)
	}, nil, platformID)
}

// change applies move to the invitation with code under a conditional
// update (from the status it was read in), then after, in the same unit
// of work. owner, when set, must be the invitation's platform (403
// otherwise). A PENDING invitation past its expiresAt is expired instead,
// committed, and reported as expired.
func (s *Service) change(ctx context.Context, code string, move func(*ports.Invitation, time.Time) error,
	after func(context.Context, ports.Tx, ports.Invitation) error, owner string) (ports.Invitation, error) {
	var out ports.Invitation
	var expired bool
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		expired = false
		now := s.clock.Now()
		inv, err := tx.Invitations().Get(ctx, code)
		if errors.Is(err, ports.ErrNotFound) {
			return errNotFound
		}
		if err != nil {
			return fmt.Errorf("invitations: get %s: %w", code, err)
		}
		if owner != "" && inv.PlatformID != owner {
			return fault.New(fault.KindForbidden, CodeForbidden, "only the platform that created the invitation can cancel it")
		}
		if inv.Status == StatusPending && due(inv, now) {
			expired = true
			return s.expire(ctx, tx, inv, now)
		}
		if err := statusError(inv.Status); err != nil {
			return err
		}
		from := inv.Status
		if err := move(&inv, now); err != nil {
			return err
		}
		if err := tx.Invitations().Update(ctx, inv, from); err != nil {
			return s.lost(ctx, tx, code, err)
		}
		if after != nil {
			if err := after(ctx, tx, inv); err != nil {
				return fmt.Errorf("invitations: %s %s: %w", inv.Status, code, err)
			}
		}
		out = inv
		return nil
	})
	if err != nil {
		return ports.Invitation{}, err
	}
	if expired {
		return ports.Invitation{}, statusError(StatusExpired)
	}
	return out, nil
}

// lost turns a refused conditional update into the answer of the change
// that won (its status's error).
func (s *Service) lost(ctx context.Context, tx ports.Tx, code string, err error) error {
	var ce *ports.ConflictError
	if !errors.As(err, &ce) || ce.Constraint != ports.ConflictInvitationStatus {
		return fmt.Errorf("invitations: update %s: %w", code, err)
	}
	cur, gerr := tx.Invitations().Get(ctx, code)
	if gerr != nil {
		return fmt.Errorf("invitations: reread %s: %w", code, gerr)
	}
	if serr := statusError(cur.Status); serr != nil {
		return serr
	}
	return fmt.Errorf("invitations: update %s: %w", code, err)
}

// statusError is why an invitation in status st can be neither claimed
// nor cancelled (nil for PENDING).
func statusError(st string) error {
	switch st {
	case StatusClaimed:
		return fault.New(fault.KindInvalid, CodeAlreadyClaimed, "the invitation has already been claimed")
	case StatusCancelled:
		return fault.New(fault.KindInvalid, CodeCancelled, "the invitation has been cancelled")
	case StatusExpired:
		return fault.New(fault.KindInvalid, CodeExpired, "the invitation has expired")
	}
	return nil
}

// due reports whether inv's expiresAt has come at now.
func due(inv ports.Invitation, now time.Time) bool {
	return !inv.ExpiresAt.IsZero() && !now.Before(inv.ExpiresAt)
}

// expire moves a PENDING invitation to EXPIRED in tx; one another change
// got to first is left as it is.
func (s *Service) expire(ctx context.Context, tx ports.Tx, inv ports.Invitation, now time.Time) error {
	from := inv.Status
	if err := Move(&inv, StatusExpired, now); err != nil {
		return err
	}
	err := tx.Invitations().Update(ctx, inv, from)
	var ce *ports.ConflictError
	if errors.As(err, &ce) && ce.Constraint == ports.ConflictInvitationStatus {
		return nil
	}
	if err != nil {
		return fmt.Errorf("invitations: expire %s: %w", inv.Code, err)
	}
	return nil
}

type expirePayload struct {
	Code string `json:"code"`
}

// handleExpire expires the job's invitation if it is still PENDING (a
// claimed or cancelled one is left alone; the job runs at least once).
func (s *Service) handleExpire(ctx context.Context, _ ports.Job, p expirePayload) error {
	return s.store.InTx(ctx, func(tx ports.Tx) error {
		now := s.clock.Now()
		inv, err := tx.Invitations().Get(ctx, p.Code)
		if errors.Is(err, ports.ErrNotFound) {
			s.log.Warn("expiry job of an unknown invitation", "code", p.Code)
			return nil
		}
		if err != nil {
			return fmt.Errorf("invitations: get %s: %w", p.Code, err)
		}
		if inv.Status != StatusPending {
			return nil
		}
		if !due(inv, now) {
			return fmt.Errorf("invitations: %s expires at %s, not yet", p.Code, inv.ExpiresAt)
		}
		return s.expire(ctx, tx, inv, now)
	})
}
