package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/corridorpay/corridor/ports"
)

// ---- transactions ----

type storeTxns struct{ tx *storeTx }

func (r storeTxns) Create(ctx context.Context, t ports.Transaction) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	if _, ok := storeLookup(r.tx, pickTxns, t.ID); ok {
		done()
		return storeConflict("transactions_pkey")
	}
	if t.Details, err = storeCopyDetails(t.Details, storeJSONMap); err != nil {
		done()
		return fmt.Errorf("create transaction %s: details: %w", t.ID, err)
	}
	r.tx.w.state.txns[t.ID] = storeCopyTxn(t)
	done()
	return r.recordEvent(ctx, t, ports.Transaction{})
}

// recordEvent records the events of t entering its status and its
// refund's status from prev's (the zero Transaction for a new one), as
// the PostgreSQL store's trigger does (ports.TransactionEventTypes).
func (r storeTxns) recordEvent(ctx context.Context, t ports.Transaction, prev ports.Transaction) error {
	types := ports.TransactionEventTypes(t.Type, prev.Status, t.Status, refundStatus(prev), refundStatus(t))
	if len(types) == 0 {
		return nil
	}
	data, err := json.Marshal(storeCopyTxn(t))
	if err != nil {
		return fmt.Errorf("event of %s: %w", t.ID, err)
	}
	for i, typ := range types {
		e := ports.Event{ID: "Webhook:" + uuid.NewString(), PlatformID: t.PlatformID, Type: typ,
			ResourceID: t.ID, Resource: data, CreatedAt: t.UpdatedAt.Add(time.Duration(i) * time.Microsecond)}
		if err := r.tx.Events().Append(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// refundStatus is t's refund's status, or "" without one.
func refundStatus(t ports.Transaction) string {
	if t.Details.Refund == nil {
		return ""
	}
	return t.Details.Refund.Status
}

func (r storeTxns) get(platformID, id string) (ports.Transaction, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Transaction{}, err
	}
	defer done()
	t, ok := storeLookup(r.tx, pickTxns, id)
	if !ok || t.PlatformID != platformID {
		return ports.Transaction{}, fmt.Errorf("transaction %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyTxn(t), nil
}

func (r storeTxns) Get(_ context.Context, platformID, id string) (ports.Transaction, error) {
	return r.get(platformID, id)
}

// GetForUpdate is Get: a unit of work already excludes every other writer.
func (r storeTxns) GetForUpdate(_ context.Context, platformID, id string) (ports.Transaction, error) {
	return r.get(platformID, id)
}

// Update stores t's mutable fields; the id, platform, customer, type and
// creation time are fixed at Create (as in the PostgreSQL store).
func (r storeTxns) Update(ctx context.Context, t ports.Transaction) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	old, ok := storeLookup(r.tx, pickTxns, t.ID)
	if !ok || old.PlatformID != t.PlatformID {
		done()
		return fmt.Errorf("transaction %s: %w", t.ID, ports.ErrNotFound)
	}
	t.CustomerID, t.Type, t.CreatedAt = old.CustomerID, old.Type, old.CreatedAt
	if t.Details, err = storeCopyDetails(t.Details, storeJSONMap); err != nil {
		done()
		return fmt.Errorf("update transaction %s: details: %w", t.ID, err)
	}
	r.tx.w.state.txns[t.ID] = storeCopyTxn(t)
	done()
	return r.recordEvent(ctx, t, old)
}

// List sorts the matching rows by (CreatedAt, ID) in f's direction and
// returns up to Limit+1 of those strictly after page.After.
func (r storeTxns) List(_ context.Context, f ports.TransactionFilter, page ports.Page) ([]ports.Transaction, int, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	rows := storeAll(r.tx, pickTxns, func(t ports.Transaction) bool { return storeTxnMatches(t, f) })
	total := len(rows)
	compare := func(a, b ports.Transaction) int {
		c := a.CreatedAt.Compare(b.CreatedAt)
		if c == 0 {
			c = cmp.Compare(a.ID, b.ID)
		}
		if f.Desc {
			return -c
		}
		return c
	}
	slices.SortFunc(rows, compare)
	if page.After != nil {
		pos := ports.Transaction{CreatedAt: ports.Stored(page.After.CreatedAt), ID: page.After.ID}
		i, found := slices.BinarySearchFunc(rows, pos, compare)
		if found {
			i++
		}
		rows = rows[i:]
	}
	if page.Limit > 0 && len(rows) > page.Limit+1 {
		rows = rows[:page.Limit+1]
	}
	out := make([]ports.Transaction, len(rows))
	for i, t := range rows {
		out[i] = storeCopyTxn(t)
	}
	return out, total, nil
}

func storeTxnMatches(t ports.Transaction, f ports.TransactionFilter) bool {
	switch {
	case t.PlatformID != f.PlatformID,
		f.CustomerID != "" && t.CustomerID != f.CustomerID,
		f.CustomerID == "" && f.PlatformLevel && t.CustomerID != "",
		f.PlatformCustomerID != "" && t.PlatformCustomerID != f.PlatformCustomerID,
		f.AccountIdentifier != "" && !slices.Contains(t.SenderIdentifiers, f.AccountIdentifier) &&
			!slices.Contains(t.ReceiverIdentifiers, f.AccountIdentifier),
		f.SenderAccountIdentifier != "" && !slices.Contains(t.SenderIdentifiers, f.SenderAccountIdentifier),
		f.ReceiverAccountIdentifier != "" && !slices.Contains(t.ReceiverIdentifiers, f.ReceiverAccountIdentifier),
		f.Status != "" && t.Status != f.Status,
		f.Type != "" && t.Type != f.Type,
		f.Reference != "" && t.Reference != f.Reference,
		f.StartDate != nil && t.CreatedAt.Before(ports.Stored(*f.StartDate)),
		f.EndDate != nil && t.CreatedAt.After(ports.Stored(*f.EndDate)):
		return false
	}
	return true
}

// storeCopyTxn copies t (deeply); an empty identifier list reads back as
// nil. Create and Update have normalised t.Details first (storeJSONMap).
func storeCopyTxn(t ports.Transaction) ports.Transaction {
	t.SenderIdentifiers = storeCloneList(t.SenderIdentifiers)
	t.ReceiverIdentifiers = storeCloneList(t.ReceiverIdentifiers)
	t.Details, _ = storeCopyDetails(t.Details, storeCloneJSON) // storeCloneJSON never fails
	if t.SettledAt != nil {
		s := ports.Stored(*t.SettledAt)
		t.SettledAt = &s
	}
	t.CreatedAt = ports.Stored(t.CreatedAt)
	t.UpdatedAt = ports.Stored(t.UpdatedAt)
	return t
}

func storeCloneList(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	return slices.Clone(l)
}
