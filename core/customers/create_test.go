package customers_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/system"
	umasandbox "github.com/corridorpay/corridor/adapters/uma/sandbox"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

func TestCustomerCreateIndividualDefaults(t *testing.T) {
	e := newEnv(t, "", customers.Options{})
	c := e.create(t, individual())

	assert.Regexp(t, `^Customer:[0-9a-f-]{36}$`, c.ID)
	assert.Equal(t, e.platform, c.PlatformID)
	assert.Equal(t, customers.TypeIndividual, c.CustomerType)
	assert.Regexp(t, `^[0-9a-f]{32}$`, c.PlatformCustomerID)
	assert.Regexp(t, `^\$[0-9a-f]{32}@sandbox\.local$`, c.UmaAddress)
	assert.Equal(t, []string{"USD", "USDC"}, c.Currencies, "no region, no currencies: the defaults")
	assert.Equal(t, customers.StatusUnverified, c.KYCStatus)
	assert.NotNil(t, c.Individual)
	assert.Nil(t, c.Business)
	assert.Equal(t, t0, c.CreatedAt)
	assert.Equal(t, t0, c.UpdatedAt)
	assert.False(t, c.IsDeleted)

	stored, err := e.svc.Get(context.Background(), e.platform, c.ID)
	require.NoError(t, err)
	assert.Equal(t, c, stored)

	accts := e.accounts(t, c.ID)
	require.Len(t, accts, 2, "one account per currency, no wallet without an e-mail")
	byCurrency := map[string]ports.InternalAccount{}
	for _, a := range accts {
		byCurrency[a.Currency] = a
		assert.Equal(t, "ACTIVE", a.Status)
		assert.Equal(t, c.ID, a.CustomerID)
		assert.Equal(t, e.platform, a.PlatformID)
	}
	assert.Equal(t, "INTERNAL_FIAT", byCurrency["USD"].Type)
	assert.Equal(t, "INTERNAL_CRYPTO", byCurrency["USDC"].Type)
	for _, a := range accts {
		book, err := e.ledger.Account(context.Background(), a.ID)
		require.NoError(t, err, "ledger account of %s", a.ID)
		assert.Equal(t, a.Currency, book.Currency)
		assert.Equal(t, ledger.KindInternal, book.Kind)
		assert.Equal(t, ledger.DebitsMustNotExceedCredits, book.Flags)
		assert.Equal(t, e.platform, book.PlatformID)
	}
}

func TestCustomerCreateInfersCurrencies(t *testing.T) {
	tests := []struct {
		name       string
		region     *string
		currencies []string
		want       []string
	}{
		{"region MX", ptr("MX"), nil, []string{"MXN", "USDC"}},
		{"region DE (eurozone)", ptr("DE"), nil, []string{"EUR", "USDC"}},
		{"region without a local currency", ptr("CH"), nil, []string{"USD", "USDC"}},
		{"neither", nil, nil, []string{"USD", "USDC"}},
		{"currencies win over region", ptr("MX"), []string{"BRL"}, []string{"BRL"}},
		{"duplicates dropped, order kept", nil, []string{"USDC", "USD", "USDC", "BTC", "USD"}, []string{"USDC", "USD", "BTC"}},
		{"crypto goes with any fiat", nil, []string{"GBP", "BTC", "USDC"}, []string{"GBP", "BTC", "USDC"}},
		{"crypto only", nil, []string{"BTC"}, []string{"BTC"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", customers.Options{})
			in := individual()
			in.Region, in.Currencies = tt.region, tt.currencies
			c := e.create(t, in)
			assert.Equal(t, tt.want, c.Currencies)
			var got []string
			for _, a := range e.accounts(t, c.ID) {
				got = append(got, a.Currency)
			}
			assert.ElementsMatch(t, tt.want, got, "one account per currency")
		})
	}
}

