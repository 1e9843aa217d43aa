package quotes_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

const funded = int64(1_000_00)

// usdToEUR is a quote request paying dest (a EUR account) 100.00 USD
// from source.
func usdToEUR(source, dest string) quotes.CreateRequest {
	return quotes.CreateRequest{
		Source:       quotes.Source{Type: quotes.SourceAccount, AccountID: source},
		Destination:  quotes.Destination{Type: quotes.DestinationAccount, AccountID: dest},
		LockedSide:   fx.SideSending,
		LockedAmount: 100_00,
	}
}

// fixture is a funded customer with a EUR external account.
type fixture struct {
	pid  string
	cust ports.Customer
	acct ports.InternalAccount
	dest ports.ExternalAccount
}

func (e *env) fixture(suffix string) fixture {
	e.T.Helper()
	pid := e.platform()
	c, a := e.customer(pid)
	e.Fund(pid, a.ID, funded)
	return fixture{pid: pid, cust: c, acct: a, dest: e.External(pid, c.ID, "EUR", eurAccount(suffix))}
}

func TestCreateQuote(t *testing.T) {
	e := newMemoryEnv(t)
	f := e.fixture("789")
	ctx := context.Background()
	req := usdToEUR(f.acct.ID, f.dest.ID)
	req.Description = "rent"
	req.PurposeOfPayment = "FAMILY_SUPPORT"
	req.RemittanceInformation = "October"
	q, err := e.quotes.Create(ctx, f.pid, req)
	require.NoError(t, err)

	assert.Equal(t, quotes.StatusPending, q.Status)
	assert.Equal(t, f.cust.ID, q.CustomerID)
	assert.Equal(t, "USD", q.SendingCurrency)
	assert.Equal(t, "EUR", q.ReceivingCurrency)
	assert.Equal(t, "SEPA_INSTANT", q.PaymentRail)
	assert.Equal(t, "AUTO", q.RailSelectionMode)
	assert.Equal(t, int64(100_00), q.TotalSendingAmount)
	assert.Positive(t, q.FeesIncluded)
	assert.Positive(t, q.TotalReceivingAmount)
	corridor, err := fx.Find("USD", "EUR", "SEPA_INSTANT")
	require.NoError(t, err)
	assert.Equal(t, start.Add(corridor.QuoteLifetime), q.ExpiresAt)
	assert.Equal(t, map[string]any{"FULL_NAME": "Ada Lovelace"}, q.CounterpartyInformation)
	assert.Empty(t, q.PaymentInstructions, "an internal-account source needs no instructions")
	assert.NotEmpty(t, q.RateDetails.ServiceMultiplier)

	got := e.quote(f.pid, q.ID)
	assert.Equal(t, q.TransactionID, got.TransactionID)
	tx := e.txn(f.pid, q.TransactionID)
	assert.Equal(t, transactions.StatusPending, tx.Status)
	assert.Equal(t, transactions.TypeOutgoing, tx.Type)
	assert.Equal(t, q.ID, tx.QuoteID)
	assert.Equal(t, q.ExchangeRate, tx.ExchangeRate)
	assert.Equal(t, q.FeesIncluded, tx.Fees)
	assert.Equal(t, q.TotalSendingAmount, tx.SentAmount)
	assert.Equal(t, q.TotalReceivingAmount, tx.ReceivedAmount)
	assert.Equal(t, f.cust.PlatformCustomerID, tx.PlatformCustomerID)
	assert.Equal(t, "rent", tx.Description)
	assert.Equal(t, "FAMILY_SUPPORT", tx.PurposeOfPayment)
	require.NotNil(t, tx.Details.RateDetails)
	assert.Equal(t, q.RateDetails, *tx.Details.RateDetails)
	assert.Equal(t, quotes.SourceAccount, tx.Details.SourceType)
	assert.Equal(t, quotes.DestinationAccount, tx.Details.DestinationType)
	assert.Contains(t, tx.ReceiverIdentifiers, f.dest.Info.IBAN)
	assert.NotEmpty(t, tx.Reference)

	// Nothing moved yet.
	assert.Equal(t, funded, e.LedgerAccount(f.acct.ID).Available())
	e.Verify()
}

