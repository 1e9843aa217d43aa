package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/agents/policy"
	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----

// Agent is a program acting for one customer under a spending policy.
type Agent struct {
	ID          string        `json:"id" doc:"Agent:<uuid>" example:"Agent:019542f5-b3e7-1d02-0000-000000000001"`
	Name        string        `json:"name"`
	CustomerID  string        `json:"customerId" doc:"The customer the agent acts for"`
	IsPaused    bool          `json:"isPaused" doc:"A paused agent initiates nothing (403 FORBIDDEN, details.reason AGENT_PAUSED) but still reads"`
	IsConnected bool          `json:"isConnected" doc:"Whether a device code of the agent was redeemed"`
	Policy      policy.Policy `json:"policy"`
	Usage       AgentUsage    `json:"usage"`
	CreatedAt   time.Time     `json:"createdAt"`
	UpdatedAt   time.Time     `json:"updatedAt"`
}

// AgentUsage is an agent's spending so far, in minor units of its policy's
// currency.
type AgentUsage struct {
	DailyTransactionCount int    `json:"dailyTransactionCount" doc:"Actions counted today (UTC)"`
	DailySpend            int64  `json:"dailySpend" doc:"Spent today (UTC)"`
	DailyResetDate        string `json:"dailyResetDate,omitempty" format:"date" doc:"When the daily counters start again"`
	MonthlySpend          int64  `json:"monthlySpend" doc:"Spent this month (UTC)"`
	MonthlyResetMonth     string `json:"monthlyResetMonth,omitempty" doc:"When the monthly counter starts again (YYYY-MM)"`
}

// AgentList is one page of agents.
type AgentList struct {
	Data       []Agent `json:"data"`
	HasMore    bool    `json:"hasMore" doc:"Whether more results follow this page"`
	NextCursor string  `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page (only when hasMore)"`
	TotalCount int     `json:"totalCount" doc:"Number of agents matching the filters, ignoring pagination"`
}

// AgentCreateRequest creates an agent.
type AgentCreateRequest struct {
	Name       string        `json:"name" minLength:"1" maxLength:"255" doc:"A name to tell the agent apart" example:"Invoice payer"`
	CustomerID string        `json:"customerId" maxLength:"255" doc:"The customer the agent will act for"`
	Policy     policy.Policy `json:"policy"`
}

// AgentDeviceCode is a single-use code that connects an agent.
type AgentDeviceCode struct {
	Code      string    `json:"code" doc:"Give it to the agent software, which redeems it once for its access token" example:"7KQ4-M2PX-9HTR"`
	AgentID   string    `json:"agentId"`
	ExpiresAt time.Time `json:"expiresAt" doc:"The code cannot be redeemed from then on"`
	Redeemed  bool      `json:"redeemed"`
}

// AgentCreateResponse is a new agent and its first device code.
type AgentCreateResponse struct {
	Agent      Agent           `json:"agent"`
	DeviceCode AgentDeviceCode `json:"deviceCode"`
}

// AgentUpdateRequest renames, pauses or resumes an agent.
type AgentUpdateRequest struct {
	Name     *string `json:"name,omitempty" minLength:"1" maxLength:"255"`
	IsPaused *bool   `json:"isPaused,omitempty" doc:"true pauses the agent, false resumes it"`
}

// AgentDeviceCodeStatusResponse tells whether a code was redeemed.
type AgentDeviceCodeStatusResponse struct {
	Code     string `json:"code"`
	Redeemed bool   `json:"redeemed"`
}

// AgentDeviceCodeRedeemResponse is the agent's credential, shown once.
type AgentDeviceCodeRedeemResponse struct {
	AgentID     string        `json:"agentId"`
	AgentName   string        `json:"agentName"`
	AccessToken string        `json:"accessToken" doc:"Send as Authorization: Bearer <accessToken> on /agents/me/…; shown this once (only its SHA-256 is kept)"`
	Policy      policy.Policy `json:"policy"`
}

