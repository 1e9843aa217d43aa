package memory

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// ---- INTERNAL_ACCOUNT.BALANCE_UPDATED, recorded by the ledger ----

// balanceBefore is the internal accounts an entry may change, as they are
// before it is applied (l.mu held): the accounts its transfers name and
// those of the holds it resolves.
func (l *Ledger) balanceBefore(e ledger.Entry) map[string]ledger.Account {
	out := map[string]ledger.Account{}
	add := func(id string) {
		if a, ok := l.book.Account(id); ok && a.Kind == ledger.KindInternal {
			out[id] = a
		}
	}
	for _, t := range e.Transfers {
		add(t.DebitAccountID)
		add(t.CreditAccountID)
		if p, ok := l.book.Pending(t.PendingID); ok && t.PendingID != "" {
			add(p.DebitAccountID)
			add(p.CreditAccountID)
		}
	}
	return out
}

// balanceChanged adds to changed (by id) the accounts of before whose
// balance or total balance differs now (l.mu held).
func (l *Ledger) balanceChanged(before map[string]ledger.Account, changed map[string]ledger.Account) {
	for id, b := range before {
		a, _ := l.book.Account(id)
		if a.Available() != b.Available() || a.Total() != b.Total() {
			changed[id] = a
		}
	}
}

// recordBalances records the balance events of the changed ledger
// accounts (the state after a post at `at`) that are internal accounts of
// the attached store, one per account, with their delivery jobs, straight
// into the committed state (a post inside a unit of work's commit, under
// its writer lock, records them just before the unit's own rows).
func (l *Ledger) recordBalances(ctx context.Context, changed map[string]ledger.Account, at time.Time) error {
	l.mu.Lock()
	s := l.store
	l.mu.Unlock()
	if s == nil || len(changed) == 0 {
		return nil
	}
	ids := make([]string, 0, len(changed))
	for id := range changed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	tx := &storeTx{s: s, w: &storeWrites{state: newStoreState()}}
	for _, id := range ids {
		done, err := tx.begin(false)
		if err != nil {
			return err
		}
		a, ok := storeLookup(tx, pickAccounts, id)
		done()
		if !ok {
			continue // not an account the API shows
		}
		e, err := ports.NewEvent("Webhook:"+uuid.NewString(), a.PlatformID, ports.BalanceUpdated, a.ID,
			ports.WithBalance(a, changed[id]), at)
		if err != nil {
			return err
		}
		if err := tx.Events().Append(ctx, e); err != nil {
			return fmt.Errorf("memory ledger: balance event of %s: %w", id, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	commitKYC(&s.state.kyc, &tx.w.state.kyc)
	storeCommitJobs(&s.state, &tx.w.state, tx.w.jobOps)
	return nil
}
