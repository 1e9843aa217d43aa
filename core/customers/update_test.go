package customers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

func TestCustomerUpdatePartial(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	in := individual()
	in.Region = ptr("US")
	in.Individual.FullName = ptr("Ana Silva")
	in.Individual.BirthDate = ptr("1990-01-15")
	in.PhoneNumber = ptr("+14155551234")
	c := e.create(t, in)

	e.clock.Advance(time.Minute)
	got, err := e.svc.Update(ctx, e.platform, c.ID, customers.Input{
		CustomerType: customers.TypeIndividual,
		UmaAddress:   ptr("$ana@sandbox.local"),
		KYCStatus:    ptr("APPROVED"),
		Address:      &ports.Address{Line1: "1 A St", PostalCode: "10001", Country: "US"},
		Individual:   customers.IndividualFields{FullName: ptr("Ana S. Silva"), PepStatus: ptr("NONE")},
	})
	require.NoError(t, err)
	assert.Equal(t, "$ana@sandbox.local", got.UmaAddress)
	assert.Equal(t, "APPROVED", got.KYCStatus)
	assert.Equal(t, "Ana S. Silva", got.Individual.FullName)
	assert.Equal(t, "1990-01-15", got.Individual.BirthDate, "untouched fields stay")
	assert.Equal(t, "NONE", got.Individual.PepStatus)
	assert.Equal(t, "+14155551234", got.PhoneNumber)
	assert.Equal(t, "US", got.Region)
	assert.Equal(t, c.PlatformCustomerID, got.PlatformCustomerID)
	assert.Equal(t, c.CreatedAt, got.CreatedAt)
	assert.Equal(t, t0.Add(time.Minute), got.UpdatedAt, "updatedAt moves")

	stored, err := e.svc.Get(ctx, e.platform, c.ID)
	require.NoError(t, err)
	assert.Equal(t, got, stored)
}

func TestCustomerUpdateBusinessInfoMerges(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	c := e.create(t, business())
	got, err := e.svc.Update(ctx, e.platform, c.ID, customers.Input{
		CustomerType: customers.TypeBusiness,
		KYBStatus:    ptr("HOLD"),
		Business:     &customers.BusinessFields{DoingBusinessAs: ptr("Acme"), NaicsCode: ptr("54")},
	})
	require.NoError(t, err)
	assert.Equal(t, "HOLD", got.KYCStatus)
	assert.Equal(t, "Acme Corporation", got.Business.LegalName)
	assert.Equal(t, "47-1234567", got.Business.TaxID)
	assert.Equal(t, "Acme", got.Business.DoingBusinessAs)
	assert.Equal(t, "54", got.Business.NaicsCode)
}

func TestCustomerUpdateRules(t *testing.T) {
	tests := []struct {
		name   string
		in     customers.Input
		fields []string
	}{
		{"customerType required", customers.Input{Email: ptr("a@b.example")}, []string{"customerType"}},
		{"customerType unknown", customers.Input{CustomerType: "ROBOT"}, []string{"customerType"}},
		{"customerType cannot change", customers.Input{CustomerType: customers.TypeBusiness,
			Business: &customers.BusinessFields{LegalName: ptr("X")}}, []string{"customerType"}},
		{"region immutable", customers.Input{CustomerType: customers.TypeIndividual, Region: ptr("US")}, []string{"region"}},
		{"platformCustomerId immutable", customers.Input{CustomerType: customers.TypeIndividual, PlatformCustomerID: ptr("p")},
			[]string{"platformCustomerId"}},
		{"both immutables and a bad field", customers.Input{CustomerType: customers.TypeIndividual, Region: ptr("MX"),
			PlatformCustomerID: ptr("p"), Email: ptr("nope")}, []string{"region", "platformCustomerId", "email"}},
		{"empty string does not clear", customers.Input{CustomerType: customers.TypeIndividual, Individual: customers.IndividualFields{
			FullName: ptr("")}}, []string{"fullName"}},
		{"mixed jurisdictions", customers.Input{CustomerType: customers.TypeIndividual, Currencies: []string{"GBP", "USD"}},
			[]string{"currencies"}},
		{"businessInfo on an individual", customers.Input{CustomerType: customers.TypeIndividual,
			Business: &customers.BusinessFields{}}, []string{"businessInfo"}},
		{"kybStatus on an individual", customers.Input{CustomerType: customers.TypeIndividual, KYBStatus: ptr("APPROVED")},
			[]string{"kybStatus"}},
		{"bad values", customers.Input{CustomerType: customers.TypeIndividual, PhoneNumber: ptr("555"),
			Individual: customers.IndividualFields{BirthDate: ptr("2030-01-01"), IDType: ptr("X")}},
			[]string{"phoneNumber", "birthDate", "idType"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", customers.Options{})
			in := individual()
			in.Individual.FullName = ptr("Ana")
			c := e.create(t, in)
			e.clock.Advance(time.Second)
			_, err := e.svc.Update(context.Background(), e.platform, c.ID, tt.in)
			requireInvalid(t, err, tt.fields...)
			stored, err := e.svc.Get(context.Background(), e.platform, c.ID)
			require.NoError(t, err)
			assert.Equal(t, c, stored, "a refused update changes nothing")
		})
	}
}

