package storetest

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// ---- external accounts ----

func externalAccount(platformID, customerID, currency string, created time.Time) ports.ExternalAccount {
	return ports.ExternalAccount{
		ID: newID("ExternalAccount"), PlatformID: platformID, CustomerID: customerID, Currency: currency,
		Status: "ACTIVE", Info: ports.AccountInfo{
			AccountType: "USD_ACCOUNT", AccountNumber: "0000" + uuid.NewString()[:6], RoutingNumber: "021000021",
			BankAccountType: "CHECKING",
		},
		BeneficiaryVerificationStatus: "MATCHED",
		CreatedAt:                     created, UpdatedAt: created,
	}
}

// fullExternalAccount sets every field, the beneficiary and its address.
func fullExternalAccount(platformID, customerID string, created time.Time) ports.ExternalAccount {
	a := externalAccount(platformID, customerID, "EUR", created)
	a.Status = "PENDING"
	a.PlatformAccountID = "pa-" + uuid.NewString()
	a.OwnershipType = "THIRD_PARTY"
	a.BeneficiaryVerificationStatus = "PARTIAL_MATCH"
	a.BeneficiaryVerifiedName = "Ada B. Lovelace"
	a.DefaultUmaDepositAccount = true
	a.UpdatedAt = created.Add(time.Minute)
	a.Info = ports.AccountInfo{
		AccountType: "EUR_ACCOUNT", AccountNumber: "12345678", RoutingNumber: "r", BankAccountType: "SAVINGS",
		BankName: "Bank", IntermediaryBankName: "Inter", IntermediaryRoutingNumber: "ir", FiToFiInformation: "fi",
		IBAN: "DE89370400440532013000", SwiftCode: "COBADEFFXXX", ClabeNumber: "032180000118359719",
		PixKey: "ada@example.com", PixKeyType: "EMAIL", TaxID: "tax", SortCode: "040004", IFSC: "HDFC0000001",
		VPA: "ada@upi", Rail: "SEPA", BankCode: "bc", BranchCode: "br", PhoneNumber: "+15555550100",
		Provider: "prov", Region: "EU", Country: "DE", Address: "0xabc", VaspName: "vasp", Invoice: "lnbc1",
		Bolt12: "lno1", LightningAddress: "ada@ln.example",
		Beneficiary: &ports.Beneficiary{
			BeneficiaryType: "INDIVIDUAL", FullName: "Ada Lovelace", LegalName: "Ada King", RegistrationNumber: "rn",
			TaxID: "t", BirthDate: "1990-12-10", Nationality: "GB", Email: "ada@example.com", PhoneNumber: "+44",
			CountryOfResidence: "GB", DocumentType: "PASSPORT", DocumentNumber: "X1",
			Address: &ports.Address{Line1: "1 Main St", Line2: "Apt 2", City: "London", State: "LDN", PostalCode: "N1", Country: "GB"},
		},
	}
	return a
}

func normExternal(a ports.ExternalAccount) ports.ExternalAccount {
	a.CreatedAt, a.UpdatedAt = norm(a.CreatedAt), norm(a.UpdatedAt)
	return a
}

func externalID(a ports.ExternalAccount) string { return a.ID }
func externalPos(a ports.ExternalAccount) ports.Position {
	return ports.Position{CreatedAt: a.CreatedAt, ID: a.ID}
}

