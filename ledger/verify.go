package ledger

import (
	"fmt"
	"math/big"
	"math/bits"
	"sort"
)

// Violation is one broken ledger invariant: which rule (Kind) and what broke,
// naming the account or currency, the counter, and the expected and actual
// values.
type Violation struct {
	Kind    string
	Message string
}

func (v Violation) String() string { return v.Kind + ": " + v.Message }

// Violation kinds, in the order Verify reports them.
const (
	// ViolationZeroSum: a currency's posted credits and debits, or its
	// pending credits and debits, do not cancel out across all accounts.
	ViolationZeroSum = "zero_sum"
	// ViolationBound: an account breaks its flags (or a counter is negative).
	ViolationBound = "bound"
	// ViolationJournal: the journal itself is malformed (out of order, a
	// resolution of an unknown or already resolved hold, an unknown account…).
	ViolationJournal = "journal"
	// ViolationCounter: an account's counter differs from the journal replay.
	ViolationCounter = "counter"
	// ViolationHolds: pending transfers disagree with the accounts' pending
	// counters or with the journal.
	ViolationHolds = "holds"
	// ViolationTruncated: more violations were found than are reported.
	ViolationTruncated = "truncated"
)

// maxViolations bounds what Verify returns; the first ones matter most.
const maxViolations = 50

// Verify checks the ledger's invariants over a consistent snapshot of
// accounts and pending transfers and the journal that produced them (in Seq
// order):
//
//  1. per currency, credits posted minus debits posted sum to zero across all
//     accounts, and so do credits pending minus debits pending;
//  2. no account breaks its bound flags, and no counter is negative;
//  3. every account's four counters equal a replay of the journal into zeroed
//     accounts (Single posts; Pending holds; PostPending releases the hold and
//     posts its Amount; VoidPending releases the hold);
//  4. the open pending transfers add up to each account's pending counters
//     and agree with the journal (amount, status, posted amount). pendings
//     may omit resolved transfers; open ones must all be present.
//
// It returns nil when everything holds, otherwise the violations in that
// order, each naming the account, counter and expected versus actual value.
// For journals too long to hold in memory use a JournalReplay directly.
func Verify(accounts []Account, pendings []PendingTransfer, journal []JournalEntry) []Violation {
	r := NewJournalReplay()
	for i := range journal {
		r.Add(journal[i])
	}
	return r.Check(accounts, pendings)
}

// JournalReplay rebuilds the four counters of every account and the state of
// every hold from journal entries fed one at a time, in Seq order, so a
// journal can be streamed page by page. Its memory is proportional to the
// accounts and holds, not the entries.
type JournalReplay struct {
	counters map[string]*replayCounters
	holds    map[string]*replayHold
	lastSeq  int64
	entries  int
	problems []Violation
}

type replayCounters struct {
	currency                                                   string
	debitsPending, debitsPosted, creditsPending, creditsPosted int64
}

type replayHold struct {
	debit, credit, currency string
	amount, posted          int64
	status                  PendingStatus
}

// NewJournalReplay returns an empty replay.
func NewJournalReplay() *JournalReplay {
	return &JournalReplay{counters: map[string]*replayCounters{}, holds: map[string]*replayHold{}}
}

// Entries is how many entries were added.
func (r *JournalReplay) Entries() int { return r.entries }

func (r *JournalReplay) report(kind, format string, args ...any) {
	if len(r.problems) <= maxViolations {
		r.problems = append(r.problems, Violation{Kind: kind, Message: fmt.Sprintf(format, args...)})
	}
}

func (r *JournalReplay) account(id, currency, entryID, transferID string) *replayCounters {
	c, ok := r.counters[id]
	if !ok {
		c = &replayCounters{currency: currency}
		r.counters[id] = c
		return c
	}
	if c.currency != currency {
		r.report(ViolationJournal, "entry %s transfer %s moves %s on account %s, which the journal already used in %s",
			entryID, transferID, currency, id, c.currency)
	}
	return c
}

// Add replays one journal entry. Entries must come in increasing Seq order;
// anything malformed is remembered and reported by Check.
func (r *JournalReplay) Add(e JournalEntry) {
	if r.entries > 0 && e.Seq <= r.lastSeq {
		r.report(ViolationJournal, "entry %s has seq %d, not after the previous entry's seq %d", e.ID, e.Seq, r.lastSeq)
	}
	r.entries++
	r.lastSeq = e.Seq
	if len(e.Transfers) == 0 {
		r.report(ViolationJournal, "entry %s (seq %d) has no transfers", e.ID, e.Seq)
	}
	for _, t := range e.Transfers {
		r.addTransfer(e, t)
	}
}

