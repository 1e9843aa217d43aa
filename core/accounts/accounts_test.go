package accounts_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

type env struct {
	svc       *accounts.Service
	platforms *platforms.Service
	store     ports.Store
	ledger    ports.LedgerStore
	clock     *testkit.FakeClock
	ids       ports.IDs
}

func newEnv(t *testing.T, sandbox bool) *env {
	t.Helper()
	clock := testkit.NewFakeClock(time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC))
	l := memory.NewLedger(clock)
	st := memory.NewStore(l)
	ids := system.IDs{}
	return &env{
		svc:       accounts.New(st, l, clock, ids, sandbox),
		platforms: platforms.New(st, l, clock, ids),
		store:     st, ledger: l, clock: clock, ids: ids,
	}
}

func (e *env) platform(t *testing.T, currencies ...string) string {
	t.Helper()
	p, err := e.platforms.Create(context.Background(), "p", "", currencies)
	require.NoError(t, err)
	return p.ID
}

// customerAccount opens an internal account for a customer the way the
// customers service does: the row and its ledger account in one unit.
func (e *env) customerAccount(t *testing.T, platformID, customerID, typ, currency, status string) ports.InternalAccount {
	t.Helper()
	now := e.clock.Now()
	a := ports.InternalAccount{
		ID: e.ids.New("InternalAccount"), PlatformID: platformID, CustomerID: customerID,
		Type: typ, Status: status, Currency: currency, CreatedAt: now, UpdatedAt: now,
	}
	err := e.store.InTx(context.Background(), func(tx ports.Tx) error {
		if err := tx.InternalAccounts().Create(context.Background(), a); err != nil {
			return err
		}
		return tx.LedgerAccounts().Create(context.Background(), accounts.LedgerAccount(a))
	})
	require.NoError(t, err)
	e.clock.Advance(time.Millisecond)
	return a
}

func requireInvalid(t *testing.T, err error, field string) {
	t.Helper()
	f := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT")
	require.NotEmpty(t, f.Fields)
	assert.Equal(t, field, f.Fields[0].Field)
}

func TestListPlatformAccounts(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, true)
	pid := e.platform(t)
	e.customerAccount(t, pid, "Customer:1", accounts.TypeInternalFiat, "USD", accounts.StatusActive)

	all, err := e.svc.ListPlatformAccounts(ctx, pid, "", "")
	require.NoError(t, err)
	require.Len(t, all, len(platforms.DefaultCurrencies), "customer accounts are not platform accounts")
	for _, a := range all {
		assert.Empty(t, a.CustomerID)
		assert.Zero(t, a.Balance)
		assert.Zero(t, a.TotalBalance)
	}

	usd, err := e.svc.ListPlatformAccounts(ctx, pid, "USD", "")
	require.NoError(t, err)
	require.Len(t, usd, 1)
	assert.Equal(t, "USD", usd[0].Currency)

	crypto, err := e.svc.ListPlatformAccounts(ctx, pid, "", accounts.TypeInternalCrypto)
	require.NoError(t, err)
	require.Len(t, crypto, 2)

	none, err := e.svc.ListPlatformAccounts(ctx, pid, "USD", accounts.TypeInternalCrypto)
	require.NoError(t, err)
	assert.Empty(t, none)

	_, err = e.svc.ListPlatformAccounts(ctx, pid, "XYZ", "")
	requireInvalid(t, err, "currency")
	_, err = e.svc.ListPlatformAccounts(ctx, pid, "", "CHECKING")
	requireInvalid(t, err, "type")
}

func TestListCustomerAccountsPaginates(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, true)
	pid := e.platform(t, "USD")
	other := e.platform(t, "USD")
	var want []string
	for i := range 5 {
		a := e.customerAccount(t, pid, fmt.Sprintf("Customer:%d", i%2), accounts.TypeInternalFiat, "USD", accounts.StatusActive)
		want = append(want, a.ID)
	}
	e.customerAccount(t, other, "Customer:0", accounts.TypeInternalFiat, "USD", accounts.StatusActive)

	var got []string
	page := ports.Page{Limit: 2}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5, "pagination must end")
		res, err := e.svc.ListCustomerAccounts(ctx, pid, accounts.Filter{}, page)
		require.NoError(t, err)
		assert.Equal(t, 5, res.Total)
		for _, a := range res.Accounts {
			got = append(got, a.ID)
			assert.Equal(t, pid, a.PlatformID)
		}
		if !res.HasMore {
			assert.Nil(t, res.Next)
			break
		}
		require.Len(t, res.Accounts, 2)
		require.NotNil(t, res.Next)
		page.After = res.Next
	}
	assert.Equal(t, want, got, "every account once, oldest first")

	one, err := e.svc.ListCustomerAccounts(ctx, pid, accounts.Filter{CustomerID: "Customer:1"}, ports.Page{})
	require.NoError(t, err)
	assert.Equal(t, 2, one.Total)
	assert.Len(t, one.Accounts, 2)
	assert.False(t, one.HasMore)

	_, err = e.svc.ListCustomerAccounts(ctx, pid, accounts.Filter{}, ports.Page{Limit: 101})
	requireInvalid(t, err, "limit")
	_, err = e.svc.ListCustomerAccounts(ctx, pid, accounts.Filter{}, ports.Page{Limit: -1})
	requireInvalid(t, err, "limit")
	_, err = e.svc.ListCustomerAccounts(ctx, pid, accounts.Filter{Type: "nope"}, ports.Page{})
	requireInvalid(t, err, "type")
	_, err = e.svc.ListCustomerAccounts(ctx, pid, accounts.Filter{Currency: "usd"}, ports.Page{})
	requireInvalid(t, err, "currency")
}

