package customers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	railsandbox "github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/coretest"
)

// The deletion rule on both stores: refused while the customer's account
// holds money (naming it), allowed once it is empty, and then the account
// is CLOSED and refuses funding.
func TestFundedCustomerCannotBeDeleted(t *testing.T) {
	for _, backend := range []struct {
		name string
		b    func(testing.TB) coretest.Backend
	}{{"memory", func(testing.TB) coretest.Backend { return coretest.Memory() }}, {"postgres", coretest.Postgres}} {
		t.Run(backend.name, func(t *testing.T) {
			ctx := context.Background()
			b := backend.b(t)
			e := coretest.New(t, b, railsandbox.Factory(b.Clock))
			pid := e.Platform("USD")
			c, err := e.Customers.Create(ctx, pid, individual())
			require.NoError(t, err)
			a := e.InternalAccount(ports.InternalAccountFilter{PlatformID: pid, CustomerID: c.ID, Currency: "USD", Type: accounts.TypeInternalFiat})
			e.Fund(pid, a.ID, 5_000)

			_, err = e.Customers.Delete(ctx, pid, c.ID)
			fe := testkit.RequireFault(t, err, fault.KindConflict, customers.CodeHasFunds)
			assert.Contains(t, fe.Message, c.ID)
			got, err := e.Customers.Get(ctx, pid, c.ID)
			require.NoError(t, err)
			assert.False(t, got.IsDeleted)
			assert.Equal(t, accounts.StatusActive, e.InternalAccount(ports.InternalAccountFilter{PlatformID: pid, CustomerID: c.ID, Currency: "USD"}).Status)

			// The money leaves (the ledger directly: payouts are another
			// package's), and the deletion goes through.
			_, err = e.Ledger.Post(ctx, ledger.Entry{ID: "drain", Ref: a.ID, Transfers: []ledger.Transfer{
				{ID: "drain", DebitAccountID: a.ID, CreditAccountID: ledger.SandboxFundingID("USD"), Amount: 5_000, Currency: "USD"}}})
			require.NoError(t, err)
			e.Clock.Advance(time.Minute)
			_, err = e.Customers.Delete(ctx, pid, c.ID)
			require.NoError(t, err)
			closed := e.InternalAccount(ports.InternalAccountFilter{PlatformID: pid, CustomerID: c.ID, Currency: "USD"})
			assert.Equal(t, accounts.StatusClosed, closed.Status)
			_, err = e.Accounts.Fund(ctx, pid, a.ID, 100, "")
			testkit.RequireFault(t, err, fault.KindConflict, "CONFLICT")
			assert.Zero(t, e.LedgerAccount(a.ID).CreditsPosted-e.LedgerAccount(a.ID).DebitsPosted)
		})
	}
}