func TestCreateRefusals(t *testing.T) {
	e := newMemoryEnv(t)
	f := e.fixture("789")
	ctx := context.Background()
	other := e.platform()
	_, otherAcct := e.customer(other)
	otherDest := e.External(other, "", "EUR", eurAccount("111"))
	cases := []struct {
		name  string
		edit  func(*quotes.CreateRequest)
		kind  fault.Kind
		code  string
		field string
	}{
		{"amount over the limit", func(r *quotes.CreateRequest) { r.LockedAmount = 9_000_000_000_000_001 },
			fault.KindInvalid, "INVALID_INPUT", "lockedCurrencyAmount"},
		{"zero amount", func(r *quotes.CreateRequest) { r.LockedAmount = 0 }, fault.KindInvalid, "INVALID_INPUT", "lockedCurrencyAmount"},
		{"amount above the corridor maximum", func(r *quotes.CreateRequest) { r.LockedAmount = 8_000_000_000_000_000 },
			fault.KindInvalid, fx.CodeSizeLimit, "lockedCurrencyAmount"},
		{"amount below the corridor minimum", func(r *quotes.CreateRequest) {
			r.LockedSide, r.LockedAmount = fx.SideReceiving, 1
		}, fault.KindInvalid, fx.CodeAmountOutOfRange, "lockedCurrencyAmount"},
		{"bad side", func(r *quotes.CreateRequest) { r.LockedSide = "BOTH" }, fault.KindInvalid, "INVALID_INPUT", "lockedCurrencySide"},
		{"bad source type", func(r *quotes.CreateRequest) { r.Source.Type = "CARD" }, fault.KindInvalid, "INVALID_INPUT", "source.sourceType"},
		{"external account as source", func(r *quotes.CreateRequest) { r.Source.AccountID = f.dest.ID },
			fault.KindInvalid, "INVALID_INPUT", "source.accountId"},
		{"currency on an account source", func(r *quotes.CreateRequest) { r.Source.Currency = "USD" },
			fault.KindInvalid, "INVALID_INPUT", "source.currency"},
		{"unknown source account", func(r *quotes.CreateRequest) { r.Source.AccountID = "InternalAccount:nope" },
			fault.KindNotFound, "NOT_FOUND", ""},
		{"another platform's source", func(r *quotes.CreateRequest) { r.Source.AccountID = otherAcct.ID },
			fault.KindNotFound, "NOT_FOUND", ""},
		{"another platform's destination", func(r *quotes.CreateRequest) { r.Destination.AccountID = otherDest.ID },
			fault.KindNotFound, "NOT_FOUND", ""},
		{"source customer not the owner", func(r *quotes.CreateRequest) { r.Source.CustomerID = "Customer:other" },
			fault.KindInvalid, "INVALID_INPUT", "source.customerId"},
		{"bad destination type", func(r *quotes.CreateRequest) { r.Destination.Type = "IBAN" },
			fault.KindInvalid, "INVALID_INPUT", "destination.destinationType"},
		{"rail that cannot reach the account", func(r *quotes.CreateRequest) { r.Destination.PaymentRail = "ACH" },
			fault.KindInvalid, "INVALID_INPUT", "destination.paymentRail"},
		{"UMA destination without lookup", func(r *quotes.CreateRequest) {
			r.Destination = quotes.Destination{Type: quotes.DestinationUMA, UmaAddress: e.uma.Address("success.eur")}
		}, fault.KindInvalid, "INVALID_INPUT", "lookupId"},
		{"malformed UMA address", func(r *quotes.CreateRequest) {
			r.Destination = quotes.Destination{Type: quotes.DestinationUMA, UmaAddress: "success.eur"}
			r.LookupID = "Lookup:x"
		}, fault.KindInvalid, "INVALID_UMA_ADDRESS", "destination.umaAddress"},
		{"unknown lookup", func(r *quotes.CreateRequest) { r.LookupID = "Lookup:nope" }, fault.KindNotFound, "LOOKUP_REQUEST_NOT_FOUND", ""},
		{"remittance too long", func(r *quotes.CreateRequest) {
			r.RemittanceInformation = "123456789012345678901234567890123456789012345678901234567890123456789012345678901"
		}, fault.KindInvalid, "INVALID_INPUT", "remittanceInformation"},
		{"bad purpose", func(r *quotes.CreateRequest) { r.PurposeOfPayment = "FUN" }, fault.KindInvalid, "INVALID_INPUT", "purposeOfPayment"},
		{"realtime funding without currency", func(r *quotes.CreateRequest) {
			r.Source = quotes.Source{Type: quotes.SourceRealtimeFunding}
		}, fault.KindInvalid, "INVALID_INPUT", "source.currency"},
		{"realtime USDC without network", func(r *quotes.CreateRequest) {
			r.Source = quotes.Source{Type: quotes.SourceRealtimeFunding, Currency: "USDC", CustomerID: f.cust.ID}
		}, fault.KindInvalid, "INVALID_INPUT", "source.cryptoNetwork"},
		{"realtime funding in an unsupported currency", func(r *quotes.CreateRequest) {
			r.Source = quotes.Source{Type: quotes.SourceRealtimeFunding, Currency: "JPY", CustomerID: f.cust.ID}
		}, fault.KindInvalid, "INVALID_INPUT", "source.currency"},
		{"realtime funding for an unknown customer", func(r *quotes.CreateRequest) {
			r.Source = quotes.Source{Type: quotes.SourceRealtimeFunding, Currency: "USD", CustomerID: "Customer:nope"}
		}, fault.KindNotFound, "USER_NOT_FOUND", ""},
		{"immediate execution from an embedded wallet", func(r *quotes.CreateRequest) {
			r.Source.AccountID = e.internal(f.pid, f.cust.ID, accounts.TypeEmbeddedWallet).ID
			r.ImmediatelyExecute = true
		}, fault.KindInvalid, "INVALID_INPUT", "immediatelyExecute"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := usdToEUR(f.acct.ID, f.dest.ID)
			c.edit(&req)
			_, err := e.quotes.Create(ctx, f.pid, req)
			var fields []string
			if c.field != "" {
				fields = append(fields, c.field)
			}
			testkit.RequireFault(t, err, c.kind, c.code, fields...)
		})
	}
}

