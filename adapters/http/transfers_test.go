package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ports"
)

// transferHarness is the API harness with transfers, transactions and a
// job runner the test drives with the fake clock.
type transferHarness struct {
	*apiHarness
	runner *jobs.Runner
}

func newTransferHarness(t *testing.T) *transferHarness {
	t.Helper()
	h := memoryHarness(t, true)
	reg := h.defaultRails(sandbox.Factory(h.clock))
	xfers := transfers.New(h.store, h.ledger, reg, h.clock, h.ids, transfers.Options{Logger: h.log})
	h.serve(httpapi.Deps{
		Transfers:    xfers,
		Transactions: transactions.New(h.store),
	})
	runner := jobs.NewRunner(h.store.Read().Jobs(), h.clock, h.log)
	xfers.Register(runner)
	return &transferHarness{apiHarness: h, runner: runner}
}

// customerWithAccount creates a US customer and returns it with its USD
// internal account.
func (h *transferHarness) customerWithAccount(tn tenant) (ports.Customer, ports.InternalAccount) {
	h.t.Helper()
	ctx := context.Background()
	region := "US"
	c, err := h.customers.Create(ctx, tn.platformID, customers.Input{CustomerType: "INDIVIDUAL", Region: &region})
	require.NoError(h.t, err)
	rows, _, err := h.store.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{
		PlatformID: tn.platformID, CustomerID: c.ID, Currency: "USD"}, ports.Page{Limit: 5})
	require.NoError(h.t, err)
	require.Len(h.t, rows, 1)
	return c, rows[0]
}

// externalAccount stores an ACTIVE external account (USD_ACCOUNT whose
// account number ends in suffix, or the given info).
func (h *transferHarness) externalAccount(tn tenant, customerID, currency string, info ports.AccountInfo) ports.ExternalAccount {
	h.t.Helper()
	now := h.clock.Now()
	a := ports.ExternalAccount{ID: h.ids.New("ExternalAccount"), PlatformID: tn.platformID, CustomerID: customerID,
		Currency: currency, Status: "ACTIVE", Info: info, BeneficiaryVerificationStatus: "MATCHED", CreatedAt: now, UpdatedAt: now}
	ctx := context.Background()
	require.NoError(h.t, h.store.InTx(ctx, func(tx ports.Tx) error { return tx.ExternalAccounts().Create(ctx, a) }))
	return a
}

func usdInfo(suffix string) ports.AccountInfo {
	return ports.AccountInfo{AccountType: "USD_ACCOUNT", AccountNumber: "98765" + suffix, RoutingNumber: "021000021",
		BankAccountType: "CHECKING", BankName: "Test Bank"}
}

func (h *transferHarness) runJobs() {
	h.t.Helper()
	_, err := h.runner.RunAll(context.Background(), 100)
	require.NoError(h.t, err)
}

func (h *transferHarness) advance(d time.Duration) {
	h.t.Helper()
	h.clock.Advance(d)
	h.runJobs()
}

func (h *transferHarness) fund(tn tenant, accountID string, amount int64) {
	h.t.Helper()
	r := h.post(tn, fundPath(accountID), fmt.Sprintf(`{"amount":%d}`, amount))
	require.Equalf(h.t, http.StatusOK, r.status, "fund: %s", r.body)
}

