// Package agents is programs acting for one customer of a platform: the
// agent (its name, pause switch and policy), its connection (a single-use
// device code redeemed for a bearer access token, both kept only as
// SHA-256 hashes), and the actions it initiates, which the platform may
// have to approve (the spec's AgentAction transitions, one table in
// status.go). The policy's rules and the money an action moves live in
// core/agents/policy; this package reaches them through two small ports,
// Executor and UsageReader.
package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/agents/policy"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/ports"
)

// Error codes, all the reference's. Its 404 and 403 enums are closed and
// name no agent code, so an unknown agent, action or device code is
// REFERENCE_NOT_FOUND and a paused agent's refusal FORBIDDEN, with
// details.reason telling which (as a policy refusal's does, whose code,
// policy.CodeForbidden, a paused agent's refusal shares).
const (
	CodeNotFound = "REFERENCE_NOT_FOUND"
	// The reasons, in details.reason.
	ReasonAgentNotFound      = "AGENT_NOT_FOUND"
	ReasonActionNotFound     = "AGENT_ACTION_NOT_FOUND"
	ReasonDeviceCodeNotFound = "DEVICE_CODE_NOT_FOUND"
	// ReasonPaused is a paused agent's refusal to initiate anything (403).
	ReasonPaused = "AGENT_PAUSED"
	// CodeNotPending is approving or rejecting an action that is not
	// PENDING_APPROVAL (409, the reference's code for a refused status
	// change).
	CodeNotPending = "INVALID_STATE_TRANSITION"
	// CodeConnected is a new device code for a connected agent (409).
	CodeConnected = "CONFLICT"
	// CodeExpired is redeeming an expired device code (400).
	CodeExpired = "EXPIRED"
)

const (
	agentType  = "Agent"
	actionType = "AgentAction"
	// MaxNameLen bounds an agent's name (characters).
	MaxNameLen = 255
	// MaxReasonLen bounds a rejection reason (characters).
	MaxReasonLen = 1000
	// DefaultLimit and MaxLimit bound a page of agents or actions.
	DefaultLimit = 20
	MaxLimit     = 100
	// codeAttempts is how many fresh device codes are tried when one is
	// taken (with 59 bits, one collision is already unlikely).
	codeAttempts = 3
)

// EventPendingApproval is the webhook an action waiting for the
// platform's decision records (reference AgentActionWebhook).
const EventPendingApproval = "AGENT_ACTION.PENDING_APPROVAL"

// KindRelease is the job that gives back what a rejected action held.
const KindRelease = "agent.action.release"

var (
	errAgentNotFound  = notFound(ReasonAgentNotFound, "agent not found")
	errActionNotFound = notFound(ReasonActionNotFound, "agent action not found")
	errCodeNotFound   = notFound(ReasonDeviceCodeNotFound, "no such device code")
)

// Executor moves the money of an action the platform decided on
// (core/agents/policy implements it).
type Executor interface {
	// Approve executes a PENDING_APPROVAL action: it moves it (Move, then
	// ports.AgentActionRepo.Update from PENDING_APPROVAL, with its money
	// movement) to APPROVED with its transaction, or to FAILED when
	// execution fails (its quote expired meanwhile, funds gone), and
	// returns it as stored. An action no longer PENDING_APPROVAL is a
	// *ports.ConflictError (ConflictAgentActionStatus).
	Approve(ctx context.Context, a ports.AgentAction) (ports.AgentAction, error)
	// Release gives back what a REJECTED action held (its ledger hold,
	// its spending usage). It runs from a durable job, at least once, so
	// it must be idempotent.
	Release(ctx context.Context, a ports.AgentAction) error
}

// Usage is an agent's spending so far (reference AgentUsage): amounts in
// the smallest unit of the policy's currency.
type Usage struct {
	DailyTransactionCount int
	DailySpend            int64
	MonthlySpend          int64
	// DailyResetDate ("YYYY-MM-DD") and MonthlyResetMonth ("YYYY-MM") are
	// when the counters next start again (UTC).
	DailyResetDate    string
	MonthlyResetMonth string
}