// AgentAction is something an agent initiated.
type AgentAction struct {
	ID                 string                `json:"id" doc:"AgentAction:<uuid>"`
	AgentID            string                `json:"agentId"`
	CustomerID         string                `json:"customerId"`
	PlatformCustomerID string                `json:"platformCustomerId"`
	Status             string                `json:"status" enum:"PENDING_APPROVAL,APPROVED,REJECTED,FAILED"`
	Type               string                `json:"type" enum:"EXECUTE_QUOTE,TRANSFER_OUT,TRANSFER_IN"`
	Quote              *Quote                `json:"quote,omitempty" doc:"The quote an EXECUTE_QUOTE action executes"`
	TransferDetails    *AgentTransferDetails `json:"transferDetails,omitempty" doc:"What a TRANSFER_OUT or TRANSFER_IN action moves"`
	Transaction        *Transaction          `json:"transaction,omitempty" doc:"The payment, once execution has begun"`
	RejectionReason    string                `json:"rejectionReason,omitempty" doc:"The platform's reason, when REJECTED"`
	CreatedAt          time.Time             `json:"createdAt"`
	UpdatedAt          time.Time             `json:"updatedAt"`
}

// AgentTransferDetails is what a transfer action moves.
type AgentTransferDetails struct {
	Amount               int64  `json:"amount" format:"int64" doc:"In the smallest unit of currency"`
	Currency             string `json:"currency"`
	SourceAccountID      string `json:"sourceAccountId"`
	DestinationAccountID string `json:"destinationAccountId"`
}

// AgentActionList is one page of agent actions.
type AgentActionList struct {
	Data       []AgentAction `json:"data"`
	HasMore    bool          `json:"hasMore" doc:"Whether more results follow this page"`
	NextCursor string        `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page (only when hasMore)"`
	TotalCount int           `json:"totalCount" doc:"Number of actions matching the filters, ignoring pagination"`
}

// AgentActionRejectRequest rejects an action.
type AgentActionRejectRequest struct {
	Reason string `json:"reason,omitempty" maxLength:"1000" doc:"Why; stored as the action's rejectionReason"`
}

// agentOut renders an agent with its usage.
func agentOut(ctx context.Context, d Deps, a ports.Agent) (Agent, error) {
	p, err := policyOut(a)
	if err != nil {
		return Agent{}, err
	}
	u, err := d.Agents.Usage(ctx, a)
	if err != nil {
		return Agent{}, fmt.Errorf("agent %s usage: %w", a.ID, err)
	}
	return Agent{ID: a.ID, Name: a.Name, CustomerID: a.CustomerID, IsPaused: a.IsPaused, IsConnected: a.IsConnected,
		Policy: p, Usage: AgentUsage{DailyTransactionCount: u.DailyTransactionCount, DailySpend: u.DailySpend,
			DailyResetDate: u.DailyResetDate, MonthlySpend: u.MonthlySpend, MonthlyResetMonth: u.MonthlyResetMonth},
		CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC()}, nil
}

// policyOut is an agent's stored policy document.
func policyOut(a ports.Agent) (policy.Policy, error) {
	var p policy.Policy
	if err := json.Unmarshal(a.Policy, &p); err != nil {
		return policy.Policy{}, fmt.Errorf("agent %s policy: %w", a.ID, err)
	}
	p.Normalize()
	return p, nil
}

func deviceCodeOut(c agents.DeviceCode) AgentDeviceCode {
	return AgentDeviceCode{Code: c.Code, AgentID: c.AgentID, ExpiresAt: c.ExpiresAt.UTC(), Redeemed: c.Redeemed}
}

// agentActionOut renders an action with its quote and transaction as the
// API returns them now.
func agentActionOut(ctx context.Context, d Deps, a ports.AgentAction) (AgentAction, error) {
	out := AgentAction{ID: a.ID, AgentID: a.AgentID, CustomerID: a.CustomerID, PlatformCustomerID: a.PlatformCustomerID,
		Status: a.Status, Type: a.Type, RejectionReason: a.RejectionReason,
		CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC()}
	if a.Type != agents.ActionExecuteQuote {
		out.TransferDetails = &AgentTransferDetails{Amount: a.Amount, Currency: a.Currency,
			SourceAccountID: a.SourceAccountID, DestinationAccountID: a.DestinationAccountID}
	}
	if a.QuoteID != "" && d.Quotes != nil {
		q, err := d.Quotes.Get(ctx, a.PlatformID, a.QuoteID)
		if err != nil {
			return AgentAction{}, fmt.Errorf("agent action %s quote: %w", a.ID, err)
		}
		qo := quoteOut(q)
		out.Quote = &qo
	}
	if a.TransactionID != "" && d.Transactions != nil {
		t, err := d.Transactions.Get(ctx, a.PlatformID, a.TransactionID)
		if err != nil {
			return AgentAction{}, fmt.Errorf("agent action %s transaction: %w", a.ID, err)
		}
		to := transactionOut(d, a.PlatformID, t)
		out.Transaction = &to
	}
	return out, nil
}

