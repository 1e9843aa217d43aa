package memory

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/corridorpay/corridor/ports"
)

// ---- agents, their device codes and actions ----

// storeDeviceCode is a device code as kept: Dropped is a tombstone (the
// commit copies maps, so a deletion is a value).
type storeDeviceCode struct {
	code    ports.AgentDeviceCode
	dropped bool
}

func (tx *storeTx) Agents() ports.AgentRepo             { return storeAgents{tx} }
func (tx *storeTx) AgentActions() ports.AgentActionRepo { return storeAgentActions{tx} }

func pickAgents(s *storeState) map[string]ports.Agent             { return s.agents }
func pickDeviceCodes(s *storeState) map[string]storeDeviceCode    { return s.deviceCodes }
func pickAgentActions(s *storeState) map[string]ports.AgentAction { return s.agentActions }

func agentKey(a ports.Agent) (time.Time, string) { return a.CreatedAt, a.ID }

type storeAgents struct{ tx *storeTx }

func (r storeAgents) Create(_ context.Context, a ports.Agent) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickAgents, a.ID); ok {
		return storeConflict("agents_pkey")
	}
	if err := r.tokenFree(a); err != nil {
		return err
	}
	r.tx.w.state.agents[a.ID] = storeCopyAgent(a)
	return nil
}

// tokenFree refuses a token another agent holds; the caller holds begin.
func (r storeAgents) tokenFree(a ports.Agent) error {
	if len(a.TokenHash) == 0 {
		return nil
	}
	taken := storeAll(r.tx, pickAgents, func(o ports.Agent) bool {
		return o.ID != a.ID && bytes.Equal(o.TokenHash, a.TokenHash)
	})
	if len(taken) > 0 {
		return storeConflict(ports.UniqueAgentTokenHash)
	}
	return nil
}

func (r storeAgents) Get(_ context.Context, platformID, id string) (ports.Agent, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Agent{}, err
	}
	defer done()
	return r.live(platformID, id)
}

// live is the platform's live agent; the caller holds begin.
func (r storeAgents) live(platformID, id string) (ports.Agent, error) {
	a, ok := storeLookup(r.tx, pickAgents, id)
	if !ok || a.PlatformID != platformID || a.DeletedAt != nil {
		return ports.Agent{}, fmt.Errorf("agent %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyAgent(a), nil
}

// GetForUpdate needs no lock: units of work run one at a time.
func (r storeAgents) GetForUpdate(ctx context.Context, platformID, id string) (ports.Agent, error) {
	return r.Get(ctx, platformID, id)
}

func (r storeAgents) ByTokenHash(_ context.Context, hash []byte) (ports.Agent, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Agent{}, err
	}
	defer done()
	found := storeAll(r.tx, pickAgents, func(a ports.Agent) bool {
		return a.DeletedAt == nil && len(hash) > 0 && bytes.Equal(a.TokenHash, hash)
	})
	if len(found) == 0 {
		return ports.Agent{}, fmt.Errorf("agent token: %w", ports.ErrNotFound)
	}
	return storeCopyAgent(found[0]), nil
}

func (r storeAgents) List(_ context.Context, f ports.AgentFilter, page ports.Page) ([]ports.Agent, int, error) {
	return storeListCopies(r.tx, pickAgents, func(a ports.Agent) bool {
		return a.PlatformID == f.PlatformID && a.DeletedAt == nil && storeAgentMatches(a, f)
	}, agentKey, storeCopyAgent, page)
}

func storeAgentMatches(a ports.Agent, f ports.AgentFilter) bool {
	return (f.CustomerID == "" || a.CustomerID == f.CustomerID) &&
		(f.IsPaused == nil || a.IsPaused == *f.IsPaused) &&
		(f.IsConnected == nil || a.IsConnected == *f.IsConnected) &&
		storeInTimeBounds(a.CreatedAt, a.UpdatedAt, f.CreatedAfter, f.CreatedBefore, f.UpdatedAfter, f.UpdatedBefore)
}

func (r storeAgents) Update(_ context.Context, a ports.Agent) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	cur, err := r.live(a.PlatformID, a.ID)
	if err != nil {
		return err
	}
	if err := r.tokenFree(a); err != nil {
		return err
	}
	cur.Name, cur.IsPaused, cur.IsConnected, cur.Policy, cur.TokenHash, cur.UpdatedAt =
		a.Name, a.IsPaused, a.IsConnected, a.Policy, a.TokenHash, a.UpdatedAt
	r.tx.w.state.agents[a.ID] = storeCopyAgent(cur)
	return nil
}

