package ports

import "context"

// Outcome classes of a payment to a UMA receiver: how the receiving side
// answers once corridor sends it money.
const (
	// UmaOutcomeSuccess: the receiver accepts and the payment completes.
	UmaOutcomeSuccess = "SUCCESS"
	// UmaOutcomePendingLong: the receiver takes a long time (the payment
	// stays pending for a long while before it completes).
	UmaOutcomePendingLong = "PENDING_LONG"
	// UmaOutcomeFailCompliance: the receiving institution's compliance
	// check rejects the payment (it fails and the funds come back).
	UmaOutcomeFailCompliance = "FAIL_COMPLIANCE"
)

// UmaReceiver is a counterparty reachable at a UMA address: the currencies
// it takes (codes, in its order of preference) and how a payment to it ends
// (one of the UmaOutcome… classes).
type UmaReceiver struct {
	Address    string
	Currencies []string
	Outcome    string
}

// UmaDirectory resolves UMA addresses outside corridor (the UMA protocol's
// LNURLP/pay-request exchange, in a real adapter; a fixed set of sandbox
// receivers in adapters/uma/sandbox).
//
// Receiver answers for a well-formed address ($user@domain, already
// validated by the caller): the receiver, or an error wrapping ErrNotFound
// when nobody answers there; any other error is "unknown, retry". Lookups
// call it to list the receiver's currencies; the quote service calls it
// again when it executes a quote to a UMA destination, to learn the
// payment's outcome class. Addresses compare case-insensitively.
type UmaDirectory interface {
	Receiver(ctx context.Context, address string) (UmaReceiver, error)
}