func TestCustomerCreateWithEmailOpensWallet(t *testing.T) {
	tests := []struct {
		name       string
		currencies []string
		want       string
	}{
		{"first fiat currency", []string{"USDC", "MXN"}, "MXN"},
		{"first currency when none is fiat", []string{"BTC", "USDC"}, "BTC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", customers.Options{})
			in := individual()
			in.Currencies = tt.currencies
			in.Email = ptr("ana@example.com")
			c := e.create(t, in)
			var wallets []ports.InternalAccount
			for _, a := range e.accounts(t, c.ID) {
				if a.Type == "EMBEDDED_WALLET" {
					wallets = append(wallets, a)
				}
			}
			require.Len(t, wallets, 1)
			assert.Equal(t, tt.want, wallets[0].Currency)
			assert.Equal(t, "ACTIVE", wallets[0].Status)
			_, err := e.ledger.Account(context.Background(), wallets[0].ID)
			require.NoError(t, err, "the wallet has a ledger account")
			methods, err := e.store.Read().AuthMethods().ListByAccount(context.Background(), e.platform, wallets[0].ID)
			require.NoError(t, err)
			require.Len(t, methods, 1)
			assert.Equal(t, "EMAIL_OTP", methods[0].Type)
			assert.Equal(t, "ana@example.com", methods[0].Nickname)
			assert.Regexp(t, `^AuthMethod:`, methods[0].ID)
			assert.Len(t, e.accounts(t, c.ID), len(tt.currencies)+1)
		})
	}
}

func TestCustomerCreateUmaDomain(t *testing.T) {
	e := newEnv(t, "pay.acme.test", customers.Options{UmaDomain: "corridor.example"})
	c := e.create(t, individual())
	assert.True(t, strings.HasSuffix(c.UmaAddress, "@pay.acme.test"), "the platform's domain wins: %s", c.UmaAddress)

	e = newEnv(t, "", customers.Options{UmaDomain: "corridor.example"})
	c = e.create(t, individual())
	assert.True(t, strings.HasSuffix(c.UmaAddress, "@corridor.example"), "then the configured one: %s", c.UmaAddress)

	in := individual()
	in.UmaAddress = ptr("$ana.silva_1-x@elsewhere.example")
	c = e.create(t, in)
	assert.Equal(t, "$ana.silva_1-x@elsewhere.example", c.UmaAddress, "a supplied address is kept")
}

func TestCustomerCreateBusiness(t *testing.T) {
	e := newEnv(t, "", customers.Options{})
	in := business()
	in.Region = ptr("US")
	in.KYBStatus = ptr("APPROVED")
	in.Email = ptr("finance@acme.example")
	in.PhoneNumber = ptr("+14155559876")
	in.Address = &ports.Address{Line1: "1 Market St", Line2: "Suite 4", City: "SF", State: "CA", PostalCode: "94105", Country: "US"}
	b := in.Business
	b.DoingBusinessAs = ptr("Acme")
	b.RegistrationNumber = ptr("5523041")
	b.EntityType = ptr("LLC")
	b.CountriesOfOperation = []string{"US", "MX", "US"}
	b.BusinessType = ptr("INFORMATION")
	b.PurposeOfAccount = ptr("CONTRACTOR_PAYOUTS")
	b.SourceOfFunds = ptr("Customer payments")
	b.ExpectedMonthlyTransactionCount = ptr("COUNT_100_TO_500")
	b.ExpectedMonthlyTransactionVolume = ptr("VOLUME_100K_TO_1M")
	b.ExpectedRecipientJurisdictions = []string{"US"}
	b.NaicsCode = ptr("541511")
	b.SourceOfFundsCategories = []string{"OPERATING_REVENUE", "OTHER"}
	b.SourceOfFundsOtherDescription = ptr("Grants")
	b.PurposeOfAccountOtherDescription = ptr("Escrow")
	b.ExpectedCounterpartyCountries = []string{"MX"}
	b.PrimaryContactFirstName = ptr("Jane")
	b.PrimaryContactLastName = ptr("Smith")

	c := e.create(t, in)
	assert.Equal(t, customers.TypeBusiness, c.CustomerType)
	assert.Equal(t, "APPROVED", c.KYCStatus, "kybStatus is stored as the verification status")
	assert.Nil(t, c.Individual)
	require.NotNil(t, c.Business)
	assert.Equal(t, ports.BusinessInfo{
		LegalName: "Acme Corporation", DoingBusinessAs: "Acme", Country: "US", RegistrationNumber: "5523041",
		IncorporatedOn: "2018-03-14", EntityType: "LLC", TaxID: "47-1234567", CountriesOfOperation: []string{"US", "MX"},
		BusinessType: "INFORMATION", PurposeOfAccount: "CONTRACTOR_PAYOUTS", SourceOfFunds: "Customer payments",
		ExpectedMonthlyTransactionCount: "COUNT_100_TO_500", ExpectedMonthlyTransactionVolume: "VOLUME_100K_TO_1M",
		ExpectedRecipientJurisdictions: []string{"US"}, NaicsCode: "541511",
		SourceOfFundsCategories: []string{"OPERATING_REVENUE", "OTHER"}, SourceOfFundsOtherDescription: "Grants",
		PurposeOfAccountOtherDescription: "Escrow", ExpectedCounterpartyCountries: []string{"MX"},
		PrimaryContactFirstName: "Jane", PrimaryContactLastName: "Smith",
	}, *c.Business)
	assert.Equal(t, []string{"USD", "USDC"}, c.Currencies)
	assert.Len(t, e.accounts(t, c.ID), 3, "USD, USDC and the wallet")
}

