package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// ---- UMA invitations ----

func invitation(platformID string, created ports.Invitation) ports.Invitation {
	inv := created
	inv.Code = "C" + uuid.NewString()[:11]
	inv.PlatformID = platformID
	inv.URL = "https://acme.example/invitations/" + inv.Code
	return inv
}

func testInvitations(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	full := invitation(p.ID, ports.Invitation{
		InviterUma: "$ada@acme.example", FirstName: "Ada", AmountToSend: 12550, Currency: "USD",
		Status: "PENDING", ExpiresAt: at(5), CreatedAt: at(1), UpdatedAt: at(1),
	})
	bare := invitation(q.ID, ports.Invitation{InviterUma: "$bob@acme.example", Status: "PENDING", CreatedAt: at(2), UpdatedAt: at(2)})
	normInv := func(inv ports.Invitation) ports.Invitation {
		inv.ClaimedAt, inv.ExpiresAt = norm(inv.ClaimedAt), norm(inv.ExpiresAt)
		inv.CreatedAt, inv.UpdatedAt = norm(inv.CreatedAt), norm(inv.UpdatedAt)
		return inv
	}
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.Invitations().Create(ctx, full))
		got, err := tx.Invitations().Get(ctx, full.Code)
		require.NoError(t, err)
		assert.Equal(t, normInv(full), got, "a unit of work reads its own writes")
		return tx.Invitations().Create(ctx, bare)
	})
	for _, want := range []ports.Invitation{full, bare} {
		got, err := s.Read().Invitations().Get(ctx, want.Code)
		require.NoError(t, err, "codes are global: any platform reads them")
		assert.Equal(t, normInv(want), got)
		assert.True(t, got.ClaimedAt.IsZero())
	}
	got, err := s.Read().Invitations().Get(ctx, bare.Code)
	require.NoError(t, err)
	assert.True(t, got.ExpiresAt.IsZero(), "no expiresAt stays zero")
	_, err = s.Read().Invitations().Get(ctx, "NOSUCHCODE")
	require.ErrorIs(t, err, ports.ErrNotFound)

	dup := bare
	dup.PlatformID = p.ID
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Invitations().Create(ctx, dup) })
	requireConflict(t, err, ports.UniqueInvitationCode)
	assert.Error(t, s.Read().Invitations().Create(ctx, invitation(p.ID, full)), "Read is read-only")

	// A claim: only the status fields change, and only from the status given.
	claimed := full
	claimed.Status, claimed.InviteeUma, claimed.ClaimedAt, claimed.UpdatedAt = "CLAIMED", "$eve@other.example", at(3), at(3)
	claimed.FirstName, claimed.AmountToSend = "ignored", 1
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Invitations().Update(ctx, claimed, "CANCELLED") })
	requireConflict(t, err, ports.ConflictInvitationStatus)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Invitations().Update(ctx, claimed, "PENDING") })
	got, err = s.Read().Invitations().Get(ctx, full.Code)
	require.NoError(t, err)
	want := full
	want.Status, want.InviteeUma, want.ClaimedAt, want.UpdatedAt = "CLAIMED", "$eve@other.example", at(3), at(3)
	assert.Equal(t, normInv(want), got)
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Invitations().Update(ctx, claimed, "PENDING") })
	requireConflict(t, err, ports.ConflictInvitationStatus)
	missing := invitation(p.ID, full)
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Invitations().Update(ctx, missing, "PENDING") })
	require.ErrorIs(t, err, ports.ErrNotFound)

	// Rollback drops creates and updates.
	gone := invitation(p.ID, bare)
	err = s.InTx(ctx, func(tx ports.Tx) error {
		require.NoError(t, tx.Invitations().Create(ctx, gone))
		cancelled := bare
		cancelled.Status, cancelled.UpdatedAt = "CANCELLED", at(4)
		require.NoError(t, tx.Invitations().Update(ctx, cancelled, "PENDING"))
		return errBoom
	})
	require.ErrorIs(t, err, errBoom)
	_, err = s.Read().Invitations().Get(ctx, gone.Code)
	require.ErrorIs(t, err, ports.ErrNotFound)
	got, err = s.Read().Invitations().Get(ctx, bare.Code)
	require.NoError(t, err)
	assert.Equal(t, "PENDING", got.Status)
}

// testInvitationConcurrentUpdates races conditional updates from PENDING:
// exactly one commits, every other sees ConflictInvitationStatus.
func testInvitationConcurrentUpdates(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	inv := invitation(p.ID, ports.Invitation{InviterUma: "$ada@acme.example", Status: "PENDING", CreatedAt: at(1), UpdatedAt: at(1)})
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Invitations().Create(ctx, inv) })
	const workers = 8
	var won, lost atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			<-start
			err := s.InTx(ctx, func(tx ports.Tx) error {
				cur, err := tx.Invitations().Get(ctx, inv.Code)
				if err != nil {
					return err
				}
				if cur.Status != "PENDING" {
					return &ports.ConflictError{Constraint: ports.ConflictInvitationStatus}
				}
				cur.Status, cur.InviteeUma, cur.ClaimedAt, cur.UpdatedAt = "CLAIMED", "$w"+string(rune('a'+w))+"@x.example", at(2), at(2)
				return tx.Invitations().Update(ctx, cur, "PENDING")
			})
			switch {
			case err == nil:
				won.Add(1)
			case isStatusConflict(err):
				lost.Add(1)
			default:
				t.Errorf("worker %d: %v", w, err)
			}
		})
	}
	close(start)
	wg.Wait()
	assert.Equal(t, int32(1), won.Load(), "exactly one claim wins")
	assert.Equal(t, int32(workers-1), lost.Load())
}

func isStatusConflict(err error) bool {
	var ce *ports.ConflictError
	return errors.As(err, &ce) && ce.Constraint == ports.ConflictInvitationStatus
}
