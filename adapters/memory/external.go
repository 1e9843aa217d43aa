package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/corridorpay/corridor/ports"
)

// ---- external accounts ----

type storeExternals struct{ tx *storeTx }

// clearDefault buffers, for every other live account of a's customer that
// is the default UMA deposit account, a copy with the flag cleared. The
// unit of work excludes every other writer, so two defaults are never
// visible.
func (r storeExternals) clearDefault(a ports.ExternalAccount) {
	if !a.DefaultUmaDepositAccount || a.IsDeleted {
		return
	}
	prev := storeAll(r.tx, pickExternals, func(o ports.ExternalAccount) bool {
		return o.ID != a.ID && o.PlatformID == a.PlatformID && o.CustomerID == a.CustomerID &&
			o.DefaultUmaDepositAccount && !o.IsDeleted
	})
	for _, o := range prev {
		o.DefaultUmaDepositAccount = false
		r.tx.w.state.externals[o.ID] = o
	}
}

func (r storeExternals) Create(_ context.Context, a ports.ExternalAccount) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickExternals, a.ID); ok {
		return storeConflict("external_accounts_pkey")
	}
	r.clearDefault(a)
	r.tx.w.state.externals[a.ID] = storeCopyExternal(a)
	return nil
}

func (r storeExternals) Get(_ context.Context, platformID, id string) (ports.ExternalAccount, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.ExternalAccount{}, err
	}
	defer done()
	a, ok := storeLookup(r.tx, pickExternals, id)
	if !ok || a.PlatformID != platformID || a.IsDeleted {
		return ports.ExternalAccount{}, fmt.Errorf("external account %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyExternal(a), nil
}

// Update replaces a live account of the platform (a deleted one is
// ErrNotFound).
func (r storeExternals) Update(_ context.Context, a ports.ExternalAccount) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	old, ok := storeLookup(r.tx, pickExternals, a.ID)
	if !ok || old.PlatformID != a.PlatformID || old.IsDeleted {
		return fmt.Errorf("external account %s: %w", a.ID, ports.ErrNotFound)
	}
	r.clearDefault(a)
	r.tx.w.state.externals[a.ID] = storeCopyExternal(a)
	return nil
}

func (r storeExternals) List(_ context.Context, f ports.ExternalAccountFilter, page ports.Page) ([]ports.ExternalAccount, int, error) {
	return storeListCopies(r.tx, pickExternals, func(a ports.ExternalAccount) bool {
		switch {
		case a.PlatformID != f.PlatformID,
			a.IsDeleted,
			!storeOwnerMatches(a.CustomerID, f.CustomerID, f.PlatformOnly),
			f.Currency != "" && a.Currency != f.Currency:
			return false
		}
		return true
	}, func(a ports.ExternalAccount) (time.Time, string) { return a.CreatedAt, a.ID }, storeCopyExternal, page)
}

func storeCopyExternal(a ports.ExternalAccount) ports.ExternalAccount {
	if b := a.Info.Beneficiary; b != nil {
		c := *b
		if c.Address != nil {
			addr := *c.Address
			c.Address = &addr
		}
		a.Info.Beneficiary = &c
	}
	a.CreatedAt = ports.Stored(a.CreatedAt)
	a.UpdatedAt = ports.Stored(a.UpdatedAt)
	return a
}
