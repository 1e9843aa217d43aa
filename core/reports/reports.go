// Package reports is what finance teams read from the ledger: accounts
// with their counters, trial balances, point-in-time balances, statements,
// the journal with its links, the reconciliation export of a rail, and the
// verification of the tamper-evident journal.
//
// Scoping. A platform sees only the ledger accounts it owns (platform_id),
// and the entries with at least one leg on them. The other legs of those
// entries are shown with their account ids when they are system accounts
// (settlement, FX position, fee revenue, sandbox funding: ids that say
// nothing about anyone) and as "redacted" when they belong to another
// platform; no balance of an account outside the view is ever shown. A
// trial balance shows the platform's accounts and, per currency, whether
// the whole ledger balances, with the net of everything outside the view
// as one number (it is minus the platform's own net when the ledger
// balances, so it tells nothing new). The platform operator, authenticated
// by a token from the configuration on top of a platform credential, sees
// every account, system accounts included, and may verify the journal.
package reports

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Redacted stands in for the id of an account outside the viewer's scope.
const Redacted = "redacted"

// Page size bounds.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Service answers the reports.
type Service struct {
	r     ports.LedgerReports
	clock ports.Clock
}

// New returns the reports service.
func New(r ports.LedgerReports, clock ports.Clock) *Service {
	return &Service{r: r, clock: clock}
}

// Viewer is who reads the ledger.
type Viewer struct {
	// PlatformID is the platform whose credential made the request (empty
	// for the operator).
	PlatformID string
	// Operator sees every account and may verify the journal.
	Operator bool
}

// Operator is the operator's viewer: the operator's own credential
// (core/operator) on the API, or database access on the command line.
func Operator() Viewer { return Viewer{Operator: true} }

// Platform is the viewer of a platform's credential: its own accounts.
func Platform(platformID string) Viewer { return Viewer{PlatformID: platformID} }

func (v Viewer) scope() ports.AccountScope {
	if v.Operator {
		return ports.AccountScope{All: true}
	}
	return ports.AccountScope{PlatformID: v.PlatformID}
}

// sees reports whether the viewer may see an account's balance.
func (v Viewer) sees(a ledger.Account) bool { return v.scope().Sees(a) }

// shows is how an account id appears to the viewer on another account's
// line: as it is when the viewer owns it or it is a system account,
// otherwise Redacted.
func (v Viewer) shows(id, owner string) string {
	if v.Operator || owner == "" || owner == v.PlatformID {
		return id
	}
	return Redacted
}

func notFound(what, id string) error {
	return &fault.Error{Kind: fault.KindNotFound, Code: "NOT_FOUND", Message: what + " " + id + " not found",
		Details: map[string]any{"id": id}}
}

// ParseInstant reads a report's time parameter: an RFC 3339 date-time
// (fractional seconds allowed) or a date (midnight UTC). Anything else is
// 400 naming field.
func ParseInstant(field, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fault.Invalid(field, "must be an RFC 3339 date-time such as 2026-03-01T12:00:00Z, or a date such as 2026-03-01")
}

// window validates from and to (either may be empty: from defaults to the
// beginning, to to now) and requires from <= to.
func (s *Service) window(from, to string) (time.Time, time.Time, error) {
	var errs []fault.FieldError
	start, end := time.Unix(0, 0).UTC(), s.now()
	for _, p := range []struct {
		field, value string
		into         *time.Time
	}{{"from", from, &start}, {"to", to, &end}} {
		if p.value == "" {
			continue
		}
		t, err := ParseInstant(p.field, p.value)
		if f, ok := fault.As(err); ok {
			errs = append(errs, f.Fields...)
			continue
		}
		*p.into = t
	}
	if len(errs) > 0 {
		return start, end, fault.InvalidFields(errs...)
	}
	if start.After(end) {
		return start, end, fault.Invalid("from", "must not be after to")
	}
	return start, end, nil
}

// now is the clock's time, a microsecond on: "up to now" includes what was
// posted at this very instant (windows end before To).
func (s *Service) now() time.Time { return s.clock.Now().UTC().Add(time.Microsecond) }

func limit(n, def int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 1 || n > MaxLimit:
		return 0, fault.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxLimit))
	}
	return n, nil
}

