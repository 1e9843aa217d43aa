package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/ledger"
)

type accountList struct {
	Data       []httpapi.InternalAccount `json:"data"`
	HasMore    bool                      `json:"hasMore"`
	NextCursor string                    `json:"nextCursor"`
	TotalCount int                       `json:"totalCount"`
}

func TestPlatformInternalAccounts(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()

	r := h.get(tn, "/platform/internal-accounts")
	raw := r.object(t)
	assert.Equal(t, []string{"data"}, keys(raw), "the platform list is {data} only")
	list := decode[accountList](t, r)
	require.Len(t, list.Data, 7)
	for _, a := range list.Data {
		assert.True(t, strings.HasPrefix(a.ID, "InternalAccount:"))
		assert.Equal(t, "ACTIVE", a.Status)
		assert.Zero(t, a.Balance.Amount)
		assert.NotNil(t, a.FundingPaymentInstructions)
		assert.Nil(t, a.PrivateEnabled)
	}
	item := raw["data"].([]any)[0].(map[string]any)
	assert.NotContains(t, item, "customerId", "platform accounts have no customerId")
	assert.NotContains(t, item, "privateEnabled", "only wallets carry privateEnabled")
	assert.Equal(t, []any{}, item["fundingPaymentInstructions"])
	assert.NotContains(t, item, "$schema")
	for _, k := range []string{"createdAt", "updatedAt"} {
		ts, err := time.Parse(time.RFC3339Nano, item[k].(string))
		require.NoError(t, err)
		assert.Equal(t, time.UTC, ts.Location())
		assert.True(t, strings.HasSuffix(item[k].(string), "Z"), item[k])
	}

	btc := decode[accountList](t, h.get(tn, "/platform/internal-accounts?currency=BTC"))
	require.Len(t, btc.Data, 1)
	assert.Equal(t, "INTERNAL_CRYPTO", btc.Data[0].Type)
	assert.Equal(t, httpapi.Currency{Code: "BTC", Name: "Bitcoin", Symbol: "₿", Decimals: 8}, btc.Data[0].Balance.Currency)
	fiat := decode[accountList](t, h.get(tn, "/platform/internal-accounts?type=INTERNAL_FIAT"))
	assert.Len(t, fiat.Data, 5)
}

func TestFundAndBalances(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	wallet := h.customerAccount(tn, "Customer:alice", accounts.TypeEmbeddedWallet, "USD")

	r := h.post(tn, fundPath(wallet.ID), `{"amount":100000}`)
	got := decode[httpapi.InternalAccount](t, r)
	assert.Equal(t, wallet.ID, got.ID)
	assert.Equal(t, "Customer:alice", got.CustomerID)
	assert.Equal(t, "EMBEDDED_WALLET", got.Type)
	assert.Equal(t, int64(100000), got.Balance.Amount)
	assert.Equal(t, int64(100000), got.TotalBalance.Amount)
	assert.Equal(t, httpapi.Currency{Code: "USD", Name: "United States Dollar", Symbol: "$", Decimals: 2}, got.Balance.Currency)
	require.NotNil(t, got.PrivateEnabled)
	assert.False(t, *got.PrivateEnabled)

	// Hold 25,000 of it: balance drops, totalBalance keeps it.
	_, err := h.ledger.Post(context.Background(), ledger.Entry{ID: "hold", Transfers: []ledger.Transfer{{
		ID: "hold/1", DebitAccountID: wallet.ID, CreditAccountID: ledger.FeeRevenueID("USD"),
		Amount: 25000, Currency: "USD", Kind: ledger.Pending, Code: "test_hold",
	}}})
	require.NoError(t, err)
	list := decode[accountList](t, h.get(tn, "/customers/internal-accounts?customerId=Customer:alice"))
	require.Len(t, list.Data, 1)
	assert.Equal(t, int64(75000), list.Data[0].Balance.Amount)
	assert.Equal(t, int64(100000), list.Data[0].TotalBalance.Amount)
	assert.Equal(t, 1, list.TotalCount)
	assert.False(t, list.HasMore)

	// Platform accounts can be funded too.
	usd := h.platformAccount(tn, "USD")
	got = decode[httpapi.InternalAccount](t, h.post(tn, fundPath(usd.ID), `{"amount":1}`))
	assert.Empty(t, got.CustomerID)
	assert.Equal(t, int64(1), got.Balance.Amount)
	plat := decode[accountList](t, h.get(tn, "/platform/internal-accounts?currency=USD"))
	require.Len(t, plat.Data, 1)
	assert.Equal(t, int64(1), plat.Data[0].Balance.Amount)

	// The ledger stays balanced: the sandbox source paid for both.
	src, err := h.ledger.Account(context.Background(), ledger.SandboxFundingID("USD"))
	require.NoError(t, err)
	assert.Equal(t, int64(-100001), src.Net())
}

