package httpapi

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/reports"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

const ledgerTag = "Ledger reports"

// ---- wire models ----

// LedgerBalance is an account's four counters and the balances derived from
// them, in the smallest unit of its currency.
type LedgerBalance struct {
	DebitsPending  int64 `json:"debitsPending" doc:"Debits held by pending transfers"`
	DebitsPosted   int64 `json:"debitsPosted" doc:"Debits posted"`
	CreditsPending int64 `json:"creditsPending" doc:"Credits of pending transfers"`
	CreditsPosted  int64 `json:"creditsPosted" doc:"Credits posted"`
	Available      int64 `json:"available" doc:"creditsPosted - debitsPosted - debitsPending: what the account may spend"`
	Total          int64 `json:"total" doc:"creditsPosted + creditsPending - debitsPosted"`
	Net            int64 `json:"net" doc:"creditsPosted - debitsPosted: the account's share of its currency's zero sum"`
}

func ledgerBalanceOut(b reports.Balance) LedgerBalance {
	return LedgerBalance{DebitsPending: b.DebitsPending, DebitsPosted: b.DebitsPosted, CreditsPending: b.CreditsPending,
		CreditsPosted: b.CreditsPosted, Available: b.Available, Total: b.Total, Net: b.Net}
}

// LedgerAccount is a ledger account.
type LedgerAccount struct {
	ID         string        `json:"id" doc:"The account id: an internal account's id, or a system account (sys:<kind>:…)" example:"sys:rail_settlement:ACH:USD"`
	Currency   string        `json:"currency" example:"USD"`
	Kind       string        `json:"kind" enum:"internal,sandbox_funding,fee_revenue,rail_settlement,fx_position" doc:"What the account models"`
	PlatformID string        `json:"platformId,omitempty" doc:"The owning platform; absent for system accounts"`
	Protected  bool          `json:"protected" doc:"Debits may never exceed credits (customer and platform accounts)"`
	Balance    LedgerBalance `json:"balance"`
	CreatedAt  time.Time     `json:"createdAt"`
}

func ledgerAccountOut(a reports.Account) LedgerAccount {
	return LedgerAccount{ID: a.ID, Currency: a.Currency, Kind: a.Kind, PlatformID: a.PlatformID, Protected: a.Protected,
		Balance: ledgerBalanceOut(a.Balance), CreatedAt: a.CreatedAt.UTC()}
}

// LedgerAccountList is one page of ledger accounts.
type LedgerAccountList struct {
	Data       []LedgerAccount `json:"data"`
	HasMore    bool            `json:"hasMore"`
	NextCursor string          `json:"nextCursor,omitempty" doc:"Pass as cursor for the next page (only when hasMore)"`
}

// TrialBalanceLine is one account of a trial balance.
type TrialBalanceLine struct {
	AccountID      string `json:"accountId"`
	Kind           string `json:"kind"`
	PlatformID     string `json:"platformId,omitempty"`
	Debits         int64  `json:"debits" doc:"Debits posted"`
	Credits        int64  `json:"credits" doc:"Credits posted"`
	Net            int64  `json:"net" doc:"credits - debits"`
	DebitsPending  int64  `json:"debitsPending"`
	CreditsPending int64  `json:"creditsPending"`
}

// TrialBalanceCurrency is one currency of a trial balance.
type TrialBalanceCurrency struct {
	Currency  string             `json:"currency"`
	Accounts  []TrialBalanceLine `json:"accounts"`
	Debits    int64              `json:"debits" doc:"Sum of the listed accounts' debits"`
	Credits   int64              `json:"credits" doc:"Sum of the listed accounts' credits"`
	Net       int64              `json:"net" doc:"Sum of the listed accounts' nets"`
	OthersNet int64              `json:"othersNet" doc:"Net of the accounts outside your view (system accounts, other platforms); 0 for the operator"`
	Total     int64              `json:"total" doc:"The whole ledger's net in this currency (net + othersNet): 0 when balanced"`
	Balanced  bool               `json:"balanced" doc:"Across the whole ledger, credits equal debits (posted and pending) in this currency"`
}

// TrialBalance is the ledger's balances at an instant.
type TrialBalance struct {
	AsOf       time.Time              `json:"asOf"`
	Balanced   bool                   `json:"balanced" doc:"Every currency balances"`
	Currencies []TrialBalanceCurrency `json:"currencies"`
}