func TestSenderCustomerInfo(t *testing.T) {
	e := newMemoryEnv(t)
	f := e.fixture("789")
	ctx := context.Background()
	l, err := e.lookup.Lookup(ctx, f.pid, lookupQuery(f))
	require.NoError(t, err)
	req := usdToEUR(f.acct.ID, f.dest.ID)
	req.LookupID = l.ID
	req.SenderCustomerInfo = map[string]any{"FULL_NAME": "Ada Lovelace"}
	_, err = e.quotes.Create(ctx, f.pid, req)
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "senderCustomerInfo.POSTAL_ADDRESS")

	req.SenderCustomerInfo["POSTAL_ADDRESS"] = "1 Main St, Springfield"
	q, err := e.quotes.Create(ctx, f.pid, req)
	require.NoError(t, err)
	assert.Equal(t, l.ID, q.LookupID)
	assert.Equal(t, "1 Main St, Springfield", e.quote(f.pid, q.ID).SenderCustomerInfo["POSTAL_ADDRESS"])

	// A lookup of another account does not vouch for this one.
	otherDest := e.External(f.pid, f.cust.ID, "EUR", eurAccount("790"))
	req.Destination.AccountID = otherDest.ID
	_, err = e.quotes.Create(ctx, f.pid, req)
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "lookupId")
}

