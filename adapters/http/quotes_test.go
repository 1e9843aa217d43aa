package httpapi_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fxstatic "github.com/corridorpay/corridor/adapters/fx/static"
	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	umasandbox "github.com/corridorpay/corridor/adapters/uma/sandbox"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ports"
)

// newQuoteHarness is the transfer harness with quotes, UMA lookups and the
// quote jobs on its runner; production turns the sandbox off.
func newQuoteHarness(t *testing.T, production bool) *transferHarness {
	t.Helper()
	h := memoryHarness(t, !production)
	dir := umasandbox.New("")
	reg := h.defaultRails(sandbox.FactoryWithUMA(h.clock, dir))
	rates := fxstatic.Default(h.clock)
	xfers := transfers.New(h.store, h.ledger, reg, h.clock, h.ids, transfers.Options{Logger: h.log})
	wallets := walletauth.New(h.store, memory.NewSingleUse(h.clock), memory.NewFailureCounter(h.clock), nil, h.clock, h.ids,
		walletauth.Options{Sandbox: !production, MasterKey: testMasterKey, ExportKey: testExportKey})
	qs := quotes.New(h.store, h.ledger, reg, rates, wallets, h.clock, h.ids, quotes.Options{Logger: h.log, Sandbox: !production})
	h.serve(httpapi.Deps{
		Transfers:    xfers,
		Transactions: transactions.New(h.store),
		Lookup:       lookup.New(h.store, rates, h.clock, h.ids, lookup.WithUmaDirectory(dir)),
		Quotes:       qs,
		WalletAuth:   wallets,
	})
	runner := jobs.NewRunner(h.store.Read().Jobs(), h.clock, h.log)
	xfers.Register(runner)
	qs.Register(runner)
	return &transferHarness{apiHarness: h, runner: runner}
}

// quoteFixture is a funded US customer (with an embedded wallet) and a EUR
// external account.
type quoteFixture struct {
	tn     tenant
	cust   ports.Customer
	acct   ports.InternalAccount
	wallet ports.InternalAccount
	dest   ports.ExternalAccount
}

