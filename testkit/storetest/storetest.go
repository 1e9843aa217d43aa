// Package storetest is the contract suite for ports.Store: every repository
// method, the list filters and keyset pagination, platform isolation,
// conflicts, transactions (own writes, commit, rollback, row locks) and
// concurrency. Run it against every Store implementation.
package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// LedgerReader reads ledger accounts back, so the suite can check that the
// ledger accounts a unit of work creates commit and roll back with it.
// ports.LedgerStore satisfies it.
type LedgerReader interface {
	Accounts(ctx context.Context, ids ...string) ([]ledger.Account, error)
}

// NewStore makes a fresh, empty store for one test, and the reader of the
// ledger its units of work create ledger accounts in.
type NewStore func(t *testing.T) (ports.Store, LedgerReader)

// Run runs the contract suite; each subtest gets its own store and runs in
// parallel with the others.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s ports.Store, l LedgerReader)
	}{
		{"Platforms", testPlatforms},
		{"PlatformUpdate", testPlatformUpdate},
		{"Credentials", testCredentials},
		{"CredentialDelete", testCredentialDelete},
		{"CredentialListFilters", testCredentialListFilters},
		{"CredentialPagination", testCredentialPagination},
		{"CredentialLockSerialises", testCredentialLockSerialises},
		{"CustomerRoundTrip", testCustomerRoundTrip},
		{"CustomerCopies", testCustomerCopies},
		{"CustomerPlatformIsolation", testCustomerPlatformIsolation},
		{"CustomerConflicts", testCustomerConflicts},
		{"CustomerUpdate", testCustomerUpdate},
		{"CustomerListFilters", testCustomerListFilters},
		{"CustomerPagination", testCustomerPagination},
		{"InternalAccounts", testInternalAccounts},
		{"InternalAccountListFilters", testInternalAccountListFilters},
		{"InternalAccountPagination", testInternalAccountPagination},
		{"AuthMethods", testAuthMethods},
		{"WalletSessions", testWalletSessions},
		{"WalletSecrets", testWalletSecrets},
		{"ReadOwnWrites", testReadOwnWrites},
		{"Rollback", testRollback},
		{"LedgerAccounts", testLedgerAccounts},
		{"ConflictKeepsTxUsable", testConflictKeepsTxUsable},
		{"ReadIsReadOnly", testReadIsReadOnly},
		{"TxUnusableAfterInTx", testTxUnusableAfterInTx},
		{"ConcurrentSameUmaAddress", testConcurrentSameUma},
		{"GetForUpdateSerialises", testGetForUpdateSerialises},
		{"ExternalAccounts", testExternalAccounts},
		{"ExternalAccountDeleted", testExternalAccountDeleted},
		{"ExternalAccountListFilters", testExternalAccountListFilters},
		{"ExternalAccountPagination", testExternalAccountPagination},
		{"ExternalAccountDefaultUma", testExternalAccountDefaultUma},
		{"ExternalAccountConcurrentDefault", testExternalAccountConcurrentDefault},
		{"Transactions", testTransactions},
		{"TransactionListFilters", testTransactionListFilters},
		{"TransactionPaginationWalk", testTransactionPaginationWalk},
		{"TransactionConcurrentWrites", testTransactionConcurrentWrites},
		{"Lookups", testLookups},
		{"Parties", testParties},
		{"QuoteParties", testQuoteParties},
		{"BeneficialOwners", testBeneficialOwners},
		{"BeneficialOwnerPagination", testBeneficialOwnerPagination},
		{"Verifications", testVerifications},
		{"Documents", testDocuments},
		{"DocumentLarge", testDocumentLarge},
		{"Events", testEvents},
		{"EventOrder", testEventOrder},
		{"EventBacklog", testEventBacklog},
		{"EndDeliveries", testEndDeliveries},
		{"TransactionEvents", testTransactionEvents},
		{"Quotes", testQuotes},
		{"QuoteGetForUpdateSerialises", testQuoteGetForUpdateSerialises},
		{"TransactionDetails", testTransactionDetails},
		{"Invitations", testInvitations},
		{"InvitationConcurrentUpdates", testInvitationConcurrentUpdates},
		{"Agents", testAgents},
		{"AgentDeviceCodeRedeemOnce", testAgentDeviceCodeRedeemOnce},
		{"AgentActions", testAgentActions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, l := newStore(t)
			tc.fn(t, s, l)
		})
	}
}

// t0 has nanoseconds and a non-UTC zone on purpose: stores keep times in
// UTC to the microsecond.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("UTC+2", 2*3600))

func at(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

// norm is how a store gives a time back.
func norm(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func newID(kind string) string { return kind + ":" + uuid.NewString() }

func inTx(t *testing.T, s ports.Store, fn func(ctx context.Context, tx ports.Tx) error) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error { return fn(ctx, tx) }))
}

// concurrentUnits runs workers goroutines of rounds units of work each
// (unit gets the worker and round) and requires every unit to commit.
func concurrentUnits(t *testing.T, s ports.Store, workers, rounds int, unit func(ctx context.Context, tx ports.Tx, w, r int) error) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				errs <- s.InTx(ctx, func(tx ports.Tx) error { return unit(ctx, tx, w, r) })
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func requireConflict(t *testing.T, err error, constraint string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, ports.ErrConflict)
	var ce *ports.ConflictError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, constraint, ce.Constraint)
}

func platform(at time.Time) ports.Platform {
	return ports.Platform{
		ID:         newID("Platform"),
		Name:       "Acme " + uuid.NewString()[:8],
		UmaDomain:  "acme.example",
		Currencies: []string{"USD", "EUR"},
		CreatedAt:  at,
		UpdatedAt:  at,
	}
}

func normPlatform(p ports.Platform) ports.Platform {
	p.CreatedAt, p.UpdatedAt = norm(p.CreatedAt), norm(p.UpdatedAt)
	return p
}

func createPlatform(t *testing.T, s ports.Store, at time.Time) ports.Platform {
	t.Helper()
	p := platform(at)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Platforms().Create(ctx, p) })
	return p
}

// customer is a minimal live INDIVIDUAL customer with a unique UMA address
// and platformCustomerId.
func customer(platformID string, created time.Time) ports.Customer {
	u := uuid.NewString()
	return ports.Customer{
		ID:                 newID("Customer"),
		PlatformID:         platformID,
		PlatformCustomerID: "pc-" + u,
		CustomerType:       "INDIVIDUAL",
		UmaAddress:         "$u" + u[:8] + "@acme.example",
		Region:             "US",
		Currencies:         []string{"USD"},
		KYCStatus:          "APPROVED",
		CreatedAt:          created,
		UpdatedAt:          created,
	}
}

// fullCustomer sets every field.
func fullCustomer(platformID string, created time.Time) ports.Customer {
	c := customer(platformID, created)
	c.Currencies = []string{"USD", "EUR"}
	c.Email = "ada@example.com"
	c.PhoneNumber = "+15555550100"
	c.KYCStatus = "PENDING"
	c.Address = &ports.Address{Line1: "1 Main St", Line2: "Apt 2", City: "Springfield", State: "IL", PostalCode: "62701", Country: "US"}
	c.EndUserTermsConsent = &ports.EndUserTermsConsent{AcceptedAt: created.Add(-time.Minute), IPAddress: "203.0.113.7", TermsVersion: "v3", AcceptanceMethod: "CLICKWRAP"}
	c.Individual = &ports.IndividualInfo{
		FullName: "Ada Lovelace", BirthDate: "1990-12-10", Nationality: "GB", IDType: "PASSPORT",
		Identifier: "X1234567", CountryOfIssuance: "GB",
		SourceOfFundsCategories:  []string{"SALARY", "SAVINGS"},
		SourceOfWealthCategories: []string{"INHERITANCE"},
		PurposeOfAccount:         "PAYMENTS", ExpectedMonthlyTransactionCount: "10-50",
		ExpectedMonthlyTransactionVolume: "1000-5000", AnnualIncomeRange: "50K-100K",
		NetWorthRange: "100K-500K", PepStatus: "NOT_PEP",
		SourceOfFundsOtherDescription: "none", SourceOfWealthOtherDescription: "none",
		PurposeOfAccountOtherDescription: "none",
	}
	return c
}