func outBody(src, dst string, amount int64, extra string) string {
	return fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q%s},"amount":%d}`, src, dst, extra, amount)
}

func created(t *testing.T, r apiResponse) map[string]any {
	t.Helper()
	return ok(t, r, http.StatusCreated)
}

func TestTransferOutResponse(t *testing.T) {
	h := newTransferHarness(t)
	tn := h.tenant("USD")
	c, acct := h.customerWithAccount(tn)
	dest := h.externalAccount(tn, c.ID, "USD", usdInfo("789"))
	h.fund(tn, acct.ID, 10_000)

	body := fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":2500,`+
		`"remittanceInformation":"invoice 42","purposeOfPayment":"GOODS_OR_SERVICES"}`, acct.ID, dest.ID)
	m := created(t, h.post(tn, "/transfer-out", body))
	id := m["id"].(string)
	assert.Regexp(t, `^Transaction:[0-9a-f-]{36}$`, id)
	assert.Equal(t, "PENDING", m["status"])
	assert.Equal(t, "OUTGOING", m["type"])
	assert.Equal(t, "DEBIT", m["direction"])
	assert.Equal(t, map[string]any{"sourceType": "ACCOUNT", "accountId": acct.ID, "currency": "USD"}, m["source"])
	assert.Equal(t, map[string]any{"destinationType": "ACCOUNT", "accountId": dest.ID, "currency": "USD"}, m["destination"])
	assert.Equal(t, c.ID, m["customerId"])
	assert.Equal(t, c.PlatformCustomerID, m["platformCustomerId"])
	usd := map[string]any{"code": "USD", "name": "United States Dollar", "symbol": "$", "decimals": float64(2)}
	assert.Equal(t, map[string]any{"amount": float64(2500), "currency": usd}, m["sentAmount"])
	assert.Equal(t, map[string]any{"amount": float64(2500), "currency": usd}, m["receivedAmount"])
	assert.EqualValues(t, 0, m["fees"])
	assert.EqualValues(t, 0, m["platformFees"])
	assert.Equal(t, "ACH", m["paymentRail"])
	assert.Equal(t, "AUTO", m["railSelectionMode"])
	assert.Equal(t, "2025-10-13T12:00:10Z", m["expectedSettlementAt"])
	assert.EqualValues(t, 10, m["settlementTimelineSeconds"])
	recon := m["reconciliationInstructions"].(map[string]any)
	assert.Regexp(t, `^CRD-[0-9A-F]{12}$`, recon["reference"])
	assert.NotContains(t, m, "failureReason")
	assert.NotContains(t, m, "settledAt")
	assert.Equal(t, "2025-10-13T12:00:00Z", m["createdAt"])
	assert.Equal(t, int64(7_500), h.balance(tn, acct.ID), "held at once")

	h.runJobs()
	got := decode[map[string]any](t, h.get(tn, "/transactions/"+id))
	assert.Equal(t, "PROCESSING", got["status"])
	h.advance(10 * time.Second)
	got = decode[map[string]any](t, h.get(tn, "/transactions/"+id))
	assert.Equal(t, "COMPLETED", got["status"])
	assert.Equal(t, "2025-10-13T12:00:10Z", got["settledAt"])
	assert.Equal(t, int64(7_500), h.balance(tn, acct.ID))

	// A named instant rail: MANUAL, no expected settlement time.
	m = created(t, h.post(tn, "/transfer-out", outBody(acct.ID, dest.ID, 100, `,"paymentRail":"RTP"`)))
	assert.Equal(t, "RTP", m["paymentRail"])
	assert.Equal(t, "MANUAL", m["railSelectionMode"])
	assert.Contains(t, m, "expectedSettlementAt")
	assert.Nil(t, m["expectedSettlementAt"])
	assert.EqualValues(t, 0, m["settlementTimelineSeconds"])
}

func TestTransferInResponse(t *testing.T) {
	h := newTransferHarness(t)
	tn := h.tenant("USD")
	c, acct := h.customerWithAccount(tn)
	src := h.externalAccount(tn, c.ID, "USD", usdInfo("321"))

	m := created(t, h.post(tn, "/transfer-in", outBody(src.ID, acct.ID, 4_000, "")))
	assert.Equal(t, "INCOMING", m["type"])
	assert.Equal(t, "CREDIT", m["direction"])
	assert.Equal(t, "PENDING", m["status"])
	assert.Equal(t, src.ID, m["source"].(map[string]any)["accountId"])
	assert.Equal(t, acct.ID, m["destination"].(map[string]any)["accountId"])
	assert.EqualValues(t, 4_000, m["receivedAmount"].(map[string]any)["amount"])
	for _, k := range []string{"paymentRail", "railSelectionMode", "expectedSettlementAt", "settlementTimelineSeconds", "platformFees"} {
		assert.NotContains(t, m, k, "outgoing-only fields are absent from incoming transactions")
	}
	h.runJobs()
	assert.Zero(t, h.balance(tn, acct.ID))
	h.advance(10 * time.Second)
	assert.Equal(t, int64(4_000), h.balance(tn, acct.ID))
	got := decode[map[string]any](t, h.get(tn, "/transactions/"+m["id"].(string)))
	assert.Equal(t, "COMPLETED", got["status"])
}