// UsageReader reads an agent's usage (core/agents/policy keeps it).
type UsageReader interface {
	Usage(ctx context.Context, a ports.Agent) (Usage, error)
}

// Service manages agents, connects them and keeps their actions.
type Service struct {
	store    ports.Store
	clock    ports.Clock
	ids      ports.IDs
	log      *slog.Logger
	executor Executor
	usage    UsageReader
}

// New returns a Service; a nil log logs to slog.Default(). Without an
// Executor (SetExecutor) approving only moves an action's status and a
// rejection releases nothing.
func New(store ports.Store, clock ports.Clock, ids ports.IDs, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{store: store, clock: clock, ids: ids, log: log}
}

// SetExecutor sets what executes approved actions and releases rejected
// ones.
func (s *Service) SetExecutor(e Executor) { s.executor = e }

// SetUsage sets where usage is read (none: every counter zero).
func (s *Service) SetUsage(u UsageReader) { s.usage = u }

// Register registers the release and give-back jobs' handlers on r.
func (s *Service) Register(r *jobs.Runner) {
	jobs.HandleJSON(r, KindRelease, s.handleRelease)
	jobs.HandleJSON(r, KindGiveBack, s.handleGiveBack)
}

// DeviceCode is a device code as shown: the code itself only in the
// answers that create it.
type DeviceCode struct {
	Code      string
	AgentID   string
	ExpiresAt time.Time
	Redeemed  bool
}

// CreateInput is a new agent. Policy is the document core/agents/policy
// checked.
type CreateInput struct {
	Name       string
	CustomerID string
	Policy     []byte
}

// Created is a new agent and its first device code.
type Created struct {
	Agent ports.Agent
	Code  DeviceCode
}

// Create stores an agent for one of the platform's live customers, with
// its first device code. A blank or long name, or a customerId that is not
// a live customer of the platform, is 400 naming the field.
func (s *Service) Create(ctx context.Context, platformID string, in CreateInput) (Created, error) {
	name, err := checkName(in.Name)
	if err != nil {
		return Created{}, err
	}
	c, err := s.store.Read().Customers().Get(ctx, platformID, in.CustomerID)
	if errors.Is(err, ports.ErrNotFound) || err == nil && c.IsDeleted {
		return Created{}, fault.Invalid("customerId", "is not a customer of this platform")
	}
	if err != nil {
		return Created{}, fmt.Errorf("agents: customer %s: %w", in.CustomerID, err)
	}
	if err := policyAccounts(ctx, s.store.Read(), platformID, c.ID, in.Policy); err != nil {
		return Created{}, err
	}
	now := s.clock.Now().UTC()
	a := ports.Agent{ID: s.ids.New(agentType), PlatformID: platformID, CustomerID: c.ID, Name: name,
		Policy: in.Policy, CreatedAt: now, UpdatedAt: now}
	var code DeviceCode
	err = s.withNewCode(ctx, a.ID, platformID, now, func(tx ports.Tx) error {
		return tx.Agents().Create(ctx, a)
	}, &code)
	if err != nil {
		return Created{}, err
	}
	return Created{Agent: a, Code: code}, nil
}

// withNewCode runs first, then stores a fresh device code of the agent,
// in one unit of work (retried with another code if one is taken).
func (s *Service) withNewCode(ctx context.Context, agentID, platformID string, now time.Time,
	first func(ports.Tx) error, out *DeviceCode) error {
	for attempt := 1; ; attempt++ {
		shown, err := newDeviceCode()
		if err != nil {
			return err
		}
		dc := ports.AgentDeviceCode{CodeHash: codeHash(shown), AgentID: agentID, PlatformID: platformID,
			ExpiresAt: now.Add(DeviceCodeLifetime), CreatedAt: now}
		err = s.store.InTx(ctx, func(tx ports.Tx) error {
			if err := first(tx); err != nil {
				return err
			}
			return tx.Agents().CreateDeviceCode(ctx, dc)
		})
		var ce *ports.ConflictError
		if errors.As(err, &ce) && ce.Constraint == ports.UniqueAgentDeviceCode && attempt < codeAttempts {
			continue
		}
		if err != nil {
			return err
		}
		*out = DeviceCode{Code: shown, AgentID: agentID, ExpiresAt: dc.ExpiresAt}
		return nil
	}
}

