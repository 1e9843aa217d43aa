package ledger_test

import (
	"math"
	"time"

	"github.com/corridorpay/corridor/ledger"
)

// model is the invariant test's auditor: an independent, deliberately plain
// description of what the Book must decide, kept in maps. It predicts the
// result of every entry before the Book sees it.
type model struct {
	accounts map[string]*mAccount
	holds    map[string]*mHold
	// requests are accepted entries as submitted; entries as recorded.
	requests map[string]ledger.Entry
	entries  map[string]ledger.Entry
	reversed map[string]bool
	tids     map[string]bool // every recorded transfer id
}

type mAccount struct {
	id, currency               string
	dPending, dPosted          int64
	cPending, cPosted          int64
	protectDebits, protectCred bool
}

type mHold struct {
	id, entryID, debit, credit, currency string
	amount, posted                       int64
	expires                              time.Time // zero: no timeout
	status                               ledger.PendingStatus
}

func newModel() *model {
	return &model{
		accounts: map[string]*mAccount{},
		holds:    map[string]*mHold{},
		requests: map[string]ledger.Entry{},
		entries:  map[string]ledger.Entry{},
		reversed: map[string]bool{},
		tids:     map[string]bool{},
	}
}

func (m *model) addAccount(a ledger.Account) {
	m.accounts[a.ID] = &mAccount{
		id: a.ID, currency: a.Currency,
		protectDebits: a.Flags&ledger.DebitsMustNotExceedCredits != 0,
		protectCred:   a.Flags&ledger.CreditsMustNotExceedDebits != 0,
	}
}

// available is what a credit-normal account may still spend.
func (m *model) available(id string) int64 {
	a := m.accounts[id]
	return a.cPosted - a.dPosted - a.dPending
}

// prediction is what the auditor expects of one entry.
type prediction struct {
	code       ledger.Code
	transferID string
	// rec is the entry as the Book must record (or, for Exists*, return) it.
	rec ledger.Entry
	// accounts and holds are the staged new values of everything touched.
	accounts map[string]*mAccount
	holds    map[string]*mHold
}

func (p *prediction) account(m *model, id string) *mAccount {
	if a, ok := p.accounts[id]; ok {
		return a
	}
	a, ok := m.accounts[id]
	if !ok {
		return nil
	}
	c := *a
	p.accounts[id] = &c
	return &c
}

func (p *prediction) hold(m *model, id string) *mHold {
	if h, ok := p.holds[id]; ok {
		return h
	}
	h, ok := m.holds[id]
	if !ok {
		return nil
	}
	c := *h
	p.holds[id] = &c
	return &c
}

func (p *prediction) refuse(code ledger.Code, transferID string) prediction {
	return prediction{code: code, transferID: transferID}
}

// predict decides e against the model at time now without changing it.
func (m *model) predict(e ledger.Entry, now time.Time) prediction {
	p := &prediction{accounts: map[string]*mAccount{}, holds: map[string]*mHold{}}
	if e.ID == "" {
		return p.refuse(ledger.CodeIDMissing, "")
	}
	if req, ok := m.requests[e.ID]; ok {
		code := ledger.CodeExistsWithDifferentFields
		if entriesEqual(req, e) {
			code = ledger.CodeExists
		}
		return prediction{code: code, rec: m.entries[e.ID]}
	}
	if len(e.Transfers) == 0 {
		return p.refuse(ledger.CodeEntryEmpty, "")
	}
	if e.Reverses != "" {
		if _, ok := m.entries[e.Reverses]; !ok {
			return p.refuse(ledger.CodeReversalNotAllowed, "")
		}
		if m.reversed[e.Reverses] {
			return p.refuse(ledger.CodeAlreadyReversed, "")
		}
	}
	rec := e
	rec.Transfers = make([]ledger.Transfer, len(e.Transfers))
	seen := map[string]bool{}
	for i, t := range e.Transfers {
		// A transfer id is unique across the ledger and within the entry.
		if t.ID != "" && (m.tids[t.ID] || seen[t.ID]) {
			return p.refuse(ledger.CodeTransferIDExists, t.ID)
		}
		seen[t.ID] = true
		code, out := m.predictTransfer(p, t, now)
		if code != ledger.CodeOK {
			return p.refuse(code, t.ID)
		}
		rec.Transfers[i] = out
	}
	for _, h := range p.holds {
		if h.entryID == "" {
			h.entryID = e.ID
		}
	}
	p.code, p.rec = ledger.CodeOK, rec
	return *p
}

