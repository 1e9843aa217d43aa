package transactions

import (
	"slices"
	"time"

	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ports"
)

// Status is a transaction's status (reference TransactionStatus). Stored
// transactions keep it as a string (ports.Transaction.Status); every change
// goes through Move or StatusChange, which check the table below.
type Status string

// Transaction statuses (untyped, so they compare with stored strings).
const (
	StatusCreated              = "CREATED"
	StatusPending              = "PENDING"
	StatusPendingAuthorization = "PENDING_AUTHORIZATION"
	StatusProcessing           = "PROCESSING"
	StatusCompleted            = "COMPLETED"
	StatusRejected             = "REJECTED"
	StatusFailed               = "FAILED"
	StatusRefunded             = "REFUNDED"
	StatusExpired              = "EXPIRED"
)

// Statuses lists every transaction status.
var Statuses = []string{StatusCreated, StatusPending, StatusPendingAuthorization, StatusProcessing,
	StatusCompleted, StatusRejected, StatusFailed, StatusRefunded, StatusExpired}

// transitions is the transaction state machine: a payment is created
// PENDING (a quote's waits there for execution), is PROCESSING once
// submitted, and ends COMPLETED, FAILED, REFUNDED (cancelled, its money
// back), REJECTED or EXPIRED; a COMPLETED payout the rail returns later
// becomes FAILED. A deposit (a quote crediting an internal account) is
// CREATED until its funds arrive, then PENDING for the platform's
// decision or COMPLETED at once.
var transitions = status.NewTable("transaction", []Status{StatusCreated, StatusPending, StatusPendingAuthorization,
	StatusProcessing, StatusCompleted, StatusRejected, StatusFailed, StatusRefunded, StatusExpired}, map[Status][]Status{
	StatusCreated:              {StatusPending, StatusPendingAuthorization, StatusProcessing, StatusCompleted, StatusRejected, StatusFailed, StatusExpired},
	StatusPendingAuthorization: {StatusPending, StatusProcessing, StatusRejected, StatusFailed, StatusExpired},
	StatusPending:              {StatusProcessing, StatusCompleted, StatusFailed, StatusRejected, StatusExpired},
	StatusProcessing:           {StatusCompleted, StatusRejected, StatusFailed, StatusRefunded},
	StatusCompleted:            {StatusFailed},
})

// Terminal reports whether a transaction in status s is settled: nothing
// more happens to it in the normal course (a COMPLETED payout the rail
// returns is the one exception, made on the locked row with Move).
func Terminal(s string) bool {
	switch s {
	case StatusCompleted, StatusRejected, StatusFailed, StatusRefunded, StatusExpired:
		return true
	}
	return false
}

// NotPaid reports whether a payment that ended in status s did not pay
// its receiver (FAILED, REJECTED, REFUNDED): what gives an agent's usage
// back, unless its funds stayed at the rail (a failed refund, its
// caller's to tell).
func NotPaid(s Status) bool {
	switch s {
	case StatusFailed, StatusRejected, StatusRefunded:
		return true
	}
	return false
}

// CanBecome reports whether the table lets s become to.
func (s Status) CanBecome(to Status) bool { return transitions.Allows(s, to) }

// Move changes t (read under its lock) to status to at now, or returns a
// status.ErrIllegal error leaving t as it was.
func Move(t *ports.Transaction, to Status, now time.Time) error {
	if err := transitions.Set(&t.Status, to); err != nil {
		return err
	}
	t.UpdatedAt = now
	return nil
}

// StatusChange is the change that moves transaction id to status to when
// a ledger entry is recorded (ports.Records): the store applies it only to
// a transaction in an open (not Terminal) status the table lets become to,
// so a change applies once and never reopens a settled payment.
func StatusChange(platformID, id string, to Status, now time.Time) ports.TransactionStatusChange {
	return ports.TransactionStatusChange{PlatformID: platformID, TransactionID: id,
		From: transitions.OpenSources(to, Terminal), Status: string(to), UpdatedAt: now}
}

// Approval outcomes: an incoming payment on an approval-capable rail is
// created PENDING with its money on hold (ports.Approval) and leaves
// PENDING by the platform's decision, through the table above:
//
//	approved (webhook 200, or POST …/approve)        → COMPLETED
//	rejected (webhook 403, or POST …/reject)         → REJECTED
//	data asked for (webhook 422), or a 200 without
//	a mandatory requested receiver field             → FAILED, MISSING_MANDATORY_PAYEE_DATA
//	no decision within the window                    → FAILED, PAYMENT_APPROVAL_TIMED_OUT
//	no answer, another status                        → FAILED, PAYMENT_APPROVAL_WEBHOOK_ERROR
const (
	ReasonApprovalTimedOut     = "PAYMENT_APPROVAL_TIMED_OUT"
	ReasonApprovalWebhookError = "PAYMENT_APPROVAL_WEBHOOK_ERROR"
	ReasonMissingPayeeData     = "MISSING_MANDATORY_PAYEE_DATA"
)

// Refund statuses and reasons (reference Refund: a payment's funds going
// back to its sender).
const (
	RefundPending   = "PENDING"
	RefundCompleted = "COMPLETED"
	RefundFailed    = "FAILED"

	RefundTransactionFailed = "TRANSACTION_FAILED"
	RefundUserCancellation  = "USER_CANCELLATION"
	RefundTimeout           = "TIMEOUT"
)

// RefundReference is the reference of t's refund.
func RefundReference(t ports.Transaction) string { return t.Reference + "-R" }

// AwaitsApproval reports whether t is an incoming payment waiting for the
// platform's decision: PENDING with an approval (its money held).
func AwaitsApproval(t ports.Transaction) bool {
	return t.Type == TypeIncoming && t.Details.Approval != nil && Status(t.Status).CanBecome(StatusCompleted) &&
		t.Status == StatusPending
}

// cancellableFrom are the statuses a bank transfer can be cancelled from
// (POST /transactions/{id}/cancel): recorded or submitted, not settled.
var cancellableFrom = []Status{StatusPending, StatusProcessing}

// Cancellable reports whether status s is one a transfer can be cancelled
// from.
func Cancellable(s string) bool { return slices.Contains(cancellableFrom, Status(s)) }

// CancelChange is the change that cancels transaction id: FAILED, through
// the table, and Required (ports.TransactionStatusChange), so it is
// written only while the stored status is still one a transfer can be
// cancelled from, and otherwise refuses the whole call, the release of
// its hold included: a cancel and a settlement cannot both win.
func CancelChange(platformID, id string, now time.Time) ports.TransactionStatusChange {
	c := ports.TransactionStatusChange{PlatformID: platformID, TransactionID: id, Status: StatusFailed, UpdatedAt: now, Required: true}
	for _, from := range cancellableFrom {
		if from.CanBecome(StatusFailed) {
			c.From = append(c.From, string(from))
		}
	}
	return c
}