func TestCustomerCreateIndividualProfile(t *testing.T) {
	e := newEnv(t, "", customers.Options{})
	consent := &ports.EndUserTermsConsent{AcceptedAt: t0.Add(-time.Hour).In(time.FixedZone("X", 3600)),
		IPAddress: "198.51.100.24", TermsVersion: "V1", AcceptanceMethod: "CHECKBOX"}
	in := customers.Input{
		CustomerType:        customers.TypeIndividual,
		PlatformCustomerID:  ptr("ind-001"),
		Region:              ptr("BR"),
		KYCStatus:           ptr("PENDING"),
		PhoneNumber:         ptr("+5511987654321"),
		EndUserTermsConsent: consent,
		Address:             &ports.Address{Line1: "Rua A 1", PostalCode: "01000-000", Country: "BR"},
		Individual: customers.IndividualFields{
			FullName: ptr("Ana Oliveira"), BirthDate: ptr("1992-11-03"), Nationality: ptr("BR"),
			IDType: ptr("SSN"), Identifier: ptr("123-45-6789"), CountryOfIssuance: ptr("US"),
			SourceOfFundsCategories: []string{"SALARY", "OTHER"}, SourceOfFundsOtherDescription: ptr("Prize"),
			SourceOfWealthCategories: []string{"SAVINGS"}, PurposeOfAccount: ptr("P2P_TRANSFERS"),
			ExpectedMonthlyTransactionCount: ptr("COUNT_UNDER_10"), ExpectedMonthlyTransactionVolume: ptr("VOLUME_UNDER_10K"),
			AnnualIncomeRange: ptr("UNDER_50K"), NetWorthRange: ptr("UNDER_100K"), PepStatus: ptr("NONE"),
		},
	}
	c := e.create(t, in)
	assert.Equal(t, "ind-001", c.PlatformCustomerID)
	assert.Equal(t, "BR", c.Region)
	assert.Equal(t, []string{"BRL", "USDC"}, c.Currencies)
	assert.Equal(t, "PENDING", c.KYCStatus)
	require.NotNil(t, c.EndUserTermsConsent)
	assert.Equal(t, time.UTC, c.EndUserTermsConsent.AcceptedAt.Location())
	assert.True(t, consent.AcceptedAt.Equal(c.EndUserTermsConsent.AcceptedAt))
	assert.Equal(t, ports.IndividualInfo{
		FullName: "Ana Oliveira", BirthDate: "1992-11-03", Nationality: "BR", IDType: "SSN", Identifier: "123-45-6789",
		CountryOfIssuance: "US", SourceOfFundsCategories: []string{"SALARY", "OTHER"}, SourceOfFundsOtherDescription: "Prize",
		SourceOfWealthCategories: []string{"SAVINGS"}, PurposeOfAccount: "P2P_TRANSFERS",
		ExpectedMonthlyTransactionCount: "COUNT_UNDER_10", ExpectedMonthlyTransactionVolume: "VOLUME_UNDER_10K",
		AnnualIncomeRange: "UNDER_50K", NetWorthRange: "UNDER_100K", PepStatus: "NONE",
	}, *c.Individual)
}