func TestCustomerUpdateBusinessRules(t *testing.T) {
	e := newEnv(t, "", customers.Options{})
	c := e.create(t, business())
	_, err := e.svc.Update(context.Background(), e.platform, c.ID, customers.Input{
		CustomerType: customers.TypeBusiness,
		KYCStatus:    ptr("APPROVED"),
		Individual:   customers.IndividualFields{FullName: ptr("A")},
		Business:     &customers.BusinessFields{LegalName: ptr(""), EntityType: ptr("X"), Country: ptr("xx")},
	})
	requireInvalid(t, err, "kycStatus", "fullName", "businessInfo.legalName", "businessInfo.entityType", "businessInfo.country")
}

func TestCustomerUpdateCurrenciesAddAccounts(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	c := e.create(t, individual()) // USD, USDC
	got, err := e.svc.Update(ctx, e.platform, c.ID, customers.Input{
		CustomerType: customers.TypeIndividual, Currencies: []string{"USD", "BTC", "BTC"},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"USD", "BTC"}, got.Currencies, "the list is replaced, deduplicated")
	var currencies []string
	for _, a := range e.accounts(t, c.ID) {
		currencies = append(currencies, a.Currency)
		_, err := e.ledger.Account(ctx, a.ID)
		require.NoError(t, err, "ledger account of %s", a.ID)
	}
	assert.ElementsMatch(t, []string{"USD", "USDC", "BTC"}, currencies, "BTC opened, USDC kept")

	// Switching fiat jurisdiction wholesale is allowed; old accounts stay.
	_, err = e.svc.Update(ctx, e.platform, c.ID, customers.Input{CustomerType: customers.TypeIndividual, Currencies: []string{"EUR"}})
	require.NoError(t, err)
	assert.Len(t, e.accounts(t, c.ID), 4)
}

func TestCustomerUpdateEmailOpensWalletThenRenamesCredential(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	in := individual()
	in.Currencies = []string{"USDC", "GBP"}
	c := e.create(t, in)
	require.Len(t, e.accounts(t, c.ID), 2)

	_, err := e.svc.Update(ctx, e.platform, c.ID, customers.Input{CustomerType: customers.TypeIndividual, Email: ptr("ana@example.com")})
	require.NoError(t, err)
	wallet := walletOf(t, e, c.ID)
	assert.Equal(t, "GBP", wallet.Currency)
	assert.Equal(t, "ana@example.com", emailCredential(t, e, wallet.ID).Nickname)

	e.clock.Advance(time.Hour)
	got, err := e.svc.Update(ctx, e.platform, c.ID, customers.Input{CustomerType: customers.TypeIndividual, Email: ptr("ana@new.example")})
	require.NoError(t, err)
	assert.Equal(t, "ana@new.example", got.Email)
	m := emailCredential(t, e, wallet.ID)
	assert.Equal(t, "ana@new.example", m.Nickname, "the tied credential follows the e-mail")
	assert.Equal(t, t0.Add(time.Hour), m.UpdatedAt)
	assert.Len(t, e.accounts(t, c.ID), 3, "no second wallet")
}

