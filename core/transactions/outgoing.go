package transactions

import (
	"context"

	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// CodeInvalidAmount is the refusal of a payment the source's available
// balance does not cover (400, reference code).
const CodeInvalidAmount = "INVALID_AMOUNT"

// Insufficient is the refusal of a payment from an internal account whose
// available balance does not cover requested: 400 INVALID_AMOUNT naming
// field, with the requested amount, the currency and (when the ledger
// answers) the available balance in details.
func Insufficient(ctx context.Context, led ports.LedgerStore, field, accountID, currency string, requested int64) error {
	e := &fault.Error{Kind: fault.KindInvalid, Code: CodeInvalidAmount, Message: "insufficient available balance",
		Fields:  []fault.FieldError{{Field: field, Message: "exceeds the source account's available balance"}},
		Details: map[string]any{"requested": requested, "currency": currency}}
	if la, err := led.Account(ctx, accountID); err == nil {
		e.Details["available"] = la.Available()
	}
	return e
}

// AccountIdentifiers are the values the list's account-identifier filters
// match for an external account: its id and its primary identifier
// (account number, IBAN, wallet address…).
func AccountIdentifiers(a ports.ExternalAccount) []string {
	out := []string{a.ID}
	if p := external.PrimaryIdentifier(a.Info); p != "" && p != a.ID {
		out = append(out, p)
	}
	return out
}

// Outgoing failure reasons the service sets itself (reference
// OutgoingTransactionFailureReason).
const (
	// ReasonExecutionFailed is the reference's catch-all for a failure on
	// the way to settlement.
	ReasonExecutionFailed = "QUOTE_EXECUTION_FAILED"
	// ReasonPayoutReturned: the beneficiary's bank sent the payout back.
	ReasonPayoutReturned = "PAYOUT_RETURNED"
)

// outgoingReasons are the reference's OutgoingTransactionFailureReason
// values.
var outgoingReasons = map[string]bool{"QUOTE_EXPIRED": true, "QUOTE_RATE_UNAVAILABLE": true,
	ReasonExecutionFailed: true, "FUNDING_AMOUNT_MISMATCH": true, "SCA_NOT_COMPLETED": true,
	ReasonPayoutReturned: true, "LIMIT_EXCEEDED": true, "ACCOUNT_CANNOT_RECEIVE": true,
	"ACCOUNT_INVALID": true, "COMPLIANCE_REJECTED": true, "LIGHTNING_PAYMENT_FAILED": true,
	"COUNTERPARTY_POST_TX_FAILED": true}

// OutgoingFailureReason keeps a rail's reason when the reference's
// outgoing enum has it and otherwise falls back to QUOTE_EXECUTION_FAILED
// (the reference's catch-all for a failure on the way to settlement).
func OutgoingFailureReason(reason string) string {
	if outgoingReasons[reason] {
		return reason
	}
	return ReasonExecutionFailed
}