// TestCreateValidation: every rule, one bad field at a time, and the
// field each error names.
func TestCustomerCreateValidation(t *testing.T) {
	long := strings.Repeat("a", 256)
	tests := []struct {
		name   string
		mutate func(in *customers.Input)
		fields []string
	}{
		{"missing customerType", func(in *customers.Input) { in.CustomerType = "" }, []string{"customerType"}},
		{"unknown customerType", func(in *customers.Input) { in.CustomerType = "ROBOT" }, []string{"customerType"}},
		{"empty platformCustomerId", func(in *customers.Input) { in.PlatformCustomerID = ptr("") }, []string{"platformCustomerId"}},
		{"huge platformCustomerId", func(in *customers.Input) { in.PlatformCustomerID = ptr(long) }, []string{"platformCustomerId"}},
		{"control characters", func(in *customers.Input) { in.PlatformCustomerID = ptr("a\x00b") }, []string{"platformCustomerId"}},
		{"invalid UTF-8", func(in *customers.Input) { in.Individual.FullName = ptr("a\xffb") }, []string{"fullName"}},
		{"blank fullName", func(in *customers.Input) { in.Individual.FullName = ptr("   ") }, []string{"fullName"}},
		{"region not a country", func(in *customers.Input) { in.Region = ptr("XX") }, []string{"region"}},
		{"region lowercase", func(in *customers.Input) { in.Region = ptr("us") }, []string{"region"}},
		{"unknown currency", func(in *customers.Input) { in.Currencies = []string{"USD", "XYZ"} }, []string{"currencies[1]"}},
		{"empty currencies", func(in *customers.Input) { in.Currencies = []string{} }, []string{"currencies"}},
		{"too many currencies", func(in *customers.Input) { in.Currencies = make([]string, 21) }, []string{"currencies"}},
		{"mixed jurisdictions", func(in *customers.Input) { in.Currencies = []string{"USD", "EUR", "USDC"} }, []string{"currencies"}},
		{"bad email", func(in *customers.Input) { in.Email = ptr("not-an-email") }, []string{"email"}},
		{"email with display name", func(in *customers.Input) { in.Email = ptr("Ana <ana@example.com>") }, []string{"email"}},
		{"email without dotted domain", func(in *customers.Input) { in.Email = ptr("ana@localhost") }, []string{"email"}},
		{"huge email", func(in *customers.Input) { in.Email = ptr(long + "@example.com") }, []string{"email"}},
		{"phone without plus", func(in *customers.Input) { in.PhoneNumber = ptr("14155551234") }, []string{"phoneNumber"}},
		{"phone leading zero", func(in *customers.Input) { in.PhoneNumber = ptr("+04155551234") }, []string{"phoneNumber"}},
		{"phone too long", func(in *customers.Input) { in.PhoneNumber = ptr("+1234567890123456") }, []string{"phoneNumber"}},
		{"uma without $", func(in *customers.Input) { in.UmaAddress = ptr("ana@example.com") }, []string{"umaAddress"}},
		{"uma uppercase user", func(in *customers.Input) { in.UmaAddress = ptr("$Ana@example.com") }, []string{"umaAddress"}},
		{"uma user too long", func(in *customers.Input) { in.UmaAddress = ptr("$" + strings.Repeat("a", 65) + "@example.com") }, []string{"umaAddress"}},
		{"uma bad domain", func(in *customers.Input) { in.UmaAddress = ptr("$ana@-bad-.example") }, []string{"umaAddress"}},
		{"uma no domain", func(in *customers.Input) { in.UmaAddress = ptr("$ana@") }, []string{"umaAddress"}},
		{"unknown kycStatus", func(in *customers.Input) { in.KYCStatus = ptr("VERIFIED") }, []string{"kycStatus"}},
		{"kybStatus on individual", func(in *customers.Input) { in.KYBStatus = ptr("APPROVED") }, []string{"kybStatus"}},
		{"businessInfo on individual", func(in *customers.Input) { in.Business = &customers.BusinessFields{} }, []string{"businessInfo"}},
		{"birthDate not a date", func(in *customers.Input) { in.Individual.BirthDate = ptr("15/01/1990") }, []string{"birthDate"}},
		{"birthDate not a real date", func(in *customers.Input) { in.Individual.BirthDate = ptr("1990-02-30") }, []string{"birthDate"}},
		{"birthDate in the future", func(in *customers.Input) { in.Individual.BirthDate = ptr("2026-03-05") }, []string{"birthDate"}},
		{"birthDate with a time", func(in *customers.Input) { in.Individual.BirthDate = ptr("1990-01-15T00:00:00Z") }, []string{"birthDate"}},
		{"nationality", func(in *customers.Input) { in.Individual.Nationality = ptr("USA") }, []string{"nationality"}},
		{"idType", func(in *customers.Input) { in.Individual.IDType = ptr("PASSPORT") }, []string{"idType"}},
		{"SSN identifier format", func(in *customers.Input) {
			in.Individual.IDType, in.Individual.Identifier = ptr("SSN"), ptr("12-345")
		}, []string{"identifier"}},
		{"huge identifier", func(in *customers.Input) { in.Individual.Identifier = ptr(long) }, []string{"identifier"}},
		{"countryOfIssuance", func(in *customers.Input) { in.Individual.CountryOfIssuance = ptr("ZZ") }, []string{"countryOfIssuance"}},
		{"sourceOfFundsCategories item", func(in *customers.Input) {
			in.Individual.SourceOfFundsCategories = []string{"SALARY", "LOTTERY"}
		}, []string{"sourceOfFundsCategories[1]"}},
		{"OTHER needs a description", func(in *customers.Input) {
			in.Individual.SourceOfFundsCategories = []string{"OTHER"}
		}, []string{"sourceOfFundsOtherDescription"}},
		{"wealth OTHER needs a description", func(in *customers.Input) {
			in.Individual.SourceOfWealthCategories = []string{"OTHER"}
		}, []string{"sourceOfWealthOtherDescription"}},
		{"sourceOfWealthCategories item", func(in *customers.Input) {
			in.Individual.SourceOfWealthCategories = []string{"SALARY", "OPERATING_REVENUE"}
		}, []string{"sourceOfWealthCategories[1]"}},
		{"purposeOfAccount", func(in *customers.Input) { in.Individual.PurposeOfAccount = ptr("FUN") }, []string{"purposeOfAccount"}},
		{"purpose OTHER needs a description", func(in *customers.Input) { in.Individual.PurposeOfAccount = ptr("OTHER") },
			[]string{"purposeOfAccountOtherDescription"}},
		{"description too long", func(in *customers.Input) {
			in.Individual.SourceOfFundsOtherDescription = ptr(strings.Repeat("d", 501))
		}, []string{"sourceOfFundsOtherDescription"}},
		{"count enum", func(in *customers.Input) { in.Individual.ExpectedMonthlyTransactionCount = ptr("MANY") },
			[]string{"expectedMonthlyTransactionCount"}},
		{"volume enum", func(in *customers.Input) { in.Individual.ExpectedMonthlyTransactionVolume = ptr("LOTS") },
			[]string{"expectedMonthlyTransactionVolume"}},
		{"income enum", func(in *customers.Input) { in.Individual.AnnualIncomeRange = ptr("RICH") }, []string{"annualIncomeRange"}},
		{"net worth enum", func(in *customers.Input) { in.Individual.NetWorthRange = ptr("RICH") }, []string{"netWorthRange"}},
		{"pep enum", func(in *customers.Input) { in.Individual.PepStatus = ptr("MAYBE") }, []string{"pepStatus"}},
		{"address missing required", func(in *customers.Input) { in.Address = &ports.Address{City: "SF"} },
			[]string{"address.line1", "address.postalCode", "address.country"}},
		{"address bad country", func(in *customers.Input) {
			in.Address = &ports.Address{Line1: "1 A St", PostalCode: "1", Country: "Narnia"}
		}, []string{"address.country"}},
		{"address huge line2", func(in *customers.Input) {
			in.Address = &ports.Address{Line1: "1 A St", Line2: long, PostalCode: "1", Country: "US"}
		}, []string{"address.line2"}},
		{"address huge postalCode", func(in *customers.Input) {
			in.Address = &ports.Address{Line1: "1 A St", PostalCode: strings.Repeat("9", 33), Country: "US"}
		}, []string{"address.postalCode"}},
		{"consent missing everything", func(in *customers.Input) { in.EndUserTermsConsent = &ports.EndUserTermsConsent{} },
			[]string{"endUserTermsConsent.acceptedAt", "endUserTermsConsent.ipAddress", "endUserTermsConsent.termsVersion", "endUserTermsConsent.acceptanceMethod"}},
		{"consent bad values", func(in *customers.Input) {
			in.EndUserTermsConsent = &ports.EndUserTermsConsent{AcceptedAt: t0.Add(time.Hour), IPAddress: "999.1.1.1",
				TermsVersion: "V1", AcceptanceMethod: "NOD"}
		}, []string{"endUserTermsConsent.acceptedAt", "endUserTermsConsent.ipAddress", "endUserTermsConsent.acceptanceMethod"}},
		{"consent ip too long", func(in *customers.Input) {
			in.EndUserTermsConsent = &ports.EndUserTermsConsent{AcceptedAt: t0, IPAddress: strings.Repeat("1", 46),
				TermsVersion: "V1", AcceptanceMethod: "CHECKBOX"}
		}, []string{"endUserTermsConsent.ipAddress"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", customers.Options{})
			in := individual()
			tt.mutate(&in)
			_, err := e.svc.Create(context.Background(), e.platform, in)
			requireInvalid(t, err, tt.fields...)
			rows, total, err := e.store.Read().Customers().List(context.Background(),
				ports.CustomerFilter{PlatformID: e.platform, IncludeDeleted: true}, ports.Page{Limit: 10})
			require.NoError(t, err)
			assert.Zero(t, total, "nothing stored: %v", rows)
		})
	}
}

