package httpapi_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/core/operator"
	"github.com/corridorpay/corridor/core/reports"
	"github.com/corridorpay/corridor/ledger"
)

const operatorToken = "operator-token-for-tests-0123"

var (
	ledgerACH  = ledger.RailSettlementID("ACH", "USD")
	ledgerFund = ledger.SandboxFundingID("USD")
)

// newReportsHarness is the harness with the ledger reports registered and
// the USD system accounts (with an ACH rail) created.
func newReportsHarness(t *testing.T) *apiHarness {
	t.Helper()
	h := memoryHarness(t, true)
	require.NoError(t, h.ledger.CreateAccounts(context.Background(), ledger.SystemAccounts([]string{"USD"}, map[string][]string{"ACH": {"USD"}})...))
	h.serve(httpapi.Deps{
		Reports:  reports.New(memory.NewLedgerReports(h.ledger.(*memory.Ledger), h.store.(*memory.Store)), h.clock),
		Operator: mustOperator(t),
	})
	return h
}

// ledgerStory gives two platforms money and moves some: A funds, pays B,
// sends a payout on ACH. It returns A's and B's USD accounts.
func (h *apiHarness) ledgerStory(a, b tenant) (string, string) {
	h.t.Helper()
	accA, accB := h.platformAccount(a, "USD").ID, h.platformAccount(b, "USD").ID
	for _, e := range []ledger.Entry{
		{ID: "fund:a", Ref: accA, Transfers: []ledger.Transfer{{ID: "fund:a", DebitAccountID: ledgerFund, CreditAccountID: accA, Amount: 10_000, Currency: "USD", Code: "sandbox_funding"}}},
		{ID: "fund:b", Ref: accB, Transfers: []ledger.Transfer{{ID: "fund:b", DebitAccountID: ledgerFund, CreditAccountID: accB, Amount: 3_000, Currency: "USD", Code: "sandbox_funding"}}},
		{ID: "pay", Ref: "Transaction:pay", Transfers: []ledger.Transfer{{ID: "pay", DebitAccountID: accA, CreditAccountID: accB, Amount: 700, Currency: "USD", Code: "payment"}}},
		{ID: "hold:out", Ref: "Transaction:out", Transfers: []ledger.Transfer{{ID: "hold:out", Kind: ledger.Pending, DebitAccountID: accA, CreditAccountID: ledgerACH, Amount: 1_500, Currency: "USD", Code: "transfer_out"}}},
		{ID: "settle:out", Ref: "Transaction:out", Transfers: []ledger.Transfer{{ID: "settle:out", Kind: ledger.PostPending, PendingID: "hold:out", Code: "transfer_out"}}},
		{ID: "out:b", Ref: "Transaction:outb", Transfers: []ledger.Transfer{{ID: "out:b", DebitAccountID: accB, CreditAccountID: ledgerACH, Amount: 100, Currency: "USD", Code: "transfer_out"}}},
	} {
		h.clock.Advance(time.Minute)
		_, err := h.ledger.Post(context.Background(), e)
		require.NoError(h.t, err)
	}
	h.clock.Advance(time.Minute)
	return accA, accB
}

// operator reads path with the operator's own credential (tn is only
// there to keep call sites readable: it is not sent).
func (h *apiHarness) operator(_ tenant, path string, header ...string) apiResponse {
	h.t.Helper()
	return h.send(request{method: http.MethodGet, path: path,
		header: headerPairs(append([]string{"Corridor-Operator-Token", operatorToken}, header...))})
}

func mustOperator(t *testing.T) *operator.Authenticator {
	t.Helper()
	a, err := operator.New(operatorToken, "")
	require.NoError(t, err)
	return a
}

