package agents

import (
	"time"

	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ports"
)

// ActionStatus is an agent action's status (reference AgentActionStatus).
// Stored actions keep it as a string; every change goes through Move,
// which checks the table below.
type ActionStatus string

// Agent action statuses (untyped, so they compare with stored strings).
const (
	StatusPendingApproval = "PENDING_APPROVAL"
	StatusApproved        = "APPROVED"
	StatusRejected        = "REJECTED"
	StatusFailed          = "FAILED"
)

// statusNew is the status of an action not yet saved (the spec's "(none)").
const statusNew ActionStatus = ""

// ActionStatuses lists every status of a saved action.
var ActionStatuses = []ActionStatus{StatusPendingApproval, StatusApproved, StatusRejected, StatusFailed}

// transitions is the spec's "AgentAction transitions" table: an action is
// created PENDING_APPROVAL (the policy wants approval; no transaction yet)
// or APPROVED (automatic; its transaction populated); the platform
// approves or rejects a pending one; execution failing (a quote that
// expired before approval, funds gone) fails a pending or approved one.
// REJECTED and FAILED are final.
var transitions = status.NewTable("agent action",
	append([]ActionStatus{statusNew}, ActionStatuses...),
	map[ActionStatus][]ActionStatus{
		statusNew:             {StatusPendingApproval, StatusApproved},
		StatusPendingApproval: {StatusApproved, StatusRejected, StatusFailed},
		StatusApproved:        {StatusFailed},
	})

// Move changes a (as read, or new with an empty status) to status to at
// now (to the microsecond, as stores keep times, so an event's snapshot is
// what a later read returns), or returns a status.ErrIllegal error leaving
// a as it was. The store
// applies a change only if the stored status is still the one a was read
// in (ports.AgentActionRepo.Update), so of racing moves one wins.
func Move(a *ports.AgentAction, to ActionStatus, now time.Time) error {
	if err := transitions.Set(&a.Status, to); err != nil {
		return err
	}
	now = ports.Stored(now)
	a.UpdatedAt = now
	if a.CreatedAt.IsZero() {
		a.CreatedAt = now
	}
	return nil
}