func (r storeAgents) Delete(_ context.Context, platformID, id string, at time.Time) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	cur, err := r.live(platformID, id)
	if err != nil {
		return err
	}
	at = ports.Stored(at)
	cur.TokenHash, cur.UpdatedAt, cur.DeletedAt = nil, at, &at
	r.tx.w.state.agents[id] = storeCopyAgent(cur)
	r.dropUnredeemed(id)
	return nil
}

func (r storeAgents) CreateDeviceCode(_ context.Context, c ports.AgentDeviceCode) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	key := hex.EncodeToString(c.CodeHash)
	if _, ok := storeLookup(r.tx, pickDeviceCodes, key); ok {
		return storeConflict(ports.UniqueAgentDeviceCode)
	}
	r.tx.w.state.deviceCodes[key] = storeDeviceCode{code: storeCopyDeviceCode(c)}
	return nil
}

func (r storeAgents) DeviceCode(_ context.Context, hash []byte) (ports.AgentDeviceCode, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.AgentDeviceCode{}, err
	}
	defer done()
	return r.deviceCode(hash)
}

// deviceCode is the live code with hash; the caller holds begin.
func (r storeAgents) deviceCode(hash []byte) (ports.AgentDeviceCode, error) {
	c, ok := storeLookup(r.tx, pickDeviceCodes, hex.EncodeToString(hash))
	if !ok || c.dropped {
		return ports.AgentDeviceCode{}, fmt.Errorf("device code: %w", ports.ErrNotFound)
	}
	return storeCopyDeviceCode(c.code), nil
}

func (r storeAgents) DropUnredeemedCodes(_ context.Context, agentID string) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	r.dropUnredeemed(agentID)
	return nil
}

// dropUnredeemed tombstones the agent's unredeemed codes; the caller
// holds begin(true).
func (r storeAgents) dropUnredeemed(agentID string) {
	for _, c := range storeAll(r.tx, pickDeviceCodes, func(c storeDeviceCode) bool {
		return !c.dropped && c.code.AgentID == agentID && c.code.RedeemedAt == nil
	}) {
		r.tx.w.state.deviceCodes[hex.EncodeToString(c.code.CodeHash)] = storeDeviceCode{code: c.code, dropped: true}
	}
}

// RedeemDeviceCode is atomic: units of work that write run one at a time.
func (r storeAgents) RedeemDeviceCode(_ context.Context, hash []byte, at time.Time) (ports.AgentDeviceCode, error) {
	done, err := r.tx.begin(true)
	if err != nil {
		return ports.AgentDeviceCode{}, err
	}
	defer done()
	c, err := r.deviceCode(hash)
	if err != nil {
		return ports.AgentDeviceCode{}, err
	}
	if c.RedeemedAt != nil || !ports.Stored(at).Before(c.ExpiresAt) {
		return ports.AgentDeviceCode{}, storeConflict(ports.ConflictDeviceCodeSpent)
	}
	at = ports.Stored(at)
	c.RedeemedAt = &at
	r.tx.w.state.deviceCodes[hex.EncodeToString(hash)] = storeDeviceCode{code: storeCopyDeviceCode(c)}
	return storeCopyDeviceCode(c), nil
}