func checkName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", fault.Invalid("name", "must not be empty")
	case utf8.RuneCountInString(name) > MaxNameLen:
		return "", fault.Invalid("name", fmt.Sprintf("must be at most %d characters", MaxNameLen))
	}
	return name, nil
}

// Get returns one of the platform's live agents (404 otherwise).
func (s *Service) Get(ctx context.Context, platformID, id string) (ports.Agent, error) {
	a, err := s.store.Read().Agents().Get(ctx, platformID, id)
	if err != nil {
		return ports.Agent{}, agentErr(id, err)
	}
	return a, nil
}

func agentErr(id string, err error) error {
	if errors.Is(err, ports.ErrNotFound) {
		return errAgentNotFound
	}
	return fmt.Errorf("agents: agent %s: %w", id, err)
}

// Page is one page of a list, and where the next one starts.
type Page[T any] struct {
	Rows    []T
	HasMore bool
	Next    *ports.Position
	Total   int
}

// List returns one page of the platform's live agents matching f, oldest
// first (page.Limit 0 means DefaultLimit).
func (s *Service) List(ctx context.Context, platformID string, f ports.AgentFilter, page ports.Page) (Page[ports.Agent], error) {
	if err := checkLimit(&page); err != nil {
		return Page[ports.Agent]{}, err
	}
	f.PlatformID = platformID
	rows, total, err := s.store.Read().Agents().List(ctx, f, page)
	if err != nil {
		return Page[ports.Agent]{}, fmt.Errorf("agents: list: %w", err)
	}
	return pageOf(rows, total, page.Limit, ports.Agent.Position), nil
}

func checkLimit(page *ports.Page) error {
	switch {
	case page.Limit == 0:
		page.Limit = DefaultLimit
	case page.Limit < 1 || page.Limit > MaxLimit:
		return fault.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxLimit))
	}
	return nil
}

func pageOf[T any](rows []T, total, limit int, pos func(T) ports.Position) Page[T] {
	out := Page[T]{Total: total}
	out.Rows, out.Next = ports.TrimPage(rows, limit, pos)
	out.HasMore = out.Next != nil
	return out
}

// UpdateInput changes an agent; nil fields stay. At least one is needed.
type UpdateInput struct {
	Name     *string
	IsPaused *bool
}

// Update renames, pauses or resumes one of the platform's agents. A
// paused agent initiates nothing (Pausable) but still reads.
func (s *Service) Update(ctx context.Context, platformID, id string, in UpdateInput) (ports.Agent, error) {
	if in.Name == nil && in.IsPaused == nil {
		return ports.Agent{}, fault.InvalidFields(
			fault.FieldError{Field: "name", Message: "give name or isPaused (at least one)"},
			fault.FieldError{Field: "isPaused", Message: "give name or isPaused (at least one)"})
	}
	var name string
	if in.Name != nil {
		n, err := checkName(*in.Name)
		if err != nil {
			return ports.Agent{}, err
		}
		name = n
	}
	return s.change(ctx, platformID, id, func(a *ports.Agent) error {
		if in.Name != nil {
			a.Name = name
		}
		if in.IsPaused != nil {
			a.IsPaused = *in.IsPaused
		}
		return nil
	})
}

// SetPolicy replaces one of the platform's agents' policy with what
// merge makes of the stored one (core/agents/policy merges and checks a
// partial update); it takes effect at the agent's next request.
func (s *Service) SetPolicy(ctx context.Context, platformID, id string, merge func(stored []byte) ([]byte, error)) (ports.Agent, error) {
	return s.change(ctx, platformID, id, func(a *ports.Agent) error {
		p, err := merge(a.Policy)
		if err != nil {
			return err
		}
		if err := policyAccounts(ctx, s.store.Read(), platformID, a.CustomerID, p); err != nil {
			return err
		}
		a.Policy = p
		return nil
	})
}

