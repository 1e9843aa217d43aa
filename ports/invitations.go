package ports

import (
	"context"
	"time"
)

// Invitation is a UMA invitation: a customer of a platform (the inviter)
// invites someone to UMA with a short code that another customer, of any
// platform, claims with their UMA address. Status is one of
// core/invitations' statuses; every change goes through its table.
type Invitation struct {
	// Code is the invitation's key: short, random and unguessable.
	Code       string
	PlatformID string // the inviter's platform, the only one that may cancel
	InviterUma string
	// FirstName is the inviter's first name shown to the invitee.
	FirstName string
	// AmountToSend is display-only, in Currency's smallest unit (0 and ""
	// when none): the inviter's platform sends it after the claim.
	AmountToSend int64
	Currency     string
	URL          string
	Status       string
	// InviteeUma and ClaimedAt are set by the claim.
	InviteeUma string
	ClaimedAt  time.Time // zero until claimed
	ExpiresAt  time.Time // zero when the invitation never expires
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// InvitationRepo keeps invitations. Codes are global (an invitee's
// platform reads and claims another platform's invitation), so reads are
// by code alone.
type InvitationRepo interface {
	// Create inserts; a taken code is a *ConflictError
	// (UniqueInvitationCode).
	Create(ctx context.Context, inv Invitation) error
	// Get returns the invitation with code, or ErrNotFound.
	Get(ctx context.Context, code string) (Invitation, error)
	// Update stores inv's status, inviteeUma, claimedAt and updatedAt if
	// the stored status is still from, atomically (a conditional update,
	// so of two racing changes from one status exactly one applies);
	// a *ConflictError (ConflictInvitationStatus) when the status is no
	// longer from, ErrNotFound when there is no such invitation.
	Update(ctx context.Context, inv Invitation, from string) error
}