func TestCustomerCreateBusinessValidation(t *testing.T) {
	long := strings.Repeat("b", 1025)
	tests := []struct {
		name   string
		mutate func(in *customers.Input)
		fields []string
	}{
		{"businessInfo missing", func(in *customers.Input) { in.Business = nil }, []string{"businessInfo"}},
		{"required businessInfo fields", func(in *customers.Input) { in.Business = &customers.BusinessFields{} },
			[]string{"businessInfo.legalName", "businessInfo.country", "businessInfo.taxId", "businessInfo.incorporatedOn"}},
		{"empty legalName", func(in *customers.Input) { in.Business.LegalName = ptr("") }, []string{"businessInfo.legalName"}},
		{"country", func(in *customers.Input) { in.Business.Country = ptr("Germany") }, []string{"businessInfo.country"}},
		{"incorporatedOn format", func(in *customers.Input) { in.Business.IncorporatedOn = ptr("2018-3-14") }, []string{"businessInfo.incorporatedOn"}},
		{"incorporatedOn future", func(in *customers.Input) { in.Business.IncorporatedOn = ptr("2027-01-01") }, []string{"businessInfo.incorporatedOn"}},
		{"entityType", func(in *customers.Input) { in.Business.EntityType = ptr("GMBH") }, []string{"businessInfo.entityType"}},
		{"businessType", func(in *customers.Input) { in.Business.BusinessType = ptr("SPACE") }, []string{"businessInfo.businessType"}},
		{"purposeOfAccount", func(in *customers.Input) { in.Business.PurposeOfAccount = ptr("X") }, []string{"businessInfo.purposeOfAccount"}},
		{"count", func(in *customers.Input) { in.Business.ExpectedMonthlyTransactionCount = ptr("X") },
			[]string{"businessInfo.expectedMonthlyTransactionCount"}},
		{"volume", func(in *customers.Input) { in.Business.ExpectedMonthlyTransactionVolume = ptr("X") },
			[]string{"businessInfo.expectedMonthlyTransactionVolume"}},
		{"naicsCode letters", func(in *customers.Input) { in.Business.NaicsCode = ptr("54A") }, []string{"businessInfo.naicsCode"}},
		{"naicsCode too long", func(in *customers.Input) { in.Business.NaicsCode = ptr("1234567") }, []string{"businessInfo.naicsCode"}},
		{"countriesOfOperation", func(in *customers.Input) { in.Business.CountriesOfOperation = []string{"US", "UK"} },
			[]string{"businessInfo.countriesOfOperation[1]"}},
		{"expectedRecipientJurisdictions", func(in *customers.Input) { in.Business.ExpectedRecipientJurisdictions = []string{"xx"} },
			[]string{"businessInfo.expectedRecipientJurisdictions[0]"}},
		{"expectedCounterpartyCountries", func(in *customers.Input) { in.Business.ExpectedCounterpartyCountries = []string{"EU"} },
			[]string{"businessInfo.expectedCounterpartyCountries[0]"}},
		{"sourceOfFundsCategories", func(in *customers.Input) { in.Business.SourceOfFundsCategories = []string{"SALARY"} },
			[]string{"businessInfo.sourceOfFundsCategories[0]"}},
		{"description too long", func(in *customers.Input) { in.Business.PurposeOfAccountOtherDescription = ptr(long[:501]) },
			[]string{"businessInfo.purposeOfAccountOtherDescription"}},
		{"primary contact too long", func(in *customers.Input) { in.Business.PrimaryContactFirstName = ptr(long[:251]) },
			[]string{"businessInfo.primaryContactFirstName"}},
		{"sourceOfFunds too long", func(in *customers.Input) { in.Business.SourceOfFunds = ptr(long) },
			[]string{"businessInfo.sourceOfFunds"}},
		{"kycStatus on business", func(in *customers.Input) { in.KYCStatus = ptr("APPROVED") }, []string{"kycStatus"}},
		{"unknown kybStatus", func(in *customers.Input) { in.KYBStatus = ptr("DONE") }, []string{"kybStatus"}},
		{"individual fields on business", func(in *customers.Input) {
			in.Individual.FullName, in.Individual.BirthDate, in.Individual.SourceOfWealthCategories = ptr("A"), ptr("1990-01-01"), []string{"SALARY"}
		}, []string{"fullName", "birthDate", "sourceOfWealthCategories"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", customers.Options{})
			in := business()
			tt.mutate(&in)
			_, err := e.svc.Create(context.Background(), e.platform, in)
			requireInvalid(t, err, tt.fields...)
		})
	}
}