func (r *JournalReplay) addTransfer(e JournalEntry, t Transfer) {
	switch t.Kind {
	case Single, Pending:
		if t.Amount <= 0 {
			r.report(ViolationJournal, "entry %s transfer %s (%s) records amount %d, want > 0", e.ID, t.ID, t.Kind, t.Amount)
		}
		if t.DebitAccountID == t.CreditAccountID {
			r.report(ViolationJournal, "entry %s transfer %s debits and credits the same account %s", e.ID, t.ID, t.DebitAccountID)
		}
		dr := r.account(t.DebitAccountID, t.Currency, e.ID, t.ID)
		cr := r.account(t.CreditAccountID, t.Currency, e.ID, t.ID)
		if t.Kind == Single {
			dr.debitsPosted += t.Amount
			cr.creditsPosted += t.Amount
			return
		}
		dr.debitsPending += t.Amount
		cr.creditsPending += t.Amount
		if _, dup := r.holds[t.ID]; dup {
			r.report(ViolationJournal, "entry %s opens hold %s, which an earlier entry already opened", e.ID, t.ID)
		}
		r.holds[t.ID] = &replayHold{debit: t.DebitAccountID, credit: t.CreditAccountID, currency: t.Currency, amount: t.Amount, status: PendingOpen}
	case PostPending, VoidPending:
		h, ok := r.holds[t.PendingID]
		if !ok {
			r.report(ViolationJournal, "entry %s transfer %s resolves hold %s, which no earlier entry opened", e.ID, t.ID, t.PendingID)
			return
		}
		if h.status != PendingOpen {
			r.report(ViolationJournal, "entry %s transfer %s resolves hold %s, which is already %s", e.ID, t.ID, t.PendingID, h.status)
			return
		}
		if t.DebitAccountID != h.debit || t.CreditAccountID != h.credit || t.Currency != h.currency {
			r.report(ViolationJournal, "entry %s transfer %s records %s→%s %s for hold %s, which is %s→%s %s",
				e.ID, t.ID, t.DebitAccountID, t.CreditAccountID, t.Currency, t.PendingID, h.debit, h.credit, h.currency)
		}
		dr := r.account(h.debit, h.currency, e.ID, t.ID)
		cr := r.account(h.credit, h.currency, e.ID, t.ID)
		dr.debitsPending -= h.amount
		cr.creditsPending -= h.amount
		switch {
		case t.Kind == PostPending:
			if t.Amount < 0 || t.Amount > h.amount {
				r.report(ViolationJournal, "entry %s transfer %s posts %d of hold %s, which holds %d", e.ID, t.ID, t.Amount, t.PendingID, h.amount)
			}
			dr.debitsPosted += t.Amount
			cr.creditsPosted += t.Amount
			h.status, h.posted = PendingPosted, t.Amount
		case t.Code == CodeExpiry:
			h.status = PendingExpired
		default:
			h.status = PendingVoided
		}
	default:
		r.report(ViolationJournal, "entry %s transfer %s has unknown kind %d", e.ID, t.ID, t.Kind)
	}
}

// Check compares the replayed journal with a snapshot of accounts and
// pending transfers; see Verify for the rules. It does not change r, so a
// replay can be extended with Add and checked again.
func (r *JournalReplay) Check(accounts []Account, pendings []PendingTransfer) []Violation {
	var v violations
	accts := make([]*Account, len(accounts))
	for i := range accounts {
		accts[i] = &accounts[i]
	}
	sort.SliceStable(accts, func(i, j int) bool { return accts[i].ID < accts[j].ID })
	byID := make(map[string]*Account, len(accts))
	for _, a := range accts {
		if _, dup := byID[a.ID]; dup {
			v.add(ViolationJournal, "account %s appears twice in the snapshot", a.ID)
		}
		byID[a.ID] = a
	}
	checkZeroSum(&v, accts)
	checkBounds(&v, accts)
	r.checkCounters(&v, accts, byID)
	r.checkHolds(&v, accts, byID, pendings)
	if len(v.out) == 0 {
		return nil
	}
	return v.out
}

// violations collects what Check finds, up to maxViolations (then one
// ViolationTruncated).
type violations struct{ out []Violation }

