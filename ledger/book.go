package ledger

import (
	"sort"
	"time"
)

// CodeExpiry is the Transfer.Code of the VoidPending transfer that records a
// hold's expiry. Only the expiry path (ExpiryEntry) uses it.
const CodeExpiry = "expiry"

// Book is the state the engine decides against: accounts, pending transfers
// and the ids of entries already recorded. The memory store keeps one Book for
// everything; the PostgreSQL store loads a Book per group-commit batch with
// just the rows the batch touches. A Book is not safe for concurrent use.
type Book struct {
	accounts   map[string]*Account
	pending    map[string]*PendingTransfer
	entries    map[string]Entry
	reversedBy map[string]string
	// transfers holds the transfer ids of the recorded entries: a transfer
	// id is unique across the ledger, not only within its entry.
	transfers map[string]struct{}

	dirtyAccounts map[string]struct{}
	dirtyPending  map[string]struct{}
}

// NewBook returns an empty Book.
func NewBook() *Book {
	return &Book{
		accounts:      map[string]*Account{},
		pending:       map[string]*PendingTransfer{},
		entries:       map[string]Entry{},
		reversedBy:    map[string]string{},
		transfers:     map[string]struct{}{},
		dirtyAccounts: map[string]struct{}{},
		dirtyPending:  map[string]struct{}{},
	}
}

// PutAccount loads (or replaces) an account in the Book without marking it
// changed.
func (b *Book) PutAccount(a Account) { c := a; b.accounts[a.ID] = &c }

// PutPending loads a pending transfer without marking it changed.
func (b *Book) PutPending(p PendingTransfer) {
	c := p
	b.pending[p.ID] = &c
	b.transfers[p.ID] = struct{}{}
}

// PutEntry records that an entry exists (for idempotent re-posting and
// reversal checks) without marking anything changed.
func (b *Book) PutEntry(e Entry) {
	b.entries[e.ID] = e
	for _, t := range e.Transfers {
		b.transfers[t.ID] = struct{}{}
	}
	if e.Reverses != "" {
		b.reversedBy[e.Reverses] = e.ID
	}
}

// Account returns a copy of an account.
func (b *Book) Account(id string) (Account, bool) {
	a, ok := b.accounts[id]
	if !ok {
		return Account{}, false
	}
	return *a, true
}

// Pending returns a copy of a pending transfer.
func (b *Book) Pending(id string) (PendingTransfer, bool) {
	p, ok := b.pending[id]
	if !ok {
		return PendingTransfer{}, false
	}
	return *p, true
}

// Entry returns a recorded entry.
func (b *Book) Entry(id string) (Entry, bool) { e, ok := b.entries[id]; return e, ok }