func fullBusiness(platformID string, created time.Time) ports.Customer {
	c := customer(platformID, created)
	c.CustomerType = "BUSINESS"
	c.Business = &ports.BusinessInfo{
		LegalName: "Acme Widgets Ltd", DoingBusinessAs: "Acme", Country: "GB", RegistrationNumber: "0123456",
		IncorporatedOn: "2001-02-03", EntityType: "LLC", TaxID: "GB123", CountriesOfOperation: []string{"GB", "FR"},
		BusinessType: "RETAIL", PurposeOfAccount: "TREASURY", SourceOfFunds: "REVENUE",
		ExpectedMonthlyTransactionCount: "100+", ExpectedMonthlyTransactionVolume: "1M+",
		ExpectedRecipientJurisdictions: []string{"US"}, NaicsCode: "4541",
		SourceOfFundsCategories: []string{"OPERATIONS"}, SourceOfFundsOtherDescription: "n/a",
		PurposeOfAccountOtherDescription: "n/a", ExpectedCounterpartyCountries: []string{"US", "DE"},
		PrimaryContactFirstName: "Grace", PrimaryContactLastName: "Hopper",
	}
	return c
}

func normCustomer(c ports.Customer) ports.Customer {
	c.CreatedAt, c.UpdatedAt = norm(c.CreatedAt), norm(c.UpdatedAt)
	if c.EndUserTermsConsent != nil {
		e := *c.EndUserTermsConsent
		e.AcceptedAt = norm(e.AcceptedAt)
		c.EndUserTermsConsent = &e
	}
	return c
}

func createCustomers(t *testing.T, s ports.Store, cs ...ports.Customer) {
	t.Helper()
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, c := range cs {
			if err := tx.Customers().Create(ctx, c); err != nil {
				return fmt.Errorf("create %s: %w", c.ID, err)
			}
		}
		return nil
	})
}

func ids[T any](rows []T, id func(T) string) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, id(r))
	}
	return out
}

func customerID(c ports.Customer) string       { return c.ID }
func accountID(a ports.InternalAccount) string { return a.ID }
func authMethodID(m ports.AuthMethod) string   { return m.ID }
func platformIDOf(p ports.Platform) string     { return p.ID }
func customerPos(c ports.Customer) ports.Position {
	return ports.Position{CreatedAt: c.CreatedAt, ID: c.ID}
}
func accountPos(a ports.InternalAccount) ports.Position {
	return ports.Position{CreatedAt: a.CreatedAt, ID: a.ID}
}

// sortedIDs orders rows the way lists do: (CreatedAt, ID) ascending.
func sortedIDs[T any](rows []T, pos func(T) ports.Position) []string {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b T) int {
		pa, pb := pos(a), pos(b)
		if c := norm(pa.CreatedAt).Compare(norm(pb.CreatedAt)); c != 0 {
			return c
		}
		return cmp.Compare(pa.ID, pb.ID)
	})
	return ids(rows, func(r T) string { return pos(r).ID })
}

// walk pages through a list with limit and checks every page: at most
// limit+1 rows, the total constant and right, hasMore exactly when rows
// remain. It returns the ids seen, in order.
func walk[T any](t *testing.T, limit, wantTotal int, list func(ports.Page) ([]T, int, error), pos func(T) ports.Position) []string {
	t.Helper()
	var seen []string
	page := ports.Page{Limit: limit}
	for i := 0; ; i++ {
		require.Less(t, i, 1000, "pagination does not end")
		rows, total, err := list(page)
		require.NoError(t, err)
		require.Equal(t, wantTotal, total, "total on page %d", i)
		require.LessOrEqual(t, len(rows), limit+1, "page %d", i)
		hasMore := len(rows) > limit
		if hasMore {
			rows = rows[:limit]
		}
		for _, r := range rows {
			seen = append(seen, pos(r).ID)
		}
		if !hasMore {
			require.Equal(t, len(seen), wantTotal, "rows seen when the walk ends")
			return seen
		}
		last := pos(rows[len(rows)-1])
		page.After = &last
	}
}

// checkList lists with f (one page of 10) and checks the total and the
// rows' ids in order; with norm, each row in full against norm(want).
func checkList[F, T any](t *testing.T, ctx context.Context, list func(context.Context, F, ports.Page) ([]T, int, error),
	f F, want []T, id func(T) string, norm func(T) T, msgAndArgs ...any) {
	t.Helper()
	rows, total, err := list(ctx, f, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, len(want), total, msgAndArgs...)
	require.Equal(t, ids(want, id), ids(rows, id), msgAndArgs...)
	if norm != nil {
		for i := range rows {
			assert.Equal(t, norm(want[i]), rows[i], msgAndArgs...)
		}
	}
}

// ---- platforms ----