func (v *violations) add(kind, format string, args ...any) {
	if len(v.out) < maxViolations {
		v.out = append(v.out, Violation{Kind: kind, Message: fmt.Sprintf(format, args...)})
	} else if len(v.out) == maxViolations {
		v.out = append(v.out, Violation{Kind: ViolationTruncated, Message: "more violations not reported"})
	}
}

// checkZeroSum is rule 1: per currency, posted and pending credits equal
// debits.
func checkZeroSum(v *violations, accts []*Account) {
	type sums struct{ debitsPending, debitsPosted, creditsPending, creditsPosted verifySum }
	perCurrency := map[string]*sums{}
	for _, a := range accts {
		s, ok := perCurrency[a.Currency]
		if !ok {
			s = &sums{}
			perCurrency[a.Currency] = s
		}
		s.debitsPending.add(a.DebitsPending)
		s.debitsPosted.add(a.DebitsPosted)
		s.creditsPending.add(a.CreditsPending)
		s.creditsPosted.add(a.CreditsPosted)
	}
	currencies := make([]string, 0, len(perCurrency))
	for c := range perCurrency {
		currencies = append(currencies, c)
	}
	sort.Strings(currencies)
	for _, c := range currencies {
		s := perCurrency[c]
		if s.creditsPosted != s.debitsPosted {
			v.add(ViolationZeroSum, "currency %s: credits posted sum to %s but debits posted to %s (net %s, want 0)",
				c, s.creditsPosted, s.debitsPosted, s.creditsPosted.sub(s.debitsPosted))
		}
		if s.creditsPending != s.debitsPending {
			v.add(ViolationZeroSum, "currency %s: credits pending sum to %s but debits pending to %s (net %s, want 0)",
				c, s.creditsPending, s.debitsPending, s.creditsPending.sub(s.debitsPending))
		}
	}
}

// checkBounds is rule 2: no negative counter, no account past its flags.
func checkBounds(v *violations, accts []*Account) {
	for _, a := range accts {
		for _, c := range [...]struct {
			name string
			v    int64
		}{{"debitsPending", a.DebitsPending}, {"debitsPosted", a.DebitsPosted}, {"creditsPending", a.CreditsPending}, {"creditsPosted", a.CreditsPosted}} {
			if c.v < 0 {
				v.add(ViolationBound, "account %s %s is negative: %d", a.ID, c.name, c.v)
			}
		}
		// With non-negative counters x-y cannot wrap, so d+p > c is
		// checked as d > c-p.
		nonNegative := a.DebitsPending >= 0 && a.DebitsPosted >= 0 && a.CreditsPending >= 0 && a.CreditsPosted >= 0
		if a.Flags&DebitsMustNotExceedCredits != 0 && nonNegative && a.DebitsPending > a.CreditsPosted-a.DebitsPosted {
			v.add(ViolationBound, "account %s must not have debits exceed credits: debitsPending %d + debitsPosted %d > creditsPosted %d (available %d)",
				a.ID, a.DebitsPending, a.DebitsPosted, a.CreditsPosted, a.Available())
		}
		if a.Flags&CreditsMustNotExceedDebits != 0 && nonNegative && a.CreditsPending > a.DebitsPosted-a.CreditsPosted {
			v.add(ViolationBound, "account %s must not have credits exceed debits: creditsPending %d + creditsPosted %d > debitsPosted %d",
				a.ID, a.CreditsPending, a.CreditsPosted, a.DebitsPosted)
		}
	}
}

// checkCounters is rule 3: every account's counters equal the journal's
// replay (and the journal names no account the snapshot lacks).
func (r *JournalReplay) checkCounters(v *violations, accts []*Account, byID map[string]*Account) {
	for _, p := range r.problems {
		v.add(p.Kind, "%s", p.Message)
	}
	for _, a := range accts {
		want := replayCounters{currency: a.Currency}
		if c, ok := r.counters[a.ID]; ok {
			want = *c
		}
		if want.currency != a.Currency {
			v.add(ViolationJournal, "account %s is in %s but the journal moves %s on it", a.ID, a.Currency, want.currency)
		}
		for _, c := range [...]struct {
			name      string
			want, got int64
		}{
			{"debitsPending", want.debitsPending, a.DebitsPending},
			{"debitsPosted", want.debitsPosted, a.DebitsPosted},
			{"creditsPending", want.creditsPending, a.CreditsPending},
			{"creditsPosted", want.creditsPosted, a.CreditsPosted},
		} {
			if c.want != c.got {
				v.add(ViolationCounter, "account %s %s: journal replay gives %d, account has %d (off by %d)",
					a.ID, c.name, c.want, c.got, c.got-c.want)
			}
		}
	}
	unknown := make([]string, 0)
	for id := range r.counters {
		if _, ok := byID[id]; !ok {
			unknown = append(unknown, id)
		}
	}
	sort.Strings(unknown)
	for _, id := range unknown {
		v.add(ViolationJournal, "the journal moves money on account %s, which is not in the snapshot", id)
	}
}

