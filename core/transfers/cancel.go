package transfers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// CodeNotCancellable is the 409 of a cancel the transaction does not
// allow (reference code).
const CodeNotCancellable = "TRANSACTION_NOT_CANCELLABLE"

// CodeTransferCancel is the ledger code of a cancelled transfer-out's
// released hold.
const CodeTransferCancel = "transfer_cancel"

// cancelPrefix names the entry that releases a cancelled transfer-out's
// hold; the rest is the transaction id.
const cancelPrefix = "cancel:"

func notCancellable(id, why string) error {
	return fault.Conflict(CodeNotCancellable, "transaction "+id+" cannot be cancelled: "+why)
}

// Cancel cancels an unsettled bank transfer (POST
// /transactions/{id}/cancel): a transfer-out or transfer-in on a rail that
// is not instant (ACH, wire, SEPA, …), still PENDING or PROCESSING. The
// transaction becomes FAILED; a transfer-out's hold is voided in the same
// write (the balance comes back exactly), a transfer-in moved nothing yet.
// The status change is Required (transactions.CancelChange): should the
// rail's settlement be recorded first, the cancel writes nothing and is 409
// TRANSACTION_NOT_CANCELLABLE, and a settlement that comes second is
// refused the same way (the ledger refuses posting a voided hold; a
// transfer-in's credit requires the transaction still open). Any other
// transaction (settled, cancelled, failed, a quote's payment, an instant
// rail's or a UMA payment) is 409; another platform's is 404. reason is
// logged only. key is the request's Idempotency-Key (may be empty): it is
// recorded with the cancel, and a transaction this key cancelled already
// (the first attempt committed, then a crash lost its stored response) is
// answered as it is, not refused as no longer cancellable.
func (s *Service) Cancel(ctx context.Context, platformID, id, reason, key string) (ports.Transaction, error) {
	t, err := s.store.Read().Transactions().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return t, transactions.ErrNotFound
	}
	if err != nil {
		return t, fmt.Errorf("cancel %s: %w", id, err)
	}
	if key != "" && t.Status == transactions.StatusFailed && t.Details.RequestKey == key {
		return t, ports.AwaitClaim(ctx)
	}
	if why := s.uncancellable(t); why != "" {
		return t, notCancellable(id, why)
	}
	now := s.clock.Now().UTC()
	change := transactions.CancelChange(platformID, id, now)
	change.RequestKey = key
	recs := ports.Records{StatusChanges: []ports.TransactionStatusChange{change}}
	if j, ok := agents.GiveBackJob(t.PlatformID, t.AgentID, t.ID, now); ok {
		recs.Jobs = append(recs.Jobs, j)
	}
	if t.Type == transactions.TypeOutgoing {
		_, err = s.ledger.PostWith(ctx, ledger.Entry{ID: cancelPrefix + id, Ref: id, Transfers: []ledger.Transfer{{
			ID: cancelPrefix + id, Kind: ledger.VoidPending, PendingID: holdPrefix + id, Code: CodeTransferCancel,
		}}}, recs)
	} else {
		err = s.ledger.WriteRecords(ctx, recs)
	}
	switch ledger.CodeOf(err) {
	case ledger.CodeOK:
		if errors.Is(err, ports.ErrPrecondition) {
			return t, notCancellable(id, "it settled or failed meanwhile")
		}
		if err != nil {
			return t, fmt.Errorf("cancel %s: %w", id, err)
		}
	case ledger.CodePendingAlreadyPosted, ledger.CodePendingAlreadyVoided, ledger.CodePendingExpired,
		ledger.CodeExists, ledger.CodeExistsWithDifferentFields:
		// The hold was settled or released meanwhile.
		return t, notCancellable(id, "it settled or failed meanwhile")
	default:
		return t, fmt.Errorf("cancel %s: release hold: %w", id, err)
	}
	s.log.InfoContext(ctx, "transfer cancelled", "transaction", id, "rail", t.PaymentRail, "reason", reason)
	t, err = s.store.Read().Transactions().Get(ctx, platformID, id)
	if err != nil {
		return t, fmt.Errorf("cancel %s: read: %w", id, err)
	}
	return t, nil
}

// uncancellable says why t cannot be cancelled, or "" when it can: only a
// transfer (not a quote's payment) between an internal and an external
// account, on a rail that is not instant, not settled yet.
func (s *Service) uncancellable(t ports.Transaction) string {
	transfer := t.QuoteID == "" && (t.Type == transactions.TypeOutgoing &&
		strings.HasPrefix(t.SourceAccountID, "InternalAccount:") && strings.HasPrefix(t.DestinationAccountID, "ExternalAccount:") ||
		t.Type == transactions.TypeIncoming &&
			strings.HasPrefix(t.SourceAccountID, "ExternalAccount:") && strings.HasPrefix(t.DestinationAccountID, "InternalAccount:"))
	if !transfer {
		return "only bank transfers (transfer-out, transfer-in) can be cancelled"
	}
	if r, ok := s.rails.Rail(t.PaymentRail, t.SourceCurrency); !ok || r.Spec().Instant {
		return "a transfer on the instant rail " + t.PaymentRail + " settles at once"
	}
	if !transactions.Cancellable(t.Status) {
		return "it is " + t.Status
	}
	return ""
}