// The operator is a principal of its own: its token never rides on a
// platform credential, reaches the ledger reports only, and a platform's
// credential never reaches a system account.
func TestOperatorIsItsOwnPrincipal(t *testing.T) {
	h := newReportsHarness(t)
	a, b := h.tenant("USD"), h.tenant("USD")
	accA, _ := h.ledgerStory(a, b)

	// B's credential with the operator token: refused, not widened.
	for _, path := range []string{"/ledger/accounts/" + accA, "/ledger/verify", "/ledger/accounts"} {
		requireError(t, h.get(b, path, "Corridor-Operator-Token", operatorToken), http.StatusUnauthorized, "UNAUTHORIZED")
	}
	// Alone, it reads A's account and verifies.
	got := decode[httpapi.LedgerAccount](t, h.operator(a, "/ledger/accounts/"+accA))
	assert.Equal(t, accA, got.ID)
	assert.True(t, decode[httpapi.JournalVerification](t, h.operator(a, "/ledger/verify")).OK)
	logs := h.logs.String()
	assert.Contains(t, logs, `"principal":"operator"`, "the operator's requests are logged as the operator's")
	assert.NotContains(t, logs, operatorToken, "the token is never logged")
	// Outside the ledger reports it is no platform.
	res := h.send(request{method: http.MethodGet, path: "/customers", header: map[string]string{"Corridor-Operator-Token": operatorToken}})
	requireError(t, res, http.StatusForbidden, "FORBIDDEN")
	// A wrong or empty token alone is 401.
	for _, tok := range []string{"wrong", ""} {
		res := h.send(request{method: http.MethodGet, path: "/ledger/accounts", header: map[string]string{"Corridor-Operator-Token": tok}})
		requireError(t, res, http.StatusUnauthorized, "UNAUTHORIZED")
	}
	// A platform's credential reaches no system account.
	for _, id := range []string{ledgerACH, ledgerFund} {
		for _, path := range []string{"/ledger/accounts/", "/ledger/accounts/%s/balance", "/ledger/accounts/%s/statement"} {
			p := path + url.PathEscape(id)
			if strings.Contains(path, "%s") {
				p = fmt.Sprintf(path, url.PathEscape(id))
			}
			requireError(t, h.get(a, p), http.StatusNotFound, "REFERENCE_NOT_FOUND")
		}
	}
	requireError(t, h.get(a, "/ledger/verify"), http.StatusForbidden, "FORBIDDEN")
}

func TestLedgerAccountsAreScopedToThePlatform(t *testing.T) {
	h := newReportsHarness(t)
	a, b := h.tenant("USD", "EUR"), h.tenant("USD")
	accA, accB := h.ledgerStory(a, b)

	list := decode[httpapi.LedgerAccountList](t, h.get(a, "/ledger/accounts"))
	var got []string
	for _, acct := range list.Data {
		got = append(got, acct.ID)
		assert.Equal(t, a.platformID, acct.PlatformID)
	}
	assert.Len(t, got, 2)
	assert.Contains(t, got, accA)
	assert.NotContains(t, got, accB)

	one := decode[httpapi.LedgerAccount](t, h.get(a, "/ledger/accounts/"+accA))
	assert.Equal(t, int64(10_000-700-1_500), one.Balance.Net)
	assert.Equal(t, one.Balance.Net, one.Balance.Available)
	assert.True(t, one.Protected)
	requireError(t, h.get(a, "/ledger/accounts/"+accB), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.get(a, "/ledger/accounts/"+url.PathEscape(ledgerACH)), http.StatusNotFound, "REFERENCE_NOT_FOUND")

	// The operator sees the system accounts, in pages.
	sys := decode[httpapi.LedgerAccount](t, h.operator(a, "/ledger/accounts/"+url.PathEscape(ledgerACH)))
	assert.Equal(t, int64(1_600), sys.Balance.Net)
	assert.Equal(t, "rail_settlement", sys.Kind)
	var all []string
	path := "/ledger/accounts?limit=2"
	for {
		page := decode[httpapi.LedgerAccountList](t, h.operator(a, path))
		for _, acct := range page.Data {
			all = append(all, acct.ID)
		}
		if !page.HasMore {
			break
		}
		path = "/ledger/accounts?limit=2&cursor=" + page.NextCursor
	}
	assert.Contains(t, all, ledgerACH)
	assert.Contains(t, all, accB)
	assert.Len(t, all, 4+3+3) // USD system accounts and settlement, EUR ones (A holds EUR), A's two, B's one

	filtered := decode[httpapi.LedgerAccountList](t, h.operator(a, "/ledger/accounts?kind=rail_settlement"))
	require.Len(t, filtered.Data, 1)
	requireError(t, h.get(a, "/ledger/accounts?cursor=bogus"), http.StatusBadRequest, "INVALID_INPUT", "cursor")

	// A wrong operator token is refused, not ignored.
	requireError(t, h.send(request{method: http.MethodGet, path: "/ledger/accounts",
		header: map[string]string{"Corridor-Operator-Token": "wrong"}}), http.StatusUnauthorized, "UNAUTHORIZED")
	requireError(t, h.send(request{method: http.MethodGet, path: "/ledger/accounts"}), http.StatusUnauthorized, "UNAUTHORIZED")
}