func (m *model) predictTransfer(p *prediction, t ledger.Transfer, now time.Time) (ledger.Code, ledger.Transfer) {
	if t.ID == "" {
		return ledger.CodeIDMissing, t
	}
	switch t.Kind {
	case ledger.Single, ledger.Pending:
		if t.Amount <= 0 {
			return ledger.CodeAmountInvalid, t
		}
		if t.DebitAccountID == t.CreditAccountID {
			return ledger.CodeSameAccount, t
		}
		dr := p.account(m, t.DebitAccountID)
		if dr == nil {
			return ledger.CodeAccountNotFound, t
		}
		cr := p.account(m, t.CreditAccountID)
		if cr == nil {
			return ledger.CodeAccountNotFound, t
		}
		if t.Currency == "" {
			t.Currency = dr.currency
		}
		if dr.currency != t.Currency || cr.currency != t.Currency {
			return ledger.CodeCurrencyMismatch, t
		}
		if dr.dPending+dr.dPosted > math.MaxInt64-t.Amount || cr.cPending+cr.cPosted > math.MaxInt64-t.Amount {
			return ledger.CodeOverflow, t
		}
		if dr.protectDebits && dr.dPending+dr.dPosted+t.Amount > dr.cPosted {
			return ledger.CodeExceedsCredits, t
		}
		if cr.protectCred && cr.cPending+cr.cPosted+t.Amount > cr.dPosted {
			return ledger.CodeExceedsDebits, t
		}
		if t.Kind == ledger.Single {
			dr.dPosted += t.Amount
			cr.cPosted += t.Amount
			return ledger.CodeOK, t
		}
		dr.dPending += t.Amount
		cr.cPending += t.Amount
		h := &mHold{id: t.ID, debit: dr.id, credit: cr.id, currency: t.Currency, amount: t.Amount, status: ledger.PendingOpen}
		if t.Timeout > 0 {
			h.expires = now.Add(t.Timeout)
		}
		p.holds[t.ID] = h
		return ledger.CodeOK, t
	case ledger.PostPending, ledger.VoidPending:
		if t.Amount < 0 {
			return ledger.CodeAmountInvalid, t
		}
		h := p.hold(m, t.PendingID)
		if h == nil {
			return ledger.CodePendingNotFound, t
		}
		switch h.status {
		case ledger.PendingPosted:
			return ledger.CodePendingAlreadyPosted, t
		case ledger.PendingVoided:
			return ledger.CodePendingAlreadyVoided, t
		case ledger.PendingExpired:
			return ledger.CodePendingExpired, t
		}
		due := !h.expires.IsZero() && !now.Before(h.expires)
		expiry := t.Kind == ledger.VoidPending && t.Code == ledger.CodeExpiry
		if expiry && !due {
			return ledger.CodeExpiryPremature, t
		}
		if !expiry && due {
			return ledger.CodePendingExpired, t
		}
		if t.DebitAccountID != "" && t.DebitAccountID != h.debit ||
			t.CreditAccountID != "" && t.CreditAccountID != h.credit ||
			t.Currency != "" && t.Currency != h.currency {
			return ledger.CodeExistsWithDifferentFields, t
		}
		amount := h.amount
		if t.Kind == ledger.PostPending {
			if t.Amount > h.amount {
				return ledger.CodeExceedsPendingAmount, t
			}
			if t.Amount > 0 {
				amount = t.Amount
			}
		}
		dr, cr := p.account(m, h.debit), p.account(m, h.credit)
		dr.dPending -= h.amount
		cr.cPending -= h.amount
		switch {
		case t.Kind == ledger.PostPending:
			dr.dPosted += amount
			cr.cPosted += amount
			h.status, h.posted = ledger.PendingPosted, amount
		case expiry:
			h.status = ledger.PendingExpired
		default:
			h.status = ledger.PendingVoided
		}
		t.DebitAccountID, t.CreditAccountID, t.Currency, t.Amount = h.debit, h.credit, h.currency, amount
		return ledger.CodeOK, t
	}
	return ledger.CodeKindInvalid, t
}

// commit applies an accepted prediction; req is the entry as submitted.
func (m *model) commit(p prediction, req ledger.Entry) {
	for id, a := range p.accounts {
		m.accounts[id] = a
	}
	for id, h := range p.holds {
		m.holds[id] = h
	}
	m.requests[req.ID] = req
	m.entries[req.ID] = p.rec
	for _, t := range p.rec.Transfers {
		m.tids[t.ID] = true
	}
	if req.Reverses != "" {
		m.reversed[req.Reverses] = true
	}
}

// entriesEqual compares two requests field by field (the auditor only
// resubmits exact copies or clearly changed ones).
func entriesEqual(a, b ledger.Entry) bool {
	if a.ID != b.ID || a.Ref != b.Ref || a.Reverses != b.Reverses || len(a.Transfers) != len(b.Transfers) {
		return false
	}
	for i := range a.Transfers {
		if a.Transfers[i] != b.Transfers[i] {
			return false
		}
	}
	return true
}

func cloneEntry(e ledger.Entry) ledger.Entry {
	c := e
	c.Transfers = append([]ledger.Transfer(nil), e.Transfers...)
	return c
}