func TestCustomerCreateCollectsEveryError(t *testing.T) {
	e := newEnv(t, "", customers.Options{})
	in := customers.Input{
		CustomerType: customers.TypeIndividual,
		Region:       ptr("ZZ"),
		Currencies:   []string{"USD", "NOPE"},
		Email:        ptr("x"),
		PhoneNumber:  ptr("123"),
		UmaAddress:   ptr("bad"),
		Address:      &ports.Address{},
		Individual:   customers.IndividualFields{BirthDate: ptr("2999-01-01"), Nationality: ptr("??"), PepStatus: ptr("?")},
	}
	_, err := e.svc.Create(context.Background(), e.platform, in)
	requireInvalid(t, err, "region", "currencies[1]", "email", "phoneNumber", "umaAddress",
		"address.line1", "address.postalCode", "address.country", "birthDate", "nationality", "pepStatus")
}

func TestCustomerCreateMixedJurisdictionsNamesTheCurrencies(t *testing.T) {
	e := newEnv(t, "", customers.Options{})
	in := individual()
	in.Currencies = []string{"USD", "USDC", "EUR", "MXN"}
	_, err := e.svc.Create(context.Background(), e.platform, in)
	fe := requireInvalid(t, err, "currencies")
	msg := fe.Fields[0].Message
	for _, want := range []string{"separate customers", "USD (US)", "EUR (EU)", "MXN (MX)"} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, "USDC", "crypto does not conflict")
}