func (h *transferHarness) quoteFixture(suffix string) quoteFixture {
	h.t.Helper()
	tn := h.tenant("USD", "EUR")
	ctx := context.Background()
	region, email := "US", "ada@example.com"
	c, err := h.customers.Create(ctx, tn.platformID, customers.Input{CustomerType: "INDIVIDUAL", Region: &region, Email: &email})
	require.NoError(h.t, err)
	rows, _, err := h.store.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{
		PlatformID: tn.platformID, CustomerID: c.ID, Currency: "USD"}, ports.Page{Limit: 5})
	require.NoError(h.t, err)
	f := quoteFixture{tn: tn, cust: c}
	for _, a := range rows {
		if a.Type == accounts.TypeEmbeddedWallet {
			f.wallet = a
		} else {
			f.acct = a
		}
	}
	require.NotEmpty(h.t, f.acct.ID)
	require.NotEmpty(h.t, f.wallet.ID)
	h.fund(tn, f.acct.ID, 1_000_00)
	h.fund(tn, f.wallet.ID, 1_000_00)
	f.dest = h.externalAccount(tn, c.ID, "EUR", ports.AccountInfo{AccountType: "EUR_ACCOUNT",
		IBAN: "DE89370400440532013" + suffix, SwiftCode: "COBADEFFXXX",
		Beneficiary: &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ada Lovelace"}})
	return f
}

func quoteBody(src, dst string, extra string) string {
	return fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},"destination":{"destinationType":"ACCOUNT","accountId":%q},`+
		`"lockedCurrencySide":"SENDING","lockedCurrencyAmount":10000%s}`, src, dst, extra)
}

func (h *transferHarness) createQuote(f quoteFixture, body string) map[string]any {
	h.t.Helper()
	return created(h.t, h.post(f.tn, "/quotes", body))
}

func executePath(id string) string { return "/quotes/" + id + "/execute" }

func TestQuoteResponse(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	m := h.createQuote(f, quoteBody(f.acct.ID, f.dest.ID, `,"description":"rent","purposeOfPayment":"SALARY_PAYMENT"`))
	id := m["id"].(string)
	assert.Regexp(t, `^Quote:[0-9a-f-]{36}$`, id)
	assert.Equal(t, "PENDING", m["status"])
	assert.Equal(t, map[string]any{"sourceType": "ACCOUNT", "accountId": f.acct.ID, "customerId": f.cust.ID}, m["source"])
	assert.Equal(t, map[string]any{"destinationType": "ACCOUNT", "accountId": f.dest.ID}, m["destination"])
	assert.Equal(t, map[string]any{"code": "USD", "name": "United States Dollar", "symbol": "$", "decimals": float64(2)}, m["sendingCurrency"])
	assert.Equal(t, map[string]any{"code": "EUR", "name": "Euro", "symbol": "€", "decimals": float64(2)}, m["receivingCurrency"])
	assert.Equal(t, float64(10000), m["totalSendingAmount"])
	assert.IsType(t, float64(0), m["exchangeRate"], "a JSON number")
	assert.IsType(t, float64(0), m["totalReceivingAmount"])
	assert.IsType(t, float64(0), m["feesIncluded"])
	// The spec's reading: sending units per receiving unit (USD and EUR
	// both have two decimals), so the rate times what arrives is what was
	// converted, to within one receiving cent's worth.
	rate := m["exchangeRate"].(float64)
	converted := m["totalSendingAmount"].(float64) - m["feesIncluded"].(float64)
	assert.InDelta(t, converted, rate*m["totalReceivingAmount"].(float64), rate, "exchangeRate is sending per receiving")
	assert.Equal(t, float64(0), m["platformFeesIncluded"])
	assert.Regexp(t, `^Transaction:`, m["transactionId"])
	assert.Equal(t, map[string]any{"FULL_NAME": "Ada Lovelace"}, m["counterpartyInformation"])
	assert.NotContains(t, m, "paymentInstructions")
	rd := m["rateDetails"].(map[string]any)
	for _, k := range []string{"counterpartyMultiplier", "counterpartyFixedFee", "serviceApiMultiplier",
		"serviceApiFixedFee", "serviceApiVariableFeeRate", "serviceApiVariableFeeAmount"} {
		assert.IsType(t, float64(0), rd[k], k)
	}
	created, err := time.Parse(time.RFC3339, m["createdAt"].(string))
	require.NoError(t, err)
	expires, err := time.Parse(time.RFC3339, m["expiresAt"].(string))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Minute, expires.Sub(created), "SEPA Instant quotes live 5 minutes")

	g := h.get(f.tn, "/quotes/"+id)
	require.Equal(t, http.StatusOK, g.status)
	var again map[string]any
	require.NoError(t, json.Unmarshal(g.body, &again))
	assert.Equal(t, m, again)
	requireError(t, h.get(f.tn, "/quotes/Quote:nope"), http.StatusNotFound, "QUOTE_NOT_FOUND")
	other := h.tenant("USD")
	requireError(t, h.get(other, "/quotes/"+id), http.StatusNotFound, "QUOTE_NOT_FOUND")

	tx := h.get(f.tn, "/transactions/"+m["transactionId"].(string)).object(t)
	assert.Equal(t, "PENDING", tx["status"])
	assert.Equal(t, id, tx["quoteId"])
	assert.Equal(t, m["exchangeRate"], tx["exchangeRate"])
	assert.Equal(t, "rent", tx["description"])
	assert.Equal(t, m["counterpartyInformation"], tx["counterpartyInformation"])
	trd := tx["rateDetails"].(map[string]any)
	assert.Len(t, trd, 6, "outgoing transactions carry the spec's four serviceApi fields and the reference's two counterparty ones")
	for _, k := range []string{"serviceApiMultiplier", "serviceApiFixedFee", "serviceApiVariableFeeRate", "serviceApiVariableFeeAmount",
		"counterpartyMultiplier", "counterpartyFixedFee"} {
		assert.Equal(t, rd[k], trd[k], k)
	}
}

func TestCreateQuoteErrors(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	umaBody := func(addr, lookupID string) string {
		return fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},"destination":{"destinationType":"UMA_ADDRESS","umaAddress":%q},`+
			`"lockedCurrencySide":"SENDING","lockedCurrencyAmount":10000%s}`, f.acct.ID, addr, lookupID)
	}
	lr := h.get(f.tn, "/receiver/external-account/"+f.dest.ID+"?customerId="+f.cust.ID)
	require.Equalf(t, http.StatusOK, lr.status, "%s", lr.body)
	lookupID := lr.object(t)["lookupId"].(string)
	cases := []struct {
		name   string
		body   string
		status int
		code   string
		fields []string
	}{
		{"amount over the maximum", strings.Replace(quoteBody(f.acct.ID, f.dest.ID, ""), "10000", "9000000000000001", 1),
			http.StatusBadRequest, "INVALID_INPUT", []string{"lockedCurrencyAmount"}},
		{"zero amount", strings.Replace(quoteBody(f.acct.ID, f.dest.ID, ""), "10000", "0", 1),
			http.StatusBadRequest, "INVALID_INPUT", []string{"lockedCurrencyAmount"}},
		{"amount above the corridor", strings.Replace(quoteBody(f.acct.ID, f.dest.ID, ""), "10000", "9000000000000000", 1),
			http.StatusBadRequest, "TRANSACTION_SIZE_LIMIT_EXCEEDED", []string{"lockedCurrencyAmount"}},
		{"missing side", `{"source":{"sourceType":"ACCOUNT","accountId":"` + f.acct.ID + `"},"destination":{"destinationType":"ACCOUNT","accountId":"` + f.dest.ID + `"},"lockedCurrencyAmount":1}`,
			http.StatusBadRequest, "INVALID_INPUT", []string{"lockedCurrencySide"}},
		{"bad purpose", quoteBody(f.acct.ID, f.dest.ID, `,"purposeOfPayment":"FUN"`), http.StatusBadRequest, "INVALID_INPUT", []string{"purposeOfPayment"}},
		{"remittance too long", quoteBody(f.acct.ID, f.dest.ID, `,"remittanceInformation":"`+strings.Repeat("x", 81)+`"`),
			http.StatusBadRequest, "INVALID_INPUT", []string{"remittanceInformation"}},
		{"unknown source", quoteBody("InternalAccount:nope", f.dest.ID, ""), http.StatusNotFound, "REFERENCE_NOT_FOUND", nil},
		{"missing payer data", quoteBody(f.acct.ID, f.dest.ID, `,"lookupId":"`+lookupID+`","senderCustomerInfo":{"FULL_NAME":"Ada"}`),
			http.StatusBadRequest, "INVALID_INPUT", []string{"senderCustomerInfo.POSTAL_ADDRESS"}},
		{"payer data that is not text", quoteBody(f.acct.ID, f.dest.ID, `,"lookupId":"`+lookupID+`","senderCustomerInfo":{"FULL_NAME":{"x":1},"POSTAL_ADDRESS":false}`),
			http.StatusBadRequest, "INVALID_INPUT", []string{"senderCustomerInfo.FULL_NAME", "senderCustomerInfo.POSTAL_ADDRESS"}},
		{"blank payer data", quoteBody(f.acct.ID, f.dest.ID, `,"lookupId":"`+lookupID+`","senderCustomerInfo":{"FULL_NAME":"  ","POSTAL_ADDRESS":"1 Main St"}`),
			http.StatusBadRequest, "INVALID_INPUT", []string{"senderCustomerInfo.FULL_NAME"}},
		{"unknown lookup", quoteBody(f.acct.ID, f.dest.ID, `,"lookupId":"Lookup:nope"`), http.StatusNotFound, "LOOKUP_REQUEST_NOT_FOUND", nil},
		{"UMA without lookup", umaBody("$success.eur@sandbox.local", ""), http.StatusBadRequest, "INVALID_INPUT", []string{"lookupId"}},
		{"malformed UMA address", umaBody("success.eur", `,"lookupId":"Lookup:x"`), http.StatusBadRequest, "INVALID_UMA_ADDRESS", []string{"destination.umaAddress"}},
		{"UMA lookup of another address", umaBody("$success.usd@sandbox.local", `,"lookupId":"`+lookupID+`"`),
			http.StatusBadRequest, "INVALID_INPUT", []string{"lookupId"}},
		{"immediate execution from an embedded wallet", quoteBody(f.wallet.ID, f.dest.ID, `,"immediatelyExecute":true`),
			http.StatusBadRequest, "INVALID_INPUT", []string{"immediatelyExecute"}},
		{"USDC funding without a network", fmt.Sprintf(`{"source":{"sourceType":"REALTIME_FUNDING","currency":"USDC"},`+
			`"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":100000000}`, f.dest.ID),
			http.StatusBadRequest, "INVALID_INPUT", []string{"source.cryptoNetwork"}},
		{"immediate execution of a REALTIME_FUNDING quote", fmt.Sprintf(`{"source":{"sourceType":"REALTIME_FUNDING","currency":"USD"},`+
			`"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":1000,"immediatelyExecute":true}`, f.dest.ID),
			http.StatusBadRequest, "INVALID_INPUT", []string{"immediatelyExecute"}},
		{"unknown field", quoteBody(f.acct.ID, f.dest.ID, `,"amount":1`), http.StatusBadRequest, "INVALID_INPUT", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requireError(t, h.post(f.tn, "/quotes", c.body), c.status, c.code, c.fields...)
		})
	}
}

