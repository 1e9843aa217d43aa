package quotes_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// realtime is a REALTIME_FUNDING quote request of the customer paying dest.
func realtime(customerID, currency, network, dest string) quotes.CreateRequest {
	return quotes.CreateRequest{
		Source:       quotes.Source{Type: quotes.SourceRealtimeFunding, Currency: currency, CryptoNetwork: network, CustomerID: customerID},
		Destination:  quotes.Destination{Type: quotes.DestinationAccount, AccountID: dest},
		LockedSide:   fx.SideReceiving,
		LockedAmount: 80_00,
	}
}

func TestRealtimeFundingInstructions(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := context.Background()
	f := e.fixture("789")
	info := func(currency, network string) (ports.Quote, map[string]any) {
		t.Helper()
		q, err := e.quotes.Create(ctx, f.pid, realtime(f.cust.ID, currency, network, f.dest.ID))
		require.NoError(t, err)
		require.Len(t, q.PaymentInstructions, 1)
		return q, q.PaymentInstructions[0].Info
	}

	q, usd := info("USD", "")
	tx := e.txn(f.pid, q.TransactionID)
	assert.Equal(t, "USD_ACCOUNT", usd["accountType"])
	assert.Equal(t, tx.Reference, usd["reference"])
	assert.Equal(t, []any{"RTP", "FEDNOW"}, usd["paymentRails"])
	assert.NoError(t, external.Validate("USD", ports.AccountInfo{AccountType: "USD_ACCOUNT",
		AccountNumber: usd["accountNumber"].(string), RoutingNumber: usd["routingNumber"].(string),
		BankAccountType: "CHECKING", Beneficiary: &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Corridor"}}, start))
	assert.Equal(t, quotes.SourceRealtimeFunding, tx.Details.SourceType)
	assert.Equal(t, q.PaymentInstructions, tx.Details.PaymentInstructions)
	assert.Empty(t, tx.SourceAccountID)
	// Deterministic for the quote.
	again, err := e.quotes.Get(ctx, f.pid, q.ID)
	require.NoError(t, err)
	assert.Equal(t, usd["accountNumber"], again.PaymentInstructions[0].Info["accountNumber"])

	q, btc := info("BTC", "")
	assert.Equal(t, "SPARK_WALLET", btc["accountType"])
	assert.Equal(t, "BTC", btc["assetType"])
	assert.NoError(t, external.Validate("BTC", ports.AccountInfo{AccountType: "SPARK_WALLET", Address: btc["address"].(string)}, start))
	assert.NoError(t, external.Validate("BTC", ports.AccountInfo{AccountType: "LIGHTNING", Invoice: btc["invoice"].(string)}, start))
	assert.Contains(t, btc["invoice"], "lnbcrt")
	assert.Equal(t, "BTC", q.SendingCurrency)

	for _, network := range []string{"SOLANA", "BASE", "POLYGON", "ETHEREUM"} {
		_, usdc := info("USDC", network)
		typ := network + "_WALLET"
		assert.Equal(t, typ, usdc["accountType"])
		assert.Equal(t, "USDC", usdc["assetType"])
		assert.NoError(t, external.Validate("USDC", ports.AccountInfo{AccountType: typ, Address: usdc["address"].(string)}, start), network)
	}
}

func TestSandboxSend(t *testing.T) {
	ctx := context.Background()
	fundingAccount := ledger.RailSettlementID("RTP", "USD")

	t.Run("the quoted amount funds and pays the quote", func(t *testing.T) {
		e := newMemoryEnv(t)
		f := e.fixture("789")
		q, err := e.quotes.Create(ctx, f.pid, realtime(f.cust.ID, "USD", "", f.dest.ID))
		require.NoError(t, err)
		_, err = e.quotes.Execute(ctx, f.pid, q.ID, "")
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "quoteId")

		tx, err := e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: q.ID, CurrencyCode: "USD"})
		require.NoError(t, err)
		assert.Equal(t, transactions.StatusProcessing, tx.Status)
		assert.Equal(t, q.TotalSendingAmount, e.LedgerAccount(fundingAccount).DebitsPending)
		_, err = e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: q.ID, CurrencyCode: "USD"})
		testkit.RequireFault(t, err, fault.KindConflict, "CONFLICT")

		e.RunJobs()
		assert.Equal(t, quotes.StatusCompleted, e.quote(f.pid, q.ID).Status)
		assert.Equal(t, transactions.StatusCompleted, e.txn(f.pid, q.TransactionID).Status)
		assert.Equal(t, -q.TotalSendingAmount, e.LedgerAccount(fundingAccount).Net())
		assert.Equal(t, q.FeesIncluded, e.LedgerAccount(ledger.FeeRevenueID("USD")).Net())
		assert.Equal(t, q.TotalReceivingAmount, e.LedgerAccount(ledger.RailSettlementID("SEPA_INSTANT", "EUR")).Net())
		assert.Equal(t, funded, e.LedgerAccount(f.acct.ID).Available(), "the internal account is not touched")
		e.Verify()
	})
	t.Run("a failed payout is refunded to the payer", func(t *testing.T) {
		e := newMemoryEnv(t)
		f := e.fixture("002")
		q, err := e.quotes.Create(ctx, f.pid, realtime(f.cust.ID, "USD", "", f.dest.ID))
		require.NoError(t, err)
		_, err = e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: q.ID, CurrencyCode: "USD", CurrencyAmount: q.TotalSendingAmount})
		require.NoError(t, err)
		e.RunJobs()
		tx := e.txn(f.pid, q.TransactionID)
		assert.Equal(t, transactions.StatusFailed, tx.Status)
		require.NotNil(t, tx.Details.Refund)
		assert.Equal(t, transactions.RefundCompleted, tx.Details.Refund.Status)
		fa := e.LedgerAccount(fundingAccount)
		assert.Zero(t, fa.Net())
		assert.Zero(t, fa.DebitsPending)
		e.Verify()
	})
	t.Run("another amount fails the quote", func(t *testing.T) {
		e := newMemoryEnv(t)
		f := e.fixture("789")
		q, err := e.quotes.Create(ctx, f.pid, realtime(f.cust.ID, "USD", "", f.dest.ID))
		require.NoError(t, err)
		tx, err := e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: q.ID, CurrencyCode: "USD", CurrencyAmount: q.TotalSendingAmount - 1})
		require.NoError(t, err)
		assert.Equal(t, transactions.StatusFailed, tx.Status)
		assert.Equal(t, quotes.ReasonFundingAmountMismatch, tx.FailureReason)
		require.NotNil(t, tx.Details.Refund)
		assert.Equal(t, transactions.RefundTransactionFailed, tx.Details.Refund.Reason)
		assert.Equal(t, quotes.StatusFailed, e.quote(f.pid, q.ID).Status)
		assert.Zero(t, e.LedgerAccount(fundingAccount).DebitsPending)
		e.RunJobs()
		e.Verify()
	})
	t.Run("refusals", func(t *testing.T) {
		e := newMemoryEnv(t)
		f := e.fixture("789")
		rq, err := e.quotes.Create(ctx, f.pid, realtime(f.cust.ID, "USD", "", f.dest.ID))
		require.NoError(t, err)
		aq, err := e.quotes.Create(ctx, f.pid, usdToEUR(f.acct.ID, f.dest.ID))
		require.NoError(t, err)
		_, err = e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{})
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "quoteId", "currencyCode")
		_, err = e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: "Quote:nope", CurrencyCode: "USD"})
		testkit.RequireFault(t, err, fault.KindNotFound, quotes.CodeQuoteNotFound)
		_, err = e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: aq.ID, CurrencyCode: "USD"})
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "quoteId")
		_, err = e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: rq.ID, CurrencyCode: "EUR"})
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "currencyCode")
		e.Clock.Set(rq.ExpiresAt)
		_, err = e.quotes.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: rq.ID, CurrencyCode: "USD"})
		testkit.RequireFault(t, err, fault.KindConflict, quotes.CodeQuoteExpired)
		assert.Equal(t, transactions.StatusExpired, e.txn(f.pid, rq.TransactionID).Status)

		prod := quotes.New(e.Store, e.Ledger, nil, nil, nil, e.Clock, e.IDs, quotes.Options{Logger: quietLog()})
		_, err = prod.SandboxSend(ctx, f.pid, quotes.SendRequest{QuoteID: rq.ID, CurrencyCode: "USD"})
		testkit.RequireFault(t, err, fault.KindForbidden, "FORBIDDEN")
	})
}