// A quote's expiry job carries the quote's platform and id and nothing
// else: it reads the quote when it runs (it used to carry an empty rail
// request, most of a kilobyte in every quote's batch write).
func TestExpiryJobCarriesOnlyTheQuote(t *testing.T) {
	e := newMemoryEnv(t)
	f := e.fixture("789")
	ctx := context.Background()
	q, err := e.quotes.Create(ctx, f.pid, usdToEUR(f.acct.ID, f.dest.ID))
	require.NoError(t, err)
	due, err := e.Store.Read().Jobs().Claim(ctx, q.ExpiresAt, 10, time.Minute, ports.JobKinds{Only: []string{quotes.KindExpire}})
	require.NoError(t, err)
	require.Len(t, due, 1)
	assert.JSONEq(t, `{"platformId":"`+f.pid+`","quoteId":"`+q.ID+`"}`, string(due[0].Payload))
}

func TestExecuteMovesMoneyAsLinkedHolds(t *testing.T) {
	e := newMemoryEnv(t)
	f := e.fixture("789")
	ctx := context.Background()
	q, err := e.quotes.Create(ctx, f.pid, usdToEUR(f.acct.ID, f.dest.ID))
	require.NoError(t, err)
	q, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
	require.NoError(t, err)
	assert.Equal(t, quotes.StatusProcessing, q.Status)
	require.NotNil(t, q.ExecutedAt)
	assert.Equal(t, transactions.StatusProcessing, e.txn(f.pid, q.TransactionID).Status)

	src := e.LedgerAccount(f.acct.ID)
	assert.Equal(t, funded-q.TotalSendingAmount, src.Available())
	assert.Equal(t, q.TotalSendingAmount, src.DebitsPending)
	assert.Equal(t, q.FeesIncluded, e.LedgerAccount(ledger.FeeRevenueID("USD")).CreditsPending)
	assert.Equal(t, q.TotalSendingAmount-q.FeesIncluded, e.LedgerAccount(ledger.FXPositionID("USD")).CreditsPending)
	assert.Equal(t, q.TotalReceivingAmount, e.LedgerAccount(ledger.FXPositionID("EUR")).DebitsPending)
	assert.Equal(t, q.TotalReceivingAmount, e.LedgerAccount(ledger.RailSettlementID("SEPA_INSTANT", "EUR")).CreditsPending)

	// Executing again is a conflict, not a second payment.
	_, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
	testkit.RequireFault(t, err, fault.KindConflict, "CONFLICT")
	_, err = e.quotes.Execute(ctx, f.pid, "Quote:nope", "")
	testkit.RequireFault(t, err, fault.KindNotFound, quotes.CodeQuoteNotFound)

	e.RunJobs()
	q = e.quote(f.pid, q.ID)
	assert.Equal(t, quotes.StatusCompleted, q.Status)
	tx := e.txn(f.pid, q.TransactionID)
	assert.Equal(t, transactions.StatusCompleted, tx.Status)
	assert.NotNil(t, tx.SettledAt)
	src = e.LedgerAccount(f.acct.ID)
	assert.Equal(t, funded-q.TotalSendingAmount, src.Available())
	assert.Zero(t, src.DebitsPending)
	assert.Equal(t, q.FeesIncluded, e.LedgerAccount(ledger.FeeRevenueID("USD")).Net())
	assert.Equal(t, q.TotalReceivingAmount, e.LedgerAccount(ledger.RailSettlementID("SEPA_INSTANT", "EUR")).Net())
	e.Verify()
}

func TestInsufficientBalance(t *testing.T) {
	e := newMemoryEnv(t)
	f := e.fixture("789")
	ctx := context.Background()
	req := usdToEUR(f.acct.ID, f.dest.ID)
	req.LockedAmount = funded + 1
	q, err := e.quotes.Create(ctx, f.pid, req)
	require.NoError(t, err)
	_, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
	fe := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_AMOUNT")
	assert.Equal(t, funded, fe.Details["available"])
	assert.Equal(t, quotes.StatusPending, e.quote(f.pid, q.ID).Status)
	assert.Equal(t, funded, e.LedgerAccount(f.acct.ID).Available())

	// Funded, the same quote executes.
	e.Fund(f.pid, f.acct.ID, 1)
	q, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
	require.NoError(t, err)
	assert.Equal(t, quotes.StatusProcessing, q.Status)
	assert.Zero(t, e.LedgerAccount(f.acct.ID).Available())
	e.RunJobs()
	e.Verify()
}