// testPlatformUpdate: Update writes the configuration (not the name or
// creation time), touches no other platform, rolls back with its unit of
// work, and returns copies.
func testPlatformUpdate(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(1))
	other := createPlatform(t, s, at(1))

	want := p
	want.Name = "ignored"
	want.UmaDomain = "pay.acme.example"
	want.Currencies = []string{"USD", "BRL"}
	want.CurrencySettings = []ports.CurrencySetting{
		{Code: "USD", MinAmount: 100, MaxAmount: 1_000_000, EnabledTransactionTypes: []string{"OUTGOING", "INCOMING"},
			RequiredCounterpartyFields: []ports.CounterpartyField{{Name: "FULL_NAME", Mandatory: true}, {Name: "NATIONALITY"}}},
		{Code: "BRL", MaxAmount: 5, EnabledTransactionTypes: []string{}, RequiredCounterpartyFields: []ports.CounterpartyField{}},
	}
	want.WebhookEndpoint = "https://hooks.acme.example/corridor"
	want.EmbeddedWallet = ports.EmbeddedWalletConfig{OTPLength: 8, OTPLifetime: 10 * time.Minute}
	want.CreatedAt = at(5) // not written
	want.UpdatedAt = at(3)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		locked, err := tx.Platforms().GetForUpdate(ctx, p.ID)
		require.NoError(t, err)
		assert.Equal(t, normPlatform(p), locked)
		return tx.Platforms().Update(ctx, want)
	})
	want.Name, want.CreatedAt = p.Name, p.CreatedAt
	got, err := s.Read().Platforms().Get(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, normPlatform(want), got)

	untouched, err := s.Read().Platforms().Get(ctx, other.ID)
	require.NoError(t, err)
	assert.Equal(t, normPlatform(other), untouched)

	// A returned value is a copy.
	got.CurrencySettings[0].RequiredCounterpartyFields[0].Name = "XXX"
	got.CurrencySettings[0].EnabledTransactionTypes[0] = "XXX"
	again, err := s.Read().Platforms().Get(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, normPlatform(want), again)

	// Rolled back with its unit of work.
	boom := errors.New("boom")
	err = s.InTx(ctx, func(tx ports.Tx) error {
		changed := want
		changed.WebhookEndpoint = ""
		changed.EmbeddedWallet = ports.EmbeddedWalletConfig{}
		require.NoError(t, tx.Platforms().Update(ctx, changed))
		return boom
	})
	require.ErrorIs(t, err, boom)
	again, err = s.Read().Platforms().Get(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, normPlatform(want), again)

	missing := platform(at(1))
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Platforms().Update(ctx, missing) })
	require.ErrorIs(t, err, ports.ErrNotFound)
	err = s.InTx(ctx, func(tx ports.Tx) error {
		_, err := tx.Platforms().GetForUpdate(ctx, missing.ID)
		return err
	})
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func testPlatforms(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p2 := createPlatform(t, s, at(2))
	p1 := createPlatform(t, s, at(1))
	p3 := platform(at(2))
	p3.Currencies = nil
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Platforms().Create(ctx, p3) })

	got, err := s.Read().Platforms().Get(ctx, p1.ID)
	require.NoError(t, err)
	assert.Equal(t, normPlatform(p1), got)
	got, err = s.Read().Platforms().Get(ctx, p3.ID)
	require.NoError(t, err)
	assert.Equal(t, normPlatform(p3), got)

	_, err = s.Read().Platforms().Get(ctx, newID("Platform"))
	require.ErrorIs(t, err, ports.ErrNotFound)

	list, err := s.Read().Platforms().List(ctx)
	require.NoError(t, err)
	assert.Equal(t, sortedIDs([]ports.Platform{p1, p2, p3}, func(p ports.Platform) ports.Position {
		return ports.Position{CreatedAt: p.CreatedAt, ID: p.ID}
	}), ids(list, platformIDOf))
	assert.Equal(t, normPlatform(p1), list[0])

	// A returned value is a copy.
	got.Currencies = append(got.Currencies[:0], "XXX")
	again, err := s.Read().Platforms().Get(ctx, p3.ID)
	require.NoError(t, err)
	assert.Equal(t, normPlatform(p3), again)
	got, err = s.Read().Platforms().Get(ctx, p1.ID)
	require.NoError(t, err)
	got.Currencies[0] = "XXX"
	again, err = s.Read().Platforms().Get(ctx, p1.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"USD", "EUR"}, again.Currencies)

	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Platforms().Create(ctx, platformWithID(p1.ID)) })
	requireConflict(t, err, "platforms_pkey")
}

func platformWithID(id string) ports.Platform {
	p := platform(t0)
	p.ID = id
	return p
}

// ---- customers ----

