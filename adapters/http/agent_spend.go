package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// The agent's money-moving operations (/agents/me/quotes…,
// /agents/me/transfer-in|out; Bearer): core/agents/spend decides each under
// the agent's policy and records it as an agent action. The accounts and
// quotes named must be the agent's customer's (any other is 404). Their
// bodies are the platform operations' (QuoteRequest, TransferInRequest,
// TransferOutRequest).

type agentExecuteQuoteInput struct {
	QuoteID         string `path:"quoteId" maxLength:"255" doc:"The quote's id"`
	IdempotencyKey  string `header:"Idempotency-Key" maxLength:"255"`
	WalletSignature string `header:"Service-Wallet-Signature" doc:"Stamp over the quote's payloadToSign by a verified credential of the source EMBEDDED_WALLET (required for such sources, ignored otherwise)"`
}

// agentSpendAPI handles the agent's money-moving operations.
type agentSpendAPI struct{ d Deps }

func registerAgentSpend(api huma.API, d Deps) {
	h := agentSpendAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.createQuoteOp(), h.createQuote) },
		func(api huma.API) { huma.Register(api, h.getQuoteOp(), h.getQuote) },
		func(api huma.API) { huma.Register(api, h.executeQuoteOp(), h.executeQuote) },
		func(api huma.API) { huma.Register(api, h.transferInOp(), h.transferIn) },
		func(api huma.API) { huma.Register(api, h.transferOutOp(), h.transferOut) },
	)
}

const policyErrors = "A policy refusal is 403 FORBIDDEN whose message and details name the rule: a missing permission, " +
	"an account outside accountRestrictions.allowedAccountIds, or a limit with its value, what is used and what was " +
	"requested (details.reason: PER_TRANSACTION_LIMIT_EXCEEDED, DAILY_TRANSACTION_LIMIT_EXCEEDED, DAILY_LIMIT_EXCEEDED, " +
	"MONTHLY_LIMIT_EXCEEDED). A paused agent is 403."

const actionOutcome = " The action is APPROVED with its transaction when the policy lets it run at once; " +
	"PENDING_APPROVAL, with no transaction, when it needs the platform's approval (the funds are held meanwhile, " +
	"and the platform hears of it by the AGENT_ACTION.PENDING_APPROVAL webhook). "

func (agentSpendAPI) createQuoteOp() huma.Operation {
	op := agentOp("agentCreateQuote", http.MethodPost, "/agents/me/quotes", "Create a quote as the agent",
		"A quote from one of the agent's customer's internal accounts (ACCOUNT source) to one of its external accounts "+
			"or a UMA address; the agent executes it with POST /agents/me/quotes/{quoteId}/execute (immediatelyExecute "+
			"is refused). Needs CREATE_QUOTES. "+policyErrors,
		http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound)
	op.DefaultStatus = http.StatusCreated
	return op
}

func (h agentSpendAPI) createQuote(ctx context.Context, in *createQuoteInput) (*quoteOutput, error) {
	a, err := agentMeAPI(h).me(ctx, "")
	if err != nil {
		return nil, apiError(err)
	}
	q, err := h.d.AgentSpend.CreateQuote(ctx, a, in.Body.request(in.IdempotencyKey))
	if err != nil {
		return nil, apiError(err)
	}
	return &quoteOutput{Body: quoteOut(q)}, nil
}

func (agentSpendAPI) getQuoteOp() huma.Operation {
	return agentOp("agentGetQuote", http.MethodGet, "/agents/me/quotes/{quoteId}", "Get a quote as the agent",
		"A quote the agent created (any other, the platform's or another agent's, is 404 QUOTE_NOT_FOUND).", http.StatusNotFound)
}

func (h agentSpendAPI) getQuote(ctx context.Context, in *getQuoteInput) (*quoteOutput, error) {
	a, err := agentMeAPI(h).me(ctx, "")
	if err != nil {
		return nil, apiError(err)
	}
	q, err := h.d.AgentSpend.GetQuote(ctx, a, in.QuoteID)
	if err != nil {
		return nil, apiError(err)
	}
	return &quoteOutput{Body: quoteOut(q)}, nil
}

func (agentSpendAPI) executeQuoteOp() huma.Operation {
	return agentOp("agentExecuteQuote", http.MethodPost, "/agents/me/quotes/{quoteId}/execute", "Execute a quote as the agent",
		"Submits the execution of one of the agent's own PENDING quotes as an EXECUTE_QUOTE action (needs EXECUTE_QUOTES); "+
			"its amount is totalSendingAmount, counted in the policy currency at the quote's rate (or the current one)."+
			actionOutcome+"A quote that expires before the platform decides makes the action FAILED. An EMBEDDED_WALLET "+
			"source needs the Service-Wallet-Signature header, checked when the action is submitted. "+policyErrors,
		http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusConflict)
}

func (h agentSpendAPI) executeQuote(ctx context.Context, in *agentExecuteQuoteInput) (*agentActionOutput, error) {
	a, err := agentMeAPI(h).me(ctx, "")
	if err != nil {
		return nil, apiError(err)
	}
	act, err := h.d.AgentSpend.ExecuteQuote(ctx, a, in.QuoteID, in.WalletSignature)
	return agentsAPI(h).action(ctx, act, err)
}

func (agentSpendAPI) transferInOp() huma.Operation {
	op := agentOp("agentCreateTransferIn", http.MethodPost, "/agents/me/transfer-in", "Create a transfer-in as the agent",
		"A TRANSFER_IN action pulling from one of the customer's external accounts into one of its internal accounts "+
			"(needs CREATE_TRANSFERS); the amount is counted against the policy like a payment."+actionOutcome+
			"Nothing is held while it waits: the money is not in the ledger until the pull succeeds. "+policyErrors,
		http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound)
	op.DefaultStatus = http.StatusCreated
	return op
}

func (h agentSpendAPI) transferIn(ctx context.Context, in *transferInInput) (*agentActionOutput, error) {
	a, err := agentMeAPI(h).me(ctx, "")
	if err != nil {
		return nil, apiError(err)
	}
	act, err := h.d.AgentSpend.TransferIn(ctx, a, in.Body.request(in.IdempotencyKey))
	return agentsAPI(h).action(ctx, act, err)
}

func (agentSpendAPI) transferOutOp() huma.Operation {
	op := agentOp("agentCreateTransferOut", http.MethodPost, "/agents/me/transfer-out", "Create a transfer-out as the agent",
		"A TRANSFER_OUT action paying from one of the customer's internal accounts to one of its external accounts "+
			"(needs CREATE_TRANSFERS)."+actionOutcome+policyErrors,
		http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound)
	op.DefaultStatus = http.StatusCreated
	return op
}

func (h agentSpendAPI) transferOut(ctx context.Context, in *transferOutInput) (*agentActionOutput, error) {
	a, err := agentMeAPI(h).me(ctx, "")
	if err != nil {
		return nil, apiError(err)
	}
	act, err := h.d.AgentSpend.TransferOut(ctx, a, in.Body.request(in.IdempotencyKey))
	return agentsAPI(h).action(ctx, act, err)
}
