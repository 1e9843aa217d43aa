package ports

import (
	"context"
	"time"
)

// Agent is a program acting for one customer of one platform, with its
// own credential (a bearer token obtained by redeeming a device code) and
// a spending policy. Only the SHA-256 of the token is stored. A deleted
// agent is kept (DeletedAt set, token gone) and no longer found.
type Agent struct {
	ID         string // "Agent:<uuid>"
	PlatformID string
	CustomerID string
	Name       string
	IsPaused   bool
	// IsConnected is true once a device code of the agent was redeemed.
	IsConnected bool
	// Policy is the agent's policy as core/agents/policy encodes it: the
	// store keeps the document and never reads it.
	Policy []byte
	// TokenHash is the SHA-256 of the access token (nil until redeemed,
	// and again once deleted).
	TokenHash []byte
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt *time.Time
}

// Position is the agent's place in a list (creation time, id).
func (a Agent) Position() Position { return Position{CreatedAt: a.CreatedAt, ID: a.ID} }

// AgentFilter is the reference's listAgents query. Nil and zero values do
// not filter; deleted agents are never listed.
type AgentFilter struct {
	PlatformID    string // always set by core
	CustomerID    string
	IsPaused      *bool
	IsConnected   *bool
	CreatedAfter  *time.Time // inclusive
	CreatedBefore *time.Time
	UpdatedAfter  *time.Time
	UpdatedBefore *time.Time
}

// AgentDeviceCode is a single-use code that connects an agent: redeeming
// it (before ExpiresAt) issues the agent's access token. The code itself
// is not stored, only its SHA-256 (CodeHash), the key of every lookup.
type AgentDeviceCode struct {
	CodeHash   []byte
	AgentID    string
	PlatformID string
	ExpiresAt  time.Time
	// RedeemedAt is when it was redeemed (nil while unredeemed).
	RedeemedAt *time.Time
	CreatedAt  time.Time
}

// AgentAction is something an agent initiated (a quote execution or a
// transfer), which the platform may have to approve. Status is one of
// core/agents' action statuses; every change goes through its table.
type AgentAction struct {
	ID                 string // "AgentAction:<uuid>"
	PlatformID         string
	AgentID            string
	CustomerID         string
	PlatformCustomerID string
	Type               string // EXECUTE_QUOTE, TRANSFER_OUT, TRANSFER_IN
	Status             string
	// QuoteID is the quote an EXECUTE_QUOTE action executes.
	QuoteID string
	// TransactionID is the transaction once execution has begun.
	TransactionID string
	// Transfer details of TRANSFER_OUT and TRANSFER_IN actions: Amount in
	// Currency's smallest unit, between the two accounts.
	Amount               int64
	Currency             string
	SourceAccountID      string
	DestinationAccountID string
	// Charged is what the action counts against the agent's spending
	// usage, in the policy currency's smallest unit (given back when the
	// action is rejected or fails).
	Charged         int64
	RejectionReason string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Position is the action's place in a list (creation time, id).
func (a AgentAction) Position() Position { return Position{CreatedAt: a.CreatedAt, ID: a.ID} }

// AgentActionFilter selects a platform's agent actions. Zero values do
// not filter.
type AgentActionFilter struct {
	PlatformID string // always set by core
	AgentID    string
	CustomerID string
	Status     string
	// TransactionID selects the action that made that transaction.
	TransactionID string
	StartDate     *time.Time // inclusive, on CreatedAt
	EndDate       *time.Time
	// Desc sorts newest first.
	Desc bool
}

// Store rules of the agents.
const (
	// UniqueAgentTokenHash: two agents never share a token.
	UniqueAgentTokenHash = "agents_token_hash"
	// UniqueAgentDeviceCode: a code's hash is its key.
	UniqueAgentDeviceCode = "agent_device_codes_pkey"
	// ConflictDeviceCodeSpent is RedeemDeviceCode's refusal: the code is
	// already redeemed or expired.
	ConflictDeviceCodeSpent = "agent_device_codes_spent"
	// ConflictAgentActionStatus is AgentActionRepo.Update's refusal: the
	// action is no longer in the status the change was made from.
	ConflictAgentActionStatus = "agent_actions_status"
)

// AgentRepo keeps agents and their device codes.
type AgentRepo interface {
	Create(ctx context.Context, a Agent) error
	// Get returns the platform's live agent, or ErrNotFound (another
	// platform's, or deleted).
	Get(ctx context.Context, platformID, id string) (Agent, error)
	// GetForUpdate is Get with the row locked until the unit of work ends.
	GetForUpdate(ctx context.Context, platformID, id string) (Agent, error)
	// ByTokenHash returns the live agent whose token hashes to hash, or
	// ErrNotFound.
	ByTokenHash(ctx context.Context, hash []byte) (Agent, error)
	// List returns up to page.Limit+1 live agents in (CreatedAt, ID)
	// order after page.After, and the total matching f.
	List(ctx context.Context, f AgentFilter, page Page) (rows []Agent, total int, err error)
	// Update writes Name, IsPaused, IsConnected, Policy, TokenHash and
	// UpdatedAt of the platform's live agent (ErrNotFound when none); a
	// token another agent holds is a *ConflictError
	// (UniqueAgentTokenHash).
	Update(ctx context.Context, a Agent) error
	// Delete marks the platform's live agent deleted at `at` and drops its
	// token and unredeemed device codes (ErrNotFound when none).
	Delete(ctx context.Context, platformID, id string, at time.Time) error

	// CreateDeviceCode inserts; a taken hash is a *ConflictError
	// (UniqueAgentDeviceCode).
	CreateDeviceCode(ctx context.Context, c AgentDeviceCode) error
	// DeviceCode returns the code with that hash, or ErrNotFound.
	DeviceCode(ctx context.Context, hash []byte) (AgentDeviceCode, error)
	// DropUnredeemedCodes deletes the agent's unredeemed device codes.
	DropUnredeemedCodes(ctx context.Context, agentID string) error
	// RedeemDeviceCode marks the code with that hash redeemed at `at`,
	// atomically, if it is unredeemed and `at` is before its ExpiresAt
	// (of racing redeems exactly one succeeds), and returns it. Otherwise
	// a *ConflictError (ConflictDeviceCodeSpent), or ErrNotFound.
	RedeemDeviceCode(ctx context.Context, hash []byte, at time.Time) (AgentDeviceCode, error)
}

// AgentActionRepo keeps agent actions.
type AgentActionRepo interface {
	Create(ctx context.Context, a AgentAction) error
	// Get returns the platform's action, or ErrNotFound.
	Get(ctx context.Context, platformID, id string) (AgentAction, error)
	// List pages by (CreatedAt, ID) in f.Desc order after page.After,
	// returning up to page.Limit+1 rows and the count matching f.
	List(ctx context.Context, f AgentActionFilter, page Page) (rows []AgentAction, total int, err error)
	// Update stores a's Status, TransactionID, Charged, RejectionReason
	// and UpdatedAt if the stored status is still from, atomically (of two
	// racing changes from one status exactly one applies); a
	// *ConflictError (ConflictAgentActionStatus) when it is no longer
	// from, ErrNotFound when there is no such action.
	Update(ctx context.Context, a AgentAction, from string) error
}