// agentActionsOut answers a list of actions (res and err as the service
// gave them), its next cursor one of cursors.
func agentActionsOut(ctx context.Context, d Deps, cursors listCursors, res agents.Page[ports.AgentAction], err error) (*agentActionListOutput, error) {
	if err != nil {
		return nil, apiError(err)
	}
	out := AgentActionList{Data: make([]AgentAction, len(res.Rows)), HasMore: res.HasMore, TotalCount: res.Total,
		NextCursor: cursors.next(res.HasMore, res.Next)}
	for i, a := range res.Rows {
		if out.Data[i], err = agentActionOut(ctx, d, a); err != nil {
			return nil, apiError(err)
		}
	}
	return &agentActionListOutput{Body: out}, nil
}

// ---- operations ----

type createAgentInput struct{ Body AgentCreateRequest }

type agentIDInput struct {
	AgentID string `path:"agentId" maxLength:"255" doc:"Agent:<uuid>"`
}

type updateAgentInput struct {
	AgentID string `path:"agentId" maxLength:"255" doc:"Agent:<uuid>"`
	Body    AgentUpdateRequest
}

type updateAgentPolicyInput struct {
	AgentID string `path:"agentId" maxLength:"255" doc:"Agent:<uuid>"`
	Body    policy.Update
}

type deviceCodeInput struct {
	Code string `path:"code" maxLength:"64" doc:"The device code, in any letter case, with or without its dashes"`
}

type listAgentsInput struct {
	CustomerID    string    `query:"customerId" maxLength:"255" pattern:"^Customer:" doc:"Only this customer's agents (a Customer id)"`
	IsPaused      string    `query:"isPaused" enum:"true,false" doc:"Only paused (true) or running (false) agents"`
	IsConnected   string    `query:"isConnected" enum:"true,false" doc:"Only connected (true) or unconnected (false) agents"`
	CreatedAfter  time.Time `query:"createdAfter" doc:"Only agents created at or after this time"`
	CreatedBefore time.Time `query:"createdBefore" doc:"Only agents created at or before this time"`
	UpdatedAfter  time.Time `query:"updatedAfter" doc:"Only agents updated at or after this time"`
	UpdatedBefore time.Time `query:"updatedBefore" doc:"Only agents updated at or before this time"`
	Limit         int       `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor        string    `query:"cursor" maxLength:"1024" doc:"nextCursor of the previous page"`
}

type listApprovalsInput struct {
	AgentID    string    `query:"agentId" maxLength:"255" doc:"Only this agent's actions"`
	CustomerID string    `query:"customerId" maxLength:"255" pattern:"^Customer:" doc:"Only actions for this customer (a Customer id)"`
	StartDate  time.Time `query:"startDate" doc:"Only actions created at or after this time"`
	EndDate    time.Time `query:"endDate" doc:"Only actions created at or before this time"`
	Limit      int       `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor     string    `query:"cursor" maxLength:"1024" doc:"nextCursor of the previous page (with the same sortOrder)"`
	SortOrder  string    `query:"sortOrder" enum:"asc,desc" default:"desc" doc:"By creation time: newest first (desc) or oldest first (asc)"`
}

type agentActionInput struct {
	AgentID  string `path:"agentId" maxLength:"255" doc:"Agent:<uuid>"`
	ActionID string `path:"actionId" maxLength:"255" doc:"AgentAction:<uuid>"`
}