func TestExecuteQuote(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	q := h.createQuote(f, quoteBody(f.acct.ID, f.dest.ID, ""))
	id := q["id"].(string)

	r := h.post(f.tn, executePath(id), "", "Idempotency-Key", "exec-1")
	require.Equalf(t, http.StatusOK, r.status, "%s", r.body)
	m := r.object(t)
	assert.Equal(t, "PROCESSING", m["status"])
	assert.Equal(t, int64(1_000_00-10000), h.balance(f.tn, f.acct.ID))

	replay := h.post(f.tn, executePath(id), "", "Idempotency-Key", "exec-1")
	require.Equal(t, http.StatusOK, replay.status)
	assert.Equal(t, "true", replay.header.Get("Idempotent-Replayed"))
	assert.Equal(t, r.body, replay.body)
	requireError(t, h.post(f.tn, executePath(id), ""), http.StatusConflict, "CONFLICT")
	requireError(t, h.post(f.tn, executePath(id), "{}", "Idempotency-Key", "exec-2"), http.StatusConflict, "CONFLICT")
	requireError(t, h.post(f.tn, executePath("Quote:nope"), ""), http.StatusNotFound, "QUOTE_NOT_FOUND")

	h.runJobs()
	done := h.get(f.tn, "/quotes/"+id).object(t)
	assert.Equal(t, "COMPLETED", done["status"])
	tx := h.get(f.tn, "/transactions/"+q["transactionId"].(string)).object(t)
	assert.Equal(t, "COMPLETED", tx["status"])
	assert.NotEmpty(t, tx["settledAt"])
	assert.Equal(t, "SEPA_INSTANT", tx["paymentRail"])
	assert.Equal(t, map[string]any{"amount": float64(10000), "currency": q["sendingCurrency"]}, tx["sentAmount"])
	assert.Equal(t, map[string]any{"amount": q["totalReceivingAmount"], "currency": q["receivingCurrency"]}, tx["receivedAmount"])
	assert.Equal(t, int64(1_000_00-10000), h.balance(f.tn, f.acct.ID), "money moved once")
}