// checkHolds is rule 4: the snapshot's pending transfers agree with the
// journal, and the open ones add up to each account's pending counters.
func (r *JournalReplay) checkHolds(v *violations, accts []*Account, byID map[string]*Account, pendings []PendingTransfer) {
	ps := make([]*PendingTransfer, len(pendings))
	for i := range pendings {
		ps[i] = &pendings[i]
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
	heldDebits, heldCredits := map[string]int64{}, map[string]int64{}
	seen := make(map[string]struct{}, len(ps))
	for _, p := range ps {
		if _, dup := seen[p.ID]; dup {
			v.add(ViolationHolds, "pending transfer %s appears twice in the snapshot", p.ID)
			continue
		}
		seen[p.ID] = struct{}{}
		if p.Status == PendingOpen {
			heldDebits[p.DebitAccountID] += p.Amount
			heldCredits[p.CreditAccountID] += p.Amount
		}
		r.checkHold(v, p)
	}
	missing := make([]string, 0)
	for id, h := range r.holds {
		if _, ok := seen[id]; !ok && h.status == PendingOpen {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	for _, id := range missing {
		h := r.holds[id]
		v.add(ViolationHolds, "hold %s (%s→%s %d %s) is open in the journal but missing from the snapshot", id, h.debit, h.credit, h.amount, h.currency)
	}
	for _, a := range accts {
		if got := heldDebits[a.ID]; got != a.DebitsPending {
			v.add(ViolationHolds, "account %s debitsPending: open holds sum to %d, account has %d", a.ID, got, a.DebitsPending)
		}
		if got := heldCredits[a.ID]; got != a.CreditsPending {
			v.add(ViolationHolds, "account %s creditsPending: open holds sum to %d, account has %d", a.ID, got, a.CreditsPending)
		}
	}
	for _, m := range [...]map[string]int64{heldDebits, heldCredits} {
		ids := make([]string, 0)
		for id, held := range m {
			if _, ok := byID[id]; !ok && held != 0 {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		for _, id := range ids {
			v.add(ViolationHolds, "open holds reference account %s, which is not in the snapshot", id)
		}
	}
}

// checkHold compares one pending transfer of the snapshot with the hold
// the journal opened.
func (r *JournalReplay) checkHold(v *violations, p *PendingTransfer) {
	h, ok := r.holds[p.ID]
	if !ok {
		v.add(ViolationHolds, "pending transfer %s (%s, %d %s) was never opened by the journal", p.ID, p.Status, p.Amount, p.Currency)
		return
	}
	if p.Amount != h.amount || p.DebitAccountID != h.debit || p.CreditAccountID != h.credit || p.Currency != h.currency {
		v.add(ViolationHolds, "pending transfer %s is %s→%s %d %s, the journal opened %s→%s %d %s",
			p.ID, p.DebitAccountID, p.CreditAccountID, p.Amount, p.Currency, h.debit, h.credit, h.amount, h.currency)
	}
	if p.Status != h.status {
		v.add(ViolationHolds, "pending transfer %s status: journal replay gives %s, snapshot has %s", p.ID, h.status, p.Status)
	} else if p.Status == PendingPosted && p.PostedAmount != h.posted {
		v.add(ViolationHolds, "pending transfer %s posted amount: journal replay gives %d, snapshot has %d", p.ID, h.posted, p.PostedAmount)
	}
}

// verifySum is a 128-bit two's complement accumulator, so sums of int64
// counters across many accounts never wrap.
type verifySum struct {
	hi int64
	lo uint64
}

func (s *verifySum) add(v int64) {
	lo, carry := bits.Add64(s.lo, uint64(v), 0)
	s.hi += int64(carry) + v>>63
	s.lo = lo
}

func (s verifySum) big() *big.Int {
	v := new(big.Int).SetInt64(s.hi)
	v.Lsh(v, 64)
	return v.Add(v, new(big.Int).SetUint64(s.lo))
}

func (s verifySum) sub(o verifySum) string { return new(big.Int).Sub(s.big(), o.big()).String() }

func (s verifySum) String() string { return s.big().String() }