// LedgerPointBalance is an account's exact balance at an instant.
type LedgerPointBalance struct {
	AccountID    string        `json:"accountId"`
	Currency     string        `json:"currency"`
	AsOf         time.Time     `json:"asOf"`
	Balance      LedgerBalance `json:"balance"`
	LastEntryID  string        `json:"lastEntryId,omitempty" doc:"The entry of the last posting at or before asOf"`
	LastPostedAt *time.Time    `json:"lastPostedAt,omitempty"`
}

// LedgerCause is the business object behind an entry.
type LedgerCause struct {
	Type     string `json:"type" enum:"TRANSACTION,QUOTE,FUNDING,REVERSAL,EXPIRY,OTHER" doc:"What caused the entry"`
	Ref      string `json:"ref,omitempty" doc:"The object's id (Transaction:…, Quote:…, InternalAccount:… for sandbox funding)"`
	Reverses string `json:"reverses,omitempty" doc:"The entry a REVERSAL undoes"`
}

func ledgerCauseOut(c reports.Cause) LedgerCause {
	return LedgerCause{Type: c.Type, Ref: c.Ref, Reverses: c.Reverses}
}

// StatementLine is one posting on an account.
type StatementLine struct {
	PostedAt     time.Time     `json:"postedAt"`
	EntryID      string        `json:"entryId"`
	TransferID   string        `json:"transferId"`
	Seq          int64         `json:"seq" doc:"The entry's position in the journal"`
	Kind         string        `json:"kind" enum:"single,pending,post_pending,void_pending"`
	Code         string        `json:"code,omitempty" doc:"Why money moved (transfer_out, sandbox_funding, quote_fee…)"`
	Direction    string        `json:"direction" enum:"DEBIT,CREDIT" doc:"The account's side of the transfer"`
	Amount       int64         `json:"amount" doc:"The transfer's amount"`
	Counterparty string        `json:"counterparty" doc:"The transfer's other account; \"redacted\" when it is another platform's"`
	Change       LedgerBalance `json:"change" doc:"What this posting changed"`
	Balance      LedgerBalance `json:"balance" doc:"The running balance right after this posting"`
	CausedBy     LedgerCause   `json:"causedBy"`
}