func TestExecuteQuoteErrors(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")

	t.Run("expired", func(t *testing.T) {
		q := h.createQuote(f, quoteBody(f.acct.ID, f.dest.ID, ""))
		expires, err := time.Parse(time.RFC3339, q["expiresAt"].(string))
		require.NoError(t, err)
		h.clock.Set(expires)
		requireError(t, h.post(f.tn, executePath(q["id"].(string)), ""), http.StatusConflict, "QUOTE_EXPIRED")
		assert.Equal(t, "EXPIRED", h.get(f.tn, "/quotes/"+q["id"].(string)).object(t)["status"])
		tx := h.get(f.tn, "/transactions/"+q["transactionId"].(string)).object(t)
		assert.Equal(t, "EXPIRED", tx["status"])
		assert.Equal(t, "QUOTE_EXPIRED", tx["failureReason"])
		h.runJobs()
	})
	t.Run("insufficient balance", func(t *testing.T) {
		body := strings.Replace(quoteBody(f.acct.ID, f.dest.ID, ""), "10000", "200000", 1)
		q := h.createQuote(f, body)
		m := requireError(t, h.post(f.tn, executePath(q["id"].(string)), ""), http.StatusBadRequest, "INVALID_AMOUNT", "totalSendingAmount")
		assert.Equal(t, float64(1_000_00), m["details"].(map[string]any)["available"])
	})
	t.Run("embedded wallet signature", func(t *testing.T) {
		q := h.createQuote(f, quoteBody(f.wallet.ID, f.dest.ID, ""))
		pis := q["paymentInstructions"].([]any)
		require.Len(t, pis, 1)
		info := pis[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)
		assert.Equal(t, "EMBEDDED_WALLET", info["accountType"])
		assert.Contains(t, info["payloadToSign"], q["id"].(string))
		path := executePath(q["id"].(string))
		requireError(t, h.post(f.tn, path, ""), http.StatusUnauthorized, "WALLET_SIGNATURE_MISSING")
		requireError(t, h.post(f.tn, path, "", "Service-Wallet-Signature", "forged"), http.StatusUnauthorized, "WALLET_SIGNATURE_MALFORMED")
		stranger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		stamp, err := walletauth.Sign(stranger, []byte(info["payloadToSign"].(string)))
		require.NoError(t, err)
		requireError(t, h.post(f.tn, path, "", "Service-Wallet-Signature", stamp), http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		assert.Equal(t, int64(1_000_00), h.balance(f.tn, f.wallet.ID))
		r := h.post(f.tn, path, "", "Service-Wallet-Signature", walletauth.SandboxSignature)
		require.Equalf(t, http.StatusOK, r.status, "%s", r.body)
		assert.Equal(t, "PROCESSING", r.object(t)["status"])
	})
	t.Run("realtime funding quote", func(t *testing.T) {
		q := h.createQuote(f, fmt.Sprintf(`{"source":{"sourceType":"REALTIME_FUNDING","currency":"USD","customerId":%q},`+
			`"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":10000}`, f.cust.ID, f.dest.ID))
		requireError(t, h.post(f.tn, executePath(q["id"].(string)), ""), http.StatusBadRequest, "INVALID_INPUT", "quoteId")
	})
}

// 20 concurrent executes over HTTP move the money once.
func TestConcurrentExecuteOverHTTP(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	q := h.createQuote(f, quoteBody(f.acct.ID, f.dest.ID, ""))
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = h.post(f.tn, executePath(q["id"].(string)), "").status
		}()
	}
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: 1, http.StatusConflict: 19}, counts)
	assert.Equal(t, int64(1_000_00-10000), h.balance(f.tn, f.acct.ID))
}