func testCustomerRoundTrip(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	minimal := customer(p.ID, at(1))
	minimal.Currencies = nil
	minimal.KYCStatus = ""
	cases := []ports.Customer{minimal, fullCustomer(p.ID, at(2)), fullBusiness(p.ID, at(3))}
	createCustomers(t, s, cases...)
	for _, c := range cases {
		got, err := s.Read().Customers().Get(ctx, p.ID, c.ID)
		require.NoError(t, err)
		assert.Equal(t, normCustomer(c), got)
		inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
			got, err := tx.Customers().GetForUpdate(ctx, p.ID, c.ID)
			require.NoError(t, err)
			assert.Equal(t, normCustomer(c), got, "GetForUpdate")
			got, err = tx.Customers().Get(ctx, p.ID, c.ID)
			require.NoError(t, err)
			assert.Equal(t, normCustomer(c), got, "Get in tx")
			return nil
		})
	}
	rows, total, err := s.Read().Customers().List(ctx, ports.CustomerFilter{PlatformID: p.ID}, ports.Page{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, 3, total)
	for i := range cases {
		assert.Equal(t, normCustomer(cases[i]), rows[i])
	}

	_, err = s.Read().Customers().Get(ctx, p.ID, newID("Customer"))
	require.ErrorIs(t, err, ports.ErrNotFound)
	err = s.InTx(ctx, func(tx ports.Tx) error {
		_, err := tx.Customers().GetForUpdate(ctx, p.ID, newID("Customer"))
		return err
	})
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func testCustomerCopies(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := fullCustomer(p.ID, at(1))
	want := normCustomer(c)
	want.Currencies = slices.Clone(c.Currencies)
	addr := *c.Address
	want.Address = &addr
	in := *c.Individual
	in.SourceOfFundsCategories = slices.Clone(in.SourceOfFundsCategories)
	want.Individual = &in

	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Customers().Create(ctx, c); err != nil {
			return err
		}
		// Mutating what was handed in, inside and after the unit of work,
		// changes nothing stored.
		c.Currencies[0] = "XXX"
		c.Address.City = "Elsewhere"
		c.Individual.SourceOfFundsCategories[0] = "XXX"
		got, err := tx.Customers().Get(ctx, p.ID, c.ID)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		got.Currencies[0] = "YYY"
		got.Individual.FullName = "Mallory"
		return nil
	})
	c.EndUserTermsConsent.IPAddress = "0.0.0.0"

	got, err := s.Read().Customers().Get(ctx, p.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	got.Address.City = "Mutated"
	got.Currencies[1] = "ZZZ"
	got.Individual.SourceOfWealthCategories[0] = "ZZZ"

	rows, _, err := s.Read().Customers().List(ctx, ports.CustomerFilter{PlatformID: p.ID}, ports.Page{Limit: 5})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, want, rows[0])
	rows[0].Address.Line1 = "Mutated"

	got, err = s.Read().Customers().Get(ctx, p.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func testCustomerPlatformIsolation(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	c := customer(p.ID, at(1))
	d := customer(q.ID, at(1))
	createCustomers(t, s, c, d)

	_, err := s.Read().Customers().Get(ctx, q.ID, c.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	err = s.InTx(ctx, func(tx ports.Tx) error {
		_, err := tx.Customers().GetForUpdate(ctx, q.ID, c.ID)
		return err
	})
	require.ErrorIs(t, err, ports.ErrNotFound)

	// Updating through another platform finds nothing and changes nothing.
	moved := c
	moved.PlatformID = q.ID
	moved.Email = "thief@example.com"
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Customers().Update(ctx, moved) })
	require.ErrorIs(t, err, ports.ErrNotFound)
	got, err := s.Read().Customers().Get(ctx, p.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, normCustomer(c), got)

	rows, total, err := s.Read().Customers().List(ctx, ports.CustomerFilter{PlatformID: q.ID}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	assert.Equal(t, []string{d.ID}, ids(rows, customerID))
}

func testCustomerConflicts(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	a := customer(p.ID, at(1))
	createCustomers(t, s, a)

	create := func(c ports.Customer) error {
		return s.InTx(ctx, func(tx ports.Tx) error { return tx.Customers().Create(ctx, c) })
	}
	update := func(c ports.Customer) error {
		return s.InTx(ctx, func(tx ports.Tx) error { return tx.Customers().Update(ctx, c) })
	}

	sameID := customer(p.ID, at(2))
	sameID.ID = a.ID
	requireConflict(t, create(sameID), "customers_pkey")

	sameUma := customer(p.ID, at(2))
	sameUma.UmaAddress = a.UmaAddress
	requireConflict(t, create(sameUma), ports.UniqueUmaAddress)

	samePCID := customer(p.ID, at(2))
	samePCID.PlatformCustomerID = a.PlatformCustomerID
	requireConflict(t, create(samePCID), ports.UniquePlatformCustomerID)

	// Both rules are per platform.
	other := customer(q.ID, at(2))
	other.UmaAddress, other.PlatformCustomerID = a.UmaAddress, a.PlatformCustomerID
	require.NoError(t, create(other))

	// Deleting a customer frees its platformCustomerId but not its UMA address.
	a.IsDeleted = true
	a.UpdatedAt = at(3)
	require.NoError(t, update(a))
	require.NoError(t, create(samePCID))
	requireConflict(t, create(sameUma), ports.UniqueUmaAddress)

	// A deleted customer may not come back while its id is reused.
	a.IsDeleted = false
	requireConflict(t, update(a), ports.UniquePlatformCustomerID)

	// Updates are held to the rules too.
	b := customer(p.ID, at(4))
	require.NoError(t, create(b))
	b2 := b
	b2.UmaAddress = a.UmaAddress
	requireConflict(t, update(b2), ports.UniqueUmaAddress)
	b2 = b
	b2.PlatformCustomerID = samePCID.PlatformCustomerID
	requireConflict(t, update(b2), ports.UniquePlatformCustomerID)
	// ...and a customer keeping its own values is no conflict with itself.
	b2 = b
	b2.Email = "b@example.com"
	require.NoError(t, update(b2))

	got, err := s.Read().Customers().Get(ctx, p.ID, b.ID)
	require.NoError(t, err)
	assert.Equal(t, normCustomer(b2), got)
	_, err = s.Read().Customers().Get(ctx, p.ID, sameUma.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func testCustomerUpdate(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := customer(p.ID, at(1))
	createCustomers(t, s, c)

	u := fullCustomer(p.ID, at(1))
	u.ID, u.PlatformCustomerID = c.ID, c.PlatformCustomerID
	u.UmaAddress = "$renamed-" + uuid.NewString()[:8] + "@acme.example"
	u.KYCStatus = "REJECTED"
	u.UpdatedAt = at(5)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		got, err := tx.Customers().GetForUpdate(ctx, p.ID, c.ID)
		require.NoError(t, err)
		require.Equal(t, normCustomer(c), got)
		return tx.Customers().Update(ctx, u)
	})
	got, err := s.Read().Customers().Get(ctx, p.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, normCustomer(u), got)

	// Clearing optional parts clears them.
	cleared := u
	cleared.Address, cleared.EndUserTermsConsent, cleared.Individual, cleared.Currencies = nil, nil, nil, nil
	cleared.Email = ""
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Customers().Update(ctx, cleared) })
	got, err = s.Read().Customers().Get(ctx, p.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, normCustomer(cleared), got)

	// The old UMA address is free again; the new one is taken.
	n := customer(p.ID, at(2))
	n.UmaAddress = c.UmaAddress
	createCustomers(t, s, n)

	missing := customer(p.ID, at(1))
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Customers().Update(ctx, missing) })
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func testCustomerListFilters(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))

	a := customer(p.ID, at(0))
	a.PlatformCustomerID = "alpha"
	a.UmaAddress = "$alpha@acme.example"
	a.UpdatedAt = at(10)

	b := customer(p.ID, at(1))
	b.CustomerType = "BUSINESS"
	b.Region = "EU"
	b.Currencies = []string{"EUR", "USD"}

	c := customer(p.ID, at(2))
	c.Region = "EU"
	c.Currencies = []string{"EUR"}
	c.UpdatedAt = at(5)
	c.IsDeleted = true

	d := customer(p.ID, at(3))
	d.Currencies = nil

	e := customer(q.ID, at(1)) // same ids, other platform
	e.PlatformCustomerID = a.PlatformCustomerID
	e.UmaAddress = a.UmaAddress
	createCustomers(t, s, a, b, c, d, e)

	ptr := func(t time.Time) *time.Time { return &t }
	tests := []struct {
		name string
		f    ports.CustomerFilter
		want []ports.Customer
	}{
		{"platform", ports.CustomerFilter{PlatformID: p.ID}, []ports.Customer{a, b, d}},
		{"include deleted", ports.CustomerFilter{PlatformID: p.ID, IncludeDeleted: true}, []ports.Customer{a, b, c, d}},
		{"other platform", ports.CustomerFilter{PlatformID: q.ID}, []ports.Customer{e}},
		{"unknown platform", ports.CustomerFilter{PlatformID: newID("Platform")}, nil},
		{"platformCustomerId", ports.CustomerFilter{PlatformID: p.ID, PlatformCustomerID: "alpha"}, []ports.Customer{a}},
		{"customerType", ports.CustomerFilter{PlatformID: p.ID, CustomerType: "BUSINESS"}, []ports.Customer{b}},
		{"region", ports.CustomerFilter{PlatformID: p.ID, Region: "EU"}, []ports.Customer{b}},
		{"region with deleted", ports.CustomerFilter{PlatformID: p.ID, Region: "EU", IncludeDeleted: true}, []ports.Customer{b, c}},
		{"currency", ports.CustomerFilter{PlatformID: p.ID, Currency: "USD"}, []ports.Customer{a, b}},
		{"currency with deleted", ports.CustomerFilter{PlatformID: p.ID, Currency: "EUR", IncludeDeleted: true}, []ports.Customer{b, c}},
		{"currency none", ports.CustomerFilter{PlatformID: p.ID, Currency: "GBP"}, nil},
		{"umaAddress", ports.CustomerFilter{PlatformID: p.ID, UmaAddress: a.UmaAddress}, []ports.Customer{a}},
		{"createdAfter inclusive", ports.CustomerFilter{PlatformID: p.ID, CreatedAfter: ptr(at(1))}, []ports.Customer{b, d}},
		{"createdBefore inclusive", ports.CustomerFilter{PlatformID: p.ID, CreatedBefore: ptr(at(1))}, []ports.Customer{a, b}},
		{"created window", ports.CustomerFilter{PlatformID: p.ID, CreatedAfter: ptr(at(1)), CreatedBefore: ptr(at(1))}, []ports.Customer{b}},
		{"created in UTC", ports.CustomerFilter{PlatformID: p.ID, CreatedAfter: ptr(at(3).UTC())}, []ports.Customer{d}},
		{"updatedAfter", ports.CustomerFilter{PlatformID: p.ID, UpdatedAfter: ptr(at(4))}, []ports.Customer{a}},
		{"updatedAfter with deleted", ports.CustomerFilter{PlatformID: p.ID, UpdatedAfter: ptr(at(4)), IncludeDeleted: true}, []ports.Customer{a, c}},
		{"updatedBefore inclusive", ports.CustomerFilter{PlatformID: p.ID, UpdatedBefore: ptr(at(3))}, []ports.Customer{b, d}},
		{"updated window", ports.CustomerFilter{PlatformID: p.ID, UpdatedAfter: ptr(at(5)), UpdatedBefore: ptr(at(10)), IncludeDeleted: true}, []ports.Customer{a, c}},
		{"combined", ports.CustomerFilter{PlatformID: p.ID, CustomerType: "INDIVIDUAL", Region: "US", Currency: "USD"}, []ports.Customer{a}},
		{"combined none", ports.CustomerFilter{PlatformID: p.ID, CustomerType: "BUSINESS", Region: "US"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkList(t, ctx, s.Read().Customers().List, tc.f, tc.want, customerID, nil)
			inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
				checkList(t, ctx, tx.Customers().List, tc.f, tc.want, customerID, nil, "in a unit of work")
				return nil
			})
		})
	}
}