func TestImmediatelyExecute(t *testing.T) {
	e := newMemoryEnv(t)
	f := e.fixture("789")
	ctx := context.Background()
	req := usdToEUR(f.acct.ID, f.dest.ID)
	req.ImmediatelyExecute = true
	q, err := e.quotes.Create(ctx, f.pid, req)
	require.NoError(t, err)
	assert.Equal(t, quotes.StatusProcessing, q.Status)
	assert.Equal(t, funded-q.TotalSendingAmount, e.LedgerAccount(f.acct.ID).Available())
	assert.Equal(t, transactions.StatusProcessing, e.txn(f.pid, q.TransactionID).Status)
	e.RunJobs()
	assert.Equal(t, quotes.StatusCompleted, e.quote(f.pid, q.ID).Status)

	// Created and executed in one write: a refused hold leaves no quote,
	// no transaction and nothing held.
	req.LockedAmount = funded
	_, err = e.quotes.Create(ctx, f.pid, req)
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_AMOUNT")
	assert.Equal(t, funded-q.TotalSendingAmount, e.LedgerAccount(f.acct.ID).Available())
	_, total, err := e.Store.Read().Transactions().List(ctx, ports.TransactionFilter{PlatformID: f.pid}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, total, "only the executed quote's transaction exists")
	e.Verify()
}

func TestIdempotentCreate(t *testing.T) {
	e := newMemoryEnv(t)
	f := e.fixture("789")
	ctx := context.Background()
	req := usdToEUR(f.acct.ID, f.dest.ID)
	req.IdempotencyKey = "k1"
	req.ImmediatelyExecute = true
	q1, err := e.quotes.Create(ctx, f.pid, req)
	require.NoError(t, err)
	q2, err := e.quotes.Create(ctx, f.pid, req)
	require.NoError(t, err)
	assert.Equal(t, q1.ID, q2.ID)
	assert.Equal(t, quotes.QuoteID(f.pid, "k1"), q1.ID)
	assert.Equal(t, funded-q1.TotalSendingAmount, e.LedgerAccount(f.acct.ID).Available(), "money moved once")
	e.Verify()
}

// A key reused with another quote request is refused in core (the HTTP
// response cache long forgotten): 422 IDEMPOTENCY_KEY_REUSED, the stored
// quote untouched and nothing moved, on both stores.
func TestKeyReusedWithAnotherRequest(t *testing.T) {
	onBothStores(t, func(t *testing.T, e *env) {
		f := e.fixture("789")
		ctx := context.Background()
		req := usdToEUR(f.acct.ID, f.dest.ID)
		req.IdempotencyKey = "k1"
		first, err := e.quotes.Create(ctx, f.pid, req)
		require.NoError(t, err)
		e.Clock.Advance(25 * time.Hour)

		other := req
		other.LockedAmount *= 2
		other.ImmediatelyExecute = true
		_, err = e.quotes.Create(ctx, f.pid, other)
		testkit.RequireFault(t, err, fault.KindUnprocessable, "IDEMPOTENCY_KEY_REUSED")
		executeNow := req
		executeNow.ImmediatelyExecute = true
		_, err = e.quotes.Create(ctx, f.pid, executeNow)
		testkit.RequireFault(t, err, fault.KindUnprocessable, "IDEMPOTENCY_KEY_REUSED")
		assert.Equal(t, int64(funded), e.LedgerAccount(f.acct.ID).Available(), "nothing moved")
		assert.Equal(t, quotes.StatusPending, e.quote(f.pid, first.ID).Status, "the stored quote was not executed")

		again, err := e.quotes.Create(ctx, f.pid, req)
		require.NoError(t, err, "the first request again is its retry")
		assert.Equal(t, first.ID, again.ID)
		e.Verify()
	})
}