func TestLedgerTrialBalanceAndPointInTime(t *testing.T) {
	h := newReportsHarness(t)
	a, b := h.tenant("USD"), h.tenant("USD")
	start := h.clock.Now()
	accA, _ := h.ledgerStory(a, b)

	op := decode[httpapi.TrialBalance](t, h.operator(a, "/ledger/trial-balance"))
	assert.True(t, op.Balanced)
	require.Len(t, op.Currencies, 1)
	usd := op.Currencies[0]
	assert.True(t, usd.Balanced)
	assert.Zero(t, usd.Total)
	assert.Zero(t, usd.Net)
	assert.Equal(t, usd.Debits, usd.Credits)
	assert.Len(t, usd.Accounts, 4) // funding, settlement, A, B

	mine := decode[httpapi.TrialBalance](t, h.get(a, "/ledger/trial-balance"))
	require.Len(t, mine.Currencies, 1)
	require.Len(t, mine.Currencies[0].Accounts, 1)
	assert.Equal(t, accA, mine.Currencies[0].Accounts[0].AccountID)
	assert.Equal(t, int64(7_800), mine.Currencies[0].Net)
	assert.Equal(t, int64(-7_800), mine.Currencies[0].OthersNet)
	assert.True(t, mine.Currencies[0].Balanced)

	// Right after A's funding (the first entry, a minute in).
	at := start.Add(time.Minute).Format(time.RFC3339)
	past := decode[httpapi.TrialBalance](t, h.operator(a, "/ledger/trial-balance?asOf="+url.QueryEscape(at)))
	require.Len(t, past.Currencies[0].Accounts, 2)
	assert.Equal(t, int64(10_000), past.Currencies[0].Credits)

	pb := decode[httpapi.LedgerPointBalance](t, h.get(a, "/ledger/accounts/"+accA+"/balance?asOf="+url.QueryEscape(at)))
	assert.Equal(t, int64(10_000), pb.Balance.Net)
	assert.Equal(t, "fund:a", pb.LastEntryID)
	// During the payout's hold, 1,500 is held.
	held := start.Add(4*time.Minute + time.Second).Format(time.RFC3339)
	pb = decode[httpapi.LedgerPointBalance](t, h.get(a, "/ledger/accounts/"+accA+"/balance?asOf="+url.QueryEscape(held)))
	assert.Equal(t, int64(9_300), pb.Balance.Net)
	assert.Equal(t, int64(7_800), pb.Balance.Available)
	assert.Equal(t, int64(1_500), pb.Balance.DebitsPending)
	now := decode[httpapi.LedgerPointBalance](t, h.get(a, "/ledger/accounts/"+accA+"/balance"))
	assert.Equal(t, int64(7_800), now.Balance.Net)

	requireError(t, h.get(a, "/ledger/trial-balance?asOf=yesterday"), http.StatusBadRequest, "INVALID_INPUT", "asOf")
	requireError(t, h.get(a, "/ledger/accounts/"+accA+"/balance?asOf=2025-13-45"), http.StatusBadRequest, "INVALID_INPUT", "asOf")
}

