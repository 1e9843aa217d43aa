package ledger

import "time"

// Counters are an account's four counters at one moment.
type Counters struct {
	DebitsPending  int64
	DebitsPosted   int64
	CreditsPending int64
	CreditsPosted  int64
}

// Counters returns a's four counters.
func (a Account) Counters() Counters {
	return Counters{a.DebitsPending, a.DebitsPosted, a.CreditsPending, a.CreditsPosted}
}

// WithCounters returns a with its counters set to c.
func (a Account) WithCounters(c Counters) Account {
	a.DebitsPending, a.DebitsPosted, a.CreditsPending, a.CreditsPosted = c.DebitsPending, c.DebitsPosted, c.CreditsPending, c.CreditsPosted
	return a
}

// Available is Account.Available for these counters.
func (c Counters) Available() int64 { return c.CreditsPosted - c.DebitsPosted - c.DebitsPending }

// Total is Account.Total for these counters.
func (c Counters) Total() int64 { return c.CreditsPosted + c.CreditsPending - c.DebitsPosted }

// Net is Account.Net for these counters: credits posted minus debits posted.
func (c Counters) Net() int64 { return c.CreditsPosted - c.DebitsPosted }

// PendingNet is credits pending minus debits pending.
func (c Counters) PendingNet() int64 { return c.CreditsPending - c.DebitsPending }

// Add returns c plus d, counter by counter.
func (c Counters) Add(d Counters) Counters {
	return Counters{c.DebitsPending + d.DebitsPending, c.DebitsPosted + d.DebitsPosted,
		c.CreditsPending + d.CreditsPending, c.CreditsPosted + d.CreditsPosted}
}

// Sub returns c minus d, counter by counter.
func (c Counters) Sub(d Counters) Counters {
	return Counters{c.DebitsPending - d.DebitsPending, c.DebitsPosted - d.DebitsPosted,
		c.CreditsPending - d.CreditsPending, c.CreditsPosted - d.CreditsPosted}
}

// Posting is one transfer's effect on one of its two accounts, and the
// account's counters right after it: the row a statement shows. A store
// keeps postings as its point-in-time index (PostgreSQL's ledger_postings).
type Posting struct {
	AccountID string
	EntryID   string
	Seq       int64
	PostedAt  time.Time
	// TransferIndex is the transfer's position in its entry.
	TransferIndex int
	Transfer      Transfer
	// Debit is true when the account is the transfer's debit side.
	Debit        bool
	Delta, After Counters
}

// PostingReplay derives the postings of journal entries fed in Seq order,
// exactly as the stores write them: per transfer, the debit account's
// posting then the credit account's. Its memory is the accounts' counters
// and the open holds (a post or void needs the amount it releases).
type PostingReplay struct {
	counters map[string]Counters
	holds    map[string]int64
}

// NewPostingReplay returns an empty replay.
func NewPostingReplay() *PostingReplay {
	return &PostingReplay{counters: map[string]Counters{}, holds: map[string]int64{}}
}

// Counters returns an account's counters after the entries added so far.
func (r *PostingReplay) Counters(accountID string) Counters { return r.counters[accountID] }

// TransferEffect returns what t (as recorded) does to its debit and its
// credit account's counters; held is the amount of the hold a post or void
// releases (ignored for other kinds).
func TransferEffect(t Transfer, held int64) (debit, credit Counters) {
	a := t.Amount
	switch t.Kind {
	case Single:
		debit.DebitsPosted, credit.CreditsPosted = a, a
	case Pending:
		debit.DebitsPending, credit.CreditsPending = a, a
	case PostPending, VoidPending:
		debit.DebitsPending, credit.CreditsPending = -held, -held
		if t.Kind == PostPending {
			debit.DebitsPosted, credit.CreditsPosted = a, a
		}
	}
	return debit, credit
}

// Add replays e, calling emit (when not nil) with each posting in order.
func (r *PostingReplay) Add(e JournalEntry, emit func(Posting)) {
	for i, t := range e.Transfers {
		var held int64
		switch t.Kind {
		case Pending:
			r.holds[t.ID] = t.Amount
		case PostPending, VoidPending:
			// A malformed journal (an unknown hold) releases nothing here;
			// JournalReplay reports it.
			held = r.holds[t.PendingID]
			delete(r.holds, t.PendingID)
		}
		dr, cr := TransferEffect(t, held)
		for _, side := range [2]struct {
			id    string
			debit bool
			delta Counters
		}{{t.DebitAccountID, true, dr}, {t.CreditAccountID, false, cr}} {
			after := r.counters[side.id].Add(side.delta)
			r.counters[side.id] = after
			if emit != nil {
				emit(Posting{AccountID: side.id, EntryID: e.ID, Seq: e.Seq, PostedAt: e.PostedAt,
					TransferIndex: i, Transfer: t, Debit: side.debit, Delta: side.delta, After: after})
			}
		}
	}
}