// Statement is one page of an account's postings over [from, to).
type Statement struct {
	Account    LedgerAccount   `json:"account" doc:"The account, with its current balance"`
	From       time.Time       `json:"from"`
	To         time.Time       `json:"to"`
	Opening    LedgerBalance   `json:"openingBalance" doc:"The balance just before from"`
	Closing    LedgerBalance   `json:"closingBalance" doc:"The balance just before to"`
	Data       []StatementLine `json:"data"`
	HasMore    bool            `json:"hasMore"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// LedgerLeg is one transfer of an entry.
type LedgerLeg struct {
	TransferID      string `json:"transferId"`
	Kind            string `json:"kind" enum:"single,pending,post_pending,void_pending"`
	DebitAccountID  string `json:"debitAccountId" doc:"\"redacted\" when another platform's"`
	CreditAccountID string `json:"creditAccountId" doc:"\"redacted\" when another platform's"`
	Amount          int64  `json:"amount"`
	Currency        string `json:"currency"`
	Code            string `json:"code,omitempty"`
	PendingID       string `json:"pendingId,omitempty" doc:"The hold a post or void resolves"`
}

// LedgerEntry is a journal entry with its legs and links.
type LedgerEntry struct {
	ID         string      `json:"id"`
	Seq        int64       `json:"seq"`
	Shard      int16       `json:"shard" doc:"The hash chain the entry is on (0 unless ledger writers run on shards of their own)"`
	PostedAt   time.Time   `json:"postedAt"`
	CausedBy   LedgerCause `json:"causedBy"`
	ReversedBy string      `json:"reversedBy,omitempty" doc:"The entry that reverses this one"`
	Legs       []LedgerLeg `json:"legs"`
	Hash       string      `json:"hash,omitempty" doc:"SHA-256 (hex) of the entry's canonical form chained to prevHash; absent on entries recorded before the chain"`
	PrevHash   string      `json:"prevHash,omitempty"`
}

func ledgerEntryOut(e reports.Entry) LedgerEntry {
	out := LedgerEntry{ID: e.ID, Seq: e.Seq, Shard: e.Shard, PostedAt: e.PostedAt.UTC(), CausedBy: ledgerCauseOut(e.CausedBy),
		ReversedBy: e.ReversedBy, Hash: e.Hash, PrevHash: e.PrevHash, Legs: []LedgerLeg{}}
	for _, l := range e.Legs {
		out.Legs = append(out.Legs, LedgerLeg{TransferID: l.TransferID, Kind: l.Kind, DebitAccountID: l.DebitAccountID,
			CreditAccountID: l.CreditAccountID, Amount: l.Amount, Currency: l.Currency, Code: l.Code, PendingID: l.PendingID})
	}
	return out
}

// LedgerEntryList is one page of journal entries.
type LedgerEntryList struct {
	Data       []LedgerEntry `json:"data"`
	HasMore    bool          `json:"hasMore"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// JournalBreak is one place the journal does not verify.
type JournalBreak struct {
	Kind      string `json:"kind" enum:"hash,link,unhashed,posting,counter,journal" doc:"hash: an entry's content no longer matches its hash; link: an entry was removed, inserted or re-hashed; unhashed: a hash was removed; posting: a stored posting disagrees with the journal; counter: an account's counters do; journal: the journal breaks a ledger rule"`
	Seq       int64  `json:"seq,omitempty"`
	EntryID   string `json:"entryId,omitempty"`
	AccountID string `json:"accountId,omitempty"`
	Message   string `json:"message"`
}

// JournalVerification is what verifying the journal found.
type JournalVerification struct {
	OK          bool           `json:"ok"`
	Entries     int64          `json:"entries"`
	Hashed      int64          `json:"hashed"`
	Unhashed    int64          `json:"unhashed" doc:"Entries whose hash was removed (each is a break)"`
	Accounts    int64          `json:"accounts"`
	Postings    int64          `json:"postings" doc:"Stored postings checked"`
	Head        string         `json:"head,omitempty" doc:"Hash of the last entry"`
	HeadSeq     int64          `json:"headSeq,omitempty" doc:"Seq of the last entry"`
	HeadEntryID string         `json:"headEntryId,omitempty" doc:"Id of the last entry"`
	Chains      []ChainHead    `json:"chains" doc:"The head of each shard's hash chain (one, shard 0, unless ledger writers run on shards of their own)"`
	Breaks      []JournalBreak `json:"breaks" doc:"First break first"`
}

// ChainHead is the last entry of one shard's hash chain.
type ChainHead struct {
	Shard   int16  `json:"shard"`
	Seq     int64  `json:"seq"`
	EntryID string `json:"entryId"`
	Head    string `json:"head" doc:"Hash of the shard's last entry"`
}

// ReconciliationRow is one row of the reconciliation export (as a JSON
// line; the CSV has the same columns in this order).
type ReconciliationRow struct {
	PostedAt      time.Time `json:"postedAt"`
	EntryID       string    `json:"entryId"`
	TransferID    string    `json:"transferId"`
	Kind          string    `json:"kind"`
	Code          string    `json:"code"`
	Amount        int64     `json:"amount"`
	Posted        int64     `json:"posted"`
	Pending       int64     `json:"pending"`
	Currency      string    `json:"currency"`
	Rail          string    `json:"rail"`
	Counterparty  string    `json:"counterparty"`
	TransactionID string    `json:"transactionId"`
	RailReference string    `json:"railReference"`
	Status        string    `json:"status"`
}

// ReconciliationColumns is the CSV export's header: ReconciliationRow's
// JSON names, in its order.
var ReconciliationColumns = []string{"postedAt", "entryId", "transferId", "kind", "code", "amount", "posted", "pending",
	"currency", "rail", "counterparty", "transactionId", "railReference", "status"}

// NewReconciliationRow is the wire form of an export row.
func NewReconciliationRow(r reports.ExportRow) ReconciliationRow {
	return ReconciliationRow{PostedAt: r.PostedAt.UTC(), EntryID: r.EntryID, TransferID: r.TransferID, Kind: r.Kind,
		Code: r.Code, Amount: r.Amount, Posted: r.Posted, Pending: r.Pending, Currency: r.Currency, Rail: r.Rail,
		Counterparty: r.Counterparty, TransactionID: r.TransactionID, RailReference: r.RailReference, Status: r.Status}
}

// Record appends the row's CSV cells (ReconciliationColumns' order) to
// buf[:0].
func (r ReconciliationRow) Record(buf []string) []string {
	return append(buf[:0], r.PostedAt.Format(time.RFC3339Nano), r.EntryID, r.TransferID, r.Kind, r.Code,
		strconv.FormatInt(r.Amount, 10), strconv.FormatInt(r.Posted, 10), strconv.FormatInt(r.Pending, 10),
		r.Currency, r.Rail, r.Counterparty, r.TransactionID, r.RailReference, r.Status)
}

// ---- inputs ----

type listLedgerAccountsInput struct {
	Currency string `query:"currency" doc:"Only accounts in this currency"`
	Kind     string `query:"kind" enum:"internal,sandbox_funding,fee_revenue,rail_settlement,fx_position" doc:"Only accounts of this kind"`
	Limit    int    `query:"limit" minimum:"1" maximum:"500" default:"50" doc:"Page size"`
	Cursor   string `query:"cursor" doc:"nextCursor of the previous page"`
}

type ledgerAccountInput struct {
	AccountID string `path:"accountId" doc:"The ledger account's id"`
}

type trialBalanceInput struct {
	AsOf string `query:"asOf" doc:"The instant (RFC 3339 date-time, or a date for midnight UTC); default now"`
}

type ledgerBalanceInput struct {
	AccountID string `path:"accountId" doc:"The ledger account's id"`
	AsOf      string `query:"asOf" doc:"The instant (RFC 3339 date-time, or a date for midnight UTC), inclusive; default now"`
}

type statementInput struct {
	AccountID string `path:"accountId" doc:"The ledger account's id"`
	From      string `query:"from" doc:"Start of the window, inclusive (RFC 3339 or a date); default the beginning"`
	To        string `query:"to" doc:"End of the window, exclusive (RFC 3339 or a date); default now"`
	Limit     int    `query:"limit" minimum:"1" maximum:"500" default:"50" doc:"Page size"`
	Cursor    string `query:"cursor" doc:"nextCursor of the previous page (same account and window)"`
}

type listLedgerEntriesInput struct {
	AccountID string `query:"accountId" doc:"Only entries with a leg on this account"`
	Ref       string `query:"ref" doc:"Only entries caused by this business object (Transaction:…, Quote:…, InternalAccount:…)"`
	From      string `query:"from" doc:"Only entries posted at or after this instant"`
	To        string `query:"to" doc:"Only entries posted before this instant"`
	Shard     string `query:"shard" pattern:"^[0-9]{1,4}$" doc:"Only the entries of this hash chain (0-1023). Within a shard, entries committed after a page never sort before it, so paging one shard misses none"`
	Limit     int    `query:"limit" minimum:"1" maximum:"500" default:"50" doc:"Page size"`
	Cursor    string `query:"cursor" doc:"nextCursor of the previous page (same filters)"`
}

type ledgerEntryInput struct {
	EntryID string `path:"entryId" doc:"The journal entry's id"`
}

type reconciliationInput struct {
	Rail     string `query:"rail" required:"true" doc:"The rail (ACH, SEPA, …)" example:"ACH"`
	Currency string `query:"currency" required:"true" doc:"The currency of the rail's settlement account" example:"USD"`
	From     string `query:"from" doc:"Start of the window, inclusive; default the beginning"`
	To       string `query:"to" doc:"End of the window, exclusive; default now"`
	Accept   string `header:"Accept" doc:"text/csv (default) or application/x-ndjson (one JSON object per line)"`
}

// ledgerAPI handles the ledger reports.
type ledgerAPI struct{ d Deps }

func registerLedgerReports(api huma.API, d Deps) {
	api.OpenAPI().Tags = append(api.OpenAPI().Tags, &huma.Tag{Name: ledgerTag,
		Description: "corridor's own extension for finance teams: ledger accounts (system accounts included for the " +
			"operator), trial balances, exact point-in-time balances, statements, the journal with its links, " +
			"reconciliation exports per rail, and verification of the tamper-evident journal. A platform sees its own " +
			"accounts; the operator, with its own `" + operatorHeader + "` credential (alone, no platform credential), " +
			"sees every account."})
	h := ledgerAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.listAccountsOp(), h.listAccounts) },
		func(api huma.API) { huma.Register(api, h.getAccountOp(), h.getAccount) },
		func(api huma.API) { huma.Register(api, h.trialBalanceOp(), h.trialBalance) },
		func(api huma.API) { huma.Register(api, h.balanceOp(), h.balance) },
		func(api huma.API) { huma.Register(api, h.statementOp(), h.statement) },
		func(api huma.API) { huma.Register(api, h.listEntriesOp(), h.listEntries) },
		func(api huma.API) { huma.Register(api, h.getEntryOp(), h.getEntry) },
		func(api huma.API) { huma.Register(api, h.exportReconciliationOp(api), h.exportReconciliation) },
		func(api huma.API) { huma.Register(api, h.verifyOp(), h.verify) },
	)
}

