package storetest

import (
	"context"
	"crypto/sha256"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// ---- agents, device codes and actions ----

func hashOf(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func agentOf(platformID string, created int) ports.Agent {
	return ports.Agent{ID: newID("Agent"), PlatformID: platformID, CustomerID: newID("Customer"), Name: "bot",
		Policy: []byte(`{"defaultExecutionMode":"AUTO"}`), CreatedAt: at(created), UpdatedAt: at(created)}
}

// sameAgent compares agents as stored: times to the microsecond, the
// policy as a JSON document (a store may respace it).
func sameAgent(t *testing.T, want, got ports.Agent, msg string) {
	t.Helper()
	assert.JSONEq(t, string(want.Policy), string(got.Policy), msg)
	want.Policy, got.Policy = nil, nil
	want.CreatedAt, want.UpdatedAt = norm(want.CreatedAt), norm(want.UpdatedAt)
	assert.Equal(t, want, got, msg)
}

func testAgents(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	a, b, other := agentOf(p.ID, 1), agentOf(p.ID, 2), agentOf(q.ID, 3)
	b.IsPaused = true
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.Agents().Create(ctx, a))
		got, err := tx.Agents().Get(ctx, p.ID, a.ID)
		require.NoError(t, err)
		sameAgent(t, a, got, "a unit of work reads its own writes")
		require.NoError(t, tx.Agents().Create(ctx, b))
		return tx.Agents().Create(ctx, other)
	})
	got, err := s.Read().Agents().Get(ctx, p.ID, a.ID)
	require.NoError(t, err)
	assert.JSONEq(t, string(a.Policy), string(got.Policy))
	_, err = s.Read().Agents().Get(ctx, q.ID, a.ID)
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform's agent is not found")

	// Update: the token, connection, pause and policy.
	a.Name, a.IsConnected, a.TokenHash, a.Policy, a.UpdatedAt = "renamed", true, hashOf("tok-a"), []byte(`{"x":1}`), at(4)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Agents().Update(ctx, a) })
	got, err = s.Read().Agents().ByTokenHash(ctx, hashOf("tok-a"))
	require.NoError(t, err)
	assert.Equal(t, a.ID, got.ID)
	assert.Equal(t, "renamed", got.Name)
	assert.True(t, got.IsConnected)
	assert.Equal(t, norm(at(4)), got.UpdatedAt)
	_, err = s.Read().Agents().ByTokenHash(ctx, hashOf("nope"))
	require.ErrorIs(t, err, ports.ErrNotFound)
	b.TokenHash = hashOf("tok-a")
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Agents().Update(ctx, b) })
	var ce *ports.ConflictError
	require.ErrorAs(t, err, &ce, "two agents never share a token")
	assert.Equal(t, ports.UniqueAgentTokenHash, ce.Constraint)

	// Lists: the platform's live agents, filtered.
	yes, no := true, false
	for _, c := range []struct {
		f    ports.AgentFilter
		want []string
	}{
		{ports.AgentFilter{PlatformID: p.ID}, []string{a.ID, b.ID}},
		{ports.AgentFilter{PlatformID: p.ID, IsPaused: &yes}, []string{b.ID}},
		{ports.AgentFilter{PlatformID: p.ID, IsConnected: &no}, []string{b.ID}},
		{ports.AgentFilter{PlatformID: p.ID, CustomerID: a.CustomerID}, []string{a.ID}},
		{ports.AgentFilter{PlatformID: p.ID, CreatedAfter: ptr(at(2))}, []string{b.ID}},
		{ports.AgentFilter{PlatformID: p.ID, UpdatedAfter: ptr(at(3))}, []string{a.ID}},
		{ports.AgentFilter{PlatformID: q.ID}, []string{other.ID}},
	} {
		rows, total, err := s.Read().Agents().List(ctx, c.f, ports.Page{Limit: 10})
		require.NoError(t, err)
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		assert.Equal(t, c.want, ids, "%+v", c.f)
		assert.Equal(t, len(c.want), total)
	}
	rows, total, err := s.Read().Agents().List(ctx, ports.AgentFilter{PlatformID: p.ID}, ports.Page{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	require.Len(t, rows, 2, "one row past the limit")
	rows, _, err = s.Read().Agents().List(ctx, ports.AgentFilter{PlatformID: p.ID},
		ports.Page{Limit: 1, After: &ports.Position{CreatedAt: rows[0].CreatedAt, ID: rows[0].ID}})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, b.ID, rows[0].ID)

	// Device codes, then deletion: the token and unredeemed codes go.
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, c := range []string{"code-1", "code-2"} {
			require.NoError(t, tx.Agents().CreateDeviceCode(ctx, ports.AgentDeviceCode{CodeHash: hashOf(c), AgentID: a.ID,
				PlatformID: p.ID, ExpiresAt: at(10), CreatedAt: at(4)}))
		}
		return nil
	})
	err = s.InTx(ctx, func(tx ports.Tx) error {
		return tx.Agents().CreateDeviceCode(ctx, ports.AgentDeviceCode{CodeHash: hashOf("code-1"), AgentID: b.ID,
			PlatformID: p.ID, ExpiresAt: at(10), CreatedAt: at(4)})
	})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, ports.UniqueAgentDeviceCode, ce.Constraint)
	dc, err := s.Read().Agents().DeviceCode(ctx, hashOf("code-1"))
	require.NoError(t, err)
	assert.Equal(t, a.ID, dc.AgentID)
	assert.Equal(t, p.ID, dc.PlatformID)
	assert.Equal(t, norm(at(10)), dc.ExpiresAt)
	assert.Nil(t, dc.RedeemedAt)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		_, err := tx.Agents().RedeemDeviceCode(ctx, hashOf("code-1"), at(5))
		return err
	})
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Agents().DropUnredeemedCodes(ctx, a.ID) })
	_, err = s.Read().Agents().DeviceCode(ctx, hashOf("code-2"))
	require.ErrorIs(t, err, ports.ErrNotFound, "an unredeemed code is dropped")
	dc, err = s.Read().Agents().DeviceCode(ctx, hashOf("code-1"))
	require.NoError(t, err, "a redeemed code stays")
	require.NotNil(t, dc.RedeemedAt)
	assert.Equal(t, norm(at(5)), *dc.RedeemedAt)

	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.Agents().CreateDeviceCode(ctx, ports.AgentDeviceCode{CodeHash: hashOf("code-3"), AgentID: a.ID,
			PlatformID: p.ID, ExpiresAt: at(10), CreatedAt: at(5)})
	})
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Agents().Delete(ctx, q.ID, a.ID, at(6)) })
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform cannot delete it")
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Agents().Delete(ctx, p.ID, a.ID, at(6)) })
	_, err = s.Read().Agents().Get(ctx, p.ID, a.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	_, err = s.Read().Agents().ByTokenHash(ctx, hashOf("tok-a"))
	require.ErrorIs(t, err, ports.ErrNotFound, "a deleted agent's token is dead at once")
	_, err = s.Read().Agents().DeviceCode(ctx, hashOf("code-3"))
	require.ErrorIs(t, err, ports.ErrNotFound, "a deleted agent's unredeemed codes die")
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Agents().Delete(ctx, p.ID, a.ID, at(7)) })
	require.ErrorIs(t, err, ports.ErrNotFound, "twice")
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Agents().Update(ctx, a) })
	require.ErrorIs(t, err, ports.ErrNotFound, "a deleted agent is not updated")
	rows, _, err = s.Read().Agents().List(ctx, ports.AgentFilter{PlatformID: p.ID}, ports.Page{Limit: 10})
	require.NoError(t, err)
	require.Len(t, rows, 1, "deleted agents are not listed")
}