func createExternals(t *testing.T, s ports.Store, as ...ports.ExternalAccount) {
	t.Helper()
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, a := range as {
			if err := tx.ExternalAccounts().Create(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
}

func updateExternal(ctx context.Context, s ports.Store, a ports.ExternalAccount) error {
	return s.InTx(ctx, func(tx ports.Tx) error { return tx.ExternalAccounts().Update(ctx, a) })
}

func testExternalAccounts(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	c := customer(p.ID, at(0))
	createCustomers(t, s, c)
	full := fullExternalAccount(p.ID, c.ID, at(1))
	plain := externalAccount(p.ID, "", "USD", at(2))
	createExternals(t, s, full, plain)

	for _, want := range []ports.ExternalAccount{full, plain} {
		got, err := s.Read().ExternalAccounts().Get(ctx, p.ID, want.ID)
		require.NoError(t, err)
		assert.Equal(t, normExternal(want), got)
		_, err = s.Read().ExternalAccounts().Get(ctx, q.ID, want.ID)
		require.ErrorIs(t, err, ports.ErrNotFound, "another platform's account")
	}
	_, err := s.Read().ExternalAccounts().Get(ctx, p.ID, newID("ExternalAccount"))
	require.ErrorIs(t, err, ports.ErrNotFound)

	// Values are copied in and out.
	got, err := s.Read().ExternalAccounts().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	got.Info.Beneficiary.FullName = "changed"
	got.Info.Beneficiary.Address.City = "changed"
	again, err := s.Read().ExternalAccounts().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	assert.Equal(t, "Ada Lovelace", again.Info.Beneficiary.FullName)
	assert.Equal(t, "London", again.Info.Beneficiary.Address.City)

	// Update replaces; another platform cannot update it.
	upd := full
	upd.Status = "ACTIVE"
	upd.Info.Beneficiary = nil
	upd.Info.BankName = "Other Bank"
	upd.UpdatedAt = at(3)
	require.NoError(t, updateExternal(ctx, s, upd))
	got, err = s.Read().ExternalAccounts().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	assert.Equal(t, normExternal(upd), got)
	stolen := upd
	stolen.PlatformID = q.ID
	require.ErrorIs(t, updateExternal(ctx, s, stolen), ports.ErrNotFound)
	missing := externalAccount(p.ID, "", "USD", at(3))
	require.ErrorIs(t, updateExternal(ctx, s, missing), ports.ErrNotFound)

	dup := externalAccount(q.ID, "", "USD", at(4))
	dup.ID = plain.ID
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.ExternalAccounts().Create(ctx, dup) })
	requireConflict(t, err, "external_accounts_pkey")

	// Writes through Read() fail.
	assert.Error(t, s.Read().ExternalAccounts().Create(ctx, externalAccount(p.ID, "", "USD", at(5))))
	assert.Error(t, s.Read().ExternalAccounts().Update(ctx, upd))
}

func testExternalAccountDeleted(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := customer(p.ID, at(0))
	createCustomers(t, s, c)
	a := externalAccount(p.ID, c.ID, "USD", at(1))
	b := externalAccount(p.ID, c.ID, "USD", at(2))
	a.DefaultUmaDepositAccount = true
	createExternals(t, s, a, b)

	del := a
	del.IsDeleted = true
	del.UpdatedAt = at(3)
	require.NoError(t, updateExternal(ctx, s, del))

	_, err := s.Read().ExternalAccounts().Get(ctx, p.ID, a.ID)
	require.ErrorIs(t, err, ports.ErrNotFound, "a deleted account is gone")
	rows, total, err := s.Read().ExternalAccounts().List(ctx, ports.ExternalAccountFilter{PlatformID: p.ID, CustomerID: c.ID}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	assert.Equal(t, []string{b.ID}, ids(rows, externalID))
	require.ErrorIs(t, updateExternal(ctx, s, del), ports.ErrNotFound, "a deleted account cannot be updated")

	// A deleted default does not count: another account can be the default.
	b.DefaultUmaDepositAccount = true
	require.NoError(t, updateExternal(ctx, s, b))
	got, err := s.Read().ExternalAccounts().Get(ctx, p.ID, b.ID)
	require.NoError(t, err)
	assert.True(t, got.DefaultUmaDepositAccount)

	// Inside a unit of work, a delete is visible at once.
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		d := b
		d.IsDeleted = true
		require.NoError(t, tx.ExternalAccounts().Update(ctx, d))
		_, err := tx.ExternalAccounts().Get(ctx, p.ID, b.ID)
		require.ErrorIs(t, err, ports.ErrNotFound)
		rows, total, err := tx.ExternalAccounts().List(ctx, ports.ExternalAccountFilter{PlatformID: p.ID, CustomerID: c.ID}, ports.Page{Limit: 10})
		require.NoError(t, err)
		assert.Zero(t, total)
		assert.Empty(t, rows)
		return nil
	})
}

