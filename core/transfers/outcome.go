package transfers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Rail selection modes (reference RailSelectionMode).
const (
	RailAuto   = "AUTO"
	RailManual = "MANUAL"
)

// jobPayload is what transfer.submit and transfer.check jobs carry: the
// transaction and the rail request made for it (a snapshot, so an external
// account deleted while its transfer is in flight does not strand it).
type jobPayload struct {
	PlatformID    string `json:"platformId"`
	TransactionID string `json:"transactionId"`
	// InternalAccountID is the internal account the transfer debits or
	// credits.
	InternalAccountID string            `json:"internalAccountId"`
	Request           ports.RailRequest `json:"request"`
	// ExternalRef is the rail's reference of the submission (checks only).
	ExternalRef string `json:"externalRef,omitempty"`
	// Check numbers the status checks (1 for the first).
	Check int `json:"check,omitempty"`
}

func decodePayload(j ports.Job) (jobPayload, error) {
	var p jobPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return p, fmt.Errorf("job %s (%s): payload: %w", j.ID, j.Kind, err)
	}
	if p.PlatformID == "" || p.TransactionID == "" {
		return p, fmt.Errorf("job %s (%s): payload names no transaction", j.ID, j.Kind)
	}
	return p, nil
}

// HandleSubmit runs a transfer.submit job: it submits a PENDING
// transaction to its rail and applies the first answer. It is idempotent:
// a transaction already past PENDING is left alone.
func (s *Service) HandleSubmit(ctx context.Context, j ports.Job) error {
	p, err := decodePayload(j)
	if err != nil {
		return err
	}
	t, err := s.store.Read().Transactions().Get(ctx, p.PlatformID, p.TransactionID)
	if err != nil {
		return fmt.Errorf("submit %s: %w", p.TransactionID, err)
	}
	if t.Status != transactions.StatusPending {
		return nil
	}
	rail, err := s.rail(p.Request)
	if err != nil {
		return err
	}
	res, err := rail.Submit(ctx, p.Request)
	if err != nil {
		return fmt.Errorf("submit %s to %s: %w", t.ID, p.Request.Rail, err)
	}
	return s.apply(ctx, p, res)
}

// HandleCheck runs a transfer.check job: it asks the rail where a
// submitted transaction stands and applies the answer.
func (s *Service) HandleCheck(ctx context.Context, j ports.Job) error {
	p, err := decodePayload(j)
	if err != nil {
		return err
	}
	t, err := s.store.Read().Transactions().Get(ctx, p.PlatformID, p.TransactionID)
	if err != nil {
		return fmt.Errorf("check %s: %w", p.TransactionID, err)
	}
	if transactions.Terminal(t.Status) {
		return nil
	}
	rail, err := s.rail(p.Request)
	if err != nil {
		return err
	}
	res, err := rail.Status(ctx, p.Request, p.ExternalRef)
	if err != nil {
		return fmt.Errorf("check %s on %s: %w", t.ID, p.Request.Rail, err)
	}
	return s.apply(ctx, p, res)
}

func (s *Service) rail(req ports.RailRequest) (ports.Rail, error) {
	r, ok := s.rails.Rail(req.Rail, req.Currency)
	if !ok {
		return nil, fmt.Errorf("transfer %s: rail %s/%s is not configured", req.Ref, req.Rail, req.Currency)
	}
	return r, nil
}

func (s *Service) apply(ctx context.Context, p jobPayload, res ports.RailResult) error {
	switch res.State {
	case ports.RailSucceeded:
		return s.succeed(ctx, p)
	case ports.RailFailed:
		return s.fail(ctx, p, res.FailureReason, res.FailureDetail)
	case ports.RailPending:
		return s.pending(ctx, p, res)
	}
	return fmt.Errorf("transfer %s: rail %s answered unknown state %q", p.TransactionID, p.Request.Rail, res.State)
}