// policyAccounts refuses a policy document naming an internal account that
// is not one of customerID's (400 naming each such field): the agent could
// never use it, so the platform meant another.
func policyAccounts(ctx context.Context, r ports.Tx, platformID, customerID string, doc []byte) error {
	if len(doc) == 0 {
		return nil
	}
	var p policy.Policy
	if err := json.Unmarshal(doc, &p); err != nil {
		return fmt.Errorf("agents: policy: %w", err)
	}
	var bad fault.Collector
	for _, ref := range p.Accounts("policy") {
		acct, err := r.InternalAccounts().Get(ctx, platformID, ref.AccountID)
		switch {
		case errors.Is(err, ports.ErrNotFound) || err == nil && acct.CustomerID != customerID:
			bad.Add(ref.Field, "is not an internal account of the agent's customer")
		case err != nil:
			return fmt.Errorf("agents: policy account %s: %w", ref.AccountID, err)
		}
	}
	return bad.Err()
}

// change applies fn to the agent under its row lock and stores it.
func (s *Service) change(ctx context.Context, platformID, id string, fn func(*ports.Agent) error) (ports.Agent, error) {
	var out ports.Agent
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		a, err := tx.Agents().GetForUpdate(ctx, platformID, id)
		if err != nil {
			return agentErr(id, err)
		}
		if err := fn(&a); err != nil {
			return err
		}
		a.UpdatedAt = s.clock.Now().UTC()
		if err := tx.Agents().Update(ctx, a); err != nil {
			return agentErr(id, err)
		}
		out = a
		return nil
	})
	return out, err
}

// Delete deletes one of the platform's agents: its token stops working at
// once (every request looks it up), its unredeemed codes die, and the
// actions it left waiting for the platform are rejected with it
// (withdrawnReason), each with the job that gives back what it held.
func (s *Service) Delete(ctx context.Context, platformID, id string) error {
	now := s.clock.Now().UTC()
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Agents().Delete(ctx, platformID, id, now); err != nil {
			return err
		}
		return rejectWaiting(ctx, tx, platformID, id, now)
	})
	if err != nil {
		return agentErr(id, err)
	}
	return nil
}

// RegenerateCode issues a new device code for an agent not yet connected;
// its earlier unredeemed codes die. A connected agent is 409.
func (s *Service) RegenerateCode(ctx context.Context, platformID, id string) (DeviceCode, error) {
	now := s.clock.Now().UTC()
	var code DeviceCode
	err := s.withNewCode(ctx, id, platformID, now, func(tx ports.Tx) error {
		a, err := tx.Agents().GetForUpdate(ctx, platformID, id)
		if err != nil {
			return agentErr(id, err)
		}
		if a.IsConnected {
			return fault.Conflict(CodeConnected, "the agent is already connected: its device code was redeemed")
		}
		return tx.Agents().DropUnredeemedCodes(ctx, id)
	}, &code)
	return code, err
}

// CodeStatus tells whether one of the platform's device codes was
// redeemed (a dead code, a mistyped one or another platform's is 404).
func (s *Service) CodeStatus(ctx context.Context, platformID, code string) (DeviceCode, error) {
	shown, ok := NormalizeDeviceCode(code)
	if !ok {
		return DeviceCode{}, errCodeNotFound
	}
	dc, err := s.store.Read().Agents().DeviceCode(ctx, codeHash(shown))
	if errors.Is(err, ports.ErrNotFound) || err == nil && dc.PlatformID != platformID {
		return DeviceCode{}, errCodeNotFound
	}
	if err != nil {
		return DeviceCode{}, fmt.Errorf("agents: device code: %w", err)
	}
	return DeviceCode{Code: shown, AgentID: dc.AgentID, ExpiresAt: dc.ExpiresAt, Redeemed: dc.RedeemedAt != nil}, nil
}

// Redeemed is a connected agent and its access token, shown this once.
type Redeemed struct {
	Agent       ports.Agent
	AccessToken string
}