func testCustomerPagination(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	var all, live []ports.Customer
	for i := range 23 {
		c := customer(p.ID, at(i/3)) // three customers share each time: ties break on id
		c.IsDeleted = i%5 == 0
		all = append(all, c)
		if !c.IsDeleted {
			live = append(live, c)
		}
	}
	createCustomers(t, s, all...)
	createCustomers(t, s, customer(q.ID, at(1)), customer(q.ID, at(2)))

	list := func(f ports.CustomerFilter) func(ports.Page) ([]ports.Customer, int, error) {
		return func(page ports.Page) ([]ports.Customer, int, error) {
			return s.Read().Customers().List(ctx, f, page)
		}
	}
	for _, limit := range []int{1, 2, 3, 4, 7, 22, 23, 100} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			got := walk(t, limit, len(live), list(ports.CustomerFilter{PlatformID: p.ID}), customerPos)
			assert.Equal(t, sortedIDs(live, customerPos), got)
			got = walk(t, limit, len(all), list(ports.CustomerFilter{PlatformID: p.ID, IncludeDeleted: true}), customerPos)
			assert.Equal(t, sortedIDs(all, customerPos), got)
		})
	}

	// A filtered walk: the total counts the filter, not the page.
	ptr := func(t time.Time) *time.Time { return &t }
	f := ports.CustomerFilter{PlatformID: p.ID, IncludeDeleted: true, CreatedAfter: ptr(at(2)), CreatedBefore: ptr(at(5))}
	var window []ports.Customer
	for _, c := range all {
		if h := c.CreatedAt.Sub(t0); h >= 2*time.Hour && h <= 5*time.Hour {
			window = append(window, c)
		}
	}
	require.Len(t, window, 12)
	assert.Equal(t, sortedIDs(window, customerPos), walk(t, 5, len(window), list(f), customerPos))

	// Limit 0 returns every row.
	rows, total, err := s.Read().Customers().List(ctx, ports.CustomerFilter{PlatformID: p.ID, IncludeDeleted: true}, ports.Page{})
	require.NoError(t, err)
	assert.Equal(t, len(all), total)
	assert.Equal(t, sortedIDs(all, customerPos), ids(rows, customerID))

	// A position past the end gives an empty page and the full total.
	last := customerPos(all[len(all)-1])
	last.CreatedAt = last.CreatedAt.Add(time.Hour)
	rows, total, err = s.Read().Customers().List(ctx, ports.CustomerFilter{PlatformID: p.ID}, ports.Page{Limit: 5, After: &last})
	require.NoError(t, err)
	assert.Empty(t, rows)
	assert.Equal(t, len(live), total)
}

// ---- internal accounts ----

func account(platformID, customerID, typ, currency string, created time.Time) ports.InternalAccount {
	return ports.InternalAccount{
		ID: newID("InternalAccount"), PlatformID: platformID, CustomerID: customerID,
		Type: typ, Status: "ACTIVE", Currency: currency, CreatedAt: created, UpdatedAt: created.Add(time.Second),
	}
}

func normAccount(a ports.InternalAccount) ports.InternalAccount {
	a.CreatedAt, a.UpdatedAt = norm(a.CreatedAt), norm(a.UpdatedAt)
	return a
}

func createAccounts(t *testing.T, s ports.Store, as ...ports.InternalAccount) {
	t.Helper()
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, a := range as {
			if err := tx.InternalAccounts().Create(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
}

func testInternalAccounts(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	c := customer(p.ID, at(0))
	createCustomers(t, s, c)
	a := account(p.ID, c.ID, "EMBEDDED_WALLET", "USDB", at(1))
	a.PrivateEnabled = true
	a.Status = "PENDING"
	b := account(p.ID, "", "INTERNAL_FIAT", "USD", at(2))
	createAccounts(t, s, a, b)

	for _, want := range []ports.InternalAccount{a, b} {
		got, err := s.Read().InternalAccounts().Get(ctx, p.ID, want.ID)
		require.NoError(t, err)
		assert.Equal(t, normAccount(want), got)
		_, err = s.Read().InternalAccounts().Get(ctx, q.ID, want.ID)
		require.ErrorIs(t, err, ports.ErrNotFound, "another platform's account")
	}
	_, err := s.Read().InternalAccounts().Get(ctx, p.ID, newID("InternalAccount"))
	require.ErrorIs(t, err, ports.ErrNotFound)

	dup := account(q.ID, "", "INTERNAL_FIAT", "USD", at(3))
	dup.ID = a.ID
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.InternalAccounts().Create(ctx, dup) })
	requireConflict(t, err, "internal_accounts_pkey")

	// Update stores the status, privacy and time only, and only for its
	// platform.
	closed := a
	closed.Status, closed.PrivateEnabled, closed.UpdatedAt = "CLOSED", false, at(9)
	closed.Currency, closed.Type = "EUR", "INTERNAL_FIAT"
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.InternalAccounts().Update(ctx, closed) })
	got, err := s.Read().InternalAccounts().Get(ctx, p.ID, a.ID)
	require.NoError(t, err)
	want := a
	want.Status, want.PrivateEnabled, want.UpdatedAt = "CLOSED", false, at(9)
	assert.Equal(t, normAccount(want), got)
	foreign := closed
	foreign.PlatformID = q.ID
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.InternalAccounts().Update(ctx, foreign) })
	require.ErrorIs(t, err, ports.ErrNotFound)
	missing := closed
	missing.ID = newID("InternalAccount")
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.InternalAccounts().Update(ctx, missing) })
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func testInternalAccountListFilters(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	c1, c2, cq := customer(p.ID, at(0)), customer(p.ID, at(0)), customer(q.ID, at(0))
	createCustomers(t, s, c1, c2, cq)
	p1 := account(p.ID, "", "INTERNAL_FIAT", "USD", at(1))
	p2 := account(p.ID, "", "INTERNAL_CRYPTO", "BTC", at(2))
	c1a := account(p.ID, c1.ID, "INTERNAL_FIAT", "USD", at(3))
	c1b := account(p.ID, c1.ID, "EMBEDDED_WALLET", "USDB", at(4))
	c2a := account(p.ID, c2.ID, "INTERNAL_FIAT", "USD", at(5))
	qa := account(q.ID, cq.ID, "INTERNAL_FIAT", "USD", at(1))
	qp := account(q.ID, "", "INTERNAL_FIAT", "USD", at(1))
	createAccounts(t, s, c2a, p1, qa, c1b, p2, c1a, qp)

	tests := []struct {
		name string
		f    ports.InternalAccountFilter
		want []ports.InternalAccount
	}{
		{"customer accounts", ports.InternalAccountFilter{PlatformID: p.ID}, []ports.InternalAccount{c1a, c1b, c2a}},
		{"one customer", ports.InternalAccountFilter{PlatformID: p.ID, CustomerID: c1.ID}, []ports.InternalAccount{c1a, c1b}},
		{"customer wins over platformOnly", ports.InternalAccountFilter{PlatformID: p.ID, CustomerID: c1.ID, PlatformOnly: true}, []ports.InternalAccount{c1a, c1b}},
		{"platform only", ports.InternalAccountFilter{PlatformID: p.ID, PlatformOnly: true}, []ports.InternalAccount{p1, p2}},
		{"currency", ports.InternalAccountFilter{PlatformID: p.ID, Currency: "USD"}, []ports.InternalAccount{c1a, c2a}},
		{"platform currency", ports.InternalAccountFilter{PlatformID: p.ID, PlatformOnly: true, Currency: "BTC"}, []ports.InternalAccount{p2}},
		{"type", ports.InternalAccountFilter{PlatformID: p.ID, Type: "EMBEDDED_WALLET"}, []ports.InternalAccount{c1b}},
		{"customer and type", ports.InternalAccountFilter{PlatformID: p.ID, CustomerID: c1.ID, Type: "INTERNAL_FIAT"}, []ports.InternalAccount{c1a}},
		{"other platform's customer", ports.InternalAccountFilter{PlatformID: p.ID, CustomerID: cq.ID}, nil},
		{"other platform", ports.InternalAccountFilter{PlatformID: q.ID}, []ports.InternalAccount{qa}},
		{"other platform only", ports.InternalAccountFilter{PlatformID: q.ID, PlatformOnly: true}, []ports.InternalAccount{qp}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkList(t, ctx, s.Read().InternalAccounts().List, tc.f, tc.want, accountID, normAccount)
		})
	}
}