// ledgerErrors are the errors of every ledger report but verifyLedger.
func ledgerErrors() []int {
	return []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound}
}

func (ledgerAPI) listAccountsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listLedgerAccounts", Method: http.MethodGet, Path: "/ledger/accounts",
		Summary: "List ledger accounts", Tags: []string{ledgerTag}, Errors: ledgerErrors(),
		Description: "The ledger accounts in view, by id, with their four counters and derived balances.",
	}
}

func (h ledgerAPI) listAccounts(ctx context.Context, in *listLedgerAccountsInput) (*struct{ Body LedgerAccountList }, error) {
	v := ledgerViewer(ctx)
	cursors := cursorsOf(h.d, "ledger", "accounts", in.Currency, in.Kind)
	q := reports.AccountQuery{Currency: in.Currency, Kind: in.Kind, Limit: in.Limit}
	if in.Cursor != "" {
		pos, err := cursors.decode(in.Cursor)
		if err != nil {
			return nil, apiError(err)
		}
		q.After = pos.ID
	}
	page, err := h.d.Reports.ListAccounts(ctx, v, q)
	if err != nil {
		return nil, apiError(err)
	}
	out := LedgerAccountList{Data: []LedgerAccount{}, HasMore: page.HasMore}
	for _, a := range page.Accounts {
		out.Data = append(out.Data, ledgerAccountOut(a))
	}
	if page.HasMore {
		out.NextCursor = cursors.encode(ports.Position{CreatedAt: time.Unix(0, 0), ID: page.Accounts[len(page.Accounts)-1].ID})
	}
	return &struct{ Body LedgerAccountList }{out}, nil
}