func TestLedgerStatement(t *testing.T) {
	h := newReportsHarness(t)
	a, b := h.tenant("USD"), h.tenant("USD")
	accA, accB := h.ledgerStory(a, b)

	st := decode[httpapi.Statement](t, h.get(a, "/ledger/accounts/"+accA+"/statement"))
	require.Len(t, st.Data, 4)
	assert.Zero(t, st.Opening.Net)
	assert.Equal(t, int64(7_800), st.Closing.Net)
	assert.Equal(t, "fund:a", st.Data[0].EntryID)
	assert.Equal(t, "FUNDING", st.Data[0].CausedBy.Type)
	assert.Equal(t, "CREDIT", st.Data[0].Direction)
	assert.Equal(t, ledgerFund, st.Data[0].Counterparty)
	assert.Equal(t, "redacted", st.Data[1].Counterparty, "another platform's account")
	assert.Equal(t, "TRANSACTION", st.Data[1].CausedBy.Type)
	assert.Equal(t, "Transaction:pay", st.Data[1].CausedBy.Ref)
	assert.Equal(t, int64(-700), st.Data[1].Change.Net)
	assert.Equal(t, int64(9_300), st.Data[1].Balance.Net)
	assert.Equal(t, int64(1_500), st.Data[2].Change.DebitsPending)
	assert.Equal(t, "post_pending", st.Data[3].Kind)
	assert.Equal(t, ledgerACH, st.Data[3].Counterparty)

	// Pages of one, following nextCursor.
	var walked []string
	path := "/ledger/accounts/" + accA + "/statement?limit=1"
	for {
		page := decode[httpapi.Statement](t, h.get(a, path))
		require.LessOrEqual(t, len(page.Data), 1)
		for _, l := range page.Data {
			walked = append(walked, l.TransferID)
		}
		if !page.HasMore {
			break
		}
		path = "/ledger/accounts/" + accA + "/statement?limit=1&cursor=" + page.NextCursor
	}
	assert.Equal(t, []string{"fund:a", "pay", "hold:out", "settle:out"}, walked)

	// A window.
	from := st.Data[1].PostedAt.Format(time.RFC3339Nano)
	to := st.Data[3].PostedAt.Format(time.RFC3339Nano)
	win := decode[httpapi.Statement](t, h.get(a, "/ledger/accounts/"+accA+"/statement?from="+url.QueryEscape(from)+"&to="+url.QueryEscape(to)))
	require.Len(t, win.Data, 2)
	assert.Equal(t, int64(10_000), win.Opening.Net)
	assert.Equal(t, int64(9_300), win.Closing.Net)

	page := decode[httpapi.Statement](t, h.get(a, "/ledger/accounts/"+accA+"/statement?limit=1"))
	requireError(t, h.get(b, "/ledger/accounts/"+accB+"/statement?limit=1&cursor="+page.NextCursor), http.StatusBadRequest, "INVALID_INPUT", "cursor")
	requireError(t, h.get(a, "/ledger/accounts/"+accA+"/statement?from=nope"), http.StatusBadRequest, "INVALID_INPUT", "from")
	requireError(t, h.get(a, "/ledger/accounts/"+accA+"/statement?to=2025-10-13T12:00:00"), http.StatusBadRequest, "INVALID_INPUT", "to")
	requireError(t, h.get(a, "/ledger/accounts/"+accA+"/statement?from=2025-10-14&to=2025-10-13"), http.StatusBadRequest, "INVALID_INPUT", "from")
	requireError(t, h.get(a, "/ledger/accounts/"+accB+"/statement"), http.StatusNotFound, "REFERENCE_NOT_FOUND")
}

