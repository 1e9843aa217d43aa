package invitations

import (
	"time"

	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ports"
)

// Status is an invitation's status (reference UmaInvitation.status).
// Stored invitations keep it as a string; every change goes through Move,
// which checks the table below.
type Status string

// Invitation statuses (untyped, so they compare with stored strings).
const (
	StatusPending   = "PENDING"
	StatusClaimed   = "CLAIMED"
	StatusCancelled = "CANCELLED"
	StatusExpired   = "EXPIRED"
)

// Statuses lists every status, PENDING first.
var Statuses = []Status{StatusPending, StatusClaimed, StatusCancelled, StatusExpired}

// transitions is the invitation state machine: PENDING until claimed,
// cancelled by its platform, or expired at expiresAt; the three are final.
var transitions = status.NewTable("invitation", Statuses,
	map[Status][]Status{
		StatusPending: {StatusClaimed, StatusCancelled, StatusExpired},
	})

// Move changes inv (as read, or new) to status to at now, or returns a
// status.ErrIllegal error leaving inv as it was. The store applies the
// change only if the stored status is still the one inv was read in
// (ports.InvitationRepo.Update), so of racing moves one wins.
func Move(inv *ports.Invitation, to Status, now time.Time) error {
	if err := transitions.Set(&inv.Status, to); err != nil {
		return err
	}
	inv.UpdatedAt = now
	return nil
}
