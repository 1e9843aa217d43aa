package ports

import (
	"context"
	"time"
)

// RailSpec describes a payment rail as data: adding a corridor is adding a
// spec (and, for a new provider, an adapter), not editing core.
type RailSpec struct {
	Name     string // ACH, WIRE, RTP, SEPA, SEPA_INSTANT, SPEI, PIX, LIGHTNING, SPARK, SOLANA, BASE, POLYGON, ...
	Currency string
	// AccountTypes are the external accountInfo types the rail reaches.
	AccountTypes []string
	Instant      bool
	// Pull: the rail can debit an external account (transfer-in).
	Pull bool
	// SettlementDelay is the rail's typical time to settle.
	SettlementDelay time.Duration
}

// RailDirection is a push (payout to an external account) or a pull.
type RailDirection string

const (
	RailPayout RailDirection = "PAYOUT"
	RailPull   RailDirection = "PULL"
)

// RailRequest is one movement submitted to a rail. Ref (the transaction
// id) makes submission idempotent.
type RailRequest struct {
	Ref       string        `json:",omitzero"`
	Rail      string        `json:",omitzero"`
	Direction RailDirection `json:",omitzero"`
	Currency  string        `json:",omitzero"`
	Amount    int64         `json:",omitzero"`
	// Account is the external account moved to or from.
	Account ExternalAccount `json:",omitzero"`
	// Purpose says what the movement pays: a same-currency transfer (empty)
	// or a quote's payout (RailPurposeQuote), whose outcomes differ (a
	// quote payout can be cancelled, returned after settling, or fail
	// without its funds coming back).
	Purpose RailPurpose `json:",omitzero"`
	// UmaAddress is the receiver of a payout to a UMA address (Account is
	// then empty).
	UmaAddress string `json:",omitzero"`
}

// RailPurpose names what a rail movement is for.
type RailPurpose string

// RailPurposeQuote is the payout of an executed quote.
const RailPurposeQuote RailPurpose = "QUOTE"

// RailState is where a submitted movement stands.
type RailState string

const (
	RailPending   RailState = "PENDING"
	RailSucceeded RailState = "SUCCEEDED"
	RailFailed    RailState = "FAILED"
	// RailRejected: the receiving institution refused the payout, so it
	// was never delivered and its funds came back (the spec's REJECTED).
	RailRejected RailState = "REJECTED"
	// RailCancelled: the payout was cancelled before delivery (by the
	// sender's request) and its funds came back.
	RailCancelled RailState = "CANCELLED"
	// RailReturned: a movement that SUCCEEDED was later returned by the
	// receiving institution and its funds come back: at CheckAt when the
	// result sets it (they are on their way until then), else at once.
	RailReturned RailState = "RETURNED"
	// RailFailedUnreturned: the payout failed and its funds did not come
	// back (they stay with the rail until resolved out of band).
	RailFailedUnreturned RailState = "FAILED_UNRETURNED"
)

// RailResult is a rail's answer. A PENDING result says when to ask again;
// a SUCCEEDED result with CheckAt set may still be RETURNED, so ask again
// then (a rail's return window).
type RailResult struct {
	State         RailState
	FailureReason string // reference failureReason when FAILED
	// FailureDetail says in words what the rail reported (for logs and
	// transaction descriptions); FailureReason is the enum the API shows.
	FailureDetail string
	ExternalRef   string
	CheckAt       time.Time
}

// Rail moves money outside corridor. Errors mean "unknown, retry": a rail
// returns an error only when the movement may not have happened (the
// database/sql ErrBadConn rule); refusals are FAILED results.
type Rail interface {
	Spec() RailSpec
	Submit(ctx context.Context, req RailRequest) (RailResult, error)
	Status(ctx context.Context, req RailRequest, externalRef string) (RailResult, error)
}
