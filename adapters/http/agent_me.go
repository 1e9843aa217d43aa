package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/agents/policy"
	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ports"
)

// The agent's own operations (/agents/me/…, Bearer): every one acts for
// the agent's customer only, reached through the services the platform
// operations use with the customer fixed; another customer's id is 404 as
// an unknown one is. The agent's policy grants them (VIEW_TRANSACTIONS:
// transactions and balances; MANAGE_EXTERNAL_ACCOUNTS: external
// accounts); a paused agent reads but writes nothing (authenticateAgent).

type agentActionsInput struct {
	Status string `query:"status" enum:"PENDING_APPROVAL,APPROVED,REJECTED,FAILED" doc:"Only actions in this status"`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor string `query:"cursor" maxLength:"1024" doc:"nextCursor of the previous page"`
}

type agentActionIDInput struct {
	ActionID string `path:"actionId" maxLength:"255" doc:"AgentAction:<uuid>"`
}

type agentTransactionsInput struct {
	AccountIdentifier         string    `query:"accountIdentifier" doc:"Only transactions whose sender or receiver account matches"`
	SenderAccountIdentifier   string    `query:"senderAccountIdentifier" doc:"Only transactions whose sender account matches"`
	ReceiverAccountIdentifier string    `query:"receiverAccountIdentifier" doc:"Only transactions whose receiver account matches"`
	Status                    string    `query:"status" enum:"CREATED,PENDING,PENDING_AUTHORIZATION,PROCESSING,COMPLETED,REJECTED,FAILED,REFUNDED,EXPIRED" doc:"Only transactions in this status"`
	Type                      string    `query:"type" enum:"INCOMING,OUTGOING" doc:"Only incoming or only outgoing transactions"`
	Reference                 string    `query:"reference" doc:"Only the transaction with this reconciliation reference"`
	StartDate                 time.Time `query:"startDate" doc:"Only transactions created at or after this time (inclusive)"`
	EndDate                   time.Time `query:"endDate" doc:"Only transactions created at or before this time (inclusive)"`
	Limit                     int       `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor                    string    `query:"cursor" doc:"nextCursor of the previous page (with the same sortOrder)"`
	SortOrder                 string    `query:"sortOrder" enum:"asc,desc" default:"desc" doc:"By creation time: newest first (desc) or oldest first (asc)"`
}

type agentInternalAccountsInput struct {
	Currency string `query:"currency" doc:"Only accounts in this currency"`
	Type     string `query:"type" enum:"INTERNAL_FIAT,INTERNAL_CRYPTO,EMBEDDED_WALLET" doc:"Only accounts of this type"`
	Limit    int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor   string `query:"cursor" doc:"nextCursor of the previous page"`
}

type agentCreateExternalInput struct {
	Body ExternalAccountCreateRequest
}

const agentMeTag = "Agent Operations"

// agentMeAPI handles the agent's own operations.
type agentMeAPI struct{ d Deps }

func registerAgentMe(api huma.API, d Deps) {
	h := agentMeAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.getMeOp(), h.getMe) },
		func(api huma.API) { huma.Register(api, h.listActionsOp(), h.listActions) },
		func(api huma.API) { huma.Register(api, h.getActionOp(), h.getAction) },
	)
	if d.Transactions != nil {
		registerAll(api,
			func(api huma.API) { huma.Register(api, h.listTransactionsOp(), h.listTransactions) },
			func(api huma.API) { huma.Register(api, h.getTransactionOp(), h.getTransaction) },
		)
	}
	registerAll(api, func(api huma.API) { huma.Register(api, h.listInternalAccountsOp(), h.listInternalAccounts) })
	if d.External != nil {
		registerAll(api,
			func(api huma.API) { huma.Register(api, h.listExternalAccountsOp(), h.listExternalAccounts) },
			func(api huma.API) { huma.Register(api, h.createExternalAccountOp(), h.createExternalAccount) },
			func(api huma.API) { huma.Register(api, h.getExternalAccountOp(), h.getExternalAccount) },
			func(api huma.API) { huma.Register(api, h.deleteExternalAccountOp(), h.deleteExternalAccount) },
		)
	}
}

// me is the calling agent as authentication read it at the start of this
// request, refused with 403 FORBIDDEN when its policy lacks perm (none:
// any agent).
func (h agentMeAPI) me(ctx context.Context, perm policy.Permission) (ports.Agent, error) {
	a := principal(ctx).agent
	if a.ID == "" {
		return ports.Agent{}, fault.Unauthorized("no agent access token")
	}
	if perm == "" {
		return a, nil
	}
	pol, err := policyOut(a)
	if err != nil {
		return ports.Agent{}, err
	}
	if !pol.Has(perm) {
		e := fault.New(fault.KindForbidden, "FORBIDDEN", "the agent's policy does not grant "+string(perm)+", which this operation needs")
		e.Details = map[string]any{"requiredPermission": string(perm)}
		return ports.Agent{}, e
	}
	return a, nil
}

func agentOp(id, method, path, summary, desc string, errs ...int) huma.Operation {
	return huma.Operation{OperationID: id, Method: method, Path: path, Summary: summary, Description: desc,
		Tags: []string{agentMeTag}, Errors: append([]int{http.StatusUnauthorized}, errs...)}
}

func (agentMeAPI) getMeOp() huma.Operation {
	return agentOp("getAgentMe", http.MethodGet, "/agents/me", "Get the calling agent",
		"The agent whose access token calls: its policy and usage.")
}

func (h agentMeAPI) getMe(ctx context.Context, _ *struct{}) (*agentOutput, error) {
	a, err := h.me(ctx, "")
	if err != nil {
		return nil, apiError(err)
	}
	return agentsAPI(h).agent(ctx, a)
}

func (agentMeAPI) listActionsOp() huma.Operation {
	return agentOp("agentListActions", http.MethodGet, "/agents/me/actions", "List the agent's actions",
		"The calling agent's own actions, newest first; poll it for the platform's decisions.", http.StatusBadRequest)
}

func (h agentMeAPI) listActions(ctx context.Context, in *agentActionsInput) (*agentActionListOutput, error) {
	a, err := h.me(ctx, "")
	if err != nil {
		return nil, apiError(err)
	}
	cursors := cursorsOf(h.d, "agent-actions")
	page, err := cursors.page(in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	res, err := h.d.Agents.ListActions(ctx, a, in.Status, page)
	return agentActionsOut(ctx, h.d, cursors, res, err)
}

func (agentMeAPI) getActionOp() huma.Operation {
	return agentOp("agentGetAction", http.MethodGet, "/agents/me/actions/{actionId}", "Get one of the agent's actions",
		"One of the calling agent's own actions (another agent's is 404).", http.StatusNotFound)
}

func (h agentMeAPI) getAction(ctx context.Context, in *agentActionIDInput) (*agentActionOutput, error) {
	a, err := h.me(ctx, "")
	if err != nil {
		return nil, apiError(err)
	}
	act, err := h.d.Agents.GetAction(ctx, a, in.ActionID)
	return agentsAPI(h).action(ctx, act, err)
}

func (agentMeAPI) listTransactionsOp() huma.Operation {
	return agentOp("agentListTransactions", http.MethodGet, "/agents/me/transactions", "List the customer's transactions",
		"The agent's customer's transactions, filtered and paginated as GET /transactions (needs VIEW_TRANSACTIONS).",
		http.StatusBadRequest, http.StatusForbidden)
}

func (h agentMeAPI) listTransactions(ctx context.Context, in *agentTransactionsInput) (*transactionListOutput, error) {
	a, err := h.me(ctx, policy.ViewTransactions)
	if err != nil {
		return nil, apiError(err)
	}
	return transactionsAPI(h).list(ctx, a.PlatformID, "agent-transactions", transactions.Query{
		CustomerID: a.CustomerID, AccountIdentifier: in.AccountIdentifier,
		SenderAccountIdentifier: in.SenderAccountIdentifier, ReceiverAccountIdentifier: in.ReceiverAccountIdentifier,
		Status: in.Status, Type: in.Type, Reference: in.Reference,
		StartDate: optTime(in.StartDate), EndDate: optTime(in.EndDate),
	}, in.SortOrder, in.Limit, in.Cursor)
}

func (agentMeAPI) getTransactionOp() huma.Operation {
	return agentOp("agentGetTransaction", http.MethodGet, "/agents/me/transactions/{transactionId}", "Get one of the customer's transactions",
		"One of the agent's customer's transactions (another customer's is 404; needs VIEW_TRANSACTIONS).",
		http.StatusForbidden, http.StatusNotFound)
}

func (h agentMeAPI) getTransaction(ctx context.Context, in *getTransactionInput) (*transactionOutput, error) {
	a, err := h.me(ctx, policy.ViewTransactions)
	if err != nil {
		return nil, apiError(err)
	}
	t, err := h.d.Transactions.Get(ctx, a.PlatformID, in.TransactionID)
	if err == nil && t.CustomerID != a.CustomerID {
		err = fault.NotFound("TRANSACTION_NOT_FOUND", "transaction not found") // as an unknown id
	}
	if err != nil {
		return nil, apiError(err)
	}
	return &transactionOutput{Body: transactionOut(h.d, a.PlatformID, t)}, nil
}

func (agentMeAPI) listInternalAccountsOp() huma.Operation {
	return agentOp("agentListInternalAccounts", http.MethodGet, "/agents/me/internal-accounts", "List the customer's internal accounts",
		"The agent's customer's internal accounts with their balances (needs VIEW_TRANSACTIONS).",
		http.StatusBadRequest, http.StatusForbidden)
}

func (h agentMeAPI) listInternalAccounts(ctx context.Context, in *agentInternalAccountsInput) (*internalAccountListOutput, error) {
	a, err := h.me(ctx, policy.ViewTransactions)
	if err != nil {
		return nil, apiError(err)
	}
	return accountsAPI(h).listCustomer(ctx, a.PlatformID, accounts.Filter{
		CustomerID: a.CustomerID, Currency: in.Currency, Type: in.Type}, in.Limit, in.Cursor)
}

const agentExternalDoc = " (needs MANAGE_EXTERNAL_ACCOUNTS; another customer's account is 404)"

func (agentMeAPI) listExternalAccountsOp() huma.Operation {
	return agentOp("agentListExternalAccounts", http.MethodGet, "/agents/me/external-accounts", "List the customer's external accounts",
		"The agent's customer's external accounts, oldest first"+agentExternalDoc+".", http.StatusBadRequest, http.StatusForbidden)
}

func (h agentMeAPI) listExternalAccounts(ctx context.Context, in *listPlatformExternalAccountsInput) (*externalAccountListOutput, error) {
	a, err := h.me(ctx, policy.ManageExternalAccounts)
	if err != nil {
		return nil, apiError(err)
	}
	return externalAPI(h).list(ctx, external.Filter{CustomerID: a.CustomerID, Currency: in.Currency}, in.Limit, in.Cursor)
}

func (agentMeAPI) createExternalAccountOp() huma.Operation {
	op := agentOp("agentCreateExternalAccount", http.MethodPost, "/agents/me/external-accounts", "Add an external account for the customer",
		"Adds a bank account or wallet of the agent's customer; customerId may be omitted, and another customer's is 404"+
			agentExternalDoc+". "+externalCreateDoc, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusConflict)
	op.DefaultStatus = http.StatusCreated
	return op
}

func (h agentMeAPI) createExternalAccount(ctx context.Context, in *agentCreateExternalInput) (*externalAccountOutput, error) {
	a, err := h.me(ctx, policy.ManageExternalAccounts)
	if err != nil {
		return nil, apiError(err)
	}
	b := in.Body
	if b.CustomerID != "" && b.CustomerID != a.CustomerID {
		return nil, apiError(fault.NotFound("USER_NOT_FOUND", "customer "+b.CustomerID+" not found"))
	}
	ci, err := createInput(a.CustomerID, b.Currency, b.PlatformAccountID, b.OwnershipType, b.DefaultUmaDepositAccount, b.AccountInfo)
	if err != nil {
		return nil, err
	}
	return externalAPI(h).create(ctx, ci)
}

func (agentMeAPI) getExternalAccountOp() huma.Operation {
	return agentOp("agentGetExternalAccount", http.MethodGet, "/agents/me/external-accounts/{externalAccountId}",
		"Get one of the customer's external accounts", "One of the agent's customer's external accounts"+agentExternalDoc+".",
		http.StatusForbidden, http.StatusNotFound)
}

// ownExternal is the customer's external account id, or its 404.
func (h agentMeAPI) ownExternal(ctx context.Context, a ports.Agent, id string) (ports.ExternalAccount, error) {
	acct, err := h.d.External.Get(ctx, a.PlatformID, id, external.ScopeAll)
	if err == nil && acct.CustomerID != a.CustomerID {
		err = fault.NotFound(external.CodeNotFound, "external account "+id+" not found") // as an unknown id
	}
	return acct, err
}

func (h agentMeAPI) getExternalAccount(ctx context.Context, in *externalAccountIDInput) (*externalAccountOutput, error) {
	a, err := h.me(ctx, policy.ManageExternalAccounts)
	if err != nil {
		return nil, apiError(err)
	}
	acct, err := h.ownExternal(ctx, a, in.ExternalAccountID)
	if err != nil {
		return nil, apiError(err)
	}
	return &externalAccountOutput{Body: externalAccountOut(acct)}, nil
}

func (agentMeAPI) deleteExternalAccountOp() huma.Operation {
	op := agentOp("agentDeleteExternalAccount", http.MethodDelete, "/agents/me/external-accounts/{externalAccountId}",
		"Delete one of the customer's external accounts", "Deletes one of the agent's customer's external accounts"+agentExternalDoc+".",
		http.StatusForbidden, http.StatusNotFound)
	op.DefaultStatus = http.StatusNoContent
	return op
}

func (h agentMeAPI) deleteExternalAccount(ctx context.Context, in *externalAccountIDInput) (*struct{}, error) {
	a, err := h.me(ctx, policy.ManageExternalAccounts)
	if err != nil {
		return nil, apiError(err)
	}
	if _, err := h.ownExternal(ctx, a, in.ExternalAccountID); err != nil {
		return nil, apiError(err)
	}
	return externalAPI(h).del(ctx, in.ExternalAccountID, external.ScopeAll)
}