func TestGetIsolatesPlatforms(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, true)
	a := e.platform(t, "USD")
	b := e.platform(t, "USD")
	acct := e.customerAccount(t, a, "Customer:1", accounts.TypeInternalFiat, "USD", accounts.StatusActive)

	got, err := e.svc.Get(ctx, a, acct.ID)
	require.NoError(t, err)
	assert.Equal(t, acct.ID, got.ID)

	_, err = e.svc.Get(ctx, b, acct.ID)
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
	_, err = e.svc.Fund(ctx, b, acct.ID, 100, "")
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
	res, err := e.svc.ListCustomerAccounts(ctx, b, accounts.Filter{CustomerID: "Customer:1"}, ports.Page{})
	require.NoError(t, err)
	assert.Empty(t, res.Accounts)
	assert.Zero(t, res.Total)

	got, err = e.svc.Get(ctx, a, acct.ID)
	require.NoError(t, err)
	assert.Zero(t, got.Balance, "the refused funding moved nothing")
}

func TestFundValidation(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, true)
	pid := e.platform(t, "USD")
	acct := e.customerAccount(t, pid, "Customer:1", accounts.TypeInternalFiat, "USD", accounts.StatusActive)
	frozen := e.customerAccount(t, pid, "Customer:1", accounts.TypeInternalFiat, "USD", accounts.StatusFrozen)

	for _, amount := range []int64{0, -1, accounts.MaxFundAmount + 1, -9223372036854775808} {
		_, err := e.svc.Fund(ctx, pid, acct.ID, amount, "")
		requireInvalid(t, err, "amount")
	}
	_, err := e.svc.Fund(ctx, pid, "InternalAccount:unknown", 1, "")
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
	_, err = e.svc.Fund(ctx, pid, frozen.ID, 1, "")
	testkit.RequireFault(t, err, fault.KindConflict, "CONFLICT")

	got, err := e.svc.Fund(ctx, pid, acct.ID, accounts.MaxFundAmount, "")
	require.NoError(t, err)
	assert.Equal(t, accounts.MaxFundAmount, got.Balance)

	prod := accounts.New(e.store, e.ledger, e.clock, e.ids, false)
	_, err = prod.Fund(ctx, pid, acct.ID, 1, "")
	testkit.RequireFault(t, err, fault.KindForbidden, "FORBIDDEN")
}

func TestFundPostsBalancedEntry(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, true)
	pid := e.platform(t)
	platformAccts, err := e.svc.ListPlatformAccounts(ctx, pid, "BTC", "")
	require.NoError(t, err)
	require.Len(t, platformAccts, 1)
	btc := platformAccts[0]

	got, err := e.svc.Fund(ctx, pid, btc.ID, 1_000_000, "")
	require.NoError(t, err)
	assert.Equal(t, int64(1_000_000), got.Balance)
	assert.Equal(t, int64(1_000_000), got.TotalBalance)
	got, err = e.svc.Fund(ctx, pid, btc.ID, 500, "")
	require.NoError(t, err)
	assert.Equal(t, int64(1_000_500), got.Balance, "without a key every call funds")

	src, err := e.ledger.Account(ctx, ledger.SandboxFundingID("BTC"))
	require.NoError(t, err)
	assert.Equal(t, int64(-1_000_500), src.Net(), "the sandbox source pays for it")

	entries, err := e.ledger.Journal(ctx, 0, 100)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	for _, je := range entries {
		assert.Equal(t, btc.ID, je.Ref)
		require.Len(t, je.Transfers, 1)
		assert.Equal(t, accounts.CodeSandboxFunding, je.Transfers[0].Code)
		assert.Equal(t, ledger.SandboxFundingID("BTC"), je.Transfers[0].DebitAccountID)
		assert.Equal(t, btc.ID, je.Transfers[0].CreditAccountID)
	}
}