func ptr[T any](v T) *T { return &v }

// Of 20 concurrent redeems of one code exactly one succeeds; the others
// see it spent. A code is not redeemed at or after its expiry.
func testAgentDeviceCodeRedeemOnce(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	a := agentOf(p.ID, 1)
	code := "race-" + uuid.NewString()
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.Agents().Create(ctx, a))
		require.NoError(t, tx.Agents().CreateDeviceCode(ctx, ports.AgentDeviceCode{CodeHash: hashOf(code), AgentID: a.ID,
			PlatformID: p.ID, ExpiresAt: at(10), CreatedAt: at(1)}))
		return tx.Agents().CreateDeviceCode(ctx, ports.AgentDeviceCode{CodeHash: hashOf(code + "-old"), AgentID: a.ID,
			PlatformID: p.ID, ExpiresAt: at(2), CreatedAt: at(1)})
	})
	var won, spent atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.InTx(ctx, func(tx ports.Tx) error {
				_, err := tx.Agents().RedeemDeviceCode(ctx, hashOf(code), at(3))
				return err
			})
			var ce *ports.ConflictError
			switch {
			case err == nil:
				won.Add(1)
			case assert.ErrorAs(t, err, &ce) && ce.Constraint == ports.ConflictDeviceCodeSpent:
				spent.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 1, won.Load(), "exactly one redeem wins")
	assert.EqualValues(t, 19, spent.Load())

	err := s.InTx(ctx, func(tx ports.Tx) error {
		_, err := tx.Agents().RedeemDeviceCode(ctx, hashOf(code+"-old"), at(2))
		return err
	})
	var ce *ports.ConflictError
	require.ErrorAs(t, err, &ce, "at its expiry a code is spent")
	err = s.InTx(ctx, func(tx ports.Tx) error {
		_, err := tx.Agents().RedeemDeviceCode(ctx, hashOf("no such code"), at(1))
		return err
	})
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func testAgentActions(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	ag, ag2 := agentOf(p.ID, 0), agentOf(p.ID, 0)
	agQ := agentOf(q.ID, 0)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, a := range []ports.Agent{ag, ag2, agQ} {
			require.NoError(t, tx.Agents().Create(ctx, a))
		}
		return nil
	})
	action := func(a ports.Agent, st string, h int) ports.AgentAction {
		return ports.AgentAction{ID: newID("AgentAction"), PlatformID: a.PlatformID, AgentID: a.ID, CustomerID: a.CustomerID,
			PlatformCustomerID: "pc-1", Type: "TRANSFER_OUT", Status: st, Amount: 1250, Currency: "USD",
			SourceAccountID: "InternalAccount:x", DestinationAccountID: "ExternalAccount:y", Charged: 1250,
			CreatedAt: at(h), UpdatedAt: at(h)}
	}
	a1 := action(ag, "PENDING_APPROVAL", 1)
	a2 := action(ag, "APPROVED", 2)
	a2.TransactionID, a2.Type, a2.QuoteID = "Transaction:t", "EXECUTE_QUOTE", "Quote:q"
	a3 := action(ag2, "PENDING_APPROVAL", 3)
	aq := action(agQ, "PENDING_APPROVAL", 4)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, a := range []ports.AgentAction{a1, a2, a3, aq} {
			require.NoError(t, tx.AgentActions().Create(ctx, a))
		}
		return nil
	})
	normAction := func(a ports.AgentAction) ports.AgentAction {
		a.CreatedAt, a.UpdatedAt = norm(a.CreatedAt), norm(a.UpdatedAt)
		return a
	}
	got, err := s.Read().AgentActions().Get(ctx, p.ID, a2.ID)
	require.NoError(t, err)
	assert.Equal(t, normAction(a2), got)
	_, err = s.Read().AgentActions().Get(ctx, q.ID, a2.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)

	ids := func(f ports.AgentActionFilter, page ports.Page) ([]string, int) {
		rows, total, err := s.Read().AgentActions().List(ctx, f, page)
		require.NoError(t, err)
		var out []string
		for _, r := range rows {
			out = append(out, r.ID)
		}
		return out, total
	}
	got1, total := ids(ports.AgentActionFilter{PlatformID: p.ID}, ports.Page{Limit: 10})
	assert.Equal(t, []string{a1.ID, a2.ID, a3.ID}, got1)
	assert.Equal(t, 3, total)
	got1, _ = ids(ports.AgentActionFilter{PlatformID: p.ID, Desc: true}, ports.Page{Limit: 10})
	assert.Equal(t, []string{a3.ID, a2.ID, a1.ID}, got1, "newest first")
	got1, _ = ids(ports.AgentActionFilter{PlatformID: p.ID, Desc: true},
		ports.Page{Limit: 1, After: &ports.Position{CreatedAt: a3.CreatedAt, ID: a3.ID}})
	assert.Equal(t, []string{a2.ID, a1.ID}, got1, "after a position, newest first, one past the limit")
	got1, _ = ids(ports.AgentActionFilter{PlatformID: p.ID, Status: "PENDING_APPROVAL"}, ports.Page{Limit: 10})
	assert.Equal(t, []string{a1.ID, a3.ID}, got1)
	got1, _ = ids(ports.AgentActionFilter{PlatformID: p.ID, AgentID: ag2.ID}, ports.Page{Limit: 10})
	assert.Equal(t, []string{a3.ID}, got1)
	got1, _ = ids(ports.AgentActionFilter{PlatformID: p.ID, CustomerID: ag.CustomerID}, ports.Page{Limit: 10})
	assert.Equal(t, []string{a1.ID, a2.ID}, got1)
	got1, _ = ids(ports.AgentActionFilter{PlatformID: p.ID, StartDate: ptr(at(2)), EndDate: ptr(at(2))}, ports.Page{Limit: 10})
	assert.Equal(t, []string{a2.ID}, got1, "date bounds are inclusive")
	got1, _ = ids(ports.AgentActionFilter{PlatformID: p.ID, TransactionID: "Transaction:t"}, ports.Page{Limit: 10})
	assert.Equal(t, []string{a2.ID}, got1, "the action that made a transaction")
	got1, _ = ids(ports.AgentActionFilter{PlatformID: q.ID, TransactionID: "Transaction:t"}, ports.Page{Limit: 10})
	assert.Empty(t, got1, "another platform's")

	// A conditional update: from the stored status only.
	a1.Status, a1.RejectionReason, a1.UpdatedAt = "REJECTED", "too much", at(5)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.AgentActions().Update(ctx, a1, "PENDING_APPROVAL")
	})
	got, err = s.Read().AgentActions().Get(ctx, p.ID, a1.ID)
	require.NoError(t, err)
	assert.Equal(t, normAction(a1), got)
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.AgentActions().Update(ctx, a1, "PENDING_APPROVAL") })
	var ce *ports.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, ports.ConflictAgentActionStatus, ce.Constraint)
	missing := a1
	missing.ID = newID("AgentAction")
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.AgentActions().Update(ctx, missing, "PENDING_APPROVAL") })
	require.ErrorIs(t, err, ports.ErrNotFound)

	// Racing decisions: exactly one applies.
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := a3
			next.Status, next.UpdatedAt = []string{"APPROVED", "REJECTED"}[i%2], at(6)
			if s.InTx(ctx, func(tx ports.Tx) error { return tx.AgentActions().Update(ctx, next, "PENDING_APPROVAL") }) == nil {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 1, won.Load())
}