func TestTransferSandboxSuffixesOverHTTP(t *testing.T) {
	h := newTransferHarness(t)
	tn := h.tenant("USD")
	c, acct := h.customerWithAccount(tn)
	h.fund(tn, acct.ID, 100_000)
	for _, tc := range []struct {
		suffix, path string
		wait         time.Duration
		status       string
		reason       string
	}{
		{"002", "/transfer-out", 0, "FAILED", "ACCOUNT_CANNOT_RECEIVE"},
		{"003", "/transfer-out", 0, "FAILED", "ACCOUNT_INVALID"},
		{"004", "/transfer-out", 10 * time.Second, "REJECTED", ""},
		{"005", "/transfer-out", 30 * time.Second, "FAILED", "COUNTERPARTY_POST_TX_FAILED"},
		{"555", "/transfer-out", 10 * time.Second, "COMPLETED", ""},
		{"002", "/transfer-in", 0, "FAILED", "COLLECTION_FAILED"},
		{"005", "/transfer-in", 30 * time.Second, "FAILED", "COLLECTION_FAILED"},
		{"556", "/transfer-in", 10 * time.Second, "COMPLETED", ""},
	} {
		t.Run(tc.path+" "+tc.suffix, func(t *testing.T) {
			ext := h.externalAccount(tn, c.ID, "USD", usdInfo(tc.suffix))
			before := h.balance(tn, acct.ID)
			body := outBody(acct.ID, ext.ID, 1_000, "")
			if tc.path == "/transfer-in" {
				body = outBody(ext.ID, acct.ID, 1_000, "")
			}
			id := created(t, h.post(tn, tc.path, body))["id"].(string)
			h.runJobs()
			if tc.wait > 0 {
				got := decode[map[string]any](t, h.get(tn, "/transactions/"+id))
				assert.Equal(t, "PROCESSING", got["status"])
				h.advance(tc.wait - time.Second)
				assert.Equal(t, "PROCESSING", decode[map[string]any](t, h.get(tn, "/transactions/"+id))["status"])
				h.advance(time.Second)
			}
			got := decode[map[string]any](t, h.get(tn, "/transactions/"+id))
			assert.Equal(t, tc.status, got["status"])
			if tc.reason == "" {
				assert.NotContains(t, got, "failureReason")
			} else {
				assert.Equal(t, tc.reason, got["failureReason"])
			}
			want := before
			switch {
			case tc.status == "COMPLETED" && tc.path == "/transfer-out":
				want -= 1_000
			case tc.status == "COMPLETED":
				want += 1_000
			}
			assert.Equal(t, want, h.balance(tn, acct.ID))
		})
	}
}

func TestTransferErrors(t *testing.T) {
	h := newTransferHarness(t)
	tn := h.tenant("USD")
	other := h.tenant("USD")
	c, acct := h.customerWithAccount(tn)
	dest := h.externalAccount(tn, c.ID, "USD", usdInfo("789"))
	eur := h.externalAccount(tn, c.ID, "EUR", ports.AccountInfo{AccountType: "EUR_ACCOUNT", IBAN: "DE89370400440532013000"})
	foreign := h.externalAccount(other, "", "USD", usdInfo("788"))
	h.fund(tn, acct.ID, 1_000)
	wf := h.quoteFixture("")
	walletDest := h.externalAccount(wf.tn, wf.cust.ID, "USD", usdInfo("787"))
	t.Run("from an embedded wallet", func(t *testing.T) {
		before := h.balance(wf.tn, wf.wallet.ID)
		require.Positive(t, before)
		requireError(t, h.post(wf.tn, "/transfer-out", outBody(wf.wallet.ID, walletDest.ID, 5, "")), 400, "INVALID_INPUT", "source.accountId")
		assert.Equal(t, before, h.balance(wf.tn, wf.wallet.ID), "the refusal moved none of the wallet's money")
	})

	t.Run("insufficient available balance", func(t *testing.T) {
		m := requireError(t, h.post(tn, "/transfer-out", outBody(acct.ID, dest.ID, 1_001, "")), http.StatusBadRequest, "INVALID_AMOUNT", "amount")
		assert.Equal(t, "insufficient available balance", m["message"])
		details := m["details"].(map[string]any)
		assert.EqualValues(t, 1_000, details["available"])
		assert.EqualValues(t, 1_001, details["requested"])
		assert.Equal(t, "USD", details["currency"])
	})
	for _, tc := range []struct {
		name, path, body string
		status           int
		code             string
		fields           []string
	}{
		{"currency mismatch", "/transfer-out", outBody(acct.ID, eur.ID, 5, ""), 400, "INVALID_INPUT", []string{"destination.accountId"}},
		{"currency mismatch in", "/transfer-in", outBody(eur.ID, acct.ID, 5, ""), 400, "INVALID_INPUT", []string{"source.accountId"}},
		{"missing destination", "/transfer-out", fmt.Sprintf(`{"source":{"accountId":%q},"amount":5}`, acct.ID), 400, "INVALID_INPUT", []string{"destination"}},
		{"missing amount", "/transfer-out", fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q}}`, acct.ID, dest.ID), 400, "INVALID_INPUT", []string{"amount"}},
		{"remittance too long", "/transfer-out", fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":5,"remittanceInformation":"%081d"}`, acct.ID, dest.ID, 0), 400, "INVALID_INPUT", []string{"remittanceInformation"}},
		{"unknown purpose", "/transfer-out", fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":5,"purposeOfPayment":"BRIBE"}`, acct.ID, dest.ID), 400, "INVALID_INPUT", []string{"purposeOfPayment"}},
		{"unknown rail", "/transfer-out", outBody(acct.ID, dest.ID, 5, `,"paymentRail":"PONY_EXPRESS"`), 400, "INVALID_INPUT", []string{"destination.paymentRail"}},
		{"rail cannot reach the account", "/transfer-out", outBody(acct.ID, dest.ID, 5, `,"paymentRail":"SPEI"`), 400, "INVALID_INPUT", []string{"destination.paymentRail"}},
		{"unknown field", "/transfer-out", fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":5,"memo":"x"}`, acct.ID, dest.ID), 400, "INVALID_INPUT", []string{"memo"}},
		{"amount above the maximum", "/transfer-out", outBody(acct.ID, dest.ID, 9_000_000_000_000_001, ""), 400, "INVALID_INPUT", []string{"amount"}},
		{"amount above the maximum in", "/transfer-in", outBody(dest.ID, acct.ID, 9_000_000_000_000_001, ""), 400, "INVALID_INPUT", []string{"amount"}},
		{"amount beyond int64", "/transfer-out", fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":99999999999999999999}`, acct.ID, dest.ID), 400, "INVALID_INPUT", []string{"amount"}},
		{"amount with an exponent", "/transfer-in", fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":1e3}`, dest.ID, acct.ID), 400, "INVALID_INPUT", []string{"amount"}},
		{"unknown internal account", "/transfer-out", outBody("InternalAccount:00000000-0000-0000-0000-000000000000", dest.ID, 5, ""), 404, "REFERENCE_NOT_FOUND", nil},
		{"another platform's account", "/transfer-out", outBody(acct.ID, foreign.ID, 5, ""), 404, "REFERENCE_NOT_FOUND", nil},
		{"unknown external account", "/transfer-in", outBody("ExternalAccount:00000000-0000-0000-0000-000000000000", acct.ID, 5, ""), 404, "REFERENCE_NOT_FOUND", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, h.post(tn, tc.path, tc.body), tc.status, tc.code, tc.fields...)
		})
	}
	assert.Equal(t, int64(1_000), h.balance(tn, acct.ID), "no refusal moved money")
	list := decode[map[string]any](t, h.get(tn, "/transactions"))
	assert.EqualValues(t, 0, list["totalCount"], "no refusal left a transaction")
}

