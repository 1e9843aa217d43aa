// Package spend carries out the agent operations that move money: quote
// executions and transfers, each recorded as an agent action under the
// agent's policy (core/agents/policy).
//
// A request is decided, and its amount reserved in the agent's usage
// (atomically, across instances), before anything moves. Then its funds
// are held in the ledger (a two-phase pending transfer, "agent-hold:<action
// id>", from the source account; all but a transfer-in, whose money is not
// in the ledger yet) with a check job in the same commit, and:
//
//   - AUTO: the quote is executed, or the transfer created, at once
//     (core/quotes, core/transfers), its ledger entry voiding the agent
//     hold as it places its own holds; the action is recorded APPROVED with
//     its transaction.
//   - APPROVAL_REQUIRED: the action is recorded PENDING_APPROVAL with its
//     AGENT_ACTION.PENDING_APPROVAL event. Approval executes it the same
//     way (the funds are never free in between); rejection, a failed
//     execution or the quote expiring first (the check job, at the quote's
//     expiresAt) voids the hold and gives the usage back.
//
// The check job also finishes what a crash interrupts: it records an
// executed action whose record was lost (the execution voided the hold),
// gives back a hold whose action never ran, and executes an approved
// action whose approval died before executing.
package spend

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/agents/policy"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ports"
)

// Deps are what a Service is built from.
type Deps struct {
	Store     ports.Store
	Ledger    ports.LedgerStore
	Agents    *agents.Service
	Quotes    *quotes.Service
	Transfers *transfers.Service
	Usage     ports.AgentUsageStore
	FX        ports.FXRates
	Clock     ports.Clock
	IDs       ports.IDs
	Log       *slog.Logger
}

// Service carries out agents' money-moving operations.
type Service struct {
	store     ports.Store
	ledger    ports.LedgerStore
	agents    *agents.Service
	quotes    *quotes.Service
	transfers *transfers.Service
	meter     policy.Meter
	fx        ports.FXRates
	clock     ports.Clock
	ids       ports.IDs
	log       *slog.Logger
}

// New returns a Service; it is also the agents' Executor and UsageReader
// (Wire sets both).
func New(d Deps) *Service {
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	return &Service{store: d.Store, ledger: d.Ledger, agents: d.Agents, quotes: d.Quotes, transfers: d.Transfers,
		meter: policy.Meter{Store: d.Usage, Clock: d.Clock}, fx: d.FX, clock: d.Clock, ids: d.IDs, log: log}
}

// Wire makes s the agents service's executor (approve, release) and usage
// reader, and registers the check job on r.
func (s *Service) Wire(r *jobs.Runner) {
	s.agents.SetExecutor(s)
	s.agents.SetUsage(s)
	if r != nil {
		jobs.HandleJSON(r, KindCheck, s.handleCheck)
	}
}

// Usage implements agents.UsageReader: the agent's counters today.
func (s *Service) Usage(ctx context.Context, a ports.Agent) (agents.Usage, error) {
	u, err := s.meter.Usage(ctx, a.ID)
	if err != nil {
		return agents.Usage{}, err
	}
	return agents.Usage{DailyTransactionCount: int(u.DailyTransactionCount), DailySpend: u.DailySpend, MonthlySpend: u.MonthlySpend,
		DailyResetDate: u.DailyResetDate, MonthlyResetMonth: u.MonthlyResetMonth}, nil
}

// policyOf decodes the agent's stored policy.
func policyOf(a ports.Agent) (policy.Policy, error) {
	var p policy.Policy
	if err := json.Unmarshal(a.Policy, &p); err != nil {
		return policy.Policy{}, fmt.Errorf("agent %s: policy: %w", a.ID, err)
	}
	return p, nil
}

var keyNamespace = uuid.MustParse("5b0c8f0e-2a63-4b8e-9d54-7d0c3e9a1f17")

// actionID is the id of the action an agent's request creates: derived
// from the agent, the operation and its Idempotency-Key when it has one
// (so a retry finds the reservation, hold and action of the first
// attempt), else new.
func (s *Service) actionID(a ports.Agent, op, key string) string {
	if key == "" {
		return s.ids.New("AgentAction")
	}
	return "AgentAction:" + uuid.NewHash(sha256.New(), keyNamespace, []byte(a.ID+"|"+op+"|"+key), 8).String()
}