func TestCustomerCreateConflicts(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	in := individual()
	in.PlatformCustomerID = ptr("user-1")
	in.UmaAddress = ptr("$ana@sandbox.local")
	first := e.create(t, in)

	dup := individual()
	dup.PlatformCustomerID = ptr("user-1")
	_, err := e.svc.Create(ctx, e.platform, dup)
	fe := testkit.RequireFault(t, err, fault.KindConflict, "CONFLICT")
	assert.Equal(t, "platformCustomerId", fe.Fields[0].Field)

	dup = individual()
	dup.UmaAddress = ptr("$ana@sandbox.local")
	_, err = e.svc.Create(ctx, e.platform, dup)
	fe = testkit.RequireFault(t, err, fault.KindConflict, "UMA_ADDRESS_EXISTS")
	assert.Equal(t, "umaAddress", fe.Fields[0].Field)
	// The domain's case does not make another address: it is stored in
	// lower case.
	dup.UmaAddress = ptr("$ana@SANDBOX.Local")
	_, err = e.svc.Create(ctx, e.platform, dup)
	testkit.RequireFault(t, err, fault.KindConflict, "UMA_ADDRESS_EXISTS")
	mixed := individual()
	mixed.UmaAddress = ptr("$bea@Sandbox.LOCAL")
	assert.Equal(t, "$bea@sandbox.local", e.create(t, mixed).UmaAddress)
	dup.UmaAddress = ptr("$ana@sandbox.local")

	// Another platform has its own namespace.
	other := e.addPlatform(t, "")
	_, err = e.svc.Create(ctx, other, in)
	require.NoError(t, err)

	// Deleting frees the platformCustomerId, not the UMA address.
	_, err = e.svc.Delete(ctx, e.platform, first.ID)
	require.NoError(t, err)
	again := individual()
	again.PlatformCustomerID = ptr("user-1")
	c, err := e.svc.Create(ctx, e.platform, again)
	require.NoError(t, err)
	assert.Equal(t, "user-1", c.PlatformCustomerID)
	_, err = e.svc.Create(ctx, e.platform, dup)
	testkit.RequireFault(t, err, fault.KindConflict, "UMA_ADDRESS_EXISTS")
}

// failingLedgerStore refuses to create ledger accounts, to show that a
// customer and its accounts are created together or not at all.
type failingLedgerStore struct{ ports.Store }