func TestEmbeddedWalletSignature(t *testing.T) {
	e := newMemoryEnv(t)
	f := e.fixture("789")
	ctx := context.Background()
	wallet := e.internal(f.pid, f.cust.ID, accounts.TypeEmbeddedWallet)
	e.Fund(f.pid, wallet.ID, funded)
	q, err := e.quotes.Create(ctx, f.pid, usdToEUR(wallet.ID, f.dest.ID))
	require.NoError(t, err)
	require.Len(t, q.PaymentInstructions, 1)
	info := q.PaymentInstructions[0].Info
	assert.Equal(t, "EMBEDDED_WALLET", info["accountType"])
	payload, _ := info["payloadToSign"].(string)
	assert.Contains(t, payload, `"quoteId":"`+q.ID+`"`)
	assert.Contains(t, payload, `"totalSendingAmount":10000`)

	_, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
	testkit.RequireFault(t, err, fault.KindUnauthorized, quotes.CodeWalletSignatureMissing)
	_, err = e.quotes.Execute(ctx, f.pid, q.ID, "forged")
	testkit.RequireFault(t, err, fault.KindUnauthorized, quotes.CodeWalletSignatureMalformed)
	stranger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	stamp, err := walletauth.Sign(stranger, []byte(payload))
	require.NoError(t, err)
	_, err = e.quotes.Execute(ctx, f.pid, q.ID, stamp)
	testkit.RequireFault(t, err, fault.KindUnauthorized, quotes.CodeWalletSignatureInvalid)
	_, err = e.quotes.Execute(ctx, f.pid, q.ID, "bad signature")
	testkit.RequireFault(t, err, fault.KindUnauthorized, quotes.CodeWalletSignatureMalformed)
	assert.Equal(t, funded, e.LedgerAccount(wallet.ID).Available(), "a refused signature moves nothing")

	q, err = e.quotes.Execute(ctx, f.pid, q.ID, "sandbox-valid-signature")
	require.NoError(t, err)
	assert.Equal(t, quotes.StatusProcessing, q.Status)
	e.RunJobs()
	assert.Equal(t, funded-q.TotalSendingAmount, e.LedgerAccount(wallet.ID).Available())
	e.Verify()
}

// The expiry race on both backends: the execute's precondition (the quote
// unexpired at the Clock's now) is checked by the store under the quote's
// lock.
func TestExpiry(t *testing.T) {
	onBothStores(t, testExpiry)
}

func testExpiry(t *testing.T, e *env) {
	f := e.fixture("789")
	ctx := context.Background()

	t.Run("one millisecond before expiresAt executes", func(t *testing.T) {
		q, err := e.quotes.Create(ctx, f.pid, usdToEUR(f.acct.ID, f.dest.ID))
		require.NoError(t, err)
		e.Clock.Set(q.ExpiresAt.Add(-time.Millisecond))
		q, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
		require.NoError(t, err)
		assert.Equal(t, quotes.StatusProcessing, q.Status)
		e.Advance(time.Millisecond) // the expiry job runs and leaves it be
		q = e.quote(f.pid, q.ID)
		assert.Equal(t, quotes.StatusCompleted, q.Status)
	})
	t.Run("at expiresAt the quote expires", func(t *testing.T) {
		before := e.LedgerAccount(f.acct.ID).Available()
		q, err := e.quotes.Create(ctx, f.pid, usdToEUR(f.acct.ID, f.dest.ID))
		require.NoError(t, err)
		e.Clock.Set(q.ExpiresAt)
		_, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
		testkit.RequireFault(t, err, fault.KindConflict, quotes.CodeQuoteExpired)
		q = e.quote(f.pid, q.ID)
		assert.Equal(t, quotes.StatusExpired, q.Status)
		tx := e.txn(f.pid, q.TransactionID)
		assert.Equal(t, transactions.StatusExpired, tx.Status)
		assert.Equal(t, quotes.ReasonQuoteExpired, tx.FailureReason)
		assert.Equal(t, before, e.LedgerAccount(f.acct.ID).Available())
		_, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
		testkit.RequireFault(t, err, fault.KindConflict, quotes.CodeQuoteExpired)
		e.RunJobs()
	})
	t.Run("the expiry job expires an unexecuted quote", func(t *testing.T) {
		q, err := e.quotes.Create(ctx, f.pid, usdToEUR(f.acct.ID, f.dest.ID))
		require.NoError(t, err)
		e.Clock.Set(q.ExpiresAt.Add(-time.Millisecond))
		e.RunJobs()
		assert.Equal(t, quotes.StatusPending, e.quote(f.pid, q.ID).Status)
		e.Advance(time.Millisecond)
		assert.Equal(t, quotes.StatusExpired, e.quote(f.pid, q.ID).Status)
		assert.Equal(t, transactions.StatusExpired, e.txn(f.pid, q.TransactionID).Status)
	})
	e.Verify()
}