func (ledgerAPI) getAccountOp() huma.Operation {
	return huma.Operation{
		OperationID: "getLedgerAccount", Method: http.MethodGet, Path: "/ledger/accounts/{accountId}",
		Summary: "Get a ledger account", Tags: []string{ledgerTag}, Errors: ledgerErrors(),
		Description: "One ledger account in view with its counters and derived balances.",
	}
}

func (h ledgerAPI) getAccount(ctx context.Context, in *ledgerAccountInput) (*struct{ Body LedgerAccount }, error) {
	v := ledgerViewer(ctx)
	a, err := h.d.Reports.GetAccount(ctx, v, in.AccountID)
	if err != nil {
		return nil, apiError(err)
	}
	return &struct{ Body LedgerAccount }{ledgerAccountOut(a)}, nil
}

func (ledgerAPI) trialBalanceOp() huma.Operation {
	return huma.Operation{
		OperationID: "getTrialBalance", Method: http.MethodGet, Path: "/ledger/trial-balance",
		Summary: "Trial balance", Tags: []string{ledgerTag}, Errors: ledgerErrors(),
		Description: "Per currency, the posted debits, credits and net of every account in view with a balance at " +
			"asOf, and whether the whole ledger's credits equal its debits in that currency (its total is zero).",
	}
}

func (h ledgerAPI) trialBalance(ctx context.Context, in *trialBalanceInput) (*struct{ Body TrialBalance }, error) {
	v := ledgerViewer(ctx)
	tb, err := h.d.Reports.TrialBalance(ctx, v, in.AsOf)
	if err != nil {
		return nil, apiError(err)
	}
	out := TrialBalance{AsOf: tb.AsOf.UTC(), Balanced: tb.Balanced, Currencies: []TrialBalanceCurrency{}}
	for _, c := range tb.Currencies {
		tc := TrialBalanceCurrency{Currency: c.Currency, Accounts: []TrialBalanceLine{}, Debits: c.Debits, Credits: c.Credits,
			Net: c.Net, OthersNet: c.OthersNet, Total: c.Total, Balanced: c.Balanced}
		for _, l := range c.Accounts {
			tc.Accounts = append(tc.Accounts, TrialBalanceLine{AccountID: l.AccountID, Kind: l.Kind, PlatformID: l.PlatformID,
				Debits: l.Debits, Credits: l.Credits, Net: l.Net, DebitsPending: l.DebitsPending, CreditsPending: l.CreditsPending})
		}
		out.Currencies = append(out.Currencies, tc)
	}
	return &struct{ Body TrialBalance }{out}, nil
}