// Accounts returns copies of all accounts, ordered by id.
func (b *Book) Accounts() []Account {
	out := make([]Account, 0, len(b.accounts))
	for _, a := range b.accounts {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// PendingTransfers returns copies of all pending transfers, ordered by id.
func (b *Book) PendingTransfers() []PendingTransfer {
	out := make([]PendingTransfer, 0, len(b.pending))
	for _, p := range b.pending {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Changes returns the accounts and pending transfers changed since the last
// ResetChanges (ordered by id), and resets the change set.
func (b *Book) Changes() ([]Account, []PendingTransfer) {
	accts := make([]Account, 0, len(b.dirtyAccounts))
	for id := range b.dirtyAccounts {
		accts = append(accts, *b.accounts[id])
	}
	sort.Slice(accts, func(i, j int) bool { return accts[i].ID < accts[j].ID })
	pend := make([]PendingTransfer, 0, len(b.dirtyPending))
	for id := range b.dirtyPending {
		pend = append(pend, *b.pending[id])
	}
	sort.Slice(pend, func(i, j int) bool { return pend[i].ID < pend[j].ID })
	b.dirtyAccounts = map[string]struct{}{}
	b.dirtyPending = map[string]struct{}{}
	return accts, pend
}

// Apply validates e against the Book at time now and, when every transfer
// passes, applies all of them; otherwise it changes nothing and returns an
// *Error. The returned Entry is e as recorded: PostPending and VoidPending
// transfers carry the accounts, currency and amount they resolved. When an
// entry with the same ID already exists Apply returns the stored entry and
// ErrExists (or ErrExistsDifferent when the request differs).
func (b *Book) Apply(e Entry, now time.Time) (Entry, error) {
	if e.ID == "" {
		return Entry{}, &Error{Code: CodeIDMissing}
	}
	if prev, ok := b.entries[e.ID]; ok {
		if sameRequest(e, prev) {
			return prev, &Error{Code: CodeExists, EntryID: e.ID}
		}
		return prev, &Error{Code: CodeExistsWithDifferentFields, EntryID: e.ID}
	}
	if len(e.Transfers) == 0 {
		return Entry{}, &Error{Code: CodeEntryEmpty, EntryID: e.ID}
	}
	if e.Reverses != "" {
		if _, ok := b.entries[e.Reverses]; !ok {
			return Entry{}, &Error{Code: CodeReversalNotAllowed, EntryID: e.ID}
		}
		if _, done := b.reversedBy[e.Reverses]; done {
			return Entry{}, &Error{Code: CodeAlreadyReversed, EntryID: e.ID}
		}
	}

	// Stage every change on copies so a refused transfer leaves the Book as
	// it was.
	st := staging{b: b, accounts: map[string]*Account{}, pending: map[string]*PendingTransfer{}}
	out := e
	out.Transfers = make([]Transfer, len(e.Transfers))
	seen := make(map[string]struct{}, len(e.Transfers))
	for i, t := range e.Transfers {
		_, used := b.transfers[t.ID]
		_, twice := seen[t.ID]
		if t.ID != "" && (used || twice) {
			return Entry{}, &Error{Code: CodeTransferIDExists, EntryID: e.ID, TransferID: t.ID}
		}
		seen[t.ID] = struct{}{}
		rec, err := st.apply(t, now)
		if err != nil {
			err.EntryID = e.ID
			if err.TransferID == "" {
				err.TransferID = t.ID
			}
			return Entry{}, err
		}
		out.Transfers[i] = rec
	}
	for id, a := range st.accounts {
		b.accounts[id] = a
		b.dirtyAccounts[id] = struct{}{}
	}
	for id, p := range st.pending {
		p.EntryID = firstNonEmpty(p.EntryID, e.ID)
		b.pending[id] = p
		b.dirtyPending[id] = struct{}{}
	}
	b.PutEntry(out)
	return out, nil
}

// ExpiryEntry builds the entry that releases an open pending transfer whose
// timeout has passed. Post it like any other entry; the hold becomes
// PendingExpired.
func ExpiryEntry(p PendingTransfer) Entry {
	return Entry{
		ID:  "expiry:" + p.ID,
		Ref: p.EntryID,
		Transfers: []Transfer{{
			ID:        "expiry:" + p.ID,
			Kind:      VoidPending,
			PendingID: p.ID,
			Code:      CodeExpiry,
		}},
	}
}

// Due returns the open pending transfers whose timeout is at or before now,
// ordered by expiry.
func (b *Book) Due(now time.Time) []PendingTransfer {
	var out []PendingTransfer
	for _, p := range b.pending {
		if p.Status == PendingOpen && !p.ExpiresAt.IsZero() && !p.ExpiresAt.After(now) {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ExpiresAt.Equal(out[j].ExpiresAt) {
			return out[i].ID < out[j].ID
		}
		return out[i].ExpiresAt.Before(out[j].ExpiresAt)
	})
	return out
}

// Reversal builds the entry that undoes orig's posted effects: each Single
// and PostPending transfer becomes a Single transfer of the same amount in the
// other direction. Pending and VoidPending transfers have no posted effect
// (void a hold instead). id names the new entry; its transfers are
// id + ":" + index.
func Reversal(orig Entry, id, ref string) (Entry, error) {
	rev := Entry{ID: id, Ref: ref, Reverses: orig.ID}
	for _, t := range orig.Transfers {
		if t.Kind != Single && t.Kind != PostPending {
			continue
		}
		if t.Amount == 0 {
			continue
		}
		rev.Transfers = append(rev.Transfers, Transfer{
			ID:              id + ":" + itoa(len(rev.Transfers)),
			DebitAccountID:  t.CreditAccountID,
			CreditAccountID: t.DebitAccountID,
			Amount:          t.Amount,
			Currency:        t.Currency,
			Kind:            Single,
			Code:            "reversal",
		})
	}
	if len(rev.Transfers) == 0 {
		return Entry{}, &Error{Code: CodeReversalNotAllowed, EntryID: orig.ID}
	}
	return rev, nil
}

type staging struct {
	b        *Book
	accounts map[string]*Account
	pending  map[string]*PendingTransfer
}

func (s *staging) account(id string) *Account {
	if a, ok := s.accounts[id]; ok {
		return a
	}
	a, ok := s.b.accounts[id]
	if !ok {
		return nil
	}
	c := *a
	s.accounts[id] = &c
	return &c
}

func (s *staging) pendingTransfer(id string) *PendingTransfer {
	if p, ok := s.pending[id]; ok {
		return p
	}
	p, ok := s.b.pending[id]
	if !ok {
		return nil
	}
	c := *p
	s.pending[id] = &c
	return &c
}

func (s *staging) apply(t Transfer, now time.Time) (Transfer, *Error) {
	if t.ID == "" {
		return t, &Error{Code: CodeIDMissing}
	}
	switch t.Kind {
	case Single, Pending:
		return s.applyNew(t, now)
	case PostPending, VoidPending:
		return s.resolve(t, now)
	}
	return t, &Error{Code: CodeKindInvalid}
}

func (s *staging) applyNew(t Transfer, now time.Time) (Transfer, *Error) {
	if t.Amount <= 0 {
		return t, &Error{Code: CodeAmountInvalid}
	}
	if t.DebitAccountID == t.CreditAccountID {
		return t, &Error{Code: CodeSameAccount, AccountID: t.DebitAccountID}
	}
	dr := s.account(t.DebitAccountID)
	if dr == nil {
		return t, &Error{Code: CodeAccountNotFound, AccountID: t.DebitAccountID}
	}
	cr := s.account(t.CreditAccountID)
	if cr == nil {
		return t, &Error{Code: CodeAccountNotFound, AccountID: t.CreditAccountID}
	}
	if t.Currency == "" {
		t.Currency = dr.Currency
	}
	if dr.Currency != t.Currency {
		return t, &Error{Code: CodeCurrencyMismatch, AccountID: dr.ID}
	}
	if cr.Currency != t.Currency {
		return t, &Error{Code: CodeCurrencyMismatch, AccountID: cr.ID}
	}
	// Overflow guard: amounts are bounded by the API far below this, but the
	// engine must never wrap.
	if addOverflows(dr.DebitsPending+dr.DebitsPosted, t.Amount) || addOverflows(cr.CreditsPending+cr.CreditsPosted, t.Amount) {
		return t, &Error{Code: CodeOverflow}
	}
	if dr.Flags&DebitsMustNotExceedCredits != 0 && dr.DebitsPending+dr.DebitsPosted+t.Amount > dr.CreditsPosted {
		return t, &Error{Code: CodeExceedsCredits, AccountID: dr.ID}
	}
	if cr.Flags&CreditsMustNotExceedDebits != 0 && cr.CreditsPending+cr.CreditsPosted+t.Amount > cr.DebitsPosted {
		return t, &Error{Code: CodeExceedsDebits, AccountID: cr.ID}
	}
	dr.UpdatedAt, cr.UpdatedAt = now, now
	if t.Kind == Single {
		dr.DebitsPosted += t.Amount
		cr.CreditsPosted += t.Amount
		return t, nil
	}
	dr.DebitsPending += t.Amount
	cr.CreditsPending += t.Amount
	p := &PendingTransfer{Transfer: t, Status: PendingOpen}
	if t.Timeout > 0 {
		p.ExpiresAt = now.Add(t.Timeout)
	}
	s.pending[t.ID] = p
	return t, nil
}

func (s *staging) resolve(t Transfer, now time.Time) (Transfer, *Error) {
	if t.Amount < 0 {
		return t, &Error{Code: CodeAmountInvalid}
	}
	p := s.pendingTransfer(t.PendingID)
	if p == nil {
		return t, &Error{Code: CodePendingNotFound}
	}
	switch p.Status {
	case PendingPosted:
		return t, &Error{Code: CodePendingAlreadyPosted}
	case PendingVoided:
		return t, &Error{Code: CodePendingAlreadyVoided}
	case PendingExpired:
		return t, &Error{Code: CodePendingExpired}
	}
	expiry := t.Kind == VoidPending && t.Code == CodeExpiry
	if expiry && (p.ExpiresAt.IsZero() || p.ExpiresAt.After(now)) {
		return t, &Error{Code: CodeExpiryPremature}
	}
	if !expiry && !p.ExpiresAt.IsZero() && !p.ExpiresAt.After(now) {
		return t, &Error{Code: CodePendingExpired}
	}
	if (t.DebitAccountID != "" && t.DebitAccountID != p.DebitAccountID) ||
		(t.CreditAccountID != "" && t.CreditAccountID != p.CreditAccountID) ||
		(t.Currency != "" && t.Currency != p.Currency) {
		return t, &Error{Code: CodeExistsWithDifferentFields}
	}
	dr := s.account(p.DebitAccountID)
	cr := s.account(p.CreditAccountID)
	if dr == nil || cr == nil {
		return t, &Error{Code: CodeAccountNotFound}
	}
	amount := p.Amount
	if t.Kind == PostPending {
		if t.Amount > p.Amount {
			return t, &Error{Code: CodeExceedsPendingAmount}
		}
		if t.Amount > 0 {
			amount = t.Amount
		}
	}
	dr.DebitsPending -= p.Amount
	cr.CreditsPending -= p.Amount
	dr.UpdatedAt, cr.UpdatedAt = now, now
	switch {
	case t.Kind == PostPending:
		dr.DebitsPosted += amount
		cr.CreditsPosted += amount
		p.Status = PendingPosted
		p.PostedAmount = amount
	case expiry:
		p.Status = PendingExpired
	default:
		p.Status = PendingVoided
	}
	t.DebitAccountID, t.CreditAccountID, t.Currency, t.Amount = p.DebitAccountID, p.CreditAccountID, p.Currency, amount
	return t, nil
}

// sameRequest reports whether req asks for what rec recorded. Fields left
// empty in req (accounts of a post/void, a zero "full" post amount) are not
// compared.
func sameRequest(req, rec Entry) bool {
	if req.Ref != rec.Ref || req.Reverses != rec.Reverses || len(req.Transfers) != len(rec.Transfers) {
		return false
	}
	for i, a := range req.Transfers {
		b := rec.Transfers[i]
		if a.ID != b.ID || a.Kind != b.Kind || a.PendingID != b.PendingID || a.Code != b.Code {
			return false
		}
		if a.DebitAccountID != "" && a.DebitAccountID != b.DebitAccountID ||
			a.CreditAccountID != "" && a.CreditAccountID != b.CreditAccountID ||
			a.Currency != "" && a.Currency != b.Currency {
			return false
		}
		if a.Amount != 0 && a.Amount != b.Amount && !(a.Kind == VoidPending) {
			return false
		}
		if a.Kind == Pending && a.Timeout != b.Timeout {
			return false
		}
	}
	return true
}

func addOverflows(a, b int64) bool { return b > 0 && a > (1<<63-1)-b }

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return string(buf[i:])
}
