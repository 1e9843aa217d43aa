package external_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/externalfixture"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// verifierFunc adapts a function to external.BeneficiaryVerifier.
type verifierFunc func(info ports.AccountInfo) (external.Verification, error)

func (f verifierFunc) Verify(_ context.Context, _ string, info ports.AccountInfo) (external.Verification, error) {
	return f(info)
}

type env struct {
	svc      *external.Service
	store    ports.Store
	clock    *testkit.FakeClock
	platform string
}

// backends are the stores the use cases run on.
var backends = []struct {
	name string
	open func(t *testing.T, clock ports.Clock) ports.Store
}{
	{"memory", func(_ *testing.T, clock ports.Clock) ports.Store { return memory.NewStore(memory.NewLedger(clock)) }},
	{"postgres", func(t *testing.T, _ ports.Clock) ports.Store { return postgres.NewStore(pgtest.NewDB(t)) }},
}

// each runs test on every backend.
func each(t *testing.T, test func(t *testing.T, newEnv func(t *testing.T, opts ...external.Option) *env)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			test(t, func(t *testing.T, opts ...external.Option) *env {
				t.Helper()
				clock := testkit.NewFakeClock(t0)
				store := b.open(t, clock)
				e := &env{svc: external.New(store, clock, system.IDs{}, opts...), store: store, clock: clock}
				e.platform = e.addPlatform(t)
				return e
			})
		})
	}
}

func (e *env) addPlatform(t *testing.T) string {
	t.Helper()
	p := ports.Platform{ID: system.IDs{}.New("Platform"), Name: "p", CreatedAt: e.clock.Now(), UpdatedAt: e.clock.Now()}
	require.NoError(t, e.store.InTx(context.Background(), func(tx ports.Tx) error {
		return tx.Platforms().Create(context.Background(), p)
	}))
	return p.ID
}

func (e *env) addCustomer(t *testing.T, platformID string, deleted bool) string {
	t.Helper()
	c := ports.Customer{ID: system.IDs{}.New("Customer"), PlatformID: platformID, CustomerType: "INDIVIDUAL",
		IsDeleted: deleted, CreatedAt: e.clock.Now(), UpdatedAt: e.clock.Now()}
	require.NoError(t, e.store.InTx(context.Background(), func(tx ports.Tx) error {
		return tx.Customers().Create(context.Background(), c)
	}))
	return c.ID
}

func (e *env) create(t *testing.T, in external.Input) ports.ExternalAccount {
	t.Helper()
	a, err := e.svc.Create(context.Background(), e.platform, in)
	require.NoError(t, err)
	e.clock.Advance(time.Millisecond)
	return a
}

func input(customerID, typ, suffix string) external.Input {
	return external.Input{CustomerID: customerID, Currency: externalfixture.Currency[typ], Info: externalfixture.Info(typ, suffix)}
}

func TestCreateCustomerAndPlatformAccounts(t *testing.T) {
	each(t, func(t *testing.T, newEnv func(t *testing.T, opts ...external.Option) *env) {
		e := newEnv(t)
		ctx := context.Background()
		cust := e.addCustomer(t, e.platform, false)

		in := input(cust, "USD_ACCOUNT", "")
		in.PlatformAccountID, in.OwnershipType = "ext-1", "FIRST_PARTY"
		a := e.create(t, in)
		assert.Regexp(t, `^ExternalAccount:[0-9a-f-]{36}$`, a.ID)
		assert.Equal(t, cust, a.CustomerID)
		assert.Equal(t, "ACTIVE", a.Status)
		assert.Equal(t, "UNSUPPORTED", a.BeneficiaryVerificationStatus, "no verifier configured")
		assert.Equal(t, "ext-1", a.PlatformAccountID)
		assert.Equal(t, t0, a.CreatedAt)

		got, err := e.svc.Get(ctx, e.platform, a.ID, external.ScopeAll)
		require.NoError(t, err)
		assert.Equal(t, a, got)

		p := e.create(t, input("", "EUR_ACCOUNT", ""))
		assert.Empty(t, p.CustomerID)
		_, err = e.svc.Get(ctx, e.platform, p.ID, external.ScopePlatform)
		require.NoError(t, err)
		_, err = e.svc.Get(ctx, e.platform, p.ID, external.ScopeAll)
		require.NoError(t, err, "the customer paths reach the platform's accounts too")
		_, err = e.svc.Get(ctx, e.platform, a.ID, external.ScopePlatform)
		testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")

		// Another platform sees none of them.
		other := e.addPlatform(t)
		_, err = e.svc.Get(ctx, other, a.ID, external.ScopeAll)
		testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
	})
}