func TestFundErrors(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	requireError(t, h.post(tn, fundPath("InternalAccount:00000000-0000-0000-0000-000000000000"), `{"amount":5}`),
		http.StatusNotFound, "REFERENCE_NOT_FOUND")

	prod := newHarness(t, harnessOpts{production: true})
	ptn := prod.tenant("USD")
	acct := prod.platformAccount(ptn, "USD")
	requireError(t, prod.post(ptn, fundPath(acct.ID), `{"amount":5}`), http.StatusForbidden, "FORBIDDEN")
	assert.Zero(t, prod.balance(ptn, acct.ID))
}

func TestCustomerAccountsPagination(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	other := h.tenant("USD")
	var want []string
	for i := range 7 {
		a := h.customerAccount(tn, fmt.Sprintf("Customer:%d", i%3), accounts.TypeInternalFiat, "USD")
		want = append(want, a.ID)
	}
	h.customerAccount(other, "Customer:0", accounts.TypeInternalFiat, "USD")

	first := h.get(tn, "/customers/internal-accounts")
	assert.NotContains(t, first.object(t), "nextCursor", "nextCursor only when hasMore")
	all := decode[accountList](t, first)
	assert.Len(t, all.Data, 7)
	assert.Equal(t, 7, all.TotalCount)

	var got []string
	path := "/customers/internal-accounts?limit=3"
	pages := 0
	for {
		pages++
		require.LessOrEqual(t, pages, 3)
		page := decode[accountList](t, h.get(tn, path))
		assert.Equal(t, 7, page.TotalCount)
		for _, a := range page.Data {
			got = append(got, a.ID)
		}
		if !page.HasMore {
			assert.Empty(t, page.NextCursor)
			break
		}
		require.NotEmpty(t, page.NextCursor)
		path = "/customers/internal-accounts?limit=3&cursor=" + url.QueryEscape(page.NextCursor)
	}
	assert.Equal(t, 3, pages)
	assert.Equal(t, want, got)

	// Filters combine with pagination.
	c0 := decode[accountList](t, h.get(tn, "/customers/internal-accounts?customerId=Customer:0&limit=2"))
	assert.Equal(t, 3, c0.TotalCount)
	assert.Len(t, c0.Data, 2)
	assert.True(t, c0.HasMore)
	none := decode[accountList](t, h.get(tn, "/customers/internal-accounts?type=EMBEDDED_WALLET"))
	assert.Empty(t, none.Data)
	assert.NotNil(t, none.Data)

	// A tampered cursor is refused.
	page := decode[accountList](t, h.get(tn, "/customers/internal-accounts?limit=3"))
	tampered := []byte(page.NextCursor)
	tampered[len(tampered)/2] ^= 1
	if string(tampered) == page.NextCursor {
		t.Fatal("tampering changed nothing")
	}
	requireError(t, h.get(tn, "/customers/internal-accounts?cursor="+url.QueryEscape(string(tampered))),
		http.StatusBadRequest, "INVALID_INPUT", "cursor")
}

func TestTwoPlatformIsolation(t *testing.T) {
	h := newHarness(t)
	a := h.tenant("USD")
	b := h.tenant("USD")
	aliceA := h.customerAccount(a, "Customer:alice", accounts.TypeInternalFiat, "USD")
	platA := h.platformAccount(a, "USD")
	require.Equal(t, http.StatusOK, h.post(a, fundPath(aliceA.ID), `{"amount":500}`).status)

	// B sees none of A's accounts.
	listB := decode[accountList](t, h.get(b, "/customers/internal-accounts"))
	assert.Empty(t, listB.Data)
	assert.Zero(t, listB.TotalCount)
	listB = decode[accountList](t, h.get(b, "/customers/internal-accounts?customerId=Customer:alice"))
	assert.Empty(t, listB.Data)
	platB := decode[accountList](t, h.get(b, "/platform/internal-accounts"))
	require.Len(t, platB.Data, 1)
	assert.NotEqual(t, platA.ID, platB.Data[0].ID)

	// B cannot fund A's accounts (404, as if they did not exist).
	for _, id := range []string{aliceA.ID, platA.ID} {
		requireError(t, h.post(b, fundPath(id), `{"amount":5}`), http.StatusNotFound, "REFERENCE_NOT_FOUND")
		requireError(t, h.post(b, fundPath(id), `{"amount":5}`, "Idempotency-Key", "x-"+id), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	}
	assert.Equal(t, int64(500), h.balance(a, aliceA.ID))
	assert.Zero(t, h.balance(a, platA.ID))

	// A's cursor gives B nothing of A's.
	for range 3 {
		h.customerAccount(a, "Customer:alice", accounts.TypeInternalFiat, "USD")
	}
	pageA := decode[accountList](t, h.get(a, "/customers/internal-accounts?limit=1"))
	require.True(t, pageA.HasMore)
	pageB := decode[accountList](t, h.get(b, "/customers/internal-accounts?cursor="+url.QueryEscape(pageA.NextCursor)))
	assert.Empty(t, pageB.Data)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
