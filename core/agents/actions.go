package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/ports"
)

// Action types (reference AgentActionType).
const (
	ActionExecuteQuote = "EXECUTE_QUOTE"
	ActionTransferOut  = "TRANSFER_OUT"
	ActionTransferIn   = "TRANSFER_IN"
)

// NewAction is an action of agent a (not yet saved, no status): Submit
// or a ledger post records it after Move gives it its first status.
func (s *Service) NewAction(a ports.Agent, platformCustomerID, typ string) ports.AgentAction {
	return ports.AgentAction{ID: s.ids.New(actionType), PlatformID: a.PlatformID, AgentID: a.ID,
		CustomerID: a.CustomerID, PlatformCustomerID: platformCustomerID, Type: typ}
}

// PendingEvent is the AGENT_ACTION.PENDING_APPROVAL event of an action
// that just became PENDING_APPROVAL: record it in the same commit as the
// action (tx.Events().Append, or ports.Records.Events with a ledger post).
func (s *Service) PendingEvent(a ports.AgentAction) (ports.Event, error) {
	return ports.NewEvent(s.ids.New("Webhook"), a.PlatformID, EventPendingApproval, a.ID, a, a.UpdatedAt)
}

// Submit records a new action (moved to its first status with Move) in
// tx, with its AGENT_ACTION.PENDING_APPROVAL event when it waits for the
// platform.
func (s *Service) Submit(ctx context.Context, tx ports.Tx, a ports.AgentAction) error {
	if err := tx.AgentActions().Create(ctx, a); err != nil {
		return fmt.Errorf("agents: create action: %w", err)
	}
	if a.Status != StatusPendingApproval {
		return nil
	}
	e, err := s.PendingEvent(a)
	if err != nil {
		return err
	}
	return tx.Events().Append(ctx, e)
}

// ListActions returns one page of an agent's own actions, newest first,
// optionally in one status.
func (s *Service) ListActions(ctx context.Context, a ports.Agent, st string, page ports.Page) (Page[ports.AgentAction], error) {
	return s.listActions(ctx, ports.AgentActionFilter{PlatformID: a.PlatformID, AgentID: a.ID, Status: st, Desc: true}, page)
}

// ListApprovals returns one page of the platform's actions waiting for
// its decision (PENDING_APPROVAL), filtered by f's agent, customer and
// creation dates, in f.Desc order.
func (s *Service) ListApprovals(ctx context.Context, platformID string, f ports.AgentActionFilter, page ports.Page) (Page[ports.AgentAction], error) {
	f.PlatformID, f.Status = platformID, StatusPendingApproval
	return s.listActions(ctx, f, page)
}

func (s *Service) listActions(ctx context.Context, f ports.AgentActionFilter, page ports.Page) (Page[ports.AgentAction], error) {
	if err := checkLimit(&page); err != nil {
		return Page[ports.AgentAction]{}, err
	}
	rows, total, err := s.store.Read().AgentActions().List(ctx, f, page)
	if err != nil {
		return Page[ports.AgentAction]{}, fmt.Errorf("agents: list actions: %w", err)
	}
	return pageOf(rows, total, page.Limit, ports.AgentAction.Position), nil
}

// GetAction returns one of the agent's own actions (another agent's is
// 404).
func (s *Service) GetAction(ctx context.Context, a ports.Agent, id string) (ports.AgentAction, error) {
	act, err := s.store.Read().AgentActions().Get(ctx, a.PlatformID, id)
	if err == nil && act.AgentID != a.ID {
		err = ports.ErrNotFound
	}
	if err != nil {
		return ports.AgentAction{}, actionErr(id, err)
	}
	return act, nil
}

func actionErr(id string, err error) error {
	if errors.Is(err, ports.ErrNotFound) {
		return errActionNotFound
	}
	var ce *ports.ConflictError
	if errors.As(err, &ce) && ce.Constraint == ports.ConflictAgentActionStatus {
		return errNotPending()
	}
	return fmt.Errorf("agents: action %s: %w", id, err)
}

func errNotPending() error {
	return fault.Conflict(CodeNotPending, "the action is not PENDING_APPROVAL: it was decided already, or failed")
}

// decidable is the platform's action of agentID awaiting its decision; a
// deleted agent's is 404, as the agent is.
func decidable(ctx context.Context, tx ports.Tx, platformID, agentID, id string) (ports.AgentAction, error) {
	if _, err := tx.Agents().Get(ctx, platformID, agentID); err != nil {
		return ports.AgentAction{}, agentErr(agentID, err)
	}
	act, err := tx.AgentActions().Get(ctx, platformID, id)
	if err == nil && act.AgentID != agentID {
		err = ports.ErrNotFound
	}
	if err != nil {
		return ports.AgentAction{}, actionErr(id, err)
	}
	if act.Status != StatusPendingApproval {
		return ports.AgentAction{}, errNotPending()
	}
	return act, nil
}