// Balance is an account's four counters and the balances derived from them.
type Balance struct {
	ledger.Counters
	// Available is credits posted minus debits posted and held; Total adds
	// pending credits back (see ledger.Account); Net is credits posted
	// minus debits posted.
	Available, Total, Net int64
}

func balanceOf(c ledger.Counters) Balance {
	return Balance{Counters: c, Available: c.Available(), Total: c.Total(), Net: c.Net()}
}

// Account is a ledger account as a report shows it.
type Account struct {
	ID, Currency, Kind, PlatformID string
	// Protected: debits may never exceed credits (customer and platform
	// accounts).
	Protected bool
	Balance   Balance
	CreatedAt time.Time
}

func accountOf(a ledger.Account) Account {
	return Account{ID: a.ID, Currency: a.Currency, Kind: a.Kind, PlatformID: a.PlatformID,
		Protected: a.Flags&ledger.DebitsMustNotExceedCredits != 0, Balance: balanceOf(a.Counters()), CreatedAt: a.CreatedAt}
}

// AccountQuery narrows ListAccounts.
type AccountQuery struct {
	Currency, Kind string
	After          string // the last account id of the previous page
	Limit          int
}

// AccountPage is one page of accounts.
type AccountPage struct {
	Accounts []Account
	HasMore  bool
}

// ListAccounts lists the accounts the viewer sees, by id.
func (s *Service) ListAccounts(ctx context.Context, v Viewer, q AccountQuery) (AccountPage, error) {
	n, err := limit(q.Limit, DefaultLimit)
	if err != nil {
		return AccountPage{}, err
	}
	accts, err := s.r.Accounts(ctx, ports.LedgerAccountFilter{Scope: v.scope(), Currency: q.Currency, Kind: q.Kind, AfterID: q.After, Limit: n})
	if err != nil {
		return AccountPage{}, err
	}
	page := AccountPage{HasMore: len(accts) > n}
	if page.HasMore {
		accts = accts[:n]
	}
	for _, a := range accts {
		page.Accounts = append(page.Accounts, accountOf(a))
	}
	return page, nil
}

// account returns an account the viewer sees, or 404 (an account outside
// the view does not exist for the viewer).
func (s *Service) account(ctx context.Context, v Viewer, id string) (ledger.Account, error) {
	a, err := s.r.Account(ctx, id)
	if errors.Is(err, ports.ErrNotFound) || (err == nil && !v.sees(a)) {
		return ledger.Account{}, notFound("ledger account", id)
	}
	return a, err
}

// GetAccount returns one account the viewer sees.
func (s *Service) GetAccount(ctx context.Context, v Viewer, id string) (Account, error) {
	a, err := s.account(ctx, v, id)
	if err != nil {
		return Account{}, err
	}
	return accountOf(a), nil
}

// TrialLine is one account of a trial balance: posted debits and credits
// and their net, and the pending ones.
type TrialLine struct {
	AccountID, Kind, PlatformID   string
	Debits, Credits, Net          int64
	DebitsPending, CreditsPending int64
}

// CurrencyBalance is one currency of a trial balance.
type CurrencyBalance struct {
	Currency string
	Accounts []TrialLine
	// Debits, Credits and Net sum the accounts listed.
	Debits, Credits, Net int64
	// OthersNet is the net of every account of the currency outside the
	// view (0 for the operator); Total is the whole ledger's net in the
	// currency, Net + OthersNet.
	OthersNet, Total int64
	// Balanced: across the whole ledger, posted credits equal posted debits
	// and pending credits equal pending debits (Total is 0).
	Balanced bool
}

// TrialBalance is every currency's balances at one instant.
type TrialBalance struct {
	AsOf       time.Time
	Currencies []CurrencyBalance
	// Balanced is true when every currency is.
	Balanced bool
}