func TestCreateRefusals(t *testing.T) {
	each(t, func(t *testing.T, newEnv func(t *testing.T, opts ...external.Option) *env) {
		e := newEnv(t)
		ctx := context.Background()
		cust := e.addCustomer(t, e.platform, false)
		gone := e.addCustomer(t, e.platform, true)

		bad := input(cust, "USD_ACCOUNT", "")
		bad.Info.RoutingNumber = "021000022"
		f := testkit.RequireFault(t, mustFail(e.svc.Create(ctx, e.platform, bad)), fault.KindInvalid, "INVALID_INPUT")
		assert.Equal(t, "accountInfo.routingNumber", f.Fields[0].Field)

		in := input("Customer:00000000-0000-0000-0000-000000000000", "USD_ACCOUNT", "")
		testkit.RequireFault(t, mustFail(e.svc.Create(ctx, e.platform, in)), fault.KindNotFound, "USER_NOT_FOUND")
		in.CustomerID = gone
		testkit.RequireFault(t, mustFail(e.svc.Create(ctx, e.platform, in)), fault.KindGone, "CUSTOMER_DELETED")

		// A customer of another platform is unknown here.
		other := e.addPlatform(t)
		in.CustomerID = e.addCustomer(t, other, false)
		testkit.RequireFault(t, mustFail(e.svc.Create(ctx, e.platform, in)), fault.KindNotFound, "USER_NOT_FOUND")

		plat := input("", "USD_ACCOUNT", "")
		plat.DefaultUmaDepositAccount = true
		f = testkit.RequireFault(t, mustFail(e.svc.Create(ctx, e.platform, plat)), fault.KindInvalid, "INVALID_INPUT")
		assert.Equal(t, "defaultUmaDepositAccount", f.Fields[0].Field)

		own := input(cust, "USD_ACCOUNT", "")
		own.OwnershipType = "SOMEONE"
		f = testkit.RequireFault(t, mustFail(e.svc.Create(ctx, e.platform, own)), fault.KindInvalid, "INVALID_INPUT")
		assert.Equal(t, "ownershipType", f.Fields[0].Field)

		rows, _, err := e.store.Read().ExternalAccounts().List(ctx, ports.ExternalAccountFilter{PlatformID: e.platform}, ports.Page{})
		require.NoError(t, err)
		assert.Empty(t, rows, "nothing was stored")
	})
}

func mustFail(_ ports.ExternalAccount, err error) error { return err }

func TestCreateDuplicate(t *testing.T) {
	each(t, func(t *testing.T, newEnv func(t *testing.T, opts ...external.Option) *env) {
		e := newEnv(t)
		ctx := context.Background()
		cust := e.addCustomer(t, e.platform, false)
		first := e.create(t, input(cust, "USD_ACCOUNT", "123"))

		f := testkit.RequireFault(t, mustFail(e.svc.Create(ctx, e.platform, input(cust, "USD_ACCOUNT", "123"))), fault.KindConflict, "CONFLICT")
		assert.Equal(t, first.ID, f.Details["externalAccountId"])

		// The same number at another bank, for another customer, or for the
		// platform is another account.
		other := input(cust, "USD_ACCOUNT", "123")
		other.Info.RoutingNumber = "011000015"
		e.create(t, other)
		e.create(t, input(e.addCustomer(t, e.platform, false), "USD_ACCOUNT", "123"))
		e.create(t, input("", "USD_ACCOUNT", "123"))
		testkit.RequireFault(t, mustFail(e.svc.Create(ctx, e.platform, input("", "USD_ACCOUNT", "123"))), fault.KindConflict, "CONFLICT")

		// An e-mail PIX key differing only in case is the same key.
		brl := input(cust, "BRL_ACCOUNT", "")
		e.create(t, brl)
		brl.Info.PixKey = "ANA789@example.com"
		testkit.RequireFault(t, mustFail(e.svc.Create(ctx, e.platform, brl)), fault.KindConflict, "CONFLICT")

		// Once deleted, the account can be added again.
		require.NoError(t, e.svc.Delete(ctx, e.platform, first.ID, external.ScopeAll))
		e.create(t, input(cust, "USD_ACCOUNT", "123"))
	})
}