// Approve lets one of the platform's pending actions run: the Executor
// executes it (APPROVED with its transaction, or FAILED when execution
// fails). Another platform's action, or one of another agent, is 404;
// one no longer PENDING_APPROVAL 409.
func (s *Service) Approve(ctx context.Context, platformID, agentID, id string) (ports.AgentAction, error) {
	act, err := decidable(ctx, s.store.Read(), platformID, agentID, id)
	if err != nil {
		return ports.AgentAction{}, err
	}
	if s.executor != nil {
		out, err := s.executor.Approve(ctx, act)
		if err != nil {
			return ports.AgentAction{}, actionErr(id, err)
		}
		return out, nil
	}
	return s.decide(ctx, platformID, agentID, id, func(a *ports.AgentAction) error {
		return Move(a, StatusApproved, s.clock.Now().UTC())
	}, nil)
}

// DefaultRejectionReason is a rejected action's rejectionReason when the
// platform gave none (the spec has it set on every rejection).
const DefaultRejectionReason = "Rejected by the platform"

// Reject refuses one of the platform's pending actions, with an optional
// reason (DefaultRejectionReason without one): it never executes, and a
// durable job gives back what it held (Executor.Release). Errors as
// Approve.
func (s *Service) Reject(ctx context.Context, platformID, agentID, id, reason string) (ports.AgentAction, error) {
	reason = strings.TrimSpace(reason)
	if utf8.RuneCountInString(reason) > MaxReasonLen {
		return ports.AgentAction{}, fault.Invalid("reason", fmt.Sprintf("must be at most %d characters", MaxReasonLen))
	}
	if reason == "" {
		reason = DefaultRejectionReason
	}
	return s.decide(ctx, platformID, agentID, id, func(a *ports.AgentAction) error {
		if err := Move(a, StatusRejected, s.clock.Now().UTC()); err != nil {
			return err
		}
		a.RejectionReason = reason
		return nil
	}, func(ctx context.Context, tx ports.Tx, a ports.AgentAction) error {
		return jobs.Enqueue(ctx, tx.Jobs(), KindRelease, KindRelease+":"+a.ID, a.UpdatedAt,
			releasePayload{PlatformID: a.PlatformID, ActionID: a.ID})
	})
}

// withdrawnReason is the rejectionReason of the actions an agent left
// waiting when it was deleted.
const withdrawnReason = "The agent was deleted"

// rejectWaiting rejects, in the unit of work tx, every action of agentID
// still PENDING_APPROVAL, queueing for each the release of what it held;
// one decided meanwhile by a racing approval or rejection keeps that
// decision.
func rejectWaiting(ctx context.Context, tx ports.Tx, platformID, agentID string, now time.Time) error {
	const batch = 100
	f := ports.AgentActionFilter{PlatformID: platformID, AgentID: agentID, Status: string(StatusPendingApproval)}
	done := map[string]bool{}
	for {
		rows, _, err := tx.AgentActions().List(ctx, f, ports.Page{Limit: batch})
		if err != nil {
			return fmt.Errorf("agents: waiting actions of %s: %w", agentID, err)
		}
		for _, act := range rows {
			if done[act.ID] {
				return fmt.Errorf("agents: action %s still waiting after its rejection", act.ID)
			}
			done[act.ID] = true
			from := act.Status
			if err := Move(&act, StatusRejected, now); err != nil {
				return err
			}
			act.RejectionReason = withdrawnReason
			err := tx.AgentActions().Update(ctx, act, from)
			var conflict *ports.ConflictError
			if errors.As(err, &conflict) {
				continue
			}
			if err != nil {
				return actionErr(act.ID, err)
			}
			if err := jobs.Enqueue(ctx, tx.Jobs(), KindRelease, KindRelease+":"+act.ID, now,
				releasePayload{PlatformID: act.PlatformID, ActionID: act.ID}); err != nil {
				return err
			}
		}
		if len(rows) <= batch {
			return nil
		}
	}
}

