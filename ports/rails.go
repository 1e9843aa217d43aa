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
	Ref       string
	Rail      string
	Direction RailDirection
	Currency  string
	Amount    int64
	// Account is the external account moved to or from.
	Account ExternalAccount
}

// RailState is where a submitted movement stands.
type RailState string

const (
	RailPending   RailState = "PENDING"
	RailSucceeded RailState = "SUCCEEDED"
	RailFailed    RailState = "FAILED"
)

// RailResult is a rail's answer. A PENDING result says when to ask again.
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