// TrialBalance returns the balances of the viewer's accounts as of asOf
// (empty: now), per currency, and whether each currency sums to zero.
func (s *Service) TrialBalance(ctx context.Context, v Viewer, asOf string) (TrialBalance, error) {
	out := TrialBalance{AsOf: s.clock.Now().UTC(), Balanced: true}
	var at *time.Time
	if asOf != "" {
		t, err := ParseInstant("asOf", asOf)
		if err != nil {
			return TrialBalance{}, err
		}
		at, out.AsOf = &t, t
	}
	tb, err := s.r.TrialBalance(ctx, v.scope(), at)
	if err != nil {
		return TrialBalance{}, err
	}
	byCur := map[string]*CurrencyBalance{}
	var order []string
	for _, a := range tb.Accounts { // by currency, then id
		cb, ok := byCur[a.Currency]
		if !ok {
			cb = &CurrencyBalance{Currency: a.Currency}
			byCur[a.Currency] = cb
			order = append(order, a.Currency)
		}
		cb.Accounts = append(cb.Accounts, TrialLine{AccountID: a.ID, Kind: a.Kind, PlatformID: a.PlatformID,
			Debits: a.DebitsPosted, Credits: a.CreditsPosted, Net: a.Net(),
			DebitsPending: a.DebitsPending, CreditsPending: a.CreditsPending})
		cb.Debits += a.DebitsPosted
		cb.Credits += a.CreditsPosted
		cb.Net += a.Net()
	}
	if v.Operator {
		// Currencies with no postings yet still say they balance.
		for cur := range tb.Totals {
			if _, ok := byCur[cur]; !ok && tb.Totals[cur] != (ledger.Counters{}) {
				byCur[cur] = &CurrencyBalance{Currency: cur}
				order = append(order, cur)
			}
		}
	}
	for _, cur := range order {
		cb := byCur[cur]
		t := tb.Totals[cur]
		cb.Total = t.Net()
		cb.OthersNet = cb.Total - cb.Net
		cb.Balanced = t.DebitsPosted == t.CreditsPosted && t.DebitsPending == t.CreditsPending
		out.Balanced = out.Balanced && cb.Balanced
		out.Currencies = append(out.Currencies, *cb)
	}
	slices.SortFunc(out.Currencies, func(a, b CurrencyBalance) int { return strings.Compare(a.Currency, b.Currency) })
	return out, nil
}

// PointBalance is an account's balance at an instant.
type PointBalance struct {
	AccountID, Currency string
	AsOf                time.Time
	Balance             Balance
	// LastEntryID and LastPostedAt name the posting that set the balance
	// (empty when the account had none yet).
	LastEntryID  string
	LastPostedAt *time.Time
}

// BalanceAt returns an account's exact balance at asOf (empty: now),
// counting every posting at or before it.
func (s *Service) BalanceAt(ctx context.Context, v Viewer, accountID, asOf string) (PointBalance, error) {
	at := s.clock.Now().UTC()
	if asOf != "" {
		t, err := ParseInstant("asOf", asOf)
		if err != nil {
			return PointBalance{}, err
		}
		at = t
	}
	if _, err := s.account(ctx, v, accountID); err != nil {
		return PointBalance{}, err
	}
	pb, err := s.r.BalanceAt(ctx, accountID, at)
	if err != nil {
		return PointBalance{}, err
	}
	out := PointBalance{AccountID: pb.Account.ID, Currency: pb.Account.Currency, AsOf: at, Balance: balanceOf(pb.Account.Counters()),
		LastEntryID: pb.LastEntryID}
	if pb.LastEntryID != "" {
		t := pb.LastPostedAt
		out.LastPostedAt = &t
	}
	return out, nil
}

// Cause is the business object behind an entry.
type Cause struct {
	// Type is TRANSACTION, QUOTE, FUNDING (sandbox funding of an internal
	// account), REVERSAL, EXPIRY (a hold that timed out) or OTHER.
	Type string
	// Ref is the object's id (for a reversal, the reversal's own ref).
	Ref string
	// Reverses is the entry a REVERSAL undoes.
	Reverses string
}

func causeOf(ref, reverses string, transfers ...ledger.Transfer) Cause {
	c := Cause{Ref: ref, Reverses: reverses, Type: "OTHER"}
	switch {
	case reverses != "":
		c.Type = "REVERSAL"
	case len(transfers) > 0 && transfers[0].Code == ledger.CodeExpiry:
		c.Type = "EXPIRY"
	case strings.HasPrefix(ref, "Transaction:"):
		c.Type = "TRANSACTION"
	case strings.HasPrefix(ref, "Quote:"):
		c.Type = "QUOTE"
	case strings.HasPrefix(ref, "InternalAccount:"):
		c.Type = "FUNDING"
	}
	return c
}