func testInternalAccountPagination(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := customer(p.ID, at(0))
	createCustomers(t, s, c)
	var mine []ports.InternalAccount
	var others []ports.InternalAccount
	for i := range 17 {
		a := account(p.ID, c.ID, "INTERNAL_FIAT", "USD", at(i/4))
		mine = append(mine, a)
		others = append(others, account(p.ID, "", "INTERNAL_FIAT", "USD", at(i/4)))
	}
	createAccounts(t, s, append(mine, others...)...)
	for _, limit := range []int{1, 3, 4, 16, 17, 50} {
		got := walk(t, limit, len(mine), func(page ports.Page) ([]ports.InternalAccount, int, error) {
			return s.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: p.ID, CustomerID: c.ID}, page)
		}, accountPos)
		assert.Equal(t, sortedIDs(mine, accountPos), got, "limit %d", limit)
		got = walk(t, limit, len(others), func(page ports.Page) ([]ports.InternalAccount, int, error) {
			return s.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: p.ID, PlatformOnly: true}, page)
		}, accountPos)
		assert.Equal(t, sortedIDs(others, accountPos), got, "limit %d", limit)
	}
}

// ---- auth methods ----

func authMethod(platformID, accountID, typ string, created time.Time) ports.AuthMethod {
	m := ports.AuthMethod{
		ID: newID("AuthMethod"), PlatformID: platformID, AccountID: accountID, Type: typ,
		Nickname: typ + " method", CreatedAt: created, UpdatedAt: created,
	}
	switch typ {
	case "PASSKEY":
		m.CredentialID = "cred-" + uuid.NewString()
		m.Passkey = []byte(`{"publicKey":"` + uuid.NewString() + `"}`)
	case "OAUTH":
		m.Issuer, m.Subject, m.Audience = "https://issuer.example", "sub-"+uuid.NewString(), "client-1"
	}
	return m
}

func normAuthMethod(m ports.AuthMethod) ports.AuthMethod {
	m.CreatedAt, m.UpdatedAt = norm(m.CreatedAt), norm(m.UpdatedAt)
	return m
}

func testAuthMethods(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	acct := account(p.ID, "", "EMBEDDED_WALLET", "USDB", at(0))
	acct2 := account(p.ID, "", "EMBEDDED_WALLET", "USDB", at(0))
	createAccounts(t, s, acct, acct2)

	email := authMethod(p.ID, acct.ID, "EMAIL_OTP", at(3))
	pk1 := authMethod(p.ID, acct.ID, "PASSKEY", at(1))
	pk2 := authMethod(p.ID, acct.ID, "PASSKEY", at(2))
	oauth := authMethod(p.ID, acct.ID, "OAUTH", at(2))
	email2 := authMethod(p.ID, acct2.ID, "EMAIL_OTP", at(1))
	create := func(m ports.AuthMethod) error {
		return s.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Create(ctx, m) })
	}
	for _, m := range []ports.AuthMethod{email, pk1, pk2, oauth, email2} {
		require.NoError(t, create(m))
	}

	got, err := s.Read().AuthMethods().Get(ctx, p.ID, pk1.ID)
	require.NoError(t, err)
	assert.Equal(t, normAuthMethod(pk1), got)
	_, err = s.Read().AuthMethods().Get(ctx, q.ID, pk1.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	_, err = s.Read().AuthMethods().Get(ctx, p.ID, newID("AuthMethod"))
	require.ErrorIs(t, err, ports.ErrNotFound)

	list, err := s.Read().AuthMethods().ListByAccount(ctx, p.ID, acct.ID)
	require.NoError(t, err)
	want := []ports.AuthMethod{pk1, pk2, oauth, email}
	assert.Equal(t, sortedIDs(want, func(m ports.AuthMethod) ports.Position {
		return ports.Position{CreatedAt: m.CreatedAt, ID: m.ID}
	}), ids(list, authMethodID))
	list, err = s.Read().AuthMethods().ListByAccount(ctx, q.ID, acct.ID)
	require.NoError(t, err)
	assert.Empty(t, list, "another platform sees none")

	// One EMAIL_OTP per account.
	requireConflict(t, create(authMethod(p.ID, acct.ID, "EMAIL_OTP", at(4))), ports.UniqueEmailOTPPerAccount)
	dup := authMethod(p.ID, acct2.ID, "PASSKEY", at(4))
	dup.ID = pk1.ID
	requireConflict(t, create(dup), "auth_methods_pkey")

	// Update.
	renamed := email
	renamed.Nickname = "new@example.com"
	renamed.UpdatedAt = at(6)
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Update(ctx, renamed) }))
	got, err = s.Read().AuthMethods().Get(ctx, p.ID, email.ID)
	require.NoError(t, err)
	assert.Equal(t, normAuthMethod(renamed), got)

	stolen := renamed
	stolen.PlatformID = q.ID
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Update(ctx, stolen) })
	require.ErrorIs(t, err, ports.ErrNotFound)
	err = s.InTx(ctx, func(tx ports.Tx) error {
		return tx.AuthMethods().Update(ctx, authMethod(p.ID, acct.ID, "PASSKEY", at(1)))
	})
	require.ErrorIs(t, err, ports.ErrNotFound)

	// An update may not make a second EMAIL_OTP.
	toEmail := oauth
	toEmail.Type = "EMAIL_OTP"
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Update(ctx, toEmail) })
	requireConflict(t, err, ports.UniqueEmailOTPPerAccount)

	testAuthMethodIdentities(t, s, acct2.ID, pk1, oauth)
	testAuthMethodRevoke(t, s, p.ID, q.ID, acct.ID, email, pk2)
}

// testAuthMethodIdentities: one live PASSKEY per account and credential
// id, one OAUTH per account and issuer+subject, and a signature counter
// that only moves forward.
func testAuthMethodIdentities(t *testing.T, s ports.Store, otherAccount string, pk, oauth ports.AuthMethod) {
	ctx := context.Background()
	create := func(m ports.AuthMethod) error {
		return s.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Create(ctx, m) })
	}
	twin := authMethod(pk.PlatformID, pk.AccountID, "PASSKEY", at(5))
	twin.CredentialID = pk.CredentialID
	requireConflict(t, create(twin), ports.UniquePasskeyPerAccount)
	twin.AccountID = otherAccount
	require.NoError(t, create(twin), "the same passkey may serve another account")
	same := authMethod(oauth.PlatformID, oauth.AccountID, "OAUTH", at(5))
	same.Subject = oauth.Subject
	requireConflict(t, create(same), ports.UniqueOAuthPerAccount)
	same.Subject += "-other"
	require.NoError(t, create(same), "another identity of the same issuer")

	advance := func(n uint32) error {
		return s.InTx(ctx, func(tx ports.Tx) error {
			return tx.AuthMethods().AdvanceSignCount(ctx, pk.PlatformID, pk.ID, n, at(8))
		})
	}
	require.NoError(t, advance(0), "an authenticator without a counter stays at zero")
	require.NoError(t, advance(5))
	requireConflict(t, advance(5), ports.ConflictSignCount)
	requireConflict(t, advance(3), ports.ConflictSignCount)
	requireConflict(t, advance(0), ports.ConflictSignCount)
	got, err := s.Read().AuthMethods().Get(ctx, pk.PlatformID, pk.ID)
	require.NoError(t, err)
	assert.Equal(t, uint32(5), got.SignCount)
	assert.Equal(t, pk.Passkey, got.Passkey)
	got.SignCount = 1
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Update(ctx, got) }))
	got, err = s.Read().AuthMethods().Get(ctx, pk.PlatformID, pk.ID)
	require.NoError(t, err)
	assert.Equal(t, uint32(5), got.SignCount, "Update never moves the counter")
	err = s.InTx(ctx, func(tx ports.Tx) error {
		return tx.AuthMethods().AdvanceSignCount(ctx, "Platform:other", pk.ID, 9, at(8))
	})
	require.ErrorIs(t, err, ports.ErrNotFound)
}