func testExternalAccountListFilters(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	c1, c2, cq := customer(p.ID, at(0)), customer(p.ID, at(0)), customer(q.ID, at(0))
	createCustomers(t, s, c1, c2, cq)
	p1 := externalAccount(p.ID, "", "USD", at(1))
	p2 := externalAccount(p.ID, "", "EUR", at(2))
	c1a := externalAccount(p.ID, c1.ID, "USD", at(3))
	c1b := externalAccount(p.ID, c1.ID, "MXN", at(4))
	c2a := externalAccount(p.ID, c2.ID, "USD", at(5))
	c2del := externalAccount(p.ID, c2.ID, "USD", at(6))
	c2del.IsDeleted = true
	pdel := externalAccount(p.ID, "", "USD", at(6))
	pdel.IsDeleted = true
	qa := externalAccount(q.ID, cq.ID, "USD", at(1))
	qp := externalAccount(q.ID, "", "USD", at(1))
	createExternals(t, s, c2a, p1, qa, c1b, c2del, p2, c1a, qp, pdel)

	tests := []struct {
		name string
		f    ports.ExternalAccountFilter
		want []ports.ExternalAccount
	}{
		{"customer accounts", ports.ExternalAccountFilter{PlatformID: p.ID}, []ports.ExternalAccount{c1a, c1b, c2a}},
		{"one customer", ports.ExternalAccountFilter{PlatformID: p.ID, CustomerID: c1.ID}, []ports.ExternalAccount{c1a, c1b}},
		{"customer wins over platformOnly", ports.ExternalAccountFilter{PlatformID: p.ID, CustomerID: c2.ID, PlatformOnly: true}, []ports.ExternalAccount{c2a}},
		{"platform only", ports.ExternalAccountFilter{PlatformID: p.ID, PlatformOnly: true}, []ports.ExternalAccount{p1, p2}},
		{"currency", ports.ExternalAccountFilter{PlatformID: p.ID, Currency: "USD"}, []ports.ExternalAccount{c1a, c2a}},
		{"customer currency", ports.ExternalAccountFilter{PlatformID: p.ID, CustomerID: c1.ID, Currency: "MXN"}, []ports.ExternalAccount{c1b}},
		{"platform currency", ports.ExternalAccountFilter{PlatformID: p.ID, PlatformOnly: true, Currency: "EUR"}, []ports.ExternalAccount{p2}},
		{"no match", ports.ExternalAccountFilter{PlatformID: p.ID, Currency: "BRL"}, nil},
		{"other platform's customer", ports.ExternalAccountFilter{PlatformID: p.ID, CustomerID: cq.ID}, nil},
		{"other platform", ports.ExternalAccountFilter{PlatformID: q.ID}, []ports.ExternalAccount{qa}},
		{"other platform only", ports.ExternalAccountFilter{PlatformID: q.ID, PlatformOnly: true}, []ports.ExternalAccount{qp}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkList(t, ctx, s.Read().ExternalAccounts().List, tc.f, tc.want, externalID, normExternal)
		})
	}
}

func testExternalAccountPagination(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := customer(p.ID, at(0))
	createCustomers(t, s, c)
	var mine, platformOwn []ports.ExternalAccount
	for i := range 19 {
		a := externalAccount(p.ID, c.ID, "USD", at(i/4)) // ties break on id
		if i%6 == 0 {
			a.IsDeleted = true
		} else {
			mine = append(mine, a)
		}
		createExternals(t, s, a)
		b := externalAccount(p.ID, "", "USD", at(i/3))
		platformOwn = append(platformOwn, b)
		createExternals(t, s, b)
	}
	for _, limit := range []int{1, 2, 4, 15, 16, 50} {
		got := walk(t, limit, len(mine), func(page ports.Page) ([]ports.ExternalAccount, int, error) {
			return s.Read().ExternalAccounts().List(ctx, ports.ExternalAccountFilter{PlatformID: p.ID, CustomerID: c.ID}, page)
		}, externalPos)
		assert.Equal(t, sortedIDs(mine, externalPos), got, "limit %d", limit)
		got = walk(t, limit, len(platformOwn), func(page ports.Page) ([]ports.ExternalAccount, int, error) {
			return s.Read().ExternalAccounts().List(ctx, ports.ExternalAccountFilter{PlatformID: p.ID, PlatformOnly: true}, page)
		}, externalPos)
		assert.Equal(t, sortedIDs(platformOwn, externalPos), got, "limit %d", limit)
	}
}

// defaults lists the ids of a customer's live default UMA deposit accounts.
func defaults(t *testing.T, s ports.Store, platformID, customerID string) []string {
	t.Helper()
	f := ports.ExternalAccountFilter{PlatformID: platformID, CustomerID: customerID, PlatformOnly: customerID == ""}
	rows, _, err := s.Read().ExternalAccounts().List(context.Background(), f, ports.Page{})
	require.NoError(t, err)
	var out []string
	for _, r := range rows {
		if r.DefaultUmaDepositAccount {
			out = append(out, r.ID)
		}
	}
	return out
}

