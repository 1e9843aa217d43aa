package customers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

type env struct {
	svc      *customers.Service
	store    *memory.Store
	ledger   ports.LedgerStore
	clock    *testkit.FakeClock
	platform string
}

// newEnv builds the service on memory adapters with one platform whose UMA
// domain is umaDomain (empty: the service default applies).
func newEnv(t *testing.T, umaDomain string, opts customers.Options) *env {
	t.Helper()
	clock := testkit.NewFakeClock(t0)
	led := memory.NewLedger(clock)
	store := memory.NewStore(led)
	e := &env{svc: customers.New(store, led, clock, system.IDs{}, opts), store: store, ledger: led, clock: clock}
	e.platform = e.addPlatform(t, umaDomain)
	return e
}

func (e *env) addPlatform(t *testing.T, umaDomain string) string {
	t.Helper()
	p := ports.Platform{ID: system.IDs{}.New("Platform"), Name: "p", UmaDomain: umaDomain,
		Currencies: []string{"USD", "USDC"}, CreatedAt: e.clock.Now(), UpdatedAt: e.clock.Now()}
	require.NoError(t, e.store.InTx(context.Background(), func(tx ports.Tx) error {
		return tx.Platforms().Create(context.Background(), p)
	}))
	return p.ID
}

func (e *env) create(t *testing.T, in customers.Input) ports.Customer {
	t.Helper()
	c, err := e.svc.Create(context.Background(), e.platform, in)
	require.NoError(t, err)
	return c
}

func (e *env) accounts(t *testing.T, customerID string) []ports.InternalAccount {
	t.Helper()
	rows, _, err := e.store.Read().InternalAccounts().List(context.Background(),
		ports.InternalAccountFilter{PlatformID: e.platform, CustomerID: customerID}, ports.Page{Limit: 100})
	require.NoError(t, err)
	return rows
}

func ptr[T any](v T) *T { return &v }

func individual() customers.Input {
	return customers.Input{CustomerType: customers.TypeIndividual}
}

func business() customers.Input {
	return customers.Input{
		CustomerType: customers.TypeBusiness,
		Business: &customers.BusinessFields{
			LegalName:      ptr("Acme Corporation"),
			Country:        ptr("US"),
			TaxID:          ptr("47-1234567"),
			IncorporatedOn: ptr("2018-03-14"),
		},
	}
}

// requireInvalid asserts err is a 400 INVALID_INPUT naming exactly fields.
func requireInvalid(t *testing.T, err error, fields ...string) *fault.Error {
	t.Helper()
	fe := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT")
	var got []string
	for _, f := range fe.Fields {
		got = append(got, f.Field)
	}
	require.ElementsMatch(t, fields, got, "fields of %v", err)
	return fe
}
