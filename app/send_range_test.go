package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The platform's supportedCurrencies bound what it sends: a transfer-out
// or a quote whose amount is outside the currency's minAmount..maxAmount
// is 400 AMOUNT_OUT_OF_RANGE naming the amount's field (both ends are
// allowed), one in a currency whose enabledTransactionTypes leave OUTGOING
// out is 400 INVALID_INPUT, and neither moves money; without INCOMING a
// transfer-in or a UMA receive in the currency is 400 INVALID_INPUT. A
// currency without a setting, and every currency again once the setting
// allows it, sends any amount.
func TestSendRange(t *testing.T) {
	onAPIBackends(t, func(t *testing.T, env *apiEnv, a apiTarget) {
		p := newPayer(t, a, "rhea@example.com")
		require.Equal(t, 200, a.do(t, 0, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":100000}`).status)
		cust, acct, ext := p.customer, p.account, p.external
		balance := func() int64 { return p.balance(t, a) }
		transferOut := func(amount int64) apiReply {
			t.Helper()
			return a.do(t, 0, "POST", "/transfer-out",
				fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":%d}`, acct, ext, amount))
		}
		quote := func(amount int64) apiReply {
			t.Helper()
			return a.do(t, 0, "POST", "/quotes", fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},
				"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":%d}`,
				acct, ext, amount))
		}
		setUSD := func(min, max int64, types string) {
			t.Helper()
			r := a.do(t, 0, "PATCH", "/config", fmt.Sprintf(`{"supportedCurrencies":[{"currencyCode":"USD","minAmount":%d,"maxAmount":%d,
				"requiredCounterpartyFields":[],"enabledTransactionTypes":%s}]}`, min, max, types))
			require.Equal(t, 200, r.status, "%s", r.body)
		}
		refused := func(r apiReply, code, field string) {
			t.Helper()
			require.Equal(t, 400, r.status, "%s", r.body)
			assert.Equal(t, code, r.json(t)["code"], "%s", r.body)
			assert.Contains(t, string(r.body), field)
		}

		// No setting yet: any amount.
		require.Equal(t, 201, transferOut(10).status)
		r := quote(1000)
		require.Equal(t, 201, r.status, "%s", r.body)
		assert.EqualValues(t, 99990, balance())

		setUSD(2000, 5000, `["INCOMING","OUTGOING"]`)
		refused(transferOut(1999), "AMOUNT_OUT_OF_RANGE", "amount")
		refused(transferOut(5001), "AMOUNT_OUT_OF_RANGE", "amount")
		refused(quote(1999), "AMOUNT_OUT_OF_RANGE", "lockedCurrencyAmount")
		refused(quote(5001), "AMOUNT_OUT_OF_RANGE", "lockedCurrencyAmount")
		assert.EqualValues(t, 99990, balance(), "nothing held for a refused send")
		require.Equal(t, 201, transferOut(2000).status, "the minimum itself")
		require.Equal(t, 201, transferOut(5000).status, "the maximum itself")
		require.Equal(t, 201, quote(5000).status)
		assert.EqualValues(t, 92990, balance())

		setUSD(0, 1000000, `["INCOMING"]`)
		refused(transferOut(1000), "INVALID_INPUT", "OUTGOING")
		refused(quote(1000), "INVALID_INPUT", "OUTGOING")

		setUSD(0, 1000000, `["OUTGOING"]`)
		require.Equal(t, 201, transferOut(6000).status)
		assert.EqualValues(t, 86990, balance())
		// Without INCOMING, money cannot arrive in the currency: a
		// transfer-in and a UMA receive are refused, nothing credited.
		transferIn := a.do(t, 0, "POST", "/transfer-in",
			fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":1000}`, ext, acct))
		refused(transferIn, "INVALID_INPUT", "INCOMING")
		receive := a.do(t, 0, "POST", "/sandbox/uma/receive", fmt.Sprintf(
			`{"senderUmaAddress":"$success.usd@sandbox.local","customerId":%q,"receivingCurrencyCode":"USD","receivingCurrencyAmount":1000}`, cust))
		refused(receive, "INVALID_INPUT", "receivingCurrencyCode")
		assert.EqualValues(t, 86990, balance())
		setUSD(0, 1000000, `["INCOMING","OUTGOING"]`)
		require.Equal(t, 201, a.do(t, 0, "POST", "/transfer-in",
			fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":1000}`, ext, acct)).status)
	})
}