func testExternalAccountDefaultUma(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c, d := customer(p.ID, at(0)), customer(p.ID, at(0))
	createCustomers(t, s, c, d)

	a := externalAccount(p.ID, c.ID, "USD", at(1))
	a.DefaultUmaDepositAccount = true
	other := externalAccount(p.ID, d.ID, "USD", at(1))
	other.DefaultUmaDepositAccount = true
	createExternals(t, s, a, other)
	assert.Equal(t, []string{a.ID}, defaults(t, s, p.ID, c.ID))

	// Creating a new default moves it.
	b := externalAccount(p.ID, c.ID, "USD", at(2))
	b.DefaultUmaDepositAccount = true
	createExternals(t, s, b)
	assert.Equal(t, []string{b.ID}, defaults(t, s, p.ID, c.ID))
	got, err := s.Read().ExternalAccounts().Get(ctx, p.ID, a.ID)
	require.NoError(t, err)
	assert.False(t, got.DefaultUmaDepositAccount, "the previous default is cleared")

	// Updating an account to the default moves it back; a unit of work sees
	// exactly one default at every step.
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		a2, err := tx.ExternalAccounts().Get(ctx, p.ID, a.ID)
		require.NoError(t, err)
		a2.DefaultUmaDepositAccount = true
		require.NoError(t, tx.ExternalAccounts().Update(ctx, a2))
		rows, _, err := tx.ExternalAccounts().List(ctx, ports.ExternalAccountFilter{PlatformID: p.ID, CustomerID: c.ID}, ports.Page{})
		require.NoError(t, err)
		n := 0
		for _, r := range rows {
			if r.DefaultUmaDepositAccount {
				n++
				assert.Equal(t, a.ID, r.ID)
			}
		}
		assert.Equal(t, 1, n)
		return nil
	})
	assert.Equal(t, []string{a.ID}, defaults(t, s, p.ID, c.ID))
	assert.Equal(t, []string{other.ID}, defaults(t, s, p.ID, d.ID), "another customer's default is untouched")

	// A rolled back move leaves the previous default.
	err = s.InTx(ctx, func(tx ports.Tx) error {
		b2, err := tx.ExternalAccounts().Get(ctx, p.ID, b.ID)
		if err != nil {
			return err
		}
		b2.DefaultUmaDepositAccount = true
		if err := tx.ExternalAccounts().Update(ctx, b2); err != nil {
			return err
		}
		return errBoom
	})
	require.ErrorIs(t, err, errBoom)
	assert.Equal(t, []string{a.ID}, defaults(t, s, p.ID, c.ID))

	// Updating the default itself (flag still set) keeps it.
	a.DefaultUmaDepositAccount = true
	a.Status = "INACTIVE"
	require.NoError(t, updateExternal(ctx, s, a))
	assert.Equal(t, []string{a.ID}, defaults(t, s, p.ID, c.ID))

	// The platform's own accounts have their own default.
	pa := externalAccount(p.ID, "", "USD", at(3))
	pa.DefaultUmaDepositAccount = true
	createExternals(t, s, pa)
	assert.Equal(t, []string{pa.ID}, defaults(t, s, p.ID, ""))
	assert.Equal(t, []string{a.ID}, defaults(t, s, p.ID, c.ID))
}

// testExternalAccountConcurrentDefault has concurrent units of work each
// make a different account its customer's default: every one succeeds, and
// exactly one default remains after each round.
func testExternalAccountConcurrentDefault(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := customer(p.ID, at(0))
	createCustomers(t, s, c)
	const n = 6
	accts := make([]ports.ExternalAccount, n)
	for i := range accts {
		accts[i] = externalAccount(p.ID, c.ID, "USD", at(i))
	}
	accts[0].DefaultUmaDepositAccount = true
	createExternals(t, s, accts...)

	for round := range 5 {
		var wg sync.WaitGroup
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				errs[i] = s.InTx(ctx, func(tx ports.Tx) error {
					a, err := tx.ExternalAccounts().Get(ctx, p.ID, accts[i].ID)
					if err != nil {
						return err
					}
					a.DefaultUmaDepositAccount = true
					a.UpdatedAt = at(10 + round)
					return tx.ExternalAccounts().Update(ctx, a)
				})
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, account %d", round, i)
		}
		got := defaults(t, s, p.ID, c.ID)
		require.Len(t, got, 1, "round %d: exactly one default", round)
	}

	// Two accounts created concurrently as the default: one remains.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			a := externalAccount(p.ID, c.ID, "USD", at(20))
			a.DefaultUmaDepositAccount = true
			a.PlatformAccountID = strconv.Itoa(i)
			errs[i] = s.InTx(ctx, func(tx ports.Tx) error { return tx.ExternalAccounts().Create(ctx, a) })
		})
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.Len(t, defaults(t, s, p.ID, c.ID), 1)
}
