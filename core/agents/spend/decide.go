package spend

import (
	"context"
	"errors"
	"fmt"

	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

var _ agents.Executor = (*Service)(nil)

// Approve implements agents.Executor: the platform approved a
// PENDING_APPROVAL action. It becomes APPROVED first (a conditional
// update: of racing decisions one wins, the others get the
// *ports.ConflictError), with a check job that finishes the execution if
// this call dies; then it executes. It returns the action APPROVED with its
// transaction, or FAILED when execution failed (the quote expired, the
// funds are gone), its hold voided and its usage given back.
func (s *Service) Approve(ctx context.Context, act ports.AgentAction) (ports.AgentAction, error) {
	from := act.Status
	if err := agents.Move(&act, agents.StatusApproved, s.clock.Now().UTC()); err != nil {
		return ports.AgentAction{}, err
	}
	job, err := checkJob(act, act.UpdatedAt.Add(orphanAge), false)
	if err != nil {
		return ports.AgentAction{}, err
	}
	err = s.store.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.AgentActions().Update(ctx, act, from); err != nil {
			return err
		}
		return tx.Jobs().Enqueue(ctx, job)
	})
	if err != nil {
		return ports.AgentAction{}, err
	}
	return s.execute(ctx, act)
}

// Release implements agents.Executor: a REJECTED action's hold is voided
// and its usage given back; both at most once.
func (s *Service) Release(ctx context.Context, act ports.AgentAction) error {
	return s.giveBack(ctx, act.ID)
}

func (s *Service) giveBack(ctx context.Context, actionID string) error {
	if _, err := s.release(ctx, actionID); err != nil {
		return err
	}
	return s.meter.GiveBack(ctx, actionID)
}

// execute runs an APPROVED action that has no transaction yet, voiding its
// agent hold in the execution's own entry, and records the outcome. A
// re-run (the check job after a crash) finds what the first run did: the
// transfers' ids derive from the action's, and a quote's execution is
// recognised by its having voided the hold.
func (s *Service) execute(ctx context.Context, act ports.AgentAction) (ports.AgentAction, error) {
	txID, runErr := s.run(ctx, act)
	if runErr != nil {
		executed, err := s.release(ctx, act.ID)
		if err != nil {
			return ports.AgentAction{}, errors.Join(runErr, err)
		}
		if !executed {
			return s.fail(ctx, act, runErr)
		}
		if txID, err = s.executedTransaction(ctx, act); err != nil {
			return ports.AgentAction{}, err
		}
	}
	act.TransactionID = txID
	act.UpdatedAt = s.clock.Now().UTC()
	if err := s.store.InTx(ctx, func(tx ports.Tx) error {
		return tx.AgentActions().Update(ctx, act, agents.StatusApproved)
	}); err != nil {
		return ports.AgentAction{}, fmt.Errorf("agent action %s: record transaction: %w", act.ID, err)
	}
	s.log.InfoContext(ctx, "agent action executed", "action", act.ID, "transaction", txID)
	return act, nil
}

// run executes act (approved): its transaction id.
func (s *Service) run(ctx context.Context, act ports.AgentAction) (string, error) {
	key := "agent-action|" + act.ID
	release, err := s.heldBy(ctx, act.ID)
	if err != nil {
		return "", err
	}
	switch act.Type {
	case agents.ActionExecuteQuote:
		if act.QuoteID == "" {
			return "", errNoQuote
		}
		if release == "" {
			q, err := s.quotes.ExecuteAuthorized(ctx, act.PlatformID, act.QuoteID, "")
			return q.TransactionID, err
		}
		return s.runQuote(act.PlatformID, act.QuoteID, "")(ctx, act.ID, release)
	case agents.ActionTransferOut:
		t, err := s.transfers.TransferOut(ctx, act.PlatformID, transfers.OutRequest{
			SourceAccountID: act.SourceAccountID, DestinationAccountID: act.DestinationAccountID, Amount: act.Amount,
			IdempotencyKey: key, AgentID: act.AgentID, ReleaseHold: release})
		return t.ID, err
	case agents.ActionTransferIn:
		t, err := s.transfers.TransferIn(ctx, act.PlatformID, transfers.InRequest{
			SourceAccountID: act.SourceAccountID, DestinationAccountID: act.DestinationAccountID, Amount: act.Amount,
			IdempotencyKey: key, AgentID: act.AgentID})
		return t.ID, err
	}
	return "", fmt.Errorf("agent action %s: unknown type %q", act.ID, act.Type)
}

// heldBy is the agent hold an action's execution voids: its id when the
// hold was placed (still open, or voided by an earlier run of the same
// execution, whose entry a re-run must repeat exactly), "" for an action
// that holds nothing (a transfer-in).
func (s *Service) heldBy(ctx context.Context, actionID string) (string, error) {
	_, err := s.ledger.Pending(ctx, holdID(actionID))
	switch {
	case err == nil:
		return holdID(actionID), nil
	case errors.Is(err, ports.ErrNotFound), errors.Is(err, ledger.ErrPendingNotFound):
		return "", nil
	}
	return "", fmt.Errorf("agent action %s: hold: %w", actionID, err)
}