type rejectAgentActionInput struct {
	AgentID  string `path:"agentId" maxLength:"255" doc:"Agent:<uuid>"`
	ActionID string `path:"actionId" maxLength:"255" doc:"AgentAction:<uuid>"`
	Body     *AgentActionRejectRequest
}

type agentOutput struct{ Body Agent }
type agentCreateOutput struct{ Body AgentCreateResponse }
type agentListOutput struct{ Body AgentList }
type deviceCodeOutput struct{ Body AgentDeviceCode }
type deviceCodeStatusOutput struct{ Body AgentDeviceCodeStatusResponse }
type redeemOutput struct{ Body AgentDeviceCodeRedeemResponse }
type agentActionOutput struct{ Body AgentAction }
type agentActionListOutput struct{ Body AgentActionList }

const agentsTag = "Agent Management"

// agentsAPI handles the platform's agent operations (Basic).
type agentsAPI struct{ d Deps }

func registerAgents(api huma.API, d Deps) {
	h := agentsAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.createAgentOp(), h.createAgent) },
		func(api huma.API) { huma.Register(api, h.listAgentsOp(), h.listAgents) },
		func(api huma.API) { huma.Register(api, h.listApprovalsOp(), h.listApprovals) },
		func(api huma.API) { huma.Register(api, h.getAgentOp(), h.getAgent) },
		func(api huma.API) { huma.Register(api, h.updateAgentOp(), h.updateAgent) },
		func(api huma.API) { huma.Register(api, h.deleteAgentOp(), h.deleteAgent) },
		func(api huma.API) { huma.Register(api, h.updatePolicyOp(), h.updatePolicy) },
		func(api huma.API) { huma.Register(api, h.regenerateCodeOp(), h.regenerateCode) },
		func(api huma.API) { huma.Register(api, h.codeStatusOp(), h.codeStatus) },
		func(api huma.API) { huma.Register(api, h.redeemOp(), h.redeem) },
		func(api huma.API) { huma.Register(api, h.approveOp(), h.approve) },
		func(api huma.API) { huma.Register(api, h.rejectOp(), h.reject) },
	)
}

func (h agentsAPI) agent(ctx context.Context, a ports.Agent) (*agentOutput, error) {
	out, err := agentOut(ctx, h.d, a)
	if err != nil {
		return nil, apiError(err)
	}
	return &agentOutput{Body: out}, nil
}

func (agentsAPI) createAgentOp() huma.Operation {
	return huma.Operation{
		OperationID: "createAgent", Method: http.MethodPost, Path: "/agents",
		Summary: "Create an agent", DefaultStatus: http.StatusCreated,
		Description: "Creates an agent acting for one of the platform's customers under a policy, and its first device code " +
			"(single use, valid for 24 hours): the agent software redeems it for its access token. A customerId that is not a " +
			"live customer of the platform, or a bad policy field, is 400 naming the field.",
		Tags: []string{agentsTag}, Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden},
	}
}

func (h agentsAPI) createAgent(ctx context.Context, in *createAgentInput) (*agentCreateOutput, error) {
	p := in.Body.Policy
	if err := p.Validate("policy"); err != nil {
		return nil, apiError(err)
	}
	p.Normalize()
	doc, err := json.Marshal(p)
	if err != nil {
		return nil, apiError(err)
	}
	c, err := h.d.Agents.Create(ctx, principal(ctx).PlatformID, agents.CreateInput{
		Name: in.Body.Name, CustomerID: in.Body.CustomerID, Policy: doc})
	if err != nil {
		return nil, apiError(err)
	}
	a, err := agentOut(ctx, h.d, c.Agent)
	if err != nil {
		return nil, apiError(err)
	}
	return &agentCreateOutput{Body: AgentCreateResponse{Agent: a, DeviceCode: deviceCodeOut(c.Code)}}, nil
}

func (agentsAPI) listAgentsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listAgents", Method: http.MethodGet, Path: "/agents",
		Summary:     "List agents",
		Description: "Lists the platform's agents (deleted ones never), oldest first, filtered and paginated. Time bounds are inclusive.",
		Tags:        []string{agentsTag}, Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden},
	}
}

// optBool reads an optional boolean query value ("true", "false" or
// empty).
func optBool(s string) *bool {
	if s == "" {
		return nil
	}
	v := s == "true"
	return &v
}