func (ledgerAPI) balanceOp() huma.Operation {
	return huma.Operation{
		OperationID: "getLedgerBalance", Method: http.MethodGet, Path: "/ledger/accounts/{accountId}/balance",
		Summary: "Balance at an instant", Tags: []string{ledgerTag}, Errors: ledgerErrors(),
		Description: "The account's exact balance at asOf, counting every posting at or before it, read from the " +
			"postings index (each posting stores the account's counters right after it), not by replaying the journal.",
	}
}

func (h ledgerAPI) balance(ctx context.Context, in *ledgerBalanceInput) (*struct{ Body LedgerPointBalance }, error) {
	v := ledgerViewer(ctx)
	pb, err := h.d.Reports.BalanceAt(ctx, v, in.AccountID, in.AsOf)
	if err != nil {
		return nil, apiError(err)
	}
	return &struct{ Body LedgerPointBalance }{LedgerPointBalance{AccountID: pb.AccountID, Currency: pb.Currency,
		AsOf: pb.AsOf.UTC(), Balance: ledgerBalanceOut(pb.Balance), LastEntryID: pb.LastEntryID, LastPostedAt: pb.LastPostedAt}}, nil
}

func (ledgerAPI) statementOp() huma.Operation {
	return huma.Operation{
		OperationID: "getLedgerStatement", Method: http.MethodGet, Path: "/ledger/accounts/{accountId}/statement",
		Summary: "Account statement", Tags: []string{ledgerTag}, Errors: ledgerErrors(),
		Description: "The account's postings in [from, to), oldest first, each with its running balance and the business " +
			"object that caused it, between the opening (just before from) and closing (just before to) balances.",
	}
}

func (h ledgerAPI) statement(ctx context.Context, in *statementInput) (*struct{ Body Statement }, error) {
	v := ledgerViewer(ctx)
	cursors := cursorsOf(h.d, "ledger", "statement", in.AccountID, in.From, in.To)
	q := reports.StatementQuery{From: in.From, To: in.To, Limit: in.Limit}
	if in.Cursor != "" {
		pos, err := cursors.decode(in.Cursor)
		if err != nil {
			return nil, apiError(err)
		}
		id, err := strconv.ParseInt(pos.ID, 10, 64)
		if err != nil {
			return nil, apiError(fault.Invalid("cursor", "is not a cursor this API returned"))
		}
		q.After = &ports.PostingKey{PostedAt: pos.CreatedAt, ID: id}
	}
	st, err := h.d.Reports.Statement(ctx, v, in.AccountID, q)
	if err != nil {
		return nil, apiError(err)
	}
	out := Statement{Account: ledgerAccountOut(st.Account), From: st.From.UTC(), To: st.To.UTC(),
		Opening: ledgerBalanceOut(st.Opening), Closing: ledgerBalanceOut(st.Closing), Data: []StatementLine{}, HasMore: st.HasMore}
	for _, l := range st.Lines {
		out.Data = append(out.Data, StatementLine{PostedAt: l.PostedAt.UTC(), EntryID: l.EntryID, TransferID: l.TransferID,
			Seq: l.Seq, Kind: l.Kind, Code: l.Code, Direction: l.Direction, Amount: l.Amount, Counterparty: l.Counterparty,
			Change: ledgerBalanceOut(l.Change), Balance: ledgerBalanceOut(l.Balance), CausedBy: ledgerCauseOut(l.CausedBy)})
	}
	if st.HasMore {
		last := st.Lines[len(st.Lines)-1].Key
		out.NextCursor = cursors.encode(ports.Position{CreatedAt: last.PostedAt, ID: strconv.FormatInt(last.ID, 10)})
	}
	return &struct{ Body Statement }{out}, nil
}

func (ledgerAPI) listEntriesOp() huma.Operation {
	return huma.Operation{
		OperationID: "listLedgerEntries", Method: http.MethodGet, Path: "/ledger/entries",
		Summary: "List journal entries", Tags: []string{ledgerTag}, Errors: ledgerErrors(),
		Description: "Journal entries with a leg on an account in view, by posting time, with their legs and links " +
			"(caused by, reverses, reversed by); filterable by account, business object and window [from, to).",
	}
}