func TestDefaultUmaDepositAccountMoves(t *testing.T) {
	each(t, func(t *testing.T, newEnv func(t *testing.T, opts ...external.Option) *env) {
		e := newEnv(t)
		ctx := context.Background()
		cust := e.addCustomer(t, e.platform, false)
		otherCust := e.addCustomer(t, e.platform, false)

		in := input(cust, "USD_ACCOUNT", "111")
		in.DefaultUmaDepositAccount = true
		a := e.create(t, in)
		in2 := input(cust, "EUR_ACCOUNT", "222")
		in2.DefaultUmaDepositAccount = true
		b := e.create(t, in2)
		in3 := input(otherCust, "USD_ACCOUNT", "333")
		in3.DefaultUmaDepositAccount = true
		c := e.create(t, in3)

		defaults := func(customerID string) []string {
			page, err := e.svc.List(ctx, e.platform, external.Filter{CustomerID: customerID}, ports.Page{Limit: 100})
			require.NoError(t, err)
			var out []string
			for _, x := range page.Accounts {
				if x.DefaultUmaDepositAccount {
					out = append(out, x.ID)
				}
			}
			return out
		}
		assert.Equal(t, []string{b.ID}, defaults(cust), "the newer default replaced the older")
		assert.Equal(t, []string{c.ID}, defaults(otherCust), "other customers keep theirs")
		got, err := e.svc.Get(ctx, e.platform, a.ID, external.ScopeAll)
		require.NoError(t, err)
		assert.False(t, got.DefaultUmaDepositAccount)

		// Deleting the default leaves the customer without one.
		require.NoError(t, e.svc.Delete(ctx, e.platform, b.ID, external.ScopeAll))
		assert.Empty(t, defaults(cust))
	})
}

