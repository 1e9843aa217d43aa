package memory

import (
	"context"
	"fmt"
	"slices"

	"github.com/corridorpay/corridor/ports"
)

// ---- receiver lookups ----

// Lookups is ports.Tx.Lookups: receiver lookups kept for later quotes.
func (tx *storeTx) Lookups() ports.LookupRepo { return storeLookups{tx} }

func pickLookups(s *storeState) map[string]ports.Lookup { return s.lookups }

type storeLookups struct{ tx *storeTx }

func (r storeLookups) Create(_ context.Context, l ports.Lookup) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickLookups, l.ID); ok {
		return storeConflict("lookups_pkey")
	}
	r.tx.w.state.lookups[l.ID] = storeCopyLookup(l)
	return nil
}

func (r storeLookups) Get(_ context.Context, platformID, id string) (ports.Lookup, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Lookup{}, err
	}
	defer done()
	l, ok := storeLookup(r.tx, pickLookups, id)
	if !ok || l.PlatformID != platformID {
		return ports.Lookup{}, fmt.Errorf("lookup %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyLookup(l), nil
}

func storeCopyLookup(l ports.Lookup) ports.Lookup {
	l.Currencies = slices.Clone(l.Currencies)
	l.RequiredPayerData = slices.Clone(l.RequiredPayerData)
	l.CreatedAt = ports.Stored(l.CreatedAt)
	return l
}