func TestTransferOutIdempotencyKey(t *testing.T) {
	h := newTransferHarness(t)
	tn := h.tenant("USD")
	c, acct := h.customerWithAccount(tn)
	dest := h.externalAccount(tn, c.ID, "USD", usdInfo("789"))
	h.fund(tn, acct.ID, 1_000)
	body := outBody(acct.ID, dest.ID, 400, "")

	first := h.post(tn, "/transfer-out", body, "Idempotency-Key", "pay-1")
	m := created(t, first)
	assert.Equal(t, transfers.TransactionID(tn.platformID, "transfer-out", "pay-1"), m["id"])
	again := h.post(tn, "/transfer-out", body, "Idempotency-Key", "pay-1")
	require.Equal(t, http.StatusCreated, again.status)
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.Equal(t, first.body, again.body)
	assert.Equal(t, int64(600), h.balance(tn, acct.ID), "held once")
	requireError(t, h.post(tn, "/transfer-out", outBody(acct.ID, dest.ID, 401, ""), "Idempotency-Key", "pay-1"),
		http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
}

// 50 concurrent transfer-outs over HTTP against a balance that covers 20.
func TestConcurrentTransferOutsOverHTTP(t *testing.T) {
	h := newTransferHarness(t)
	tn := h.tenant("USD")
	c, acct := h.customerWithAccount(tn)
	dest := h.externalAccount(tn, c.ID, "USD", usdInfo("789"))
	const amount, n, covered, remainder = 250, 50, 20, 249
	h.fund(tn, acct.ID, covered*amount+remainder)

	statuses := make([]apiResponse, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			statuses[i] = h.post(tn, "/transfer-out", outBody(acct.ID, dest.ID, amount, ""), "Idempotency-Key", fmt.Sprintf("c-%d", i))
		}()
	}
	close(gate)
	wg.Wait()
	ok, refused := 0, 0
	for _, r := range statuses {
		switch r.status {
		case http.StatusCreated:
			ok++
		case http.StatusBadRequest:
			requireError(t, r, http.StatusBadRequest, "INVALID_AMOUNT", "amount")
			refused++
		default:
			t.Fatalf("unexpected %d: %s", r.status, r.body)
		}
	}
	assert.Equal(t, covered, ok)
	assert.Equal(t, n-covered, refused)
	assert.Equal(t, int64(remainder), h.balance(tn, acct.ID))
	h.runJobs()
	h.advance(10 * time.Second)
	list := decode[map[string]any](t, h.get(tn, "/transactions?status=COMPLETED&limit=100"))
	assert.EqualValues(t, covered, list["totalCount"])
	a, err := h.accounts.Get(context.Background(), tn.platformID, acct.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(remainder), a.Balance)
	assert.Equal(t, int64(remainder), a.TotalBalance)
}