// executedTransaction is the transaction of an action whose execution
// happened (its hold was voided by its execution's entry).
func (s *Service) executedTransaction(ctx context.Context, act ports.AgentAction) (string, error) {
	if act.Type != agents.ActionExecuteQuote {
		return transfers.TransactionID(act.PlatformID, "transfer-out", "agent-action|"+act.ID), nil
	}
	q, err := s.quotes.Get(ctx, act.PlatformID, act.QuoteID)
	if err != nil {
		return "", fmt.Errorf("agent action %s: quote %s: %w", act.ID, act.QuoteID, err)
	}
	return q.TransactionID, nil
}

// fail records an approved action's failed execution (FAILED, from
// APPROVED) and gives its usage back (its hold is void already).
func (s *Service) fail(ctx context.Context, act ports.AgentAction, cause error) (ports.AgentAction, error) {
	from := act.Status
	if err := agents.Move(&act, agents.StatusFailed, s.clock.Now().UTC()); err != nil {
		return ports.AgentAction{}, err
	}
	if err := s.store.InTx(ctx, func(tx ports.Tx) error { return tx.AgentActions().Update(ctx, act, from) }); err != nil {
		return ports.AgentAction{}, fmt.Errorf("agent action %s: record failure: %w", act.ID, err)
	}
	if err := s.meter.GiveBack(ctx, act.ID); err != nil {
		return ports.AgentAction{}, err
	}
	msg := cause.Error()
	if f, ok := fault.As(cause); ok {
		msg = f.Code + ": " + f.Message
	}
	s.log.InfoContext(ctx, "agent action failed", "action", act.ID, "from", from, "reason", msg)
	return act, nil
}

// handleCheck settles an agent hold's action: a hold whose action was
// never recorded is given back; a quote execution still PENDING_APPROVAL
// at the quote's expiresAt fails (FAILED, hold voided, usage given back);
// an APPROVED action without its transaction (its approval's call died)
// is executed; a REJECTED or FAILED one has given everything back.
func (s *Service) handleCheck(ctx context.Context, _ ports.Job, p checkPayload) error {
	act, err := s.store.Read().AgentActions().Get(ctx, p.PlatformID, p.ActionID)
	if errors.Is(err, ports.ErrNotFound) {
		return s.unrecorded(ctx, p)
	}
	if err != nil {
		return fmt.Errorf("agent check %s: %w", p.ActionID, err)
	}
	switch act.Status {
	case agents.StatusPendingApproval:
		if act.Type != agents.ActionExecuteQuote {
			return nil // a transfer waits for the platform as long as it takes
		}
		q, err := s.quotes.Get(ctx, act.PlatformID, act.QuoteID)
		if f, ok := fault.As(err); err != nil && (!ok || f.Kind != fault.KindNotFound) {
			return fmt.Errorf("agent check %s: %w", act.ID, err)
		}
		if err == nil && s.clock.Now().Before(q.ExpiresAt) {
			return fmt.Errorf("agent check %s: quote %s not expired yet", act.ID, q.ID)
		}
		return s.expire(ctx, act)
	case agents.StatusApproved:
		if act.TransactionID == "" {
			_, err := s.execute(ctx, act)
			return err
		}
		return nil
	}
	return s.giveBack(ctx, act.ID)
}

// unrecorded settles a hold whose action was never recorded (its request
// died between the hold and the record): an execution that happened (its
// entry voided the hold) is recorded APPROVED with its transaction;
// otherwise the hold is voided and the usage given back.
func (s *Service) unrecorded(ctx context.Context, p checkPayload) error {
	executed, err := s.release(ctx, p.ActionID)
	if err != nil {
		return err
	}
	if !executed || p.Action == nil {
		s.log.WarnContext(ctx, "agent hold without its action given back", "action", p.ActionID)
		return s.meter.GiveBack(ctx, p.ActionID)
	}
	act := *p.Action
	if act.TransactionID, err = s.executedTransaction(ctx, act); err != nil {
		return err
	}
	if err := agents.Move(&act, agents.StatusApproved, s.clock.Now().UTC()); err != nil {
		return err
	}
	_, err = s.record(ctx, act)
	s.log.WarnContext(ctx, "executed agent action recorded late", "action", act.ID, "transaction", act.TransactionID)
	return err
}

// expire fails a pending quote execution whose quote expired before the
// platform decided.
func (s *Service) expire(ctx context.Context, act ports.AgentAction) error {
	from := act.Status
	if err := agents.Move(&act, agents.StatusFailed, s.clock.Now().UTC()); err != nil {
		return err
	}
	err := s.store.InTx(ctx, func(tx ports.Tx) error { return tx.AgentActions().Update(ctx, act, from) })
	var ce *ports.ConflictError
	if errors.As(err, &ce) {
		return nil // decided meanwhile: the decision's path owns it
	}
	if err != nil {
		return fmt.Errorf("agent check %s: fail: %w", act.ID, err)
	}
	s.log.InfoContext(ctx, "agent action failed: its quote expired before approval", "action", act.ID, "quote", act.QuoteID)
	return s.giveBack(ctx, act.ID)
}
