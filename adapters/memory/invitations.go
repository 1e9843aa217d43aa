package memory

import (
	"context"
	"fmt"

	"github.com/corridorpay/corridor/ports"
)

// ---- UMA invitations ----

// Invitations is ports.Tx.Invitations.
func (tx *storeTx) Invitations() ports.InvitationRepo { return storeInvitations{tx} }

func pickInvitations(s *storeState) map[string]ports.Invitation { return s.invitations }

type storeInvitations struct{ tx *storeTx }

func (r storeInvitations) Create(_ context.Context, inv ports.Invitation) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickInvitations, inv.Code); ok {
		return storeConflict(ports.UniqueInvitationCode)
	}
	r.tx.w.state.invitations[inv.Code] = storeCopyInvitation(inv)
	return nil
}

func (r storeInvitations) Get(_ context.Context, code string) (ports.Invitation, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Invitation{}, err
	}
	defer done()
	inv, ok := storeLookup(r.tx, pickInvitations, code)
	if !ok {
		return ports.Invitation{}, fmt.Errorf("invitation %s: %w", code, ports.ErrNotFound)
	}
	return storeCopyInvitation(inv), nil
}

// Update is atomic: units of work that write run one at a time.
func (r storeInvitations) Update(_ context.Context, inv ports.Invitation, from string) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	cur, ok := storeLookup(r.tx, pickInvitations, inv.Code)
	if !ok {
		return fmt.Errorf("invitation %s: %w", inv.Code, ports.ErrNotFound)
	}
	if cur.Status != from {
		return storeConflict(ports.ConflictInvitationStatus)
	}
	cur.Status, cur.InviteeUma, cur.ClaimedAt, cur.UpdatedAt = inv.Status, inv.InviteeUma, inv.ClaimedAt, inv.UpdatedAt
	r.tx.w.state.invitations[inv.Code] = storeCopyInvitation(cur)
	return nil
}

func storeCopyInvitation(inv ports.Invitation) ports.Invitation {
	inv.ClaimedAt, inv.ExpiresAt = ports.Stored(inv.ClaimedAt), ports.Stored(inv.ExpiresAt)
	inv.CreatedAt, inv.UpdatedAt = ports.Stored(inv.CreatedAt), ports.Stored(inv.UpdatedAt)
	return inv
}
