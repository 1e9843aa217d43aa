package customers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

func TestCustomerDeleteAndGet(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	c := e.create(t, individual())

	e.clock.Advance(time.Minute)
	got, err := e.svc.Delete(ctx, e.platform, c.ID)
	require.NoError(t, err)
	assert.True(t, got.IsDeleted)
	assert.Equal(t, t0.Add(time.Minute), got.UpdatedAt)

	stored, err := e.svc.Get(ctx, e.platform, c.ID)
	require.NoError(t, err, "a deleted customer can still be read")
	assert.True(t, stored.IsDeleted)

	_, err = e.svc.Delete(ctx, e.platform, c.ID)
	testkit.RequireFault(t, err, fault.KindGone, "CUSTOMER_DELETED")
	assert.Len(t, e.accounts(t, c.ID), 2, "accounts are kept")

	// Each account's closing is an INTERNAL_ACCOUNT.STATUS_UPDATED event,
	// with the account as it then was (CLOSED, nothing in it).
	for _, a := range e.accounts(t, c.ID) {
		evs, _, err := e.store.Read().Events().List(ctx, ports.EventFilter{PlatformID: e.platform, ResourceID: a.ID}, ports.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, evs, 1, a.ID)
		assert.Equal(t, customers.EventAccountStatus, evs[0].Type)
		var snap accounts.Account
		require.NoError(t, json.Unmarshal(evs[0].Resource, &snap))
		assert.Equal(t, "CLOSED", snap.Status)
		assert.Zero(t, snap.Balance)
		assert.Equal(t, t0.Add(time.Minute), evs[0].CreatedAt.UTC())
	}
}

func TestCustomerMissingAndForeignCustomers(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	c := e.create(t, individual())
	other := e.addPlatform(t, "")
	for _, tt := range []struct{ platform, id string }{
		{e.platform, "Customer:00000000-0000-0000-0000-000000000000"},
		{e.platform, "not-an-id"},
		{other, c.ID},
	} {
		_, err := e.svc.Get(ctx, tt.platform, tt.id)
		testkit.RequireFault(t, err, fault.KindNotFound, "USER_NOT_FOUND")
		_, err = e.svc.Delete(ctx, tt.platform, tt.id)
		testkit.RequireFault(t, err, fault.KindNotFound, "USER_NOT_FOUND")
	}
	stored, err := e.svc.Get(ctx, e.platform, c.ID)
	require.NoError(t, err)
	assert.False(t, stored.IsDeleted, "another platform cannot delete it")
}

// A customer with money, or with a payment in flight, cannot be deleted
// (its money could come in and never leave); once it holds nothing, the
// deletion closes its accounts, and a closed account refuses funding.
func TestCustomerWithMoneyCannotVanish(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	c := e.create(t, individual())
	var usd ports.InternalAccount
	for _, a := range e.accounts(t, c.ID) {
		if a.Currency == "USD" && a.Type == accounts.TypeInternalFiat {
			usd = a
		}
	}
	require.NotEmpty(t, usd.ID)
	fund := ledger.SandboxFundingID("USD")
	require.NoError(t, e.ledger.CreateAccounts(ctx, ledger.Account{ID: fund, Currency: "USD", Kind: ledger.KindSandboxFunding}))
	move := func(id string, from, to string, amount int64) {
		_, err := e.ledger.Post(ctx, ledger.Entry{ID: id, Ref: usd.ID, Transfers: []ledger.Transfer{
			{ID: id, DebitAccountID: from, CreditAccountID: to, Amount: amount, Currency: "USD"}}})
		require.NoError(t, err)
	}
	move("fund", fund, usd.ID, 5_000)

	_, err := e.svc.Delete(ctx, e.platform, c.ID)
	fe := testkit.RequireFault(t, err, fault.KindConflict, customers.CodeHasFunds)
	assert.Contains(t, fe.Message, "1 account(s) hold money")
	assert.Equal(t, []string{}, fe.Details["paymentsInFlight"])
	assert.Contains(t, fmt.Sprint(fe.Details["balances"]), usd.ID+" USD 5000 0")
	stored, err := e.svc.Get(ctx, e.platform, c.ID)
	require.NoError(t, err)
	assert.False(t, stored.IsDeleted, "nothing changed")

	// The money leaves; a payment of the customer is still in flight.
	move("payout", usd.ID, fund, 5_000)
	pending := ports.Transaction{ID: "Transaction:" + uuid.NewString(), PlatformID: e.platform, CustomerID: c.ID,
		Type: "OUTGOING", Status: "PENDING", SourceAccountID: usd.ID, CreatedAt: t0, UpdatedAt: t0}
	require.NoError(t, e.store.InTx(ctx, func(tx ports.Tx) error { return tx.Transactions().Create(ctx, pending) }))
	_, err = e.svc.Delete(ctx, e.platform, c.ID)
	fe = testkit.RequireFault(t, err, fault.KindConflict, customers.CodeHasFunds)
	assert.Equal(t, []string{pending.ID}, fe.Details["paymentsInFlight"])
	assert.Contains(t, fe.Message, "1 payment(s) are in flight")

	pending.Status = "COMPLETED"
	require.NoError(t, e.store.InTx(ctx, func(tx ports.Tx) error { return tx.Transactions().Update(ctx, pending) }))
	e.clock.Advance(time.Minute)
	got, err := e.svc.Delete(ctx, e.platform, c.ID)
	require.NoError(t, err)
	assert.True(t, got.IsDeleted)
	for _, a := range e.accounts(t, c.ID) {
		assert.Equal(t, accounts.StatusClosed, a.Status, a.ID)
		assert.Equal(t, t0.Add(time.Minute), a.UpdatedAt)
	}
	acc := accounts.New(e.store, e.ledger, e.clock, system.IDs{}, true)
	_, err = acc.Fund(ctx, e.platform, usd.ID, 100, "")
	testkit.RequireFault(t, err, fault.KindConflict, "CONFLICT")
}