// pending marks the transaction PROCESSING (submitted, not settled) and
// schedules the next status check, in one unit of work.
func (s *Service) pending(ctx context.Context, p jobPayload, res ports.RailResult) error {
	now := s.clock.Now().UTC()
	next := p
	next.Check++
	if res.ExternalRef != "" {
		next.ExternalRef = res.ExternalRef
	}
	runAt := res.CheckAt.UTC()
	if next.Check > 1 && runAt.Before(now.Add(s.retry)) {
		// A rail that keeps answering "pending, ask now" is asked again
		// after a pause, not in a loop.
		runAt = now.Add(s.retry)
	}
	if runAt.Before(now) {
		runAt = now
	}
	payload, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("transfer %s: check payload: %w", p.TransactionID, err)
	}
	return s.store.InTx(ctx, func(tx ports.Tx) error {
		t, err := tx.Transactions().GetForUpdate(ctx, p.PlatformID, p.TransactionID)
		if err != nil {
			return fmt.Errorf("transfer %s: %w", p.TransactionID, err)
		}
		if transactions.Terminal(t.Status) {
			return nil
		}
		if t.Status == transactions.StatusPending {
			t.Status = transactions.StatusProcessing
			t.UpdatedAt = now
			if err := tx.Transactions().Update(ctx, t); err != nil {
				return fmt.Errorf("transfer %s: mark processing: %w", t.ID, err)
			}
		}
		return tx.Jobs().Enqueue(ctx, ports.Job{
			Kind: KindCheck, Key: KindCheck + ":" + t.ID + ":" + strconv.Itoa(next.Check),
			Payload: payload, RunAt: runAt,
		})
	})
}

// succeed settles a transaction the rail completed: a transfer-out's hold
// is posted to the rail's settlement account, a transfer-in credits the
// internal account from it. Then the transaction is COMPLETED.
func (s *Service) succeed(ctx context.Context, p jobPayload) error {
	id := p.TransactionID
	var e ledger.Entry
	if p.Request.Direction == ports.RailPull {
		e = ledger.Entry{ID: creditPrefix + id, Ref: id, Transfers: []ledger.Transfer{{
			ID:              creditPrefix + id,
			DebitAccountID:  ledger.RailSettlementID(p.Request.Rail, p.Request.Currency),
			CreditAccountID: p.InternalAccountID,
			Amount:          p.Request.Amount,
			Currency:        p.Request.Currency,
			Kind:            ledger.Single,
			Code:            CodeTransferIn,
		}}}
	} else {
		e = ledger.Entry{ID: settlePrefix + id, Ref: id, Transfers: []ledger.Transfer{{
			ID: settlePrefix + id, Kind: ledger.PostPending, PendingID: holdPrefix + id, Code: CodeTransferOut,
		}}}
	}
	_, err := s.post(ctx, e, ports.Records{})
	switch ledger.CodeOf(err) {
	case ledger.CodeOK:
		if err != nil {
			return fmt.Errorf("transfer %s: settle: %w", id, err)
		}
	case ledger.CodeExists:
		// Settled by an earlier run of this job.
	case ledger.CodePendingAlreadyVoided, ledger.CodePendingExpired:
		// The hold is gone (voided as an orphan): nothing was paid from it.
		s.log.ErrorContext(ctx, "transfer settled by the rail but its hold was already released",
			"transaction", id, "rail", p.Request.Rail)
		return s.finish(ctx, p, transactions.StatusFailed, "QUOTE_EXECUTION_FAILED")
	default:
		return fmt.Errorf("transfer %s: settle: %w", id, err)
	}
	return s.finish(ctx, p, transactions.StatusCompleted, "")
}

// fail records a failed transaction: a transfer-out's hold is voided so
// the balance is restored exactly; a transfer-in moved nothing.
func (s *Service) fail(ctx context.Context, p jobPayload, reason, detail string) error {
	id := p.TransactionID
	if p.Request.Direction != ports.RailPull {
		_, err := s.ledger.Post(ctx, releaseEntry(id, CodeTransferOut))
		switch ledger.CodeOf(err) {
		case ledger.CodeOK:
			if err != nil {
				return fmt.Errorf("transfer %s: release hold: %w", id, err)
			}
		case ledger.CodeExists, ledger.CodePendingAlreadyVoided:
			// Released already.
		case ledger.CodePendingAlreadyPosted:
			// Another run saw the rail succeed and paid: the ledger is the
			// truth.
			s.log.ErrorContext(ctx, "rail reported failure for a transfer already settled",
				"transaction", id, "rail", p.Request.Rail)
			return s.finish(ctx, p, transactions.StatusCompleted, "")
		default:
			return fmt.Errorf("transfer %s: release hold: %w", id, err)
		}
	}
	s.log.InfoContext(ctx, "transfer failed", "transaction", id, "rail", p.Request.Rail,
		"reason", reason, "detail", detail)
	return s.finish(ctx, p, transactions.StatusFailed, reason)
}

