// Package sandbox is a simulated payment rail: one ports.Rail per rail spec
// whose outcomes follow the sandbox table of the spec, chosen by the last 3
// digits of the external account's primary identifier (external.SandboxSuffix,
// the one definition shared with beneficiary verification):
//
//	002  FAILED at once (payout: ACCOUNT_CANNOT_RECEIVE; pull: insufficient funds)
//	003  FAILED at once (payout: ACCOUNT_INVALID; pull: account closed or invalid)
//	004  PENDING, then at the rail's settlement time REJECTED (payout:
//	     rejected by the bank) or FAILED (pull)
//	005  PENDING, then FAILED once 30 s have passed since submission
//	     other: PENDING, then SUCCEEDED at submission + the spec's SettlementDelay
//
// Instant rails (SettlementDelay 0) answer PENDING on Submit with CheckAt
// equal to the submission time, so the outcome is decided by the next Status
// call (the next job run), never inside the request that created the
// transaction.
//
// A quote's payout (RailRequest.Purpose RailPurposeQuote) follows the
// spec's quote table instead:
//
//	002  FAILED at once (QUOTE_EXECUTION_FAILED: the payout could not start)
//	003  PENDING, then SUCCEEDED QuoteSlowAfter (6 min) after submission
//	     (or at settlement, if later)
//	004  PENDING, then FAILED at settlement (ACCOUNT_CANNOT_RECEIVE: the
//	     counterparty could not deliver it)
//	005  PENDING, SUCCEEDED at settlement with a return window, then
//	     RETURNED (PAYOUT_RETURNED) QuoteReturnAfter later, its funds back
//	     QuoteRefundAfter after that (CheckAt)
//	006  PENDING, then CANCELLED at settlement (the sender cancelled)
//	007  PENDING, then FAILED_UNRETURNED at settlement (payout and refund
//	     both failed)
//	     other: PENDING, then SUCCEEDED at settlement
//
// A payout to a UMA address (RailRequest.UmaAddress) ends as the
// receiver's outcome class (ports.UmaDirectory) says: SUCCESS settles at
// the next check, PENDING_LONG after UMALongPending, FAIL_COMPLIANCE fails
// at the next check (COMPLIANCE_REJECTED); an address nobody answers at
// fails at once (ACCOUNT_INVALID).
//
// A failed pull carries the reference's incoming failure reason
// COLLECTION_FAILED; FailureDetail says which scenario it was.
//
// The adapter keeps no state: Submit encodes the submission time into the
// ExternalRef and Status recomputes the outcome from the request, that time
// and the injected clock, so a pending movement survives a process restart.
// Submitting the same request twice yields a second, independent
// submission (a later ExternalRef); callers store the first ExternalRef and
// ask Status with it.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/ports"
)

// PendingThenFailAfter is how long a 005 movement stays pending.
const PendingThenFailAfter = 30 * time.Second

// Quote payout timings.
const (
	// QuoteSlowAfter is when a 003 quote payout completes.
	QuoteSlowAfter = 6 * time.Minute
	// QuoteReturnAfter is how long after settling a 005 quote payout is
	// returned by the receiving bank.
	QuoteReturnAfter = time.Minute
	// QuoteRefundAfter is how long after the return its funds are back
	// (the refund is PENDING until then).
	QuoteRefundAfter = time.Minute
)

// UMALongPending is how long a payout to a PENDING_LONG UMA receiver stays
// pending.
const UMALongPending = time.Hour

// Rail is the sandbox adapter of one rail spec.
type Rail struct {
	spec  ports.RailSpec
	clock ports.Clock
	// uma resolves UMA receivers (payouts to UMA addresses only).
	uma ports.UmaDirectory
}

// New returns the sandbox rail for spec, telling time by clock.
func New(spec ports.RailSpec, clock ports.Clock) *Rail { return &Rail{spec: spec, clock: clock} }

// Factory adapts New for rails.FromSpecs.
func Factory(clock ports.Clock) func(ports.RailSpec) ports.Rail {
	return func(s ports.RailSpec) ports.Rail { return New(s, clock) }
}

// FactoryWithUMA is Factory whose rails also pay UMA addresses, learning
// each receiver's outcome class from dir.
func FactoryWithUMA(clock ports.Clock, dir ports.UmaDirectory) func(ports.RailSpec) ports.Rail {
	return func(s ports.RailSpec) ports.Rail { return &Rail{spec: s, clock: clock, uma: dir} }
}

// Spec is the rail's row of the table.
func (r *Rail) Spec() ports.RailSpec { return r.spec }

