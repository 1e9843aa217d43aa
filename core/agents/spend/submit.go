package spend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/agents/policy"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/posting"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// KindCheck is the job that settles an agent hold's fate: at a quote's
// expiresAt (or, for a transfer, once a request's lifetime has passed) it
// fails a still-pending quote execution and gives back a hold whose action
// was never recorded.
const KindCheck = "agent_action.check"

// orphanAge is when the check job of a transfer's hold runs: far longer
// than a request takes between the hold and its action's record.
const orphanAge = 10 * time.Minute

// Ledger transfer code of an agent hold and of its void.
const (
	CodeAgentHold    = "agent_hold"
	CodeAgentRelease = "agent_release"
)

// request is one money-moving agent request, as submit carries it out.
type request struct {
	op   policy.Operation
	typ  string // the action's type
	key  string // Idempotency-Key
	pol  policy.Request
	conv policy.Converter
	// fill writes the action's own fields (quote, transfer details).
	fill func(*ports.AgentAction)
	// holdUntil, when set, asks for an agent hold on pol.AccountID of
	// pol.Amount while approval is pending; its check job runs then.
	holdUntil time.Time
	// run executes the request now (AUTO, or approved): its transaction
	// id. release is the agent hold to void in the same ledger entry ("":
	// none).
	run func(ctx context.Context, actionID, release string) (string, error)
}

type checkPayload struct {
	PlatformID string `json:"platformId"`
	AgentID    string `json:"agentId"`
	ActionID   string `json:"actionId"`
	// Action is the action as submitted (no status yet): what the check
	// records if its execution happened but its record did not.
	Action *ports.AgentAction `json:"action,omitempty"`
}

// submit decides r under the agent's policy, reserves its usage, then
// runs it (AUTO: the action APPROVED with its transaction) or holds its
// funds (APPROVAL_REQUIRED: the action PENDING_APPROVAL with its event).
// Anything refused after the reservation gives the usage back.
func (s *Service) submit(ctx context.Context, a ports.Agent, r request) (ports.AgentAction, error) {
	if err := agents.Pausable(a); err != nil {
		return ports.AgentAction{}, err
	}
	pol, err := policyOf(a)
	if err != nil {
		return ports.AgentAction{}, err
	}
	id := s.actionID(a, string(r.op), r.key)
	if prev, ok, err := s.existing(ctx, a, id); err != nil || ok {
		return prev, err
	}
	d, err := s.meter.Admit(ctx, a.ID, id, pol, r.pol, r.conv)
	if err != nil {
		return ports.AgentAction{}, err
	}
	act, err := s.newAction(ctx, a, id, r, d)
	if err == nil {
		act, err = s.carryOut(ctx, act, r, d)
	}
	if err != nil {
		if !errors.Is(err, errUnrecorded) {
			if gerr := s.meter.GiveBack(ctx, id); gerr != nil {
				s.log.ErrorContext(ctx, "agent usage not given back", "action", id, "error", gerr)
			}
		}
		return ports.AgentAction{}, err
	}
	return act, nil
}

// errUnrecorded is an action whose funds are held (or that was executed)
// but whose record failed: its usage stays reserved, and the hold's check
// job settles it (records it if it ran, else gives everything back); a
// retry of the same keyed request finds the reservation and the hold
// and records it.
var errUnrecorded = errors.New("agent action held; its record is left to its check job")

func (s *Service) newAction(ctx context.Context, a ports.Agent, id string, r request, d policy.Decision) (ports.AgentAction, error) {
	pcid, err := s.platformCustomerID(ctx, a)
	if err != nil {
		return ports.AgentAction{}, err
	}
	act := s.agents.NewAction(a, pcid, r.typ)
	act.ID, act.Charged = id, d.Amount
	r.fill(&act)
	return act, nil
}

// carryOut holds the action's funds (all but a transfer-in's), then runs
// it at once (AUTO: the execution voids the hold in its own entry) or
// leaves it to the platform (PENDING_APPROVAL). The hold's check job,
// written with it, finishes what a crash interrupts: it records an
// executed action that was not recorded yet, and gives back a hold whose
// action never ran.
func (s *Service) carryOut(ctx context.Context, act ports.AgentAction, r request, d policy.Decision) (ports.AgentAction, error) {
	held := !r.holdUntil.IsZero()
	if held {
		if err := s.hold(ctx, act, r.pol.AccountID, r.pol.Amount, r.pol.Currency, r.holdUntil); err != nil {
			return ports.AgentAction{}, err
		}
	}
	now := s.clock.Now().UTC()
	if d.Mode != policy.Auto {
		if err := agents.Move(&act, agents.StatusPendingApproval, now); err != nil {
			return ports.AgentAction{}, err
		}
		return s.recordHeld(ctx, act, held)
	}
	release := ""
	if held {
		release = holdID(act.ID)
	}
	txID, err := r.run(ctx, act.ID, release)
	if err != nil && held {
		// The execution did not happen, unless the hold is gone with it
		// (an answer lost after the commit).
		executed, rerr := s.release(ctx, act.ID)
		if rerr != nil {
			return ports.AgentAction{}, errors.Join(err, rerr)
		}
		if executed {
			txID, err = s.executedTransaction(ctx, act)
		}
	}
	if err != nil {
		return ports.AgentAction{}, err
	}
	act.TransactionID = txID
	if err := agents.Move(&act, agents.StatusApproved, now); err != nil {
		return ports.AgentAction{}, err
	}
	return s.recordHeld(ctx, act, held)
}