func TestQuoteOutcomeOnTransaction(t *testing.T) {
	t.Run("failed payout shows its refund", func(t *testing.T) {
		h := newQuoteHarness(t, false)
		f := h.quoteFixture("002")
		q := h.createQuote(f, quoteBody(f.acct.ID, f.dest.ID, `,"immediatelyExecute":true`))
		assert.Equal(t, "PROCESSING", q["status"])
		h.runJobs()
		tx := h.get(f.tn, "/transactions/"+q["transactionId"].(string)).object(t)
		assert.Equal(t, "FAILED", tx["status"])
		assert.Equal(t, "QUOTE_EXECUTION_FAILED", tx["failureReason"])
		refund := tx["refund"].(map[string]any)
		assert.Equal(t, "COMPLETED", refund["status"])
		assert.Equal(t, "TRANSACTION_FAILED", refund["reason"])
		assert.NotEmpty(t, refund["reference"])
		assert.NotEmpty(t, refund["settledAt"])
		assert.Equal(t, int64(1_000_00), h.balance(f.tn, f.acct.ID))
	})
	t.Run("UMA destination", func(t *testing.T) {
		h := newQuoteHarness(t, false)
		f := h.quoteFixture("789")
		addr := "$success.eur@sandbox.local"
		lr := h.get(f.tn, "/receiver/uma/"+addr+"?customerId="+f.cust.ID)
		require.Equalf(t, http.StatusOK, lr.status, "%s", lr.body)
		body := fmt.Sprintf(`{"lookupId":%q,"source":{"sourceType":"ACCOUNT","accountId":%q},`+
			`"destination":{"destinationType":"UMA_ADDRESS","umaAddress":%q,"currency":"EUR"},"lockedCurrencySide":"RECEIVING",`+
			`"lockedCurrencyAmount":5000,"senderCustomerInfo":{"FULL_NAME":"Ada Lovelace","POSTAL_ADDRESS":"1 Main St"},"immediatelyExecute":true}`,
			lr.object(t)["lookupId"], f.acct.ID, addr)
		q := h.createQuote(f, body)
		assert.Equal(t, map[string]any{"destinationType": "UMA_ADDRESS", "umaAddress": addr, "currency": "EUR"}, q["destination"])
		assert.Equal(t, float64(5000), q["totalReceivingAmount"])
		h.runJobs()
		tx := h.get(f.tn, "/transactions/"+q["transactionId"].(string)).object(t)
		assert.Equal(t, "COMPLETED", tx["status"])
		assert.Equal(t, map[string]any{"destinationType": "UMA_ADDRESS", "umaAddress": addr, "currency": "EUR"}, tx["destination"])
		assert.Nil(t, tx["paymentRail"], "UMA is not a bank rail")
	})
}