// Submit accepts a movement and answers its first state: FAILED for the
// immediate-failure suffixes, PENDING otherwise.
func (r *Rail) Submit(ctx context.Context, req ports.RailRequest) (ports.RailResult, error) {
	if err := r.check(req); err != nil {
		return ports.RailResult{}, err
	}
	submitted := r.clock.Now().UTC()
	if req.UmaAddress != "" {
		return r.umaOutcome(ctx, req, submitted, submitted, true)
	}
	return r.outcome(req, submitted, submitted, true), nil
}

// Status recomputes where the movement submitted as externalRef stands now.
func (r *Rail) Status(ctx context.Context, req ports.RailRequest, externalRef string) (ports.RailResult, error) {
	if err := r.check(req); err != nil {
		return ports.RailResult{}, err
	}
	submitted, err := r.parseRef(req, externalRef)
	if err != nil {
		return ports.RailResult{}, err
	}
	if req.UmaAddress != "" {
		return r.umaOutcome(ctx, req, submitted, r.clock.Now().UTC(), false)
	}
	return r.outcome(req, submitted, r.clock.Now().UTC(), false), nil
}

// umaOutcome is the UMA receiver table (see the package comment).
func (r *Rail) umaOutcome(ctx context.Context, req ports.RailRequest, submitted, now time.Time, atSubmit bool) (ports.RailResult, error) {
	if r.uma == nil {
		return ports.RailResult{}, fmt.Errorf("sandbox rail %s: no UMA directory to pay %s", r.spec.Name, req.UmaAddress)
	}
	ref := r.externalRef(req, submitted)
	rcv, err := r.uma.Receiver(ctx, req.UmaAddress)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.RailResult{State: ports.RailFailed, FailureReason: "ACCOUNT_INVALID",
			FailureDetail: "no UMA receiver answers at " + req.UmaAddress, ExternalRef: ref}, nil
	}
	if err != nil {
		return ports.RailResult{}, fmt.Errorf("sandbox rail %s: resolve %s: %w", r.spec.Name, req.UmaAddress, err)
	}
	at := submitted
	if rcv.Outcome == ports.UmaOutcomePendingLong {
		at = submitted.Add(UMALongPending)
	}
	if atSubmit || now.Before(at) {
		return ports.RailResult{State: ports.RailPending, ExternalRef: ref, CheckAt: at}, nil
	}
	if rcv.Outcome == ports.UmaOutcomeFailCompliance {
		return ports.RailResult{State: ports.RailFailed, FailureReason: "COMPLIANCE_REJECTED",
			FailureDetail: "the receiving institution's compliance check rejected the payment", ExternalRef: ref}, nil
	}
	return ports.RailResult{State: ports.RailSucceeded, ExternalRef: ref}, nil
}

// outcome is the sandbox table: the state at now of a movement submitted
// at submitted. At submission only the immediate failures are decided; a
// movement due at once (instant rails) is decided by the next Status call.
func (r *Rail) outcome(req ports.RailRequest, submitted, now time.Time, atSubmit bool) ports.RailResult {
	ref := r.externalRef(req, submitted)
	pull := req.Direction == ports.RailPull
	failed := func(payoutReason, detail string) ports.RailResult {
		reason := payoutReason
		if pull {
			reason = reasonCollectionFailed
		}
		return ports.RailResult{State: ports.RailFailed, FailureReason: reason, FailureDetail: detail, ExternalRef: ref}
	}
	pending := func(at time.Time) ports.RailResult {
		return ports.RailResult{State: ports.RailPending, ExternalRef: ref, CheckAt: at}
	}
	settles := submitted.Add(r.spec.SettlementDelay)
	if req.Purpose == ports.RailPurposeQuote {
		return r.quoteOutcome(req, ref, submitted, settles, now, atSubmit)
	}
	switch external.SandboxSuffix(req.Account.Info) {
	case "002":
		if pull {
			return failed("", "insufficient funds")
		}
		return failed("ACCOUNT_CANNOT_RECEIVE", "the account cannot receive funds")
	case "003":
		return failed("ACCOUNT_INVALID", "account closed or invalid")
	case "004":
		if atSubmit || now.Before(settles) {
			return pending(settles)
		}
		if pull {
			return failed("", "rejected by the bank")
		}
		return ports.RailResult{State: ports.RailRejected, FailureDetail: "rejected by the bank", ExternalRef: ref}
	case "005":
		at := submitted.Add(PendingThenFailAfter)
		if atSubmit || now.Before(at) {
			return pending(at)
		}
		return failed("COUNTERPARTY_POST_TX_FAILED", fmt.Sprintf("no confirmation from the bank within %s", PendingThenFailAfter))
	}
	if atSubmit || now.Before(settles) {
		return pending(settles)
	}
	return ports.RailResult{State: ports.RailSucceeded, ExternalRef: ref}
}