// scopedKey is the Idempotency-Key an agent request passes on to the
// quote or transfer it creates: the agent's own namespace, apart from the
// platform's keys.
func scopedKey(a ports.Agent, key string) string {
	if key == "" {
		return ""
	}
	return "agent|" + a.ID + "|" + key
}

// Hold ids: the agent hold of an action, and the entry that voids it.
func holdID(actionID string) string { return "agent-hold:" + actionID }
func voidID(actionID string) string { return "agent-void:" + actionID }

// existing returns the agent's action with id when a retried request
// already recorded it.
func (s *Service) existing(ctx context.Context, a ports.Agent, id string) (ports.AgentAction, bool, error) {
	act, err := s.store.Read().AgentActions().Get(ctx, a.PlatformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.AgentAction{}, false, nil
	}
	if err != nil {
		return ports.AgentAction{}, false, fmt.Errorf("agent action %s: %w", id, err)
	}
	if act.AgentID != a.ID {
		return ports.AgentAction{}, false, fmt.Errorf("agent action %s belongs to another agent", id)
	}
	return act, true, nil
}

// platformCustomerID is the platform's id of the agent's customer.
func (s *Service) platformCustomerID(ctx context.Context, a ports.Agent) (string, error) {
	c, err := s.store.Read().Customers().Get(ctx, a.PlatformID, a.CustomerID)
	if err != nil {
		return "", fmt.Errorf("agent %s: customer %s: %w", a.ID, a.CustomerID, err)
	}
	return c.PlatformCustomerID, nil
}

// ownInternal is one of the agent's customer's internal accounts: another
// customer's (or the platform's) is not found, as an unknown one.
func (s *Service) ownInternal(ctx context.Context, a ports.Agent, field, id string) (ports.InternalAccount, error) {
	acct, err := s.store.Read().InternalAccounts().Get(ctx, a.PlatformID, id)
	if errors.Is(err, ports.ErrNotFound) || (err == nil && acct.CustomerID != a.CustomerID) {
		return ports.InternalAccount{}, transfers.NotFound(field, "internal account "+id+" not found")
	}
	if err != nil {
		return ports.InternalAccount{}, fmt.Errorf("internal account %s: %w", id, err)
	}
	return acct, nil
}

// ownExternal is one of the agent's customer's external accounts.
func (s *Service) ownExternal(ctx context.Context, a ports.Agent, field, id string) (ports.ExternalAccount, error) {
	acct, err := s.store.Read().ExternalAccounts().Get(ctx, a.PlatformID, id)
	if errors.Is(err, ports.ErrNotFound) || (err == nil && acct.CustomerID != a.CustomerID) {
		return ports.ExternalAccount{}, transfers.NotFound(field, "external account "+id+" not found")
	}
	if err != nil {
		return ports.ExternalAccount{}, fmt.Errorf("external account %s: %w", id, err)
	}
	return acct, nil
}

// currentRates converts at the rate source's current rates.
func (s *Service) currentRates(ctx context.Context) policy.Converter {
	return policy.RateFunc(func(from, to string) (decimal.Decimal, error) {
		r, err := s.fx.Rate(ctx, from, to)
		if err != nil {
			return decimal.Decimal{}, err
		}
		return decimal.NewFromString(r.Value)
	})
}

// quoteRates converts a quote's sending amount at the quote's own rate
// when the target currency is its receiving currency, at the current
// rate otherwise.
func (s *Service) quoteRates(ctx context.Context, q ports.Quote) policy.Converter {
	current := s.currentRates(ctx)
	return policy.RateFunc(func(from, to string) (decimal.Decimal, error) {
		if from == q.SendingCurrency && to == q.ReceivingCurrency && q.ExchangeRate != "" {
			return decimal.NewFromString(q.ExchangeRate)
		}
		return current.Rate(from, to)
	})
}

func jsonPayload(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("job payload: %w", err)
	}
	return b, nil
}
