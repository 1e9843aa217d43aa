package spend

import (
	"context"
	"errors"
	"fmt"

	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/agents/policy"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ports"
)

// CreateQuote is POST /agents/me/quotes: a quote from one of the agent's
// customer's internal accounts (one its policy allows) to one of the
// customer's external accounts or a UMA address. The agent executes it
// with ExecuteQuote, as an action; immediatelyExecute is refused.
func (s *Service) CreateQuote(ctx context.Context, a ports.Agent, r quotes.CreateRequest) (ports.Quote, error) {
	if err := agents.Pausable(a); err != nil {
		return ports.Quote{}, err
	}
	pol, err := policyOf(a)
	if err != nil {
		return ports.Quote{}, err
	}
	if err := pol.Permit(policy.OpCreateQuote); err != nil {
		return ports.Quote{}, err
	}
	var errs fault.Collector
	if r.ImmediatelyExecute {
		errs.Add("immediatelyExecute", "an agent executes a quote with POST /agents/me/quotes/{quoteId}/execute, as an action its policy governs")
	}
	if r.Source.Type != quotes.SourceAccount {
		errs.Add("source.sourceType", "an agent pays from its customer's internal accounts: ACCOUNT")
	}
	transfers.CheckID(&errs, "source.accountId", r.Source.AccountID, "InternalAccount:")
	if r.Destination.AccountID != "" {
		transfers.CheckID(&errs, "destination.accountId", r.Destination.AccountID, "ExternalAccount:")
	}
	if err := errs.Err(); err != nil {
		return ports.Quote{}, err
	}
	if _, err := s.ownInternal(ctx, a, "source.accountId", r.Source.AccountID); err != nil {
		return ports.Quote{}, err
	}
	if r.Destination.AccountID != "" {
		if _, err := s.ownExternal(ctx, a, "destination.accountId", r.Destination.AccountID); err != nil {
			return ports.Quote{}, err
		}
	}
	if _, err := pol.Decide(policy.Request{Operation: policy.OpCreateQuote, AccountID: r.Source.AccountID}, nil); err != nil {
		return ports.Quote{}, err
	}
	r.Source.CustomerID, r.AgentID = a.CustomerID, a.ID
	r.IdempotencyKey = scopedKey(a, r.IdempotencyKey)
	return s.quotes.Create(ctx, a.PlatformID, r)
}

// GetQuote is GET /agents/me/quotes/{quoteId}: a quote the agent created
// (any other, the platform's or another agent's of the same customer
// included, is 404 QUOTE_NOT_FOUND). The quote's transaction names the
// agent that asked for it.
func (s *Service) GetQuote(ctx context.Context, a ports.Agent, id string) (ports.Quote, error) {
	q, err := s.quotes.Get(ctx, a.PlatformID, id)
	if err != nil {
		return ports.Quote{}, err
	}
	notFound := fault.NotFound(quotes.CodeQuoteNotFound, "quote not found")
	if q.CustomerID != a.CustomerID || q.CustomerID == "" || q.TransactionID == "" {
		return ports.Quote{}, notFound
	}
	t, err := s.store.Read().Transactions().Get(ctx, a.PlatformID, q.TransactionID)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Quote{}, notFound
	}
	if err != nil {
		return ports.Quote{}, fmt.Errorf("quote %s: transaction %s: %w", q.ID, q.TransactionID, err)
	}
	if t.AgentID != a.ID {
		return ports.Quote{}, notFound
	}
	return q, nil
}

// ExecuteQuote is POST /agents/me/quotes/{quoteId}/execute: the
// EXECUTE_QUOTE action of a quote the agent created. The quote must be
// executable now (its source ACTIVE, an EMBEDDED_WALLET's signature
// valid, PENDING and unexpired; as POST /quotes/{quoteId}/execute). Its
// amount is totalSendingAmount, converted to the policy currency at the
// quote's own rate when that is its receiving currency. The agent's
// executions of one quote are one action: executing it again returns that
// action, whatever its status.
func (s *Service) ExecuteQuote(ctx context.Context, a ports.Agent, quoteID, signature string) (ports.AgentAction, error) {
	if err := agents.Pausable(a); err != nil {
		return ports.AgentAction{}, err
	}
	q, err := s.GetQuote(ctx, a, quoteID)
	if err != nil {
		return ports.AgentAction{}, err
	}
	// One quote, one execution: the action's id derives from the quote, so
	// executing it again (a retry, with or without the same key) finds the
	// first action, before the quote's state (which that action changed)
	// is checked again.
	key := "quote|" + q.ID
	if prev, ok, err := s.existing(ctx, a, s.actionID(a, string(policy.OpExecuteQuote), key)); err != nil || ok {
		return prev, err
	}
	if q, err = s.quotes.CheckExecutable(ctx, a.PlatformID, quoteID, signature); err != nil {
		return ports.AgentAction{}, err
	}
	return s.submit(ctx, a, request{
		op: policy.OpExecuteQuote, typ: agents.ActionExecuteQuote, key: key,
		pol: policy.Request{Operation: policy.OpExecuteQuote, AccountID: q.SourceAccountID,
			Amount: q.TotalSendingAmount, Currency: q.SendingCurrency},
		conv:      s.quoteRates(ctx, q),
		fill:      func(act *ports.AgentAction) { act.QuoteID = q.ID },
		holdUntil: q.ExpiresAt,
		run:       s.runQuote(a.PlatformID, q.ID, signature),
	})
}

// runQuote executes a quote: with its signature when the agent's request
// runs at once, authorised (and voiding the agent hold) once approved.
func (s *Service) runQuote(platformID, quoteID, signature string) func(context.Context, string, string) (string, error) {
	return func(ctx context.Context, _ string, release string) (string, error) {
		var (
			q   ports.Quote
			err error
		)
		if release == "" {
			q, err = s.quotes.Execute(ctx, platformID, quoteID, signature)
		} else {
			q, err = s.quotes.ExecuteAuthorized(ctx, platformID, quoteID, release)
		}
		if err != nil {
			return "", err
		}
		return q.TransactionID, nil
	}
}

// errNoQuote is an EXECUTE_QUOTE action whose quote is gone.
var errNoQuote = errors.New("the action's quote no longer exists")
