package postgres

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// quoteState is what a batch knows of a quote its records change: as
// loaded (locked) or created, then as the accepted changes leave it.
type quoteState struct {
	platform, status string
	expires          time.Time
	updated          time.Time
	executed         *time.Time
	changed          bool // by an accepted call's change: to be written
}

// quoteBook decides a batch's quote changes in queue order, as if each
// call ran alone: a call sees the quotes created and changed by the calls
// accepted before it.
type quoteBook map[string]quoteState

// try evaluates r's quote records against qb without changing it and
// returns the states they leave, or an error matching ports.ErrPrecondition
// when a Required change does not hold. A change that does not hold and is
// not required is skipped.
func (qb quoteBook) try(r *postRequest) (map[string]quoteState, error) {
	if len(r.quoteChanges) == 0 && len(r.quotes) == 0 {
		return nil, nil
	}
	next := map[string]quoteState{}
	get := func(id string) (quoteState, bool) {
		if s, ok := next[id]; ok {
			return s, true
		}
		s, ok := qb[id]
		return s, ok
	}
	for _, q := range r.quotes {
		if _, ok := get(q.ID); !ok {
			next[q.ID] = quoteState{platform: q.PlatformID, status: q.Status, expires: q.ExpiresAt}
		}
	}
	for _, c := range r.quoteChanges {
		s, ok := get(c.QuoteID)
		if !ok || s.platform != c.PlatformID || !c.Holds(s.status, s.expires) {
			if c.Required {
				return nil, fmt.Errorf("quote %s: %w", c.QuoteID, ports.ErrPrecondition)
			}
			continue
		}
		s.status, s.updated, s.changed = c.Status, c.UpdatedAt, true
		if c.ExecutedAt != nil {
			s.executed = c.ExecutedAt
		}
		next[c.QuoteID] = s
	}
	return next, nil
}

// commit makes the states try returned for an accepted call qb's.
func (qb quoteBook) commit(next map[string]quoteState) {
	maps.Copy(qb, next)
}

// txnBook decides a batch's Required transaction status changes in queue
// order, as quoteBook does for quotes (nil when no call of the batch has
// one): it holds the transactions some call
// of the batch names in a Required change (loaded under their row lock, or
// created by a call), and every accepted call's changes to them, required
// or not, move them on, so a call sees what the calls accepted before it
// left (appendStatusChanges writes the changes in that order).
type txnBook map[string]txnState

// txnState is what a batch knows of a transaction in its txnBook.
type txnState struct{ platform, status string }

// try evaluates r's transaction records against tb without changing it
// and returns the states they leave, or an error matching
// ports.ErrPrecondition when a Required change does not hold.
func (tb txnBook) try(r *postRequest) (map[string]txnState, error) {
	if tb == nil {
		return nil, nil // no call of the batch requires a transaction's status
	}
	next := map[string]txnState{}
	get := func(id string) (txnState, bool) {
		if s, ok := next[id]; ok {
			return s, true
		}
		s, ok := tb[id]
		return s, ok
	}
	for _, t := range r.txns {
		if _, ok := get(t.ID); !ok {
			next[t.ID] = txnState{platform: t.PlatformID, status: t.Status}
		}
	}
	for _, c := range r.changes {
		s, ok := get(c.TransactionID)
		if !ok && !c.Required {
			continue // not tracked: appendStatusChanges decides it
		}
		if !ok || s.platform != c.PlatformID || !slices.Contains(c.From, s.status) {
			if c.Required {
				return nil, fmt.Errorf("transaction %s: %w", c.TransactionID, ports.ErrPrecondition)
			}
			continue
		}
		s.status = c.Status
		next[c.TransactionID] = s
	}
	return next, nil
}

// commit makes the states try returned for an accepted call tb's.
func (tb txnBook) commit(next map[string]txnState) {
	maps.Copy(tb, next)
}

// decision is what the Book decided for a batch, with what it decided
// from.
type decision struct {
	book          *ledger.Book
	initial       map[string]ledger.Account // the accounts as loaded
	loadedPending map[string]bool
	stored        map[string]ledger.JournalEntry // entries already recorded
	quotes        quoteBook
	txns          txnBook
	outcomes      []outcome
	accepted      []ledger.Entry
	recordsOnly   bool // the batch holds records written alone
}

// decide runs the Book over the loaded state, entry by entry, in queue
// order, after each call's quote and transaction preconditions (an entry already recorded
// skips them: its caller learns ErrExists, and none of its records are
// written).
func decide(batch []*postRequest, ld *batchLoad, now time.Time) *decision {
	d := &decision{book: ledger.NewBook(), initial: map[string]ledger.Account{}, loadedPending: map[string]bool{},
		stored: map[string]ledger.JournalEntry{}, quotes: ld.quotes, txns: ld.txns, outcomes: make([]outcome, len(batch))}
	for _, p := range ld.pending {
		d.book.PutPending(p)
		d.loadedPending[p.ID] = true
	}
	for _, a := range ld.accounts {
		d.book.PutAccount(a)
		d.initial[a.ID] = a
	}
	for _, e := range ld.entries {
		d.book.PutEntry(e.Entry)
		d.stored[e.ID] = e
	}
	for i, r := range batch {
		var next map[string]quoteState
		var nextTxns map[string]txnState
		// known: loaded, or accepted earlier in this batch (records alone
		// have no entry).
		if _, known := d.book.Entry(r.entry.ID); r.recordsOnly || !known {
			var err error
			if next, err = d.quotes.try(r); err == nil {
				nextTxns, err = d.txns.try(r)
			}
			if err != nil {
				d.outcomes[i] = outcome{entry: r.entry, err: fmt.Errorf("postgres ledger: post %s: %w", r.entry.ID, err)}
				continue
			}
		}
		if r.recordsOnly {
			d.recordsOnly = true // outcomes[i] stays "accepted", with no entry
			d.quotes.commit(next)
			d.txns.commit(nextTxns)
			continue
		}
		at := now
		if r.at.After(at) {
			at = r.at
		}
		rec, err := d.book.Apply(r.entry, at)
		d.outcomes[i] = outcome{entry: rec, err: err}
		if err == nil {
			d.accepted = append(d.accepted, rec)
			d.quotes.commit(next)
			d.txns.commit(nextTxns)
		}
	}
	return d
}