func (h ledgerAPI) listEntries(ctx context.Context, in *listLedgerEntriesInput) (*struct{ Body LedgerEntryList }, error) {
	v := ledgerViewer(ctx)
	cursors := cursorsOf(h.d, "ledger", "entries", in.AccountID, in.Ref, in.From, in.To, in.Shard)
	q := reports.EntryQuery{AccountID: in.AccountID, Ref: in.Ref, From: in.From, To: in.To, Limit: in.Limit}
	if in.Shard != "" {
		n, err := strconv.Atoi(in.Shard)
		if err != nil || n > ledger.MaxShard {
			return nil, apiError(fault.Invalid("shard", "must be a shard from 0 to "+strconv.Itoa(ledger.MaxShard)))
		}
		shard := int16(n)
		q.Shard = &shard
	}
	if in.Cursor != "" {
		pos, err := cursors.decode(in.Cursor)
		if err != nil {
			return nil, apiError(err)
		}
		seq, err := strconv.ParseInt(pos.ID, 10, 64)
		if err != nil {
			return nil, apiError(fault.Invalid("cursor", "is not a cursor this API returned"))
		}
		q.After = &ports.EntryKey{PostedAt: pos.CreatedAt, Seq: seq}
	}
	page, err := h.d.Reports.Entries(ctx, v, q)
	if err != nil {
		return nil, apiError(err)
	}
	out := LedgerEntryList{Data: []LedgerEntry{}, HasMore: page.HasMore}
	for _, e := range page.Entries {
		out.Data = append(out.Data, ledgerEntryOut(e))
	}
	if page.Next != nil {
		out.NextCursor = cursors.encode(ports.Position{CreatedAt: page.Next.PostedAt, ID: strconv.FormatInt(page.Next.Seq, 10)})
	}
	return &struct{ Body LedgerEntryList }{out}, nil
}

func (ledgerAPI) getEntryOp() huma.Operation {
	return huma.Operation{
		OperationID: "getLedgerEntry", Method: http.MethodGet, Path: "/ledger/entries/{entryId}",
		Summary: "Get a journal entry", Tags: []string{ledgerTag}, Errors: ledgerErrors(),
		Description: "One journal entry with a leg in view: its legs, what caused it, what it reverses and what reverses it, and its hash.",
	}
}

func (h ledgerAPI) getEntry(ctx context.Context, in *ledgerEntryInput) (*struct{ Body LedgerEntry }, error) {
	v := ledgerViewer(ctx)
	e, err := h.d.Reports.GetEntry(ctx, v, in.EntryID)
	if err != nil {
		return nil, apiError(err)
	}
	return &struct{ Body LedgerEntry }{ledgerEntryOut(e)}, nil
}

// exportReconciliationOp takes the API: its JSON-lines response names the
// row's schema in the API's registry.
func (ledgerAPI) exportReconciliationOp(api huma.API) huma.Operation {
	return huma.Operation{
		OperationID: "exportReconciliation", Method: http.MethodGet, Path: "/ledger/exports/reconciliation",
		Summary: "Reconciliation export", Tags: []string{ledgerTag}, Errors: ledgerErrors(),
		Description: "One row per posting of the rail's settlement account in [from, to): the rail reference, " +
			"transaction, amount, the signed change of the settlement account's posted and pending balances (they sum " +
			"to its movement over the window), status and time; streamed row by row as CSV (Accept: text/csv, the " +
			"default) or JSON lines (Accept: application/x-ndjson). A platform gets the rows of its own accounts; the " +
			"operator every row.",
		Responses: map[string]*huma.Response{"200": {Description: "The rows", Content: map[string]*huma.MediaType{
			"text/csv":             {Schema: &huma.Schema{Type: "string"}},
			"application/x-ndjson": {Schema: api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(ReconciliationRow{}), true, "")},
		}}},
	}
}

func (h ledgerAPI) exportReconciliation(ctx context.Context, in *reconciliationInput) (*huma.StreamResponse, error) {
	v := ledgerViewer(ctx)
	q := reports.ExportQuery{Rail: in.Rail, Currency: in.Currency, From: in.From, To: in.To}
	// A bad query is an error response, not a broken stream.
	if _, _, err := h.d.Reports.ExportWindow(ctx, v, q); err != nil {
		return nil, apiError(err)
	}
	jsonLines := acceptsJSONLines(in.Accept)
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		streamReconciliation(hctx, h.d, v, q, jsonLines)
	}}, nil
}