// quoteOutcome is the quote payout table (see the package comment).
func (r *Rail) quoteOutcome(req ports.RailRequest, ref string, submitted, settles, now time.Time, atSubmit bool) ports.RailResult {
	pendingUntil := func(at time.Time) (ports.RailResult, bool) {
		if atSubmit || now.Before(at) {
			return ports.RailResult{State: ports.RailPending, ExternalRef: ref, CheckAt: at}, true
		}
		return ports.RailResult{}, false
	}
	switch external.SandboxSuffix(req.Account.Info) {
	case "002":
		return ports.RailResult{State: ports.RailFailed, FailureReason: "QUOTE_EXECUTION_FAILED",
			FailureDetail: "the payout could not be started", ExternalRef: ref}
	case "003":
		at := submitted.Add(QuoteSlowAfter)
		if settles.After(at) {
			at = settles
		}
		if p, ok := pendingUntil(at); ok {
			return p
		}
	case "004":
		if p, ok := pendingUntil(settles); ok {
			return p
		}
		return ports.RailResult{State: ports.RailFailed, FailureReason: "ACCOUNT_CANNOT_RECEIVE",
			FailureDetail: "the counterparty could not deliver the payment", ExternalRef: ref}
	case "005":
		if p, ok := pendingUntil(settles); ok {
			return p
		}
		returned := settles.Add(QuoteReturnAfter)
		if now.Before(returned) {
			return ports.RailResult{State: ports.RailSucceeded, ExternalRef: ref, CheckAt: returned}
		}
		return ports.RailResult{State: ports.RailReturned, FailureReason: "PAYOUT_RETURNED",
			FailureDetail: "the receiving bank returned the payment", ExternalRef: ref, CheckAt: returned.Add(QuoteRefundAfter)}
	case "006":
		if p, ok := pendingUntil(settles); ok {
			return p
		}
		return ports.RailResult{State: ports.RailCancelled, FailureDetail: "cancelled at the sender's request", ExternalRef: ref}
	case "007":
		if p, ok := pendingUntil(settles); ok {
			return p
		}
		return ports.RailResult{State: ports.RailFailedUnreturned, FailureReason: "QUOTE_EXECUTION_FAILED",
			FailureDetail: "the payout failed and its refund failed too", ExternalRef: ref}
	default:
		if p, ok := pendingUntil(settles); ok {
			return p
		}
	}
	return ports.RailResult{State: ports.RailSucceeded, ExternalRef: ref}
}

const reasonCollectionFailed = "COLLECTION_FAILED"

// check refuses requests the registry should never route here: they are
// bugs, not rail outcomes.
func (r *Rail) check(req ports.RailRequest) error {
	switch {
	case req.Ref == "":
		return errors.New("sandbox rail: request has no Ref")
	case req.Rail != r.spec.Name || req.Currency != r.spec.Currency:
		return fmt.Errorf("sandbox rail %s/%s: request for %s/%s", r.spec.Name, r.spec.Currency, req.Rail, req.Currency)
	case req.Amount <= 0:
		return fmt.Errorf("sandbox rail %s: amount %d is not positive", r.spec.Name, req.Amount)
	case req.Direction == ports.RailPull && !r.spec.Pull:
		return fmt.Errorf("sandbox rail %s: cannot pull", r.spec.Name)
	case req.Direction != ports.RailPull && req.Direction != ports.RailPayout:
		return fmt.Errorf("sandbox rail %s: unknown direction %q", r.spec.Name, req.Direction)
	}
	return nil
}

// The external reference is "sandbox:<rail>:<currency>:<submitted unix
// nanoseconds>:<request Ref>".
const refPrefix = "sandbox"

func (r *Rail) externalRef(req ports.RailRequest, submitted time.Time) string {
	return strings.Join([]string{refPrefix, r.spec.Name, r.spec.Currency, strconv.FormatInt(submitted.UnixNano(), 10), req.Ref}, ":")
}

func (r *Rail) parseRef(req ports.RailRequest, externalRef string) (time.Time, error) {
	parts := strings.SplitN(externalRef, ":", 5)
	if len(parts) != 5 || parts[0] != refPrefix {
		return time.Time{}, fmt.Errorf("sandbox rail %s: malformed external reference %q", r.spec.Name, externalRef)
	}
	if parts[1] != r.spec.Name || parts[2] != r.spec.Currency || parts[4] != req.Ref {
		return time.Time{}, fmt.Errorf("sandbox rail %s/%s: external reference %q belongs to another movement than %s", r.spec.Name, r.spec.Currency, externalRef, req.Ref)
	}
	ns, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("sandbox rail %s: external reference %q: bad time: %w", r.spec.Name, externalRef, err)
	}
	return time.Unix(0, ns).UTC(), nil
}