// Line is one posting on a statement.
type Line struct {
	Key                 ports.PostingKey
	PostedAt            time.Time
	EntryID, TransferID string
	Seq                 int64
	Kind, Code          string
	// Direction is DEBIT or CREDIT: the statement account's side.
	Direction    string
	Amount       int64
	Counterparty string
	// Change is what the posting did to the four counters (and the derived
	// balances); Balance is the running balance right after it.
	Change, Balance Balance
	CausedBy        Cause
}

// StatementQuery asks for a statement page.
type StatementQuery struct {
	From, To string
	After    *ports.PostingKey
	Limit    int
}

// Statement is one page of an account's postings over [From, To).
type Statement struct {
	Account          Account
	From, To         time.Time
	Opening, Closing Balance
	Lines            []Line
	HasMore          bool
}

// Statement returns an account's postings in [from, to) (from defaults to
// the beginning, to to now) with the running balance after each and what
// caused it, between the opening (just before from) and closing (just
// before to) balances.
func (s *Service) Statement(ctx context.Context, v Viewer, accountID string, q StatementQuery) (Statement, error) {
	from, to, err := s.window(q.From, q.To)
	if err != nil {
		return Statement{}, err
	}
	n, err := limit(q.Limit, DefaultLimit)
	if err != nil {
		return Statement{}, err
	}
	if _, err := s.account(ctx, v, accountID); err != nil {
		return Statement{}, err
	}
	st, err := s.r.Statement(ctx, ports.StatementQuery{AccountID: accountID, From: from, To: to, After: q.After, Limit: n})
	if err != nil {
		return Statement{}, err
	}
	out := Statement{Account: accountOf(st.Account), From: from, To: to, Opening: balanceOf(st.Opening),
		Closing: balanceOf(st.Closing), HasMore: len(st.Lines) > n}
	if out.HasMore {
		st.Lines = st.Lines[:n]
	}
	var owners map[string]string
	for _, l := range st.Lines {
		counterparty := l.Transfer.CreditAccountID
		dir := "DEBIT"
		if !l.Debit {
			counterparty, dir = l.Transfer.DebitAccountID, "CREDIT"
		}
		if !v.Operator && !ledger.IsSystemAccount(counterparty) {
			if owners == nil {
				owners = map[string]string{}
			}
			if _, ok := owners[counterparty]; !ok {
				owner := "?"
				if a, err := s.r.Account(ctx, counterparty); err == nil {
					owner = a.PlatformID
				}
				owners[counterparty] = owner
			}
			counterparty = v.shows(counterparty, owners[counterparty])
		}
		out.Lines = append(out.Lines, Line{Key: l.Key, PostedAt: l.PostedAt, EntryID: l.EntryID, TransferID: l.Transfer.ID,
			Seq: l.Seq, Kind: l.Transfer.Kind.String(), Code: l.Transfer.Code, Direction: dir, Amount: l.Transfer.Amount,
			Counterparty: counterparty, Change: balanceOf(l.Delta), Balance: balanceOf(l.After),
			CausedBy: causeOf(l.Ref, l.Reverses, l.Transfer)})
	}
	return out, nil
}

// Leg is one transfer of an entry.
type Leg struct {
	TransferID, Kind                string
	DebitAccountID, CreditAccountID string
	Amount                          int64
	Currency, Code, PendingID       string
}

// Entry is a journal entry with its legs and links.
type Entry struct {
	ID  string
	Seq int64
	// Shard is the hash chain the entry is on (ledger.JournalEntry.Shard).
	Shard      int16
	PostedAt   time.Time
	CausedBy   Cause
	ReversedBy string
	Legs       []Leg
	// Hash and PrevHash are hex; empty for entries recorded before the
	// hash chain existed.
	Hash, PrevHash string
}

func (v Viewer) entryOf(e ports.ReportEntry) Entry {
	out := Entry{ID: e.ID, Seq: e.Seq, Shard: e.Shard, PostedAt: e.PostedAt, CausedBy: causeOf(e.Ref, e.Reverses, e.Transfers...), ReversedBy: e.ReversedBy}
	if e.Hash != ledger.ZeroHash {
		out.Hash, out.PrevHash = hex.EncodeToString(e.Hash[:]), hex.EncodeToString(e.PrevHash[:])
	}
	for _, t := range e.Transfers {
		out.Legs = append(out.Legs, Leg{TransferID: t.ID, Kind: t.Kind.String(),
			DebitAccountID:  v.shows(t.DebitAccountID, e.Owners[t.DebitAccountID]),
			CreditAccountID: v.shows(t.CreditAccountID, e.Owners[t.CreditAccountID]),
			Amount:          t.Amount, Currency: t.Currency, Code: t.Code, PendingID: t.PendingID})
	}
	return out
}