func (ledgerAPI) verifyOp() huma.Operation {
	return huma.Operation{
		OperationID: "verifyLedger", Method: http.MethodGet, Path: "/ledger/verify",
		Summary: "Verify the journal", Tags: []string{ledgerTag}, Errors: []int{http.StatusUnauthorized, http.StatusForbidden},
		Description: "Recomputes the journal's hash chain and every account's counters (and every stored posting) " +
			"from the journal and reports the first break; an entry without a hash is a break. Operator only (the " +
			"signed checkpoints are checked by `corridor ledger verify -checkpoint`).",
	}
}

func (h ledgerAPI) verify(ctx context.Context, _ *struct{}) (*struct{ Body JournalVerification }, error) {
	jv, err := h.d.Reports.Verify(ctx, ledgerViewer(ctx), nil)
	if err != nil {
		return nil, apiError(err)
	}
	out := JournalVerification{OK: jv.OK, Entries: jv.Entries, Hashed: jv.Hashed, Unhashed: jv.Unhashed,
		Accounts: jv.Accounts, Postings: jv.Postings, Head: jv.Head, HeadSeq: jv.HeadSeq, HeadEntryID: jv.HeadID,
		Chains: []ChainHead{}, Breaks: []JournalBreak{}}
	for _, c := range jv.Chains {
		out.Chains = append(out.Chains, ChainHead{Shard: c.Shard, Seq: c.Seq, EntryID: c.ID, Head: hex.EncodeToString(c.Hash[:])})
	}
	for _, b := range jv.Breaks {
		out.Breaks = append(out.Breaks, JournalBreak{Kind: b.Kind, Seq: b.Seq, EntryID: b.EntryID, AccountID: b.AccountID, Message: b.Message})
	}
	return &struct{ Body JournalVerification }{out}, nil
}

func acceptsJSONLines(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "application/x-ndjson", "application/jsonl", "application/json-lines":
			return true
		case "text/csv":
			return false
		}
	}
	return false
}

// reconciliationFlushEvery is how many rows are written between flushes to
// the client (and write-deadline extensions): memory stays at one row plus
// the buffer however long the export.
const reconciliationFlushEvery = 500

// streamReconciliation writes the export row by row. The status is sent
// before the first row, so a failure half-way can only end the stream
// early: it is logged, and the connection is closed without the final
// chunk so the client sees a truncated body, not a complete-looking one.
func streamReconciliation(hctx huma.Context, d Deps, v reports.Viewer, q reports.ExportQuery, jsonLines bool) {
	_, w := humago.Unwrap(hctx)
	rc := http.NewResponseController(w)
	ext := "csv"
	if jsonLines {
		hctx.SetHeader("Content-Type", "application/x-ndjson")
		ext = "ndjson"
	} else {
		hctx.SetHeader("Content-Type", "text/csv; charset=utf-8")
	}
	hctx.SetHeader("Content-Disposition", `attachment; filename="reconciliation-`+safeName(q.Rail)+`-`+safeName(q.Currency)+`.`+ext+`"`)
	hctx.SetStatus(http.StatusOK)
	bw := bufio.NewWriterSize(hctx.BodyWriter(), 64<<10)
	cw := csv.NewWriter(bw)
	enc := json.NewEncoder(bw)
	if !jsonLines {
		_ = cw.Write(ReconciliationColumns)
	}
	var record []string
	n := 0
	flush := func() error {
		if !jsonLines {
			cw.Flush()
			if err := cw.Error(); err != nil {
				return err
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		_ = rc.SetWriteDeadline(time.Now().Add(time.Minute)) // a long export outlives the server's write timeout
		return rc.Flush()
	}
	err := d.Reports.Export(hctx.Context(), v, q, func(r reports.ExportRow) error {
		row := NewReconciliationRow(r)
		var err error
		if jsonLines {
			err = enc.Encode(row)
		} else {
			record = row.Record(record)
			err = cw.Write(record)
		}
		if err != nil {
			return err
		}
		if n++; n%reconciliationFlushEvery == 0 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil && hctx.Context().Err() == nil {
		d.Logger.Error("reconciliation export failed mid-stream", "rail", q.Rail, "currency", q.Currency, "rows", n, "err", err)
		panic(http.ErrAbortHandler)
	}
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// ledgerViewer is who reads the ledger: the operator, or the platform of
// the request's credential.
func ledgerViewer(ctx context.Context) reports.Viewer {
	p := principal(ctx)
	if p.Operator {
		return reports.Operator()
	}
	return reports.Platform(p.PlatformID)
}