// testAuthMethodRevoke: a revoked credential is no longer seen, cannot be
// revoked or updated again, and frees its EMAIL_OTP slot.
func testAuthMethodRevoke(t *testing.T, s ports.Store, p, q, acct string, email, pk ports.AuthMethod) {
	ctx := context.Background()
	revoke := func(platformID, id string) error {
		return s.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Revoke(ctx, platformID, id, at(7)) })
	}
	require.ErrorIs(t, revoke(q, pk.ID), ports.ErrNotFound, "another platform cannot revoke it")
	require.NoError(t, revoke(p, pk.ID))
	_, err := s.Read().AuthMethods().Get(ctx, p, pk.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	list, err := s.Read().AuthMethods().ListByAccount(ctx, p, acct)
	require.NoError(t, err)
	assert.NotContains(t, ids(list, authMethodID), pk.ID)
	require.ErrorIs(t, revoke(p, pk.ID), ports.ErrNotFound, "twice")
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Update(ctx, pk) })
	require.ErrorIs(t, err, ports.ErrNotFound, "a revoked credential is not updated")

	require.NoError(t, revoke(p, email.ID))
	again := authMethod(p, acct, "EMAIL_OTP", at(8))
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error { return tx.AuthMethods().Create(ctx, again) }),
		"a new EMAIL_OTP may follow a revoked one")
}

// ---- units of work ----

func testReadOwnWrites(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := customer(p.ID, at(1))
	a := account(p.ID, c.ID, "INTERNAL_FIAT", "USD", at(1))
	m := authMethod(p.ID, a.ID, "EMAIL_OTP", at(1))
	p2 := platform(at(1))
	cred := credential(p2.ID, "rollback", at(1))
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.Platforms().Create(ctx, p2))
		require.NoError(t, tx.Platforms().CreateCredential(ctx, cred))
		require.NoError(t, tx.Customers().Create(ctx, c))
		require.NoError(t, tx.InternalAccounts().Create(ctx, a))
		require.NoError(t, tx.AuthMethods().Create(ctx, m))

		// The unit sees its writes...
		_, err := tx.Platforms().Get(ctx, p2.ID)
		require.NoError(t, err)
		ps, err := tx.Platforms().List(ctx)
		require.NoError(t, err)
		assert.Len(t, ps, 2)
		_, err = tx.Platforms().CredentialByClientID(ctx, cred.ClientID)
		require.NoError(t, err)
		got, err := tx.Customers().Get(ctx, p.ID, c.ID)
		require.NoError(t, err)
		assert.Equal(t, normCustomer(c), got)
		cs, total, err := tx.Customers().List(ctx, ports.CustomerFilter{PlatformID: p.ID}, ports.Page{Limit: 5})
		require.NoError(t, err)
		assert.Equal(t, 1, total)
		assert.Equal(t, []string{c.ID}, ids(cs, customerID))
		_, err = tx.InternalAccounts().Get(ctx, p.ID, a.ID)
		require.NoError(t, err)
		as, total, err := tx.InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: p.ID, CustomerID: c.ID}, ports.Page{Limit: 5})
		require.NoError(t, err)
		assert.Equal(t, 1, total)
		assert.Equal(t, []string{a.ID}, ids(as, accountID))
		ms, err := tx.AuthMethods().ListByAccount(ctx, p.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{m.ID}, ids(ms, authMethodID))

		// ...and updates of them.
		c2 := c
		c2.Email = "in-tx@example.com"
		require.NoError(t, tx.Customers().Update(ctx, c2))
		got, err = tx.Customers().GetForUpdate(ctx, p.ID, c.ID)
		require.NoError(t, err)
		assert.Equal(t, "in-tx@example.com", got.Email)

		// Nobody else does before commit.
		_, err = s.Read().Customers().Get(ctx, p.ID, c.ID)
		require.ErrorIs(t, err, ports.ErrNotFound)
		_, err = s.Read().Platforms().Get(ctx, p2.ID)
		require.ErrorIs(t, err, ports.ErrNotFound)
		return nil
	})
	got, err := s.Read().Customers().Get(ctx, p.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, "in-tx@example.com", got.Email)
	_, err = s.Read().AuthMethods().Get(ctx, p.ID, m.ID)
	require.NoError(t, err)
	_, err = s.Read().Platforms().CredentialByClientID(ctx, cred.ClientID)
	require.NoError(t, err)
}