func TestFundIdempotencyKey(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, true)
	pid := e.platform(t, "USD")
	other := e.platform(t, "USD")
	acct := e.customerAccount(t, pid, "Customer:1", accounts.TypeInternalFiat, "USD", accounts.StatusActive)
	otherAcct := e.customerAccount(t, other, "Customer:1", accounts.TypeInternalFiat, "USD", accounts.StatusActive)

	got, err := e.svc.Fund(ctx, pid, acct.ID, 2500, "key-1")
	require.NoError(t, err)
	assert.Equal(t, int64(2500), got.Balance)

	// A retry with the same key posts nothing new and reports the balance.
	got, err = e.svc.Fund(ctx, pid, acct.ID, 2500, "key-1")
	require.NoError(t, err)
	assert.Equal(t, int64(2500), got.Balance)

	// The same key for a different funding is refused.
	_, err = e.svc.Fund(ctx, pid, acct.ID, 9999, "key-1")
	testkit.RequireFault(t, err, fault.KindUnprocessable, "IDEMPOTENCY_KEY_REUSED")

	// Another platform's key space is its own.
	got, err = e.svc.Fund(ctx, other, otherAcct.ID, 2500, "key-1")
	require.NoError(t, err)
	assert.Equal(t, int64(2500), got.Balance)

	// A new key funds again.
	got, err = e.svc.Fund(ctx, pid, acct.ID, 100, "key-2")
	require.NoError(t, err)
	assert.Equal(t, int64(2600), got.Balance)
	assert.NotEqual(t, accounts.FundEntryID(pid, "key-1"), accounts.FundEntryID(other, "key-1"))
}

// TestFundRetryAfterCrash: the entry was committed but the process died
// before answering; the retry with the same key must not fund twice.
func TestFundRetryAfterCrash(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, true)
	pid := e.platform(t, "USD")
	acct := e.customerAccount(t, pid, "Customer:1", accounts.TypeInternalFiat, "USD", accounts.StatusActive)

	_, err := e.svc.Fund(ctx, pid, acct.ID, 700, "crash-key")
	require.NoError(t, err)
	// The response was lost; only the ledger remembers. A fresh service
	// (a restarted process) sees the retry.
	restarted := accounts.New(e.store, e.ledger, e.clock, e.ids, true)
	got, err := restarted.Fund(ctx, pid, acct.ID, 700, "crash-key")
	require.NoError(t, err)
	assert.Equal(t, int64(700), got.Balance)
	entries, err := e.ledger.Journal(ctx, 0, 100)
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}

func TestFundCreatesMissingSource(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, true)
	pid := e.platform(t, "USD")
	// A JPY account on a platform created without JPY: no JPY funding source yet.
	_, err := e.ledger.Account(ctx, ledger.SandboxFundingID("JPY"))
	require.ErrorIs(t, err, ports.ErrNotFound)
	acct := e.customerAccount(t, pid, "Customer:1", accounts.TypeInternalFiat, "JPY", accounts.StatusActive)
	got, err := e.svc.Fund(ctx, pid, acct.ID, 5000, "")
	require.NoError(t, err)
	assert.Equal(t, int64(5000), got.Balance)
}

func TestBalanceExcludesHolds(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, true)
	pid := e.platform(t, "USD")
	acct := e.customerAccount(t, pid, "Customer:1", accounts.TypeEmbeddedWallet, "USD", accounts.StatusActive)
	_, err := e.svc.Fund(ctx, pid, acct.ID, 10_000, "")
	require.NoError(t, err)
	// Hold 3,000 (a pending transfer out of the account).
	_, err = e.ledger.Post(ctx, ledger.Entry{ID: "hold-1", Transfers: []ledger.Transfer{{
		ID: "hold-1/1", DebitAccountID: acct.ID, CreditAccountID: ledger.FeeRevenueID("USD"),
		Amount: 3000, Currency: "USD", Kind: ledger.Pending, Code: "test_hold",
	}}})
	require.NoError(t, err)

	got, err := e.svc.Get(ctx, pid, acct.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(7000), got.Balance, "balance excludes held funds")
	assert.Equal(t, int64(10_000), got.TotalBalance, "totalBalance includes them")

	res, err := e.svc.ListCustomerAccounts(ctx, pid, accounts.Filter{Type: accounts.TypeEmbeddedWallet}, ports.Page{})
	require.NoError(t, err)
	require.Len(t, res.Accounts, 1)
	assert.Equal(t, int64(7000), res.Accounts[0].Balance)
	assert.Equal(t, int64(10_000), res.Accounts[0].TotalBalance)
}

func TestInternalAccountStateMachine(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	a := ports.InternalAccount{ID: "InternalAccount:1", Status: accounts.StatusActive}
	require.NoError(t, accounts.Move(&a, accounts.StatusFrozen, t0))
	require.NoError(t, accounts.Move(&a, accounts.StatusActive, t0))
	require.NoError(t, accounts.Move(&a, accounts.StatusClosed, t0))
	assert.Equal(t, t0, a.UpdatedAt)
	for _, to := range accounts.Statuses {
		require.ErrorIs(t, accounts.Move(&a, accounts.Status(to), t0), status.ErrIllegal, "CLOSED is final (%s)", to)
	}
	assert.Equal(t, accounts.StatusClosed, a.Status)
}