// decide moves a pending action under a conditional update (of racing
// decisions one wins; the others are 409), then runs after in the same
// unit of work.
func (s *Service) decide(ctx context.Context, platformID, agentID, id string, move func(*ports.AgentAction) error,
	after func(context.Context, ports.Tx, ports.AgentAction) error) (ports.AgentAction, error) {
	var out ports.AgentAction
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		act, err := decidable(ctx, tx, platformID, agentID, id)
		if err != nil {
			return err
		}
		from := act.Status
		if err := move(&act); err != nil {
			return err
		}
		if err := tx.AgentActions().Update(ctx, act, from); err != nil {
			return actionErr(id, err)
		}
		if after != nil {
			if err := after(ctx, tx, act); err != nil {
				return err
			}
		}
		out = act
		return nil
	})
	return out, err
}

type releasePayload struct {
	PlatformID string `json:"platformId"`
	ActionID   string `json:"actionId"`
}

// handleRelease gives back what a rejected action held.
func (s *Service) handleRelease(ctx context.Context, _ ports.Job, p releasePayload) error {
	if s.executor == nil {
		return nil
	}
	act, err := s.store.Read().AgentActions().Get(ctx, p.PlatformID, p.ActionID)
	if errors.Is(err, ports.ErrNotFound) {
		s.log.Warn("release job of an unknown agent action", "action", p.ActionID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("agents: release %s: %w", p.ActionID, err)
	}
	return s.executor.Release(ctx, act)
}

// KindGiveBack gives an executed action's usage back to its agent when the
// payment it made did not go through (it failed, was cancelled or was
// refunded): an agent's spending is what left its customer's account.
const KindGiveBack = "agent.action.giveback"

type giveBackPayload struct {
	PlatformID    string `json:"platformId"`
	AgentID       string `json:"agentId"`
	TransactionID string `json:"transactionId"`
}

// GiveBackJob is the job that gives back the usage of the action of agent
// agentID that made transaction txID of platformID, to queue in the write
// that fails it; ok is false when no agent made it (agentID "").
func GiveBackJob(platformID, agentID, txID string, now time.Time) (j ports.Job, ok bool) {
	if agentID == "" {
		return ports.Job{}, false
	}
	payload, err := json.Marshal(giveBackPayload{PlatformID: platformID, AgentID: agentID, TransactionID: txID})
	if err != nil {
		return ports.Job{}, false // plain strings: cannot fail
	}
	return ports.Job{Kind: KindGiveBack, Key: KindGiveBack + ":" + txID, Payload: payload, RunAt: now}, true
}

// giveBackTries is how often a give-back looks for its action: the
// action records its transaction just after executing it, so a payment
// that fails at once may be seen first.
const giveBackTries = 5

// handleGiveBack gives back the reservation of the action that made the
// job's transaction (at most once: the usage store keys it by action) and
// marks the action FAILED: its execution's payment did not go through.
func (s *Service) handleGiveBack(ctx context.Context, j ports.Job, p giveBackPayload) error {
	if s.executor == nil {
		return nil
	}
	rows, _, err := s.store.Read().AgentActions().List(ctx, ports.AgentActionFilter{PlatformID: p.PlatformID,
		AgentID: p.AgentID, TransactionID: p.TransactionID}, ports.Page{Limit: 1})
	if err != nil {
		return fmt.Errorf("agents: give back for %s: %w", p.TransactionID, err)
	}
	if len(rows) == 0 {
		if j.Attempts+1 < giveBackTries {
			return jobs.RetryAt(s.clock.Now().Add(5*time.Second),
				fmt.Errorf("agents: give back for %s: no action records it yet", p.TransactionID))
		}
		s.log.Warn("no agent action made the failed transaction: nothing given back", "transaction", p.TransactionID, "agent", p.AgentID)
		return nil
	}
	s.log.Info("agent usage given back: its payment did not go through", "action", rows[0].ID, "transaction", p.TransactionID)
	if err := s.executor.Release(ctx, rows[0]); err != nil {
		return err
	}
	return s.failExecuted(ctx, rows[0])
}

// failExecuted records that an APPROVED action's execution failed after
// it ran: its payment failed (the spec's APPROVED → FAILED). An action in
// any other status, or changed meanwhile, is left as it is.
func (s *Service) failExecuted(ctx context.Context, act ports.AgentAction) error {
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		cur, err := tx.AgentActions().Get(ctx, act.PlatformID, act.ID)
		if err != nil {
			return err
		}
		if cur.Status != StatusApproved {
			return nil
		}
		if err := Move(&cur, StatusFailed, s.clock.Now().UTC()); err != nil {
			return err
		}
		return tx.AgentActions().Update(ctx, cur, StatusApproved)
	})
	if errors.Is(err, ports.ErrConflict) {
		return nil // moved by another writer since it was read
	}
	if err != nil {
		return fmt.Errorf("agents: fail %s after its payment failed: %w", act.ID, err)
	}
	return nil
}