func TestLedgerEntries(t *testing.T) {
	h := newReportsHarness(t)
	a, b := h.tenant("USD"), h.tenant("USD")
	accA, accB := h.ledgerStory(a, b)

	ids := func(l httpapi.LedgerEntryList) []string {
		var out []string
		for _, e := range l.Data {
			out = append(out, e.ID)
		}
		return out
	}
	assert.Equal(t, []string{"fund:a", "pay", "hold:out", "settle:out"}, ids(decode[httpapi.LedgerEntryList](t, h.get(a, "/ledger/entries"))))
	assert.Equal(t, []string{"fund:b", "pay", "out:b"}, ids(decode[httpapi.LedgerEntryList](t, h.get(b, "/ledger/entries"))))
	assert.Len(t, decode[httpapi.LedgerEntryList](t, h.operator(a, "/ledger/entries")).Data, 6)
	assert.Equal(t, []string{"hold:out", "settle:out"}, ids(decode[httpapi.LedgerEntryList](t, h.get(a, "/ledger/entries?ref=Transaction:out"))))
	onZero := decode[httpapi.LedgerEntryList](t, h.get(a, "/ledger/entries?shard=0"))
	assert.Equal(t, []string{"fund:a", "pay", "hold:out", "settle:out"}, ids(onZero))
	assert.Zero(t, onZero.Data[0].Shard)
	assert.Empty(t, decode[httpapi.LedgerEntryList](t, h.get(a, "/ledger/entries?shard=1")).Data)
	for _, bad := range []string{"1024", "-1", "x", "99999"} {
		requireError(t, h.get(a, "/ledger/entries?shard="+bad), http.StatusBadRequest, "INVALID_INPUT", "shard")
	}
	assert.Equal(t, []string{"fund:b", "pay", "out:b"}, ids(decode[httpapi.LedgerEntryList](t, h.operator(a, "/ledger/entries?accountId="+accB))))
	requireError(t, h.get(a, "/ledger/entries?accountId="+accB), http.StatusNotFound, "REFERENCE_NOT_FOUND")

	var walked []string
	path := "/ledger/entries?limit=1"
	for {
		page := decode[httpapi.LedgerEntryList](t, h.operator(a, path))
		walked = append(walked, ids(page)...)
		if !page.HasMore {
			break
		}
		path = "/ledger/entries?limit=1&cursor=" + page.NextCursor
	}
	assert.Equal(t, []string{"fund:a", "fund:b", "pay", "hold:out", "settle:out", "out:b"}, walked)

	pay := decode[httpapi.LedgerEntry](t, h.get(a, "/ledger/entries/pay"))
	require.Len(t, pay.Legs, 1)
	assert.Equal(t, accA, pay.Legs[0].DebitAccountID)
	assert.Equal(t, "redacted", pay.Legs[0].CreditAccountID)
	assert.Equal(t, "Transaction:pay", pay.CausedBy.Ref)
	settle := decode[httpapi.LedgerEntry](t, h.get(a, "/ledger/entries/settle:out"))
	assert.Equal(t, "hold:out", settle.Legs[0].PendingID)
	assert.Equal(t, int64(1_500), settle.Legs[0].Amount)
	requireError(t, h.get(a, "/ledger/entries/out:b"), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.get(a, "/ledger/entries/missing"), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.get(a, "/ledger/entries?from=2025-10-13T13:00:00Z&to=2025-10-13T12:00:00Z"), http.StatusBadRequest, "INVALID_INPUT", "from")
	requireError(t, h.get(a, "/ledger/entries?to=soon"), http.StatusBadRequest, "INVALID_INPUT", "to")
}

