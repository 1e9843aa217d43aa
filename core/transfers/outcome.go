package transfers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/posting"
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
	// AgentID is the agent that made the transfer, if one did: a failure
	// gives its action's usage back (agents.GiveBackJob).
	AgentID string `json:"agentId,omitempty"`
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
	return s.apply(ctx, j, p, res)
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
	return s.apply(ctx, j, p, res)
}

func (s *Service) rail(req ports.RailRequest) (ports.Rail, error) {
	r, ok := s.rails.Rail(req.Rail, req.Currency)
	if !ok {
		return nil, fmt.Errorf("transfer %s: rail %s/%s is not configured", req.Ref, req.Rail, req.Currency)
	}
	return r, nil
}

// apply applies a rail's answer to the transaction of job j.
func (s *Service) apply(ctx context.Context, j ports.Job, p jobPayload, res ports.RailResult) error {
	switch res.State {
	case ports.RailSucceeded:
		return s.succeed(ctx, j, p)
	case ports.RailFailed:
		return s.fail(ctx, j, p, transactions.StatusFailed, res.FailureReason, res.FailureDetail)
	case ports.RailRejected:
		// A payout the receiving institution refused ends REJECTED with
		// no failureReason (the spec's "rejected; payment refunded"); a
		// pull has no receiving institution to refuse it.
		if p.Request.Direction == ports.RailPull {
			return s.fail(ctx, j, p, transactions.StatusFailed, res.FailureReason, res.FailureDetail)
		}
		return s.fail(ctx, j, p, transactions.StatusRejected, "", res.FailureDetail)
	case ports.RailPending:
		return s.pending(ctx, j, p, res)
	}
	return fmt.Errorf("transfer %s: rail %s answered unknown state %q", p.TransactionID, p.Request.Rail, res.State)
}

// pending marks the transaction PROCESSING (submitted, not settled) and
// schedules the next status check, atomically with the removal of job j.
func (s *Service) pending(ctx context.Context, j ports.Job, p jobPayload, res ports.RailResult) error {
	now := s.clock.Now().UTC()
	next := p
	next.Check++
	if res.ExternalRef != "" {
		next.ExternalRef = res.ExternalRef
	}
	runAt := CheckAt(res.CheckAt, now, next.Check, s.retry)
	payload, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("transfer %s: check payload: %w", p.TransactionID, err)
	}
	check := ports.Job{
		Kind: KindCheck, Key: KindCheck + ":" + p.TransactionID + ":" + strconv.Itoa(next.Check),
		Payload: payload, RunAt: runAt,
	}
	// In the ledger's group commit: PROCESSING, the next check, and this
	// job's removal, together. The job read the transaction as not
	// terminal; should a concurrent run have finished it since, the status
	// change does nothing and the check finds it terminal.
	recs := ports.Records{
		StatusChanges: []ports.TransactionStatusChange{transactions.StatusChange(p.PlatformID, p.TransactionID, transactions.StatusProcessing, now)},
		Jobs:          []ports.Job{check},
	}
	if err := posting.Finish(ctx, s.ledger, j, recs); err != nil {
		return fmt.Errorf("transfer %s: mark processing: %w", p.TransactionID, err)
	}
	return nil
}

// CheckAt is when the check-th status check of a payout runs: at the
// rail's checkAt but not in the past, and after the first check not sooner
// than pause from now, so a rail that keeps answering "pending, ask now" is
// asked again after a pause, not in a loop.
func CheckAt(checkAt, now time.Time, check int, pause time.Duration) time.Time {
	runAt := checkAt.UTC()
	if check > 1 && runAt.Before(now.Add(pause)) {
		runAt = now.Add(pause)
	}
	if runAt.Before(now) {
		runAt = now
	}
	return runAt
}