// recordHeld records act; when its funds were held, a failure leaves it
// to the hold's check job (errUnrecorded).
func (s *Service) recordHeld(ctx context.Context, act ports.AgentAction, held bool) (ports.AgentAction, error) {
	out, err := s.record(ctx, act)
	if err != nil && held {
		s.log.ErrorContext(ctx, "agent action not recorded", "action", act.ID, "status", act.Status, "error", err)
		return ports.AgentAction{}, fmt.Errorf("%w: %w", errUnrecorded, err)
	}
	return out, err
}

// record stores a new action (and its pending event): a retry that finds
// it recorded returns the stored one.
func (s *Service) record(ctx context.Context, act ports.AgentAction) (ports.AgentAction, error) {
	err := s.store.InTx(ctx, func(tx ports.Tx) error { return s.agents.Submit(ctx, tx, act) })
	if errors.Is(err, ports.ErrConflict) {
		prev, gerr := s.store.Read().AgentActions().Get(ctx, act.PlatformID, act.ID)
		if gerr == nil {
			return prev, nil
		}
	}
	if err != nil {
		return ports.AgentAction{}, fmt.Errorf("agent action %s: record: %w", act.ID, err)
	}
	return act, nil
}

// hold places the agent hold of act: amount of currency from account,
// pending, with its check job due at until in the same commit (so a hold
// whose action is never recorded is given back).
func (s *Service) hold(ctx context.Context, act ports.AgentAction, account string, amount int64, currency string, until time.Time) error {
	e := ledger.Entry{ID: holdID(act.ID), Ref: act.ID, Transfers: []ledger.Transfer{{
		ID: holdID(act.ID), DebitAccountID: account, CreditAccountID: ledger.AgentHoldID(currency),
		Amount: amount, Currency: currency, Kind: ledger.Pending, Code: CodeAgentHold,
	}}}
	job, err := checkJob(act, until, true)
	if err != nil {
		return err
	}
	_, err = posting.Post(ctx, s.ledger, e, ports.Records{Jobs: []ports.Job{job}})
	switch {
	case err == nil, errors.Is(err, ledger.ErrExists):
		return nil
	case errors.Is(err, ledger.ErrExceedsCredits):
		field := "amount"
		if act.Type == agents.ActionExecuteQuote {
			field = "totalSendingAmount"
		}
		return transactions.Insufficient(ctx, s.ledger, field, account, currency, amount)
	case errors.Is(err, ledger.ErrExistsDifferent):
		return fault.KeyReused("agent action")
	case errors.Is(err, ledger.ErrOverflow):
		return fault.New(fault.KindInvalid, transactions.CodeInvalidAmount, "the amount is too large")
	}
	return fmt.Errorf("agent action %s: hold: %w", act.ID, err)
}

// checkJob is act's check job, due at; withAction carries the action as
// submitted (the hold's check, which may have to record it).
func checkJob(act ports.AgentAction, at time.Time, withAction bool) (ports.Job, error) {
	p := checkPayload{PlatformID: act.PlatformID, AgentID: act.AgentID, ActionID: act.ID}
	if withAction {
		p.Action = &act
	}
	b, err := jsonPayload(p)
	if err != nil {
		return ports.Job{}, err
	}
	return ports.Job{Kind: KindCheck, Key: KindCheck + ":" + act.ID, Payload: b, RunAt: at}, nil
}

// release voids act's agent hold (once; an action without one has none to
// void) and reports whether the hold had been resolved by the action's
// execution instead: its execution's entry voided it, so the execution
// happened.
func (s *Service) release(ctx context.Context, actionID string) (executed bool, err error) {
	e := ledger.Entry{ID: voidID(actionID), Ref: actionID, Transfers: []ledger.Transfer{{
		ID: voidID(actionID), Kind: ledger.VoidPending, PendingID: holdID(actionID), Code: CodeAgentRelease,
	}}}
	_, err = s.ledger.Post(ctx, e)
	switch ledger.CodeOf(err) {
	case ledger.CodeOK:
		if err != nil {
			return false, fmt.Errorf("agent action %s: release: %w", actionID, err)
		}
		return false, nil
	case ledger.CodeExists, ledger.CodePendingNotFound:
		return false, nil
	case ledger.CodePendingAlreadyVoided, ledger.CodePendingAlreadyPosted:
		return true, nil
	}
	return false, fmt.Errorf("agent action %s: release: %w", actionID, err)
}