func TestLedgerReconciliationExport(t *testing.T) {
	h := newReportsHarness(t)
	a, b := h.tenant("USD"), h.tenant("USD")
	h.ledgerStory(a, b)

	r := h.operator(a, "/ledger/exports/reconciliation?rail=ACH&currency=USD", "Accept", "text/csv")
	require.Equalf(t, http.StatusOK, r.status, "%s", r.body)
	assert.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "text/csv"))
	records, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 1+3)
	assert.Equal(t, []string{"postedAt", "entryId", "transferId", "kind", "code", "amount", "posted", "pending",
		"currency", "rail", "counterparty", "transactionId", "railReference", "status"}, records[0])
	assert.Equal(t, "hold:out", records[1][1])
	assert.Equal(t, []string{"1500", "0", "1500"}, records[1][5:8])
	assert.Equal(t, []string{"1500", "1500", "-1500"}, records[2][5:8])
	assert.Equal(t, "Transaction:out", records[2][11])

	// JSON lines, and a platform's own rows only.
	r = h.get(b, "/ledger/exports/reconciliation?rail=ACH&currency=USD", "Accept", "application/x-ndjson")
	require.Equalf(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "application/x-ndjson", r.header.Get("Content-Type"))
	var rows []httpapi.ReconciliationRow
	sc := bufio.NewScanner(strings.NewReader(string(r.body)))
	for sc.Scan() {
		var row httpapi.ReconciliationRow
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
		rows = append(rows, row)
	}
	require.Len(t, rows, 1)
	assert.Equal(t, "out:b", rows[0].EntryID)
	assert.Equal(t, int64(100), rows[0].Posted)
	assert.Equal(t, "Transaction:outb", rows[0].TransactionID)

	requireError(t, h.get(a, "/ledger/exports/reconciliation?currency=USD"), http.StatusBadRequest, "INVALID_INPUT", "rail")
	requireError(t, h.get(a, "/ledger/exports/reconciliation?rail=ACH&currency=USD&from=x"), http.StatusBadRequest, "INVALID_INPUT", "from")
	requireError(t, h.get(a, "/ledger/exports/reconciliation?rail=ACH&currency=USD&from=2025-10-14&to=2025-10-13"), http.StatusBadRequest, "INVALID_INPUT", "from")
	requireError(t, h.get(a, "/ledger/exports/reconciliation?rail=PIGEON&currency=USD"), http.StatusNotFound, "REFERENCE_NOT_FOUND")
}

func TestLedgerVerify(t *testing.T) {
	h := newReportsHarness(t)
	a, b := h.tenant("USD"), h.tenant("USD")
	h.ledgerStory(a, b)
	requireError(t, h.get(a, "/ledger/verify"), http.StatusForbidden, "FORBIDDEN")
	v := decode[httpapi.JournalVerification](t, h.operator(a, "/ledger/verify"))
	assert.True(t, v.OK)
	assert.Empty(t, v.Breaks)
	assert.Equal(t, int64(6), v.Entries)
	assert.Equal(t, v.Entries, v.Hashed+v.Unhashed)
}

func TestLedgerReportsInTheOpenAPIDocument(t *testing.T) {
	h := newReportsHarness(t)
	r := h.send(request{method: http.MethodGet, path: "/openapi.json"})
	require.Equal(t, http.StatusOK, r.status)
	var doc struct {
		Tags  []struct{ Name string } `json:"tags"`
		Paths map[string]map[string]struct {
			Tags []string `json:"tags"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(r.body, &doc))
	var tags []string
	for _, tg := range doc.Tags {
		tags = append(tags, tg.Name)
	}
	assert.Contains(t, tags, "Ledger reports")
	for _, p := range []string{"/ledger/accounts", "/ledger/accounts/{accountId}", "/ledger/trial-balance",
		"/ledger/accounts/{accountId}/balance", "/ledger/accounts/{accountId}/statement", "/ledger/entries",
		"/ledger/entries/{entryId}", "/ledger/exports/reconciliation", "/ledger/verify"} {
		op, ok := doc.Paths[p]["get"]
		require.True(t, ok, p)
		assert.Equal(t, []string{"Ledger reports"}, op.Tags, p)
	}
}