func TestSandboxSendAPI(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("789")
	q := h.createQuote(f, fmt.Sprintf(`{"source":{"sourceType":"REALTIME_FUNDING","currency":"USD","customerId":%q},`+
		`"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"RECEIVING","lockedCurrencyAmount":5000}`, f.cust.ID, f.dest.ID))
	assert.Equal(t, map[string]any{"sourceType": "REALTIME_FUNDING", "currency": "USD", "customerId": f.cust.ID}, q["source"])
	pis := q["paymentInstructions"].([]any)
	require.Len(t, pis, 1)
	info := pis[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)
	assert.Equal(t, "USD_ACCOUNT", info["accountType"])
	for _, k := range []string{"accountNumber", "routingNumber", "bankName", "reference"} {
		assert.NotEmpty(t, info[k], k)
	}
	id := q["id"].(string)

	requireError(t, h.post(f.tn, "/sandbox/send", `{"currencyCode":"USD"}`), http.StatusBadRequest, "INVALID_INPUT", "quoteId")
	requireError(t, h.post(f.tn, "/sandbox/send", `{"quoteId":"Quote:nope","currencyCode":"USD"}`), http.StatusNotFound, "QUOTE_NOT_FOUND")
	requireError(t, h.post(f.tn, "/sandbox/send", fmt.Sprintf(`{"quoteId":%q,"currencyCode":"EUR"}`, id)),
		http.StatusBadRequest, "INVALID_INPUT", "currencyCode")
	requireError(t, h.post(f.tn, "/sandbox/send", fmt.Sprintf(`{"quoteId":%q,"currencyCode":"USD","currencyAmount":0}`, id)),
		http.StatusBadRequest, "INVALID_INPUT", "currencyAmount")

	r := h.post(f.tn, "/sandbox/send", fmt.Sprintf(`{"quoteId":%q,"currencyCode":"USD"}`, id))
	require.Equalf(t, http.StatusOK, r.status, "%s", r.body)
	tx := r.object(t)
	assert.Equal(t, "PROCESSING", tx["status"])
	assert.Equal(t, q["transactionId"], tx["id"])
	assert.Equal(t, map[string]any{"sourceType": "REALTIME_FUNDING", "customerId": f.cust.ID, "currency": "USD"}, tx["source"])
	assert.Equal(t, info["reference"], tx["reconciliationInstructions"].(map[string]any)["reference"])
	assert.Len(t, tx["paymentInstructions"], 1)
	requireError(t, h.post(f.tn, "/sandbox/send", fmt.Sprintf(`{"quoteId":%q,"currencyCode":"USD"}`, id)), http.StatusConflict, "CONFLICT")
	h.runJobs()
	assert.Equal(t, "COMPLETED", h.get(f.tn, "/quotes/"+id).object(t)["status"])

	other := h.createQuote(f, fmt.Sprintf(`{"source":{"sourceType":"REALTIME_FUNDING","currency":"USD","customerId":%q},`+
		`"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"RECEIVING","lockedCurrencyAmount":5000}`, f.cust.ID, f.dest.ID))
	r = h.post(f.tn, "/sandbox/send", fmt.Sprintf(`{"quoteId":%q,"currencyCode":"USD","currencyAmount":1}`, other["id"]))
	require.Equalf(t, http.StatusOK, r.status, "%s", r.body)
	tx = r.object(t)
	assert.Equal(t, "FAILED", tx["status"])
	assert.Equal(t, "FUNDING_AMOUNT_MISMATCH", tx["failureReason"])
	assert.Equal(t, "COMPLETED", tx["refund"].(map[string]any)["status"])
	assert.Equal(t, "FAILED", h.get(f.tn, "/quotes/"+other["id"].(string)).object(t)["status"])

	// A platform-level quote cannot pay a customer's account.
	requireError(t, h.post(f.tn, "/quotes", fmt.Sprintf(`{"source":{"sourceType":"REALTIME_FUNDING","currency":"USD"},`+
		`"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"RECEIVING","lockedCurrencyAmount":5000}`, f.dest.ID)),
		http.StatusBadRequest, "INVALID_INPUT", "destination.accountId")
}