func testRollback(t *testing.T, s ports.Store, l LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	kept := customer(p.ID, at(0))
	createCustomers(t, s, kept)

	p2 := platform(at(1))
	cred := credential(p2.ID, "rollback", at(1))
	c := customer(p.ID, at(1))
	a := account(p.ID, c.ID, "INTERNAL_FIAT", "USD", at(1))
	m := authMethod(p.ID, a.ID, "EMAIL_OTP", at(1))
	la := ledger.Account{ID: a.ID, Currency: "USD", Kind: ledger.KindInternal, PlatformID: p.ID, Flags: ledger.DebitsMustNotExceedCredits, CreatedAt: at(1)}
	boom := errors.New("boom")
	err := s.InTx(ctx, func(tx ports.Tx) error {
		require.NoError(t, tx.Platforms().Create(ctx, p2))
		require.NoError(t, tx.Platforms().CreateCredential(ctx, cred))
		require.NoError(t, tx.Customers().Create(ctx, c))
		updated := kept
		updated.Email = "rolled-back@example.com"
		require.NoError(t, tx.Customers().Update(ctx, updated))
		require.NoError(t, tx.InternalAccounts().Create(ctx, a))
		require.NoError(t, tx.AuthMethods().Create(ctx, m))
		require.NoError(t, tx.LedgerAccounts().Create(ctx, la))
		return fmt.Errorf("use case failed: %w", boom)
	})
	require.ErrorIs(t, err, boom, "InTx returns fn's error")

	_, err = s.Read().Platforms().Get(ctx, p2.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	_, err = s.Read().Platforms().CredentialByClientID(ctx, cred.ClientID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	_, err = s.Read().Customers().Get(ctx, p.ID, c.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	got, err := s.Read().Customers().Get(ctx, p.ID, kept.ID)
	require.NoError(t, err)
	assert.Equal(t, normCustomer(kept), got, "an update rolls back")
	_, err = s.Read().InternalAccounts().Get(ctx, p.ID, a.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	_, err = s.Read().AuthMethods().Get(ctx, p.ID, m.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	las, err := l.Accounts(ctx, la.ID)
	require.NoError(t, err)
	assert.Empty(t, las, "ledger accounts roll back with the unit of work")

	// A panic rolls back too, and the store stays usable.
	func() {
		defer func() { require.NotNil(t, recover()) }()
		_ = s.InTx(ctx, func(tx ports.Tx) error {
			require.NoError(t, tx.Customers().Create(ctx, c))
			panic("use case panicked")
		})
	}()
	_, err = s.Read().Customers().Get(ctx, p.ID, c.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	createCustomers(t, s, c)
}

func testLedgerAccounts(t *testing.T, s ports.Store, l LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := customer(p.ID, at(1))
	usd := account(p.ID, c.ID, "INTERNAL_FIAT", "USD", at(1))
	eur := account(p.ID, c.ID, "INTERNAL_FIAT", "EUR", at(1))
	lUSD := ledger.Account{ID: usd.ID, Currency: "USD", Kind: ledger.KindInternal, PlatformID: p.ID, Flags: ledger.DebitsMustNotExceedCredits, CreatedAt: at(1)}
	lEUR := ledger.Account{ID: eur.ID, Currency: "EUR", Kind: ledger.KindInternal, PlatformID: p.ID, Flags: ledger.DebitsMustNotExceedCredits, CreatedAt: at(1)}
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.Customers().Create(ctx, c))
		require.NoError(t, tx.InternalAccounts().Create(ctx, usd))
		require.NoError(t, tx.InternalAccounts().Create(ctx, eur))
		return tx.LedgerAccounts().Create(ctx, lUSD, lEUR)
	})
	got, err := l.Accounts(ctx, lUSD.ID, lEUR.ID)
	require.NoError(t, err)
	require.Len(t, got, 2)
	for i, want := range []ledger.Account{lUSD, lEUR} {
		assert.Equal(t, want.ID, got[i].ID)
		assert.Equal(t, want.Currency, got[i].Currency)
		assert.Equal(t, want.Kind, got[i].Kind)
		assert.Equal(t, want.PlatformID, got[i].PlatformID)
		assert.Equal(t, want.Flags, got[i].Flags)
		assert.Zero(t, got[i].CreditsPosted+got[i].DebitsPosted+got[i].CreditsPending+got[i].DebitsPending)
	}

	// Creating an existing account again is a no-op.
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.LedgerAccounts().Create(ctx, lUSD) })
	got, err = l.Accounts(ctx, lUSD.ID)
	require.NoError(t, err)
	require.Len(t, got, 1)

	// One that exists with other fields fails the unit of work (at Create or
	// at commit), and nothing of the unit is written.
	other := customer(p.ID, at(2))
	clash := lUSD
	clash.Currency = "GBP"
	err = s.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Customers().Create(ctx, other); err != nil {
			return err
		}
		return tx.LedgerAccounts().Create(ctx, clash)
	})
	require.ErrorIs(t, err, ledger.ErrExistsDifferent)
	_, err = s.Read().Customers().Get(ctx, p.ID, other.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	got, err = l.Accounts(ctx, lUSD.ID)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "USD", got[0].Currency)
}

func testConflictKeepsTxUsable(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	a := customer(p.ID, at(1))
	b := customer(p.ID, at(2))
	b.UmaAddress = a.UmaAddress
	c := customer(p.ID, at(3))
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.Customers().Create(ctx, a))
		requireConflict(t, tx.Customers().Create(ctx, b), ports.UniqueUmaAddress)
		a2 := a
		a2.PlatformCustomerID = "x"
		require.NoError(t, tx.Customers().Update(ctx, a2))
		c2 := c
		c2.PlatformCustomerID = "x"
		requireConflict(t, tx.Customers().Create(ctx, c2), ports.UniquePlatformCustomerID)
		return tx.Customers().Create(ctx, c)
	})
	rows, total, err := s.Read().Customers().List(ctx, ports.CustomerFilter{PlatformID: p.ID}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	assert.Equal(t, []string{a.ID, c.ID}, ids(rows, customerID))
	assert.Equal(t, "x", rows[0].PlatformCustomerID)
}

func testReadIsReadOnly(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := customer(p.ID, at(1))
	createCustomers(t, s, c)
	r := s.Read()
	assert.Error(t, r.Platforms().Create(ctx, platform(at(1))))
	assert.Error(t, r.Platforms().CreateCredential(ctx, credential(p.ID, "read", at(1))))
	assert.Error(t, r.Customers().Create(ctx, customer(p.ID, at(1))))
	c2 := c
	c2.Email = "nope@example.com"
	assert.Error(t, r.Customers().Update(ctx, c2))
	assert.Error(t, r.InternalAccounts().Create(ctx, account(p.ID, "", "INTERNAL_FIAT", "USD", at(1))))
	assert.Error(t, r.AuthMethods().Create(ctx, authMethod(p.ID, "InternalAccount:x", "PASSKEY", at(1))))
	assert.Error(t, r.LedgerAccounts().Create(ctx, ledger.Account{ID: "InternalAccount:x", Currency: "USD", Kind: ledger.KindInternal}))

	got, err := r.Customers().Get(ctx, p.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, normCustomer(c), got)
	rows, total, err := r.Customers().List(ctx, ports.CustomerFilter{PlatformID: p.ID}, ports.Page{Limit: 5})
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	assert.Len(t, rows, 1)
	ps, err := r.Platforms().List(ctx)
	require.NoError(t, err)
	assert.Len(t, ps, 1)
}

func testTxUnusableAfterInTx(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	var leaked ports.Tx
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		leaked = tx
		return nil
	})
	c := customer(p.ID, at(1))
	require.Error(t, leaked.Customers().Create(ctx, c))
	_, err := s.Read().Customers().Get(ctx, p.ID, c.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
}

// ---- concurrency ----

func testConcurrentSameUma(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	const n = 8
	uma := "$race-" + uuid.NewString()[:8] + "@acme.example"
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			c := customer(p.ID, at(1))
			c.UmaAddress = uma
			<-start
			errs[i] = s.InTx(ctx, func(tx ports.Tx) error {
				if err := tx.Customers().Create(ctx, c); err != nil {
					return err
				}
				return tx.InternalAccounts().Create(ctx, account(p.ID, c.ID, "INTERNAL_FIAT", "USD", at(1)))
			})
		})
	}
	close(start)
	wg.Wait()
	winners := 0
	for _, err := range errs {
		if err == nil {
			winners++
			continue
		}
		requireConflict(t, err, ports.UniqueUmaAddress)
	}
	assert.Equal(t, 1, winners)
	rows, total, err := s.Read().Customers().List(ctx, ports.CustomerFilter{PlatformID: p.ID, UmaAddress: uma}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	require.Len(t, rows, 1)
	accts, total, err := s.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: p.ID}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, total, "only the winner's account exists")
	require.Len(t, accts, 1)
	assert.Equal(t, rows[0].ID, accts[0].CustomerID)
}

// testGetForUpdateSerialises has concurrent units of work read a counter
// with GetForUpdate and write it back incremented: the row lock must make
// every increment count.
func testGetForUpdateSerialises(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := customer(p.ID, at(1))
	c.PhoneNumber = "0"
	createCustomers(t, s, c)
	const workers, rounds = 6, 5
	concurrentUnits(t, s, workers, rounds, func(ctx context.Context, tx ports.Tx, _, _ int) error {
		got, err := tx.Customers().GetForUpdate(ctx, p.ID, c.ID)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(got.PhoneNumber)
		if err != nil {
			return err
		}
		got.PhoneNumber = strconv.Itoa(n + 1)
		return tx.Customers().Update(ctx, got)
	})
	got, err := s.Read().Customers().Get(ctx, p.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(workers*rounds), got.PhoneNumber)
}