// succeed settles a transaction the rail completed: a transfer-out's hold
// is posted to the rail's settlement account, a transfer-in credits the
// internal account from it. Then the transaction is COMPLETED.
//
// The settlement carries the transaction's COMPLETED status and the removal
// of job j as records (LedgerStore.PostWith), so a settled transfer costs
// its share of one group commit: the money, the status and the job move
// together or not at all. When the entry already exists (an earlier run
// settled and stopped before finishing), the status is finished apart.
func (s *Service) succeed(ctx context.Context, j ports.Job, p jobPayload) error {
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
	now := s.clock.Now().UTC()
	recs := s.finishRecords(p, transactions.StatusCompleted, "", now)
	// A transfer-in's credit moves no hold the ledger could refuse: it
	// requires the transaction still open, so it loses to a cancel.
	recs.StatusChanges[0].Required = p.Request.Direction == ports.RailPull
	_, err := s.post(ctx, e, posting.WithJob(recs, j))
	switch ledger.CodeOf(err) {
	case ledger.CodeOK:
		if errors.Is(err, ports.ErrPrecondition) {
			s.log.WarnContext(ctx, "transfer settled by the rail after it was cancelled: not credited",
				"transaction", id, "rail", p.Request.Rail)
			return posting.Finish(ctx, s.ledger, j, ports.Records{})
		}
		if err != nil {
			return fmt.Errorf("transfer %s: settle: %w", id, err)
		}
		jobs.Completed(ctx)
		return nil
	case ledger.CodeExists:
		// Settled by an earlier run of this job.
	case ledger.CodePendingAlreadyVoided, ledger.CodePendingExpired:
		// The hold is gone (the transfer cancelled, or the hold voided as
		// an orphan): nothing was paid from it.
		s.log.ErrorContext(ctx, "transfer settled by the rail but its hold was already released",
			"transaction", id, "rail", p.Request.Rail)
		return s.finish(ctx, j, p, transactions.StatusFailed, transactions.ReasonExecutionFailed)
	default:
		return fmt.Errorf("transfer %s: settle: %w", id, err)
	}
	return s.finish(ctx, j, p, transactions.StatusCompleted, "")
}

// fail records a transaction that did not go through, as status (FAILED,
// or REJECTED for a payout refused by its receiver): a transfer-out's hold
// is voided so the balance is restored exactly (the release carrying the
// status and the removal of job j, as succeed does); a transfer-in moved
// nothing.
func (s *Service) fail(ctx context.Context, j ports.Job, p jobPayload, status transactions.Status, reason, detail string) error {
	id := p.TransactionID
	if p.Request.Direction != ports.RailPull {
		now := s.clock.Now().UTC()
		_, err := s.ledger.PostWith(ctx, releaseEntry(id, CodeTransferOut),
			posting.WithJob(s.finishRecords(p, status, reason, now), j))
		switch ledger.CodeOf(err) {
		case ledger.CodeOK:
			if err != nil {
				return fmt.Errorf("transfer %s: release hold: %w", id, err)
			}
			s.log.InfoContext(ctx, "transfer failed", "transaction", id, "rail", p.Request.Rail,
				"status", string(status), "reason", reason, "detail", detail)
			jobs.Completed(ctx)
			return nil
		case ledger.CodeExists, ledger.CodePendingAlreadyVoided:
			// Released already.
		case ledger.CodePendingAlreadyPosted:
			// Another run saw the rail succeed and paid: the ledger is the
			// truth.
			s.log.ErrorContext(ctx, "rail reported failure for a transfer already settled",
				"transaction", id, "rail", p.Request.Rail)
			return s.finish(ctx, j, p, transactions.StatusCompleted, "")
		default:
			return fmt.Errorf("transfer %s: release hold: %w", id, err)
		}
	}
	s.log.InfoContext(ctx, "transfer failed", "transaction", id, "rail", p.Request.Rail,
		"status", string(status), "reason", reason, "detail", detail)
	return s.finish(ctx, j, p, status, reason)
}

func releaseEntry(txID, code string) ledger.Entry {
	return ledger.Entry{ID: releasePrefix + txID, Ref: txID, Transfers: []ledger.Transfer{{
		ID: releasePrefix + txID, Kind: ledger.VoidPending, PendingID: holdPrefix + txID, Code: code,
	}}}
}

// finishRecords are the records that finish a transaction: the terminal
// status (once: transactions.StatusChange moves an open status only) and,
// for a failure of an agent's transfer, the job that gives its usage back.
func (s *Service) finishRecords(p jobPayload, status transactions.Status, reason string, now time.Time) ports.Records {
	c := transactions.StatusChange(p.PlatformID, p.TransactionID, status, now)
	switch status {
	case transactions.StatusCompleted:
		c.SettledAt = &now
	case transactions.StatusFailed:
		txType := transactions.TypeOutgoing
		if p.Request.Direction == ports.RailPull {
			txType = transactions.TypeIncoming
		}
		c.FailureReason = failureReason(txType, reason)
	}
	recs := ports.Records{StatusChanges: []ports.TransactionStatusChange{c}}
	if transactions.NotPaid(status) {
		if j, ok := agents.GiveBackJob(p.PlatformID, p.AgentID, p.TransactionID, now); ok {
			recs.Jobs = append(recs.Jobs, j)
		}
	}
	return recs
}

// finish moves the transaction to a terminal status, once, and removes
// job j: the records of finishRecords without a ledger entry (one already
// recorded or none to record).
func (s *Service) finish(ctx context.Context, j ports.Job, p jobPayload, status transactions.Status, reason string) error {
	if err := posting.Finish(ctx, s.ledger, j, s.finishRecords(p, status, reason, s.clock.Now().UTC())); err != nil {
		return fmt.Errorf("transfer %s: mark %s: %w", p.TransactionID, status, err)
	}
	return nil
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