func lookupQuery(f fixture) lookup.Query {
	return lookup.Query{AccountID: f.dest.ID, CustomerID: f.cust.ID}
}

// A customer under review or rejected may not execute a quote; nothing is
// held and the quote stays executable once the customer is cleared.
func TestExecuteFollowsKYCStatus(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	for _, status := range []string{"PENDING", "REJECTED", "HOLD"} {
		t.Run(status, func(t *testing.T) {
			f := e.fixture("789")
			q, err := e.quotes.Create(ctx, f.pid, usdToEUR(f.acct.ID, f.dest.ID))
			require.NoError(t, err)
			setKYC := func(s string) {
				c := f.cust
				c.KYCStatus = s
				require.NoError(t, e.Store.InTx(ctx, func(tx ports.Tx) error { return tx.Customers().Update(ctx, c) }))
			}
			setKYC(status)
			_, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
			fe := testkit.RequireFault(t, err, fault.KindForbidden, "USER_NOT_READY")
			assert.Equal(t, status, fe.Details["kycStatus"])
			assert.Equal(t, funded, e.LedgerAccount(f.acct.ID).Available(), "nothing is held")
			assert.Equal(t, quotes.StatusPending, e.quote(f.pid, q.ID).Status)

			setKYC("APPROVED")
			q, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
			require.NoError(t, err)
			assert.Equal(t, quotes.StatusProcessing, q.Status)
		})
	}
	e.Verify()
}

// A keyed execution retried after its first attempt committed (a crash lost
// the stored response, so the retry runs again) is answered with the quote
// as it is now, even once settled; another key, or none, is still 409; the
// money moved once. On both stores.
func TestExecuteRetriedWithItsKey(t *testing.T) {
	onBothStores(t, func(t *testing.T, e *env) {
		f := e.fixture("789")
		ctx := context.Background()
		q, err := e.quotes.Create(ctx, f.pid, usdToEUR(f.acct.ID, f.dest.ID))
		require.NoError(t, err)
		first, err := e.quotes.ExecuteKeyed(ctx, f.pid, q.ID, "", "pay-1")
		require.NoError(t, err)
		require.Equal(t, quotes.StatusProcessing, first.Status)
		again, err := e.quotes.ExecuteKeyed(ctx, f.pid, q.ID, "", "pay-1")
		require.NoError(t, err, "the same key finds its own execution")
		assert.Equal(t, quotes.StatusProcessing, again.Status)
		e.RunJobs()
		settled, err := e.quotes.ExecuteKeyed(ctx, f.pid, q.ID, "", "pay-1")
		require.NoError(t, err)
		assert.Equal(t, quotes.StatusCompleted, settled.Status, "answered as the quote is now")
		_, err = e.quotes.ExecuteKeyed(ctx, f.pid, q.ID, "", "pay-2")
		testkit.RequireFault(t, err, fault.KindConflict, "CONFLICT")
		_, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
		testkit.RequireFault(t, err, fault.KindConflict, "CONFLICT")
		assert.Equal(t, funded-q.TotalSendingAmount, e.LedgerAccount(f.acct.ID).Available(), "paid once")
	})
}
