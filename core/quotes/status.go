package quotes

import (
	"time"

	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ports"
)

// Status is a quote's status (reference Quote.status). Stored quotes keep
// it as a string; every change goes through Move or StatusChange, which
// check the table below.
type Status string

// Quote statuses (untyped, so they compare with stored strings).
const (
	StatusPending    = "PENDING"
	StatusProcessing = "PROCESSING"
	StatusCompleted  = "COMPLETED"
	StatusFailed     = "FAILED"
	StatusExpired    = "EXPIRED"
)

// transitions is the quote state machine: PENDING until executed
// (PROCESSING) or expired; a payout ends COMPLETED or FAILED, and a
// COMPLETED payout the rail returns later becomes FAILED. A deposit
// credited as its funds arrive (no platform decision to wait for) goes
// from PENDING to COMPLETED at once.
var transitions = status.NewTable("quote", []Status{StatusPending, StatusProcessing, StatusCompleted, StatusFailed, StatusExpired},
	map[Status][]Status{
		StatusPending:    {StatusProcessing, StatusCompleted, StatusExpired, StatusFailed},
		StatusProcessing: {StatusCompleted, StatusFailed},
		StatusCompleted:  {StatusFailed},
	})

// final reports whether a quote in status s is settled (a COMPLETED
// payout the rail returns is the one exception, made on the locked row).
func final(s string) bool { return s == StatusCompleted || s == StatusFailed || s == StatusExpired }

// Move changes q (read under its lock, or new) to status to at now, or
// returns a status.ErrIllegal error leaving q as it was.
func Move(q *ports.Quote, to Status, now time.Time) error {
	if err := transitions.Set(&q.Status, to); err != nil {
		return err
	}
	q.UpdatedAt = now
	return nil
}

// StatusChange is the change that moves quote id to status to when a
// ledger entry is recorded (ports.Records): the store applies it only to
// a quote in an open status the table lets become to, so it applies once.
func StatusChange(platformID, id string, to Status, now time.Time) ports.QuoteStatusChange {
	return ports.QuoteStatusChange{PlatformID: platformID, QuoteID: id,
		From: transitions.OpenSources(to, final), Status: string(to), UpdatedAt: now}
}