func TestVerification(t *testing.T) {
	each(t, func(t *testing.T, newEnv func(t *testing.T, opts ...external.Option) *env) {
		outcome := map[string]external.Verification{
			"104": {Status: "PENDING"},
			"103": {Status: "PARTIAL_MATCH", VerifiedName: "A. Maria Silva"},
		}
		refuse := &fault.Error{Kind: fault.KindInvalid, Code: "INVALID_BANK_ACCOUNT", Message: "no such account"}
		e := newEnv(t, external.WithVerifier(verifierFunc(func(info ports.AccountInfo) (external.Verification, error) {
			switch s := external.SandboxSuffix(info); s {
			case "105":
				return external.Verification{}, refuse
			case "999":
				return external.Verification{}, errors.New("provider down")
			default:
				if v, ok := outcome[s]; ok {
					return v, nil
				}
			}
			return external.Verification{Status: "MATCHED", VerifiedName: external.BeneficiaryName(info)}, nil
		})))
		ctx := context.Background()
		cust := e.addCustomer(t, e.platform, false)

		a := e.create(t, input(cust, "USD_ACCOUNT", "104"))
		assert.Equal(t, "PENDING", a.Status)
		assert.Equal(t, "PENDING", a.BeneficiaryVerificationStatus)
		b := e.create(t, input(cust, "USD_ACCOUNT", "103"))
		assert.Equal(t, "ACTIVE", b.Status)
		assert.Equal(t, "A. Maria Silva", b.BeneficiaryVerifiedName)
		m := e.create(t, input(cust, "USD_ACCOUNT", "789"))
		assert.Equal(t, "MATCHED", m.BeneficiaryVerificationStatus)
		assert.Equal(t, "Ana Maria Silva", m.BeneficiaryVerifiedName)

		testkit.RequireFault(t, mustFail(e.svc.Create(ctx, e.platform, input(cust, "USD_ACCOUNT", "105"))), fault.KindInvalid, "INVALID_BANK_ACCOUNT")
		_, err := e.svc.Create(ctx, e.platform, input(cust, "USD_ACCOUNT", "999"))
		require.Error(t, err)
		_, isFault := fault.As(err)
		assert.False(t, isFault, "a provider failure is an internal error")
		assert.ErrorContains(t, err, "provider down")

		// PENDING moves on along the lifecycle.
		act, err := e.svc.SetStatus(ctx, e.platform, a.ID, "ACTIVE")
		require.NoError(t, err)
		assert.Equal(t, "ACTIVE", act.Status)
		e.clock.Advance(time.Millisecond)
		_, err = e.svc.SetStatus(ctx, e.platform, a.ID, "UNDER_REVIEW")
		require.NoError(t, err)
		e.clock.Advance(time.Millisecond)
		_, err = e.svc.SetStatus(ctx, e.platform, a.ID, "INACTIVE")
		require.NoError(t, err)
		testkit.RequireFault(t, mustFail(e.svc.SetStatus(ctx, e.platform, a.ID, "ACTIVE")), fault.KindConflict, "CONFLICT")
		testkit.RequireFault(t, mustFail(e.svc.SetStatus(ctx, e.platform, a.ID, "GONE")), fault.KindInvalid, "INVALID_INPUT")

		// Each move recorded its EXTERNAL_ACCOUNT.STATUS_UPDATED with the
		// account as it then was; the refused ones none.
		evs, _, err := e.store.Read().Events().List(ctx, ports.EventFilter{PlatformID: e.platform, ResourceID: a.ID}, ports.Page{Limit: 10})
		require.NoError(t, err)
		var statuses []string
		for _, ev := range evs {
			assert.Equal(t, external.EventStatusUpdated, ev.Type)
			var snap ports.ExternalAccount
			require.NoError(t, json.Unmarshal(ev.Resource, &snap))
			statuses = append(statuses, snap.Status)
		}
		assert.Equal(t, []string{"ACTIVE", "UNDER_REVIEW", "INACTIVE"}, statuses)
	})
}

func TestListAndPagination(t *testing.T) {
	each(t, func(t *testing.T, newEnv func(t *testing.T, opts ...external.Option) *env) {
		e := newEnv(t)
		ctx := context.Background()
		alice := e.addCustomer(t, e.platform, false)
		bob := e.addCustomer(t, e.platform, false)
		var aliceIDs []string
		for i := range 7 {
			typ := "USD_ACCOUNT"
			if i%2 == 1 {
				typ = "GBP_ACCOUNT"
			}
			aliceIDs = append(aliceIDs, e.create(t, input(alice, typ, "10"+string(rune('0'+i)))).ID)
		}
		e.create(t, input(bob, "USD_ACCOUNT", ""))
		plat := e.create(t, input("", "USD_ACCOUNT", ""))

		var walked []string
		page := ports.Page{Limit: 3}
		for {
			p, err := e.svc.List(ctx, e.platform, external.Filter{CustomerID: alice}, page)
			require.NoError(t, err)
			assert.Equal(t, 7, p.Total)
			for _, a := range p.Accounts {
				walked = append(walked, a.ID)
			}
			if !p.HasMore {
				assert.Nil(t, p.Next)
				break
			}
			page.After = p.Next
		}
		assert.Equal(t, aliceIDs, walked)

		all, err := e.svc.List(ctx, e.platform, external.Filter{}, ports.Page{})
		require.NoError(t, err)
		assert.Equal(t, 8, all.Total, "every customer account, not the platform's")
		gbp, err := e.svc.List(ctx, e.platform, external.Filter{Currency: "GBP"}, ports.Page{})
		require.NoError(t, err)
		assert.Equal(t, 3, gbp.Total)
		own, err := e.svc.List(ctx, e.platform, external.Filter{PlatformOnly: true}, ports.Page{})
		require.NoError(t, err)
		require.Len(t, own.Accounts, 1)
		assert.Equal(t, plat.ID, own.Accounts[0].ID)

		testkit.RequireFault(t, mustFailPage(e.svc.List(ctx, e.platform, external.Filter{}, ports.Page{Limit: 101})), fault.KindInvalid, "INVALID_INPUT")
		testkit.RequireFault(t, mustFailPage(e.svc.List(ctx, e.platform, external.Filter{Currency: "XXX"}, ports.Page{})),
			fault.KindInvalid, "INVALID_INPUT", "currency")
	})
}