func (h agentsAPI) listAgents(ctx context.Context, in *listAgentsInput) (*agentListOutput, error) {
	if err := checkWindows(window{"createdAfter", in.CreatedAfter, "createdBefore", in.CreatedBefore},
		window{"updatedAfter", in.UpdatedAfter, "updatedBefore", in.UpdatedBefore}); err != nil {
		return nil, err
	}
	cursors := cursorsOf(h.d, "agents")
	page, err := cursors.page(in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	res, err := h.d.Agents.List(ctx, principal(ctx).PlatformID, ports.AgentFilter{
		CustomerID: in.CustomerID, IsPaused: optBool(in.IsPaused), IsConnected: optBool(in.IsConnected),
		CreatedAfter: optTime(in.CreatedAfter), CreatedBefore: optTime(in.CreatedBefore),
		UpdatedAfter: optTime(in.UpdatedAfter), UpdatedBefore: optTime(in.UpdatedBefore),
	}, page)
	if err != nil {
		return nil, apiError(err)
	}
	out := AgentList{Data: make([]Agent, len(res.Rows)), HasMore: res.HasMore, TotalCount: res.Total,
		NextCursor: cursors.next(res.HasMore, res.Next)}
	for i, a := range res.Rows {
		if out.Data[i], err = agentOut(ctx, h.d, a); err != nil {
			return nil, apiError(err)
		}
	}
	return &agentListOutput{Body: out}, nil
}

func (agentsAPI) getAgentOp() huma.Operation {
	return huma.Operation{
		OperationID: "getAgentById", Method: http.MethodGet, Path: "/agents/{agentId}",
		Summary: "Get an agent", Description: "Returns one of the platform's agents with its policy and usage; a deleted agent or another platform's is 404.",
		Tags: []string{agentsTag}, Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
	}
}

func (h agentsAPI) getAgent(ctx context.Context, in *agentIDInput) (*agentOutput, error) {
	a, err := h.d.Agents.Get(ctx, principal(ctx).PlatformID, in.AgentID)
	if err != nil {
		return nil, apiError(err)
	}
	return h.agent(ctx, a)
}

func (agentsAPI) updateAgentOp() huma.Operation {
	return huma.Operation{
		OperationID: "updateAgent", Method: http.MethodPatch, Path: "/agents/{agentId}",
		Summary: "Update an agent",
		Description: "Renames, pauses (isPaused true: the agent initiates nothing, 403 FORBIDDEN with details.reason AGENT_PAUSED, but still reads) or resumes " +
			"an agent. At least one of name and isPaused, else 400.",
		Tags: []string{agentsTag}, Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
	}
}

func (h agentsAPI) updateAgent(ctx context.Context, in *updateAgentInput) (*agentOutput, error) {
	a, err := h.d.Agents.Update(ctx, principal(ctx).PlatformID, in.AgentID,
		agents.UpdateInput{Name: in.Body.Name, IsPaused: in.Body.IsPaused})
	if err != nil {
		return nil, apiError(err)
	}
	return h.agent(ctx, a)
}

func (agentsAPI) deleteAgentOp() huma.Operation {
	return huma.Operation{
		OperationID: "deleteAgent", Method: http.MethodDelete, Path: "/agents/{agentId}", DefaultStatus: http.StatusNoContent,
		Summary:     "Delete an agent",
		Description: "Deletes an agent: its access token is refused (401) from its next request on, and its unredeemed device codes die. Its actions stay.",
		Tags:        []string{agentsTag}, Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
	}
}

func (h agentsAPI) deleteAgent(ctx context.Context, in *agentIDInput) (*struct{}, error) {
	if err := h.d.Agents.Delete(ctx, principal(ctx).PlatformID, in.AgentID); err != nil {
		return nil, apiError(err)
	}
	return nil, nil
}

func (agentsAPI) updatePolicyOp() huma.Operation {
	return huma.Operation{
		OperationID: "updateAgentPolicy", Method: http.MethodPatch, Path: "/agents/{agentId}/policy",
		Summary: "Update an agent's policy",
		Description: "Changes only the fields sent, nested ones too (spendingLimits, accountRestrictions, approvalThresholds); " +
			"a list sent replaces the current one; null removes an optional limit. The result is checked as a whole (400 naming " +
			"the field) and applies from the agent's next request.",
		Tags: []string{agentsTag}, Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
	}
}

func (h agentsAPI) updatePolicy(ctx context.Context, in *updateAgentPolicyInput) (*agentOutput, error) {
	raw, _ := ctx.Value(bodyKey{}).([]byte)
	a, err := h.d.Agents.SetPolicy(ctx, principal(ctx).PlatformID, in.AgentID, func(stored []byte) ([]byte, error) {
		var cur policy.Policy
		if err := json.Unmarshal(stored, &cur); err != nil {
			return nil, fmt.Errorf("stored policy: %w", err)
		}
		p, err := policy.Merge(cur, raw)
		if err != nil {
			return nil, err
		}
		p.Normalize()
		return json.Marshal(p)
	})
	if err != nil {
		return nil, apiError(err)
	}
	return h.agent(ctx, a)
}

func (agentsAPI) regenerateCodeOp() huma.Operation {
	return huma.Operation{
		OperationID: "regenerateAgentDeviceCode", Method: http.MethodPost, Path: "/agents/{agentId}/device-codes",
		Summary: "Issue a new device code", DefaultStatus: http.StatusCreated,
		Description: "Issues a new device code for an agent not yet connected; its earlier unredeemed codes die. A connected agent is 409 CONFLICT.",
		Tags:        []string{agentsTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict},
	}
}

func (h agentsAPI) regenerateCode(ctx context.Context, in *agentIDInput) (*deviceCodeOutput, error) {
	c, err := h.d.Agents.RegenerateCode(ctx, principal(ctx).PlatformID, in.AgentID)
	if err != nil {
		return nil, apiError(err)
	}
	return &deviceCodeOutput{Body: deviceCodeOut(c)}, nil
}

func (agentsAPI) codeStatusOp() huma.Operation {
	return huma.Operation{
		OperationID: "getAgentDeviceCodeStatus", Method: http.MethodGet, Path: "/agents/device-codes/{code}/status",
		Summary:     "Get a device code's status",
		Description: "Tells whether one of the platform's device codes was redeemed (poll it after creating an agent). A dead, mistyped or another platform's code is 404.",
		Tags:        []string{agentsTag}, Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
	}
}

func (h agentsAPI) codeStatus(ctx context.Context, in *deviceCodeInput) (*deviceCodeStatusOutput, error) {
	c, err := h.d.Agents.CodeStatus(ctx, principal(ctx).PlatformID, in.Code)
	if err != nil {
		return nil, apiError(err)
	}
	return &deviceCodeStatusOutput{Body: AgentDeviceCodeStatusResponse{Code: c.Code, Redeemed: c.Redeemed}}, nil
}

func (agentsAPI) redeemOp() huma.Operation {
	return huma.Operation{
		OperationID: "redeemAgentDeviceCode", Method: http.MethodPost, Path: "/agents/device-codes/{code}/redeem",
		Summary: "Redeem a device code",
		Description: "Connects the code's agent and returns its access token, this once. No credential: the code is the proof. " +
			"Each code redeems once (of concurrent redemptions one wins); a redeemed code is 400 INVALID_INPUT, an expired one " +
			"400 EXPIRED, an unknown one 404. Failed redemptions count against the client address's authentication throttle " +
			"(429 RATE_LIMITED with Retry-After). It takes no Idempotency-Key: the token is never stored.",
		Tags:     []string{agentsTag},
		Security: []map[string][]string{},
		Errors:   []int{http.StatusBadRequest, http.StatusNotFound, http.StatusTooManyRequests},
	}
}

func (h agentsAPI) redeem(ctx context.Context, in *deviceCodeInput) (*redeemOutput, error) {
	r, err := h.d.Agents.Redeem(ctx, in.Code)
	if err != nil {
		return nil, apiError(err)
	}
	p, err := policyOut(r.Agent)
	if err != nil {
		return nil, apiError(err)
	}
	return &redeemOutput{Body: AgentDeviceCodeRedeemResponse{AgentID: r.Agent.ID, AgentName: r.Agent.Name,
		AccessToken: r.AccessToken, Policy: p}}, nil
}

func (agentsAPI) listApprovalsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listAgentApprovals", Method: http.MethodGet, Path: "/agents/approvals",
		Summary: "List agent actions awaiting approval",
		Description: "Lists the platform's agent actions in PENDING_APPROVAL, filtered by agent, customer and creation time " +
			"(inclusive), newest first unless sortOrder is asc. Decide with POST /agents/{agentId}/actions/{actionId}/approve or /reject.",
		Tags: []string{agentsTag}, Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden},
	}
}