func releaseEntry(txID, code string) ledger.Entry {
	return ledger.Entry{ID: releasePrefix + txID, Ref: txID, Transfers: []ledger.Transfer{{
		ID: releasePrefix + txID, Kind: ledger.VoidPending, PendingID: holdPrefix + txID, Code: code,
	}}}
}

// finish moves the transaction to a terminal status, once.
func (s *Service) finish(ctx context.Context, p jobPayload, status, reason string) error {
	now := s.clock.Now().UTC()
	return s.store.InTx(ctx, func(tx ports.Tx) error {
		t, err := tx.Transactions().GetForUpdate(ctx, p.PlatformID, p.TransactionID)
		if err != nil {
			return fmt.Errorf("transfer %s: %w", p.TransactionID, err)
		}
		if transactions.Terminal(t.Status) {
			return nil
		}
		t.Status = status
		t.UpdatedAt = now
		switch status {
		case transactions.StatusCompleted:
			t.SettledAt = &now
		case transactions.StatusFailed:
			t.FailureReason = failureReason(t.Type, reason)
		}
		if err := tx.Transactions().Update(ctx, t); err != nil {
			return fmt.Errorf("transfer %s: mark %s: %w", t.ID, status, err)
		}
		return nil
	})
}

// ReapOrphanHolds voids transfer-out holds older than OrphanHoldAge whose
// transaction does not exist: what a crash between placing the hold and
// recording the transaction leaves behind. It returns how many it voided.
// Safe to run on several instances at once (the release entry's id is
// derived from the transaction id).
func (s *Service) ReapOrphanHolds(ctx context.Context) (int, error) {
	cutoff := s.clock.Now().UTC().Add(-OrphanHoldAge)
	platformOf := map[string]string{}
	const page = 500
	after, n := "", 0
	for {
		holds, err := s.ledger.OpenHolds(ctx, cutoff, after, page)
		if err != nil {
			return n, fmt.Errorf("reap orphan holds: %w", err)
		}
		for _, h := range holds {
			after = h.ID
			if len(h.ID) <= len(holdPrefix) || h.ID[:len(holdPrefix)] != holdPrefix {
				continue
			}
			txID := h.ID[len(holdPrefix):]
			platformID, ok := platformOf[h.DebitAccountID]
			if !ok {
				a, err := s.ledger.Account(ctx, h.DebitAccountID)
				if err != nil {
					return n, fmt.Errorf("reap orphan holds: account %s: %w", h.DebitAccountID, err)
				}
				platformID = a.PlatformID
				platformOf[h.DebitAccountID] = platformID
			}
			_, err := s.store.Read().Transactions().Get(ctx, platformID, txID)
			if err == nil {
				continue
			}
			if !errors.Is(err, ports.ErrNotFound) {
				return n, fmt.Errorf("reap orphan holds: transaction %s: %w", txID, err)
			}
			_, err = s.ledger.Post(ctx, releaseEntry(txID, "orphan_hold"))
			switch ledger.CodeOf(err) {
			case ledger.CodeOK:
				if err != nil {
					return n, fmt.Errorf("reap orphan hold %s: %w", h.ID, err)
				}
				n++
				s.log.WarnContext(ctx, "orphan hold released", "hold", h.ID, "account", h.DebitAccountID, "amount", h.Amount)
			case ledger.CodeExists, ledger.CodePendingAlreadyVoided, ledger.CodePendingAlreadyPosted, ledger.CodePendingExpired:
				// Resolved meanwhile.
			default:
				return n, fmt.Errorf("reap orphan hold %s: %w", h.ID, err)
			}
		}
		if len(holds) < page {
			return n, nil
		}
	}
}