func walletOf(t *testing.T, e *env, customerID string) ports.InternalAccount {
	t.Helper()
	var wallets []ports.InternalAccount
	for _, a := range e.accounts(t, customerID) {
		if a.Type == "EMBEDDED_WALLET" {
			wallets = append(wallets, a)
		}
	}
	require.Len(t, wallets, 1)
	return wallets[0]
}

func emailCredential(t *testing.T, e *env, accountID string) ports.AuthMethod {
	t.Helper()
	methods, err := e.store.Read().AuthMethods().ListByAccount(context.Background(), e.platform, accountID)
	require.NoError(t, err)
	require.Len(t, methods, 1)
	require.Equal(t, "EMAIL_OTP", methods[0].Type)
	return methods[0]
}

func TestCustomerUpdateUmaConflict(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	a := e.create(t, individual())
	b := e.create(t, individual())
	_, err := e.svc.Update(ctx, e.platform, b.ID, customers.Input{CustomerType: customers.TypeIndividual, UmaAddress: ptr(a.UmaAddress)})
	testkit.RequireFault(t, err, fault.KindConflict, "UMA_ADDRESS_EXISTS")
	// Setting one's own address again is not a conflict.
	_, err = e.svc.Update(ctx, e.platform, a.ID, customers.Input{CustomerType: customers.TypeIndividual, UmaAddress: ptr(a.UmaAddress)})
	require.NoError(t, err)
}

func TestCustomerUpdateMissingOrDeleted(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	c := e.create(t, individual())
	upd := customers.Input{CustomerType: customers.TypeIndividual, KYCStatus: ptr("APPROVED")}

	_, err := e.svc.Update(ctx, e.platform, "Customer:00000000-0000-0000-0000-000000000000", upd)
	testkit.RequireFault(t, err, fault.KindNotFound, "USER_NOT_FOUND")
	other := e.addPlatform(t, "")
	_, err = e.svc.Update(ctx, other, c.ID, upd)
	testkit.RequireFault(t, err, fault.KindNotFound, "USER_NOT_FOUND")

	_, err = e.svc.Delete(ctx, e.platform, c.ID)
	require.NoError(t, err)
	_, err = e.svc.Update(ctx, e.platform, c.ID, upd)
	testkit.RequireFault(t, err, fault.KindGone, "CUSTOMER_DELETED")
}

// watcher records what an update tells it, and can refuse.
type watcher struct {
	seen []ports.Customer
	at   []time.Time
	err  error
}

func (w *watcher) CustomerUpdated(_ context.Context, _ ports.Tx, c ports.Customer, now time.Time) error {
	w.seen, w.at = append(w.seen, c), append(w.at, now)
	return w.err
}

// An update tells the Watcher the customer as updated, in its unit of
// work: a Watcher's error rolls the update back.
func TestCustomerUpdateTellsTheWatcher(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	c := e.create(t, individual())
	w := &watcher{}
	e.svc.SetWatcher(w)

	e.clock.Advance(time.Minute)
	got, err := e.svc.Update(ctx, e.platform, c.ID, customers.Input{CustomerType: customers.TypeIndividual,
		Individual: customers.IndividualFields{FullName: ptr("Zoe Park")}})
	require.NoError(t, err)
	require.Len(t, w.seen, 1)
	assert.Equal(t, got, w.seen[0])
	assert.Equal(t, got.UpdatedAt, w.at[0])

	w.err = fault.Invalid("x", "refused")
	_, err = e.svc.Update(ctx, e.platform, c.ID, customers.Input{CustomerType: customers.TypeIndividual,
		Individual: customers.IndividualFields{FullName: ptr("Zed Park")}})
	require.ErrorIs(t, err, w.err)
	stored, err := e.svc.Get(ctx, e.platform, c.ID)
	require.NoError(t, err)
	assert.Equal(t, "Zoe Park", stored.Individual.FullName, "the refused update rolled back")
}