func TestSandboxSendInProduction(t *testing.T) {
	h := newQuoteHarness(t, true)
	tn := h.tenant("USD")
	requireError(t, h.post(tn, "/sandbox/send", `{"quoteId":"Quote:x","currencyCode":"USD"}`), http.StatusForbidden, "FORBIDDEN")
}

// One rule for a reused key, whichever layer notices: after the HTTP layer
// has forgotten the first response (its retention passed), core compares
// the stored quote with the new request; and a second credential of the
// same platform shares the platform's keys. Either way: 422, nothing moved.
func TestQuoteKeyReusedWithAnotherRequest(t *testing.T) {
	h := newQuoteHarness(t, false)
	f := h.quoteFixture("000")
	ctx := context.Background()
	first := created(t, h.post(f.tn, "/quotes", quoteBody(f.acct.ID, f.dest.ID, ""), "Idempotency-Key", "q-1"))
	assert.Equal(t, "PENDING", first["status"])

	// The HTTP layer forgets the key (cache entry and record past 24 h).
	h.clock.Advance(25 * time.Hour)
	_, err := h.idem.Purge(ctx, h.clock.Now())
	require.NoError(t, err)
	before := h.balance(f.tn, f.acct.ID)
	other := strings.Replace(quoteBody(f.acct.ID, f.dest.ID, `,"immediatelyExecute":true`), "10000", "20000", 1)
	requireError(t, h.post(f.tn, "/quotes", other, "Idempotency-Key", "q-1"), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	// The same terms, now asked to execute at once: another request too.
	requireError(t, h.post(f.tn, "/quotes", quoteBody(f.acct.ID, f.dest.ID, `,"immediatelyExecute":true`), "Idempotency-Key", "q-1"),
		http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	assert.Equal(t, before, h.balance(f.tn, f.acct.ID), "nothing moved")
	q, err := h.store.Read().Quotes().Get(ctx, f.tn.platformID, first["id"].(string))
	require.NoError(t, err)
	assert.Equal(t, "PENDING", q.Status, "the stored quote was not executed")
	// Once the HTTP layer forgets those refusals too, the first request
	// again is its retry: core answers with the stored quote.
	_, err = h.idem.Purge(ctx, h.clock.Now().Add(25*time.Hour))
	require.NoError(t, err)
	h.clock.Advance(25 * time.Hour)
	again := h.post(f.tn, "/quotes", quoteBody(f.acct.ID, f.dest.ID, ""), "Idempotency-Key", "q-1")
	require.Contains(t, []int{200, 201}, again.status, string(again.body))
	assert.Equal(t, first["id"], again.object(t)["id"])

	// A second credential of the platform: another body with a fresh key's
	// twin is refused by the HTTP layer, as for the first credential.
	second := h.credential(f.tn)
	created(t, h.post(f.tn, "/quotes", quoteBody(f.acct.ID, f.dest.ID, ""), "Idempotency-Key", "q-2"))
	requireError(t, h.post(second, "/quotes", other, "Idempotency-Key", "q-2"), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	assert.Equal(t, before, h.balance(f.tn, f.acct.ID), "nothing moved")
}

// The wallet keys of the quote harness.
var (
	testMasterKey    = make([]byte, 32)
	testExportKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
)