func storeCopyAgent(a ports.Agent) ports.Agent {
	a.Policy, a.TokenHash = slices.Clone(a.Policy), slices.Clone(a.TokenHash)
	a.CreatedAt, a.UpdatedAt, a.DeletedAt = ports.Stored(a.CreatedAt), ports.Stored(a.UpdatedAt), ports.StoredPtr(a.DeletedAt)
	return a
}

func storeCopyDeviceCode(c ports.AgentDeviceCode) ports.AgentDeviceCode {
	c.CodeHash = slices.Clone(c.CodeHash)
	c.ExpiresAt, c.CreatedAt, c.RedeemedAt = ports.Stored(c.ExpiresAt), ports.Stored(c.CreatedAt), ports.StoredPtr(c.RedeemedAt)
	return c
}

// ---- agent actions ----

type storeAgentActions struct{ tx *storeTx }

func (r storeAgentActions) Create(_ context.Context, a ports.AgentAction) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickAgentActions, a.ID); ok {
		return storeConflict("agent_actions_pkey")
	}
	r.tx.w.state.agentActions[a.ID] = storeCopyAgentAction(a)
	return nil
}

func (r storeAgentActions) Get(_ context.Context, platformID, id string) (ports.AgentAction, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.AgentAction{}, err
	}
	defer done()
	a, ok := storeLookup(r.tx, pickAgentActions, id)
	if !ok || a.PlatformID != platformID {
		return ports.AgentAction{}, fmt.Errorf("agent action %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyAgentAction(a), nil
}

func (r storeAgentActions) List(_ context.Context, f ports.AgentActionFilter, page ports.Page) ([]ports.AgentAction, int, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	rows := storeAll(r.tx, pickAgentActions, func(a ports.AgentAction) bool {
		return a.PlatformID == f.PlatformID && (f.AgentID == "" || a.AgentID == f.AgentID) &&
			(f.CustomerID == "" || a.CustomerID == f.CustomerID) && (f.Status == "" || a.Status == f.Status) &&
			(f.TransactionID == "" || a.TransactionID == f.TransactionID) &&
			storeInTimeBounds(a.CreatedAt, a.CreatedAt, f.StartDate, f.EndDate, nil, nil)
	})
	compare := func(a, b ports.AgentAction) int {
		c := cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
		if f.Desc {
			return -c
		}
		return c
	}
	slices.SortFunc(rows, compare)
	total := len(rows)
	if page.After != nil {
		i, found := slices.BinarySearchFunc(rows, ports.AgentAction{CreatedAt: ports.Stored(page.After.CreatedAt), ID: page.After.ID}, compare)
		if found {
			i++
		}
		rows = rows[i:]
	}
	if page.Limit > 0 && len(rows) > page.Limit+1 {
		rows = rows[:page.Limit+1]
	}
	for i := range rows {
		rows[i] = storeCopyAgentAction(rows[i])
	}
	return rows, total, nil
}

// Update is atomic: units of work that write run one at a time.
func (r storeAgentActions) Update(_ context.Context, a ports.AgentAction, from string) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	cur, ok := storeLookup(r.tx, pickAgentActions, a.ID)
	if !ok || cur.PlatformID != a.PlatformID {
		return fmt.Errorf("agent action %s: %w", a.ID, ports.ErrNotFound)
	}
	if cur.Status != from {
		return storeConflict(ports.ConflictAgentActionStatus)
	}
	cur.Status, cur.TransactionID, cur.Charged, cur.RejectionReason, cur.UpdatedAt =
		a.Status, a.TransactionID, a.Charged, a.RejectionReason, a.UpdatedAt
	r.tx.w.state.agentActions[a.ID] = storeCopyAgentAction(cur)
	return nil
}

func storeCopyAgentAction(a ports.AgentAction) ports.AgentAction {
	a.CreatedAt, a.UpdatedAt = ports.Stored(a.CreatedAt), ports.Stored(a.UpdatedAt)
	return a
}