func (h agentsAPI) listApprovals(ctx context.Context, in *listApprovalsInput) (*agentActionListOutput, error) {
	if err := checkWindows(window{"startDate", in.StartDate, "endDate", in.EndDate}); err != nil {
		return nil, err
	}
	order := cmp.Or(in.SortOrder, "desc")
	cursors := cursorsOf(h.d, "agent-approvals", order)
	page, err := cursors.page(in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	res, err := h.d.Agents.ListApprovals(ctx, principal(ctx).PlatformID, ports.AgentActionFilter{
		AgentID: in.AgentID, CustomerID: in.CustomerID, StartDate: optTime(in.StartDate), EndDate: optTime(in.EndDate),
		Desc: order == "desc"}, page)
	return agentActionsOut(ctx, h.d, cursors, res, err)
}

func (agentsAPI) approveOp() huma.Operation {
	return huma.Operation{
		OperationID: "approveAgentAction", Method: http.MethodPost, Path: "/agents/{agentId}/actions/{actionId}/approve",
		Summary: "Approve an agent action",
		Description: "Lets a PENDING_APPROVAL action run: APPROVED with its transaction, or FAILED when execution fails " +
			"(a quote that expired meanwhile). An action no longer PENDING_APPROVAL is 409 INVALID_STATE_TRANSITION; another " +
			"platform's, or one of another agent, 404.",
		Tags: []string{agentsTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
			http.StatusConflict},
	}
}

func (h agentsAPI) approve(ctx context.Context, in *agentActionInput) (*agentActionOutput, error) {
	a, err := h.d.Agents.Approve(ctx, principal(ctx).PlatformID, in.AgentID, in.ActionID)
	return h.action(ctx, a, err)
}

func (h agentsAPI) action(ctx context.Context, a ports.AgentAction, err error) (*agentActionOutput, error) {
	if err != nil {
		return nil, apiError(err)
	}
	out, err := agentActionOut(ctx, h.d, a)
	if err != nil {
		return nil, apiError(err)
	}
	return &agentActionOutput{Body: out}, nil
}

func (agentsAPI) rejectOp() huma.Operation {
	return huma.Operation{
		OperationID: "rejectAgentAction", Method: http.MethodPost, Path: "/agents/{agentId}/actions/{actionId}/reject",
		Summary: "Reject an agent action",
		Description: "Refuses a PENDING_APPROVAL action (REJECTED, reason as rejectionReason): it never runs, and what it " +
			"held is given back. Errors as approve.",
		Tags: []string{agentsTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
			http.StatusConflict},
	}
}

func (h agentsAPI) reject(ctx context.Context, in *rejectAgentActionInput) (*agentActionOutput, error) {
	reason := ""
	if in.Body != nil {
		reason = in.Body.Reason
	}
	a, err := h.d.Agents.Reject(ctx, principal(ctx).PlatformID, in.AgentID, in.ActionID, reason)
	return h.action(ctx, a, err)
}

// agentOperation reports whether op is an agent's own (Bearer) or the
// device-code redemption (no credential): no token permission applies.
func agentOperation(op *huma.Operation) bool {
	return op.OperationID == "redeemAgentDeviceCode" || agentPath(BasePath+op.Path)
}

// noteAgentSecurity documents an agent operation's credential.
func noteAgentSecurity(op *huma.Operation) {
	switch {
	case op.OperationID == "redeemAgentDeviceCode":
		op.Security = []map[string][]string{}
	case agentPath(BasePath + op.Path):
		op.Security = []map[string][]string{{"AgentAuth": {}}}
	}
}