func mustFailPage(_ external.Page, err error) error { return err }

func TestDelete(t *testing.T) {
	each(t, func(t *testing.T, newEnv func(t *testing.T, opts ...external.Option) *env) {
		e := newEnv(t)
		ctx := context.Background()
		cust := e.addCustomer(t, e.platform, false)
		a := e.create(t, input(cust, "MXN_ACCOUNT", ""))
		p := e.create(t, input("", "MXN_ACCOUNT", ""))

		testkit.RequireFault(t, e.svc.Delete(ctx, e.platform, a.ID, external.ScopePlatform), fault.KindNotFound, "NOT_FOUND")
		require.NoError(t, e.svc.Delete(ctx, e.platform, a.ID, external.ScopeAll))
		testkit.RequireFault(t, e.svc.Delete(ctx, e.platform, a.ID, external.ScopeAll), fault.KindNotFound, "NOT_FOUND")
		testkit.RequireFault(t, mustFail(e.svc.Get(ctx, e.platform, a.ID, external.ScopeAll)), fault.KindNotFound, "NOT_FOUND")
		require.NoError(t, e.svc.Delete(ctx, e.platform, p.ID, external.ScopePlatform))
		testkit.RequireFault(t, e.svc.Delete(ctx, e.addPlatform(t), p.ID, external.ScopeAll), fault.KindNotFound, "NOT_FOUND")

		page, err := e.svc.List(ctx, e.platform, external.Filter{CustomerID: cust}, ports.Page{})
		require.NoError(t, err)
		assert.Zero(t, page.Total)
	})
}

func TestConcurrentCreates(t *testing.T) {
	each(t, func(t *testing.T, newEnv func(t *testing.T, opts ...external.Option) *env) {
		e := newEnv(t)
		ctx := context.Background()
		cust := e.addCustomer(t, e.platform, false)
		const n = 8

		// Every creation makes itself the default: one default remains.
		errs := make(chan error, n)
		for i := range n {
			go func() {
				in := input(cust, "USD_ACCOUNT", fmt.Sprintf("%03d", 500+i))
				in.DefaultUmaDepositAccount = true
				_, err := e.svc.Create(ctx, e.platform, in)
				errs <- err
			}()
		}
		for range n {
			require.NoError(t, <-errs)
		}
		page, err := e.svc.List(ctx, e.platform, external.Filter{CustomerID: cust}, ports.Page{Limit: 100})
		require.NoError(t, err)
		require.Equal(t, n, page.Total)
		defaults := 0
		for _, a := range page.Accounts {
			if a.DefaultUmaDepositAccount {
				defaults++
			}
		}
		assert.Equal(t, 1, defaults)

		// The same account at once: one is created, the others conflict.
		for range n {
			go func() {
				_, err := e.svc.Create(ctx, e.platform, input(cust, "EUR_ACCOUNT", "600"))
				errs <- err
			}()
		}
		created := 0
		for range n {
			if err := <-errs; err == nil {
				created++
			} else {
				testkit.RequireFault(t, err, fault.KindConflict, "CONFLICT")
			}
		}
		assert.Equal(t, 1, created)
	})
}