// visible reports whether an entry has a leg on an account the viewer sees.
func (v Viewer) visible(e ports.ReportEntry) bool {
	if v.Operator {
		return true
	}
	for _, t := range e.Transfers {
		if e.Owners[t.DebitAccountID] == v.PlatformID || e.Owners[t.CreditAccountID] == v.PlatformID {
			return true
		}
	}
	return false
}

// EntryQuery narrows Entries; zero values do not filter.
type EntryQuery struct {
	AccountID, Ref string
	// Shard, when set, keeps one journal shard's entries (see
	// ports.EntryFilter).
	Shard    *int16
	From, To string
	After    *ports.EntryKey
	Limit    int
}

// EntryPage is one page of entries.
type EntryPage struct {
	Entries []Entry
	HasMore bool
	// Next is the position after the page's last entry.
	Next *ports.EntryKey
}

// Entries lists the journal entries the viewer sees by time, filtered by
// account, business object (ref) and window [from, to).
func (s *Service) Entries(ctx context.Context, v Viewer, q EntryQuery) (EntryPage, error) {
	n, err := limit(q.Limit, DefaultLimit)
	if err != nil {
		return EntryPage{}, err
	}
	f := ports.EntryFilter{Scope: v.scope(), AccountID: q.AccountID, Ref: q.Ref, Shard: q.Shard, After: q.After, Limit: n}
	if q.From != "" || q.To != "" {
		from, to, err := s.window(q.From, q.To)
		if err != nil {
			return EntryPage{}, err
		}
		if q.From != "" {
			f.From = &from
		}
		if q.To != "" {
			f.To = &to
		}
	}
	if q.AccountID != "" {
		if _, err := s.account(ctx, v, q.AccountID); err != nil {
			return EntryPage{}, err
		}
	}
	es, err := s.r.Entries(ctx, f)
	if err != nil {
		return EntryPage{}, err
	}
	page := EntryPage{HasMore: len(es) > n}
	if page.HasMore {
		es = es[:n]
		k := es[n-1].Key()
		page.Next = &k
	}
	for _, e := range es {
		page.Entries = append(page.Entries, v.entryOf(e))
	}
	return page, nil
}

// GetEntry returns one entry the viewer sees (404 otherwise).
func (s *Service) GetEntry(ctx context.Context, v Viewer, id string) (Entry, error) {
	e, err := s.r.Entry(ctx, id)
	if errors.Is(err, ports.ErrNotFound) || (err == nil && !v.visible(e)) {
		return Entry{}, notFound("ledger entry", id)
	}
	if err != nil {
		return Entry{}, err
	}
	return v.entryOf(e), nil
}

// ExportQuery selects a reconciliation export.
type ExportQuery struct {
	Rail, Currency string
	From, To       string
}

// ExportRow is one posting of a rail's settlement account.
type ExportRow struct {
	PostedAt            time.Time
	EntryID, TransferID string
	Kind, Code          string
	// Amount is the transfer's amount; Posted and Pending are the signed
	// changes of the settlement account's posted and pending balances
	// (credits minus debits): they sum to its movement over the window.
	Amount, Posted, Pending int64
	Currency, Rail          string
	Counterparty            string
	TransactionID           string
	RailReference, Status   string
}

// ExportWindow validates an export query and returns its window; the
// HTTP adapter calls it before it starts streaming, so a bad query is a
// 4xx and not a broken stream.
func (s *Service) ExportWindow(ctx context.Context, v Viewer, q ExportQuery) (time.Time, time.Time, error) {
	var errs []fault.FieldError
	if strings.TrimSpace(q.Rail) == "" {
		errs = append(errs, fault.FieldError{Field: "rail", Message: "is required"})
	}
	if strings.TrimSpace(q.Currency) == "" {
		errs = append(errs, fault.FieldError{Field: "currency", Message: "is required"})
	}
	if len(errs) > 0 {
		return time.Time{}, time.Time{}, fault.InvalidFields(errs...)
	}
	from, to, err := s.window(q.From, q.To)
	if err != nil {
		return from, to, err
	}
	acct := ledger.RailSettlementID(q.Rail, q.Currency)
	if _, err := s.r.Account(ctx, acct); errors.Is(err, ports.ErrNotFound) {
		return from, to, notFound("settlement account", acct)
	} else if err != nil {
		return from, to, err
	}
	return from, to, nil
}