func (s failingLedgerStore) InTx(ctx context.Context, fn func(tx ports.Tx) error) error {
	return s.Store.InTx(ctx, func(tx ports.Tx) error { return fn(failingLedgerTx{tx}) })
}

type failingLedgerTx struct{ ports.Tx }

func (failingLedgerTx) LedgerAccounts() ports.LedgerAccountCreator { return failingCreator{} }

type failingCreator struct{}

var errLedgerDown = errors.New("ledger down")

func (failingCreator) Create(context.Context, ...ledger.Account) error { return errLedgerDown }

func TestCustomerCreateIsAtomic(t *testing.T) {
	e := newEnv(t, "", customers.Options{})
	broken := customers.New(failingLedgerStore{e.store}, e.ledger, e.clock, system.IDs{}, customers.Options{})
	in := individual()
	in.Email = ptr("ana@example.com")
	_, err := broken.Create(context.Background(), e.platform, in)
	require.ErrorIs(t, err, errLedgerDown)

	rows, total, err := e.store.Read().Customers().List(context.Background(),
		ports.CustomerFilter{PlatformID: e.platform, IncludeDeleted: true}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Zero(t, total, "no customer: %v", rows)
	all, _, err := e.store.Read().InternalAccounts().List(context.Background(),
		ports.InternalAccountFilter{PlatformID: e.platform}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, all, "no customer accounts")
}

var uuidHex = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestCustomerGeneratedIdentifiersAreUnique(t *testing.T) {
	e := newEnv(t, "", customers.Options{})
	seen := map[string]bool{}
	for range 20 {
		c := e.create(t, individual())
		require.True(t, uuidHex.MatchString(c.PlatformCustomerID))
		require.False(t, seen[c.PlatformCustomerID] || seen[c.UmaAddress])
		seen[c.PlatformCustomerID], seen[c.UmaAddress] = true, true
	}
}

func TestCustomerCreateTimesAreStoredPrecision(t *testing.T) {
	e := newEnv(t, "", customers.Options{})
	e.clock.Set(t0.Add(1234567 * time.Nanosecond))
	c := e.create(t, individual())
	assert.Equal(t, t0.Add(1234*time.Microsecond), c.CreatedAt, "UTC, to the microsecond")
	stored, err := e.svc.Get(context.Background(), e.platform, c.ID)
	require.NoError(t, err)
	assert.Equal(t, c, stored, "the create response equals a later read")
}

func TestCustomerCreateTextLines(t *testing.T) {
	e := newEnv(t, "", customers.Options{})
	in := business()
	in.Business.SourceOfFunds = ptr("Subscriptions\nand services\t(B2B)")
	c := e.create(t, in)
	assert.Equal(t, "Subscriptions\nand services\t(B2B)", c.Business.SourceOfFunds, "free text may span lines")

	in = business()
	in.Business.LegalName = ptr("Acme\nCorp")
	_, err := e.svc.Create(context.Background(), e.platform, in)
	requireInvalid(t, err, "businessInfo.legalName")
}

// An address the UMA directory answers for (the sandbox receivers) is
// taken: no customer may have it, on creation or by an update, whatever
// its letter case; other addresses at that domain are free.
func TestUmaAddressOfTheDirectoryIsTaken(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{Directory: umasandbox.New("")})
	for _, addr := range []string{"$success.eur@sandbox.local", "$fail.compliance.usd@SANDBOX.local"} {
		in := individual()
		in.UmaAddress = ptr(addr)
		_, err := e.svc.Create(ctx, e.platform, in)
		fe := testkit.RequireFault(t, err, fault.KindConflict, "UMA_ADDRESS_EXISTS")
		assert.Equal(t, "umaAddress", fe.Fields[0].Field)
	}
	c := e.create(t, individual())
	_, err := e.svc.Update(ctx, e.platform, c.ID, customers.Input{CustomerType: customers.TypeIndividual,
		UmaAddress: ptr("$pending.long.usd@sandbox.local")})
	testkit.RequireFault(t, err, fault.KindConflict, "UMA_ADDRESS_EXISTS")

	free := individual()
	free.UmaAddress = ptr("$success.eur.not@sandbox.local")
	assert.Equal(t, "$success.eur.not@sandbox.local", e.create(t, free).UmaAddress)
	_, err = e.svc.Update(ctx, e.platform, c.ID, customers.Input{CustomerType: customers.TypeIndividual,
		UmaAddress: ptr("$success.usd@other.example")})
	require.NoError(t, err, "the directory's names at another domain are free")
}