// Redeem consumes a device code (atomically: of concurrent redeems one
// wins) and connects its agent with a fresh access token, which replaces
// any earlier one. A redeemed code is 400 INVALID_INPUT, an expired one
// 400 EXPIRED, an unknown or dead one 404.
func (s *Service) Redeem(ctx context.Context, code string) (Redeemed, error) {
	shown, ok := NormalizeDeviceCode(code)
	if !ok {
		return Redeemed{}, errCodeNotFound
	}
	hash := codeHash(shown)
	token, tokenHash, err := newAccessToken()
	if err != nil {
		return Redeemed{}, err
	}
	var out Redeemed
	err = s.store.InTx(ctx, func(tx ports.Tx) error {
		now := s.clock.Now().UTC()
		dc, err := tx.Agents().RedeemDeviceCode(ctx, hash, now)
		if err != nil {
			return spent(ctx, tx, hash, err)
		}
		a, err := tx.Agents().GetForUpdate(ctx, dc.PlatformID, dc.AgentID)
		if err != nil {
			return agentErr(dc.AgentID, err)
		}
		a.IsConnected, a.TokenHash, a.UpdatedAt = true, tokenHash, now
		if err := tx.Agents().Update(ctx, a); err != nil {
			return agentErr(a.ID, err)
		}
		out = Redeemed{Agent: a, AccessToken: token}
		return nil
	})
	if err != nil {
		return Redeemed{}, err
	}
	return out, nil
}

// spent is why a code could not be redeemed.
func spent(ctx context.Context, tx ports.Tx, hash []byte, err error) error {
	var ce *ports.ConflictError
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return errCodeNotFound
	case !errors.As(err, &ce) || ce.Constraint != ports.ConflictDeviceCodeSpent:
		return fmt.Errorf("agents: redeem: %w", err)
	}
	dc, gerr := tx.Agents().DeviceCode(ctx, hash)
	if gerr != nil {
		return fmt.Errorf("agents: redeem: reread: %w", gerr)
	}
	if dc.RedeemedAt != nil {
		return fault.Invalid("code", "the device code has already been redeemed")
	}
	e := fault.New(fault.KindInvalid, CodeExpired, fmt.Sprintf("the device code expired at %s; ask for a new one",
		dc.ExpiresAt.UTC().Format(time.RFC3339)))
	e.Fields = []fault.FieldError{{Field: "code", Message: "expired"}}
	return e
}

// Authenticate returns the live agent whose access token this is. Tokens
// are looked up by their SHA-256 (a 256-bit random secret needs no slow
// hash), so the comparison is the index's equality on a hash, and timing
// tells nothing of the token. A deleted agent's token is gone with it.
func (s *Service) Authenticate(ctx context.Context, token string) (ports.Agent, error) {
	if !strings.HasPrefix(token, AccessTokenPrefix) || len(token) != len(AccessTokenPrefix)+2*accessTokenBytes {
		return ports.Agent{}, fault.Unauthorized("invalid agent access token")
	}
	a, err := s.store.Read().Agents().ByTokenHash(ctx, TokenHash(token))
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Agent{}, fault.Unauthorized("invalid agent access token")
	}
	if err != nil {
		return ports.Agent{}, fmt.Errorf("agents: authenticate: %w", err)
	}
	return a, nil
}

// notFound is a 404 REFERENCE_NOT_FOUND whose details.reason names what
// was not found.
func notFound(reason, message string) *fault.Error {
	e := fault.NotFound(CodeNotFound, message)
	e.Details = map[string]any{"reason": reason}
	return e
}

// Pausable refuses, with 403 FORBIDDEN (details.reason AGENT_PAUSED),
// anything a paused agent would initiate. Reads do not ask.
func Pausable(a ports.Agent) error {
	if a.IsPaused {
		e := fault.New(fault.KindForbidden, policy.CodeForbidden,
			"the agent is paused: it can initiate nothing until the platform resumes it (PATCH /agents/{agentId} isPaused false)")
		e.Details = map[string]any{"reason": ReasonPaused}
		return e
	}
	return nil
}

// Usage is the agent's usage (zero counters, with their next reset
// dates, when no UsageReader is set).
func (s *Service) Usage(ctx context.Context, a ports.Agent) (Usage, error) {
	if s.usage != nil {
		return s.usage.Usage(ctx, a)
	}
	now := s.clock.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return Usage{DailyResetDate: day.AddDate(0, 0, 1).Format(time.DateOnly),
		MonthlyResetMonth: day.AddDate(0, 1, 1-day.Day()).Format("2006-01")}, nil
}