// Export streams the reconciliation rows of a rail in a currency over
// [from, to), one at a time, to fn. A platform gets the rows of its own
// accounts' payments on the rail; the operator gets every row.
func (s *Service) Export(ctx context.Context, v Viewer, q ExportQuery, fn func(ExportRow) error) error {
	from, to, err := s.ExportWindow(ctx, v, q)
	if err != nil {
		return err
	}
	f := ports.SettlementExport{Rail: q.Rail, Currency: q.Currency, From: from, To: to}
	if !v.Operator {
		f.PlatformID = v.PlatformID
	}
	return s.r.ExportSettlement(ctx, f, func(r ports.SettlementRow) error {
		return fn(ExportRow{PostedAt: r.Key.PostedAt, EntryID: r.EntryID, TransferID: r.TransferID, Kind: r.Kind.String(),
			Code: r.Code, Amount: r.Amount, Posted: r.Posted, Pending: r.Pending, Currency: r.Currency, Rail: r.Rail,
			Counterparty: r.Counterparty, TransactionID: r.TransactionID, RailReference: r.RailReference, Status: r.Status})
	})
}

// Verification is the result of verifying the journal.
type Verification struct {
	OK                        bool
	Entries, Hashed, Unhashed int64
	Accounts, Postings        int64
	// Head is the hex hash of the last entry, HeadSeq and HeadID its seq
	// and id.
	Head    string
	HeadSeq int64
	HeadID  string
	// Chains is the head of each shard's chain (see ledger.ChainCheck).
	Chains []ledger.ChainHead
	// Checkpoints is how many signed checkpoints the journal was checked
	// against.
	Checkpoints int
	Breaks      []ports.JournalBreak
}

// Verify recomputes the journal's hash chain and every account's counters
// (operator only: it reads the whole ledger), and checks that the journal
// still leads to every anchor (from signed checkpoints, already verified
// with the operator's public key).
func (s *Service) Verify(ctx context.Context, v Viewer, progress func(done, total int64), anchors ...ledger.Anchor) (Verification, error) {
	if !v.Operator {
		return Verification{}, fault.New(fault.KindForbidden, "FORBIDDEN", "verifying the journal needs the operator token")
	}
	jv, err := s.r.VerifyJournal(ctx, progress, anchors...)
	if err != nil {
		return Verification{}, err
	}
	out := Verification{OK: jv.OK(), Entries: jv.Entries, Hashed: jv.Hashed, Unhashed: jv.Unhashed,
		Accounts: jv.Accounts, Postings: jv.Postings, HeadSeq: jv.HeadSeq, HeadID: jv.HeadID,
		Chains: jv.Chains, Checkpoints: len(anchors), Breaks: jv.Breaks}
	if jv.Entries > 0 {
		out.Head = hex.EncodeToString(jv.Head[:])
	}
	return out, nil
}

// Checkpoint verifies the whole journal (against anchors, when given) and
// signs the head of each of its chains (one per shard) with key, the
// operator's checkpoint key, which the database never holds. A journal
// that does not verify is not signed: the checkpoint would vouch for a
// break.
func (s *Service) Checkpoint(ctx context.Context, v Viewer, key ed25519.PrivateKey, progress func(done, total int64),
	anchors ...ledger.Anchor) ([]ledger.Checkpoint, Verification, error) {
	res, err := s.Verify(ctx, v, progress, anchors...)
	if err != nil {
		return nil, res, err
	}
	if !res.OK {
		return nil, res, fmt.Errorf("the journal does not verify (%d break(s)): no checkpoint signed", len(res.Breaks))
	}
	if res.Entries == 0 {
		return nil, res, errors.New("the journal is empty: nothing to checkpoint")
	}
	at := s.clock.Now()
	out := make([]ledger.Checkpoint, 0, len(res.Chains))
	for _, h := range res.Chains {
		out = append(out, ledger.SignCheckpoint(key, h, at))
	}
	return out, res, nil
}
