package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----
//
// Request bodies are strict: a property that is not documented here is a
// 400 naming it. Huma checks types, enums, formats and lengths; the core
// then checks what a schema cannot (real dates not in the future, country
// and currency codes, jurisdictions, uniqueness) and names every bad field.

// Address is a postal address.
type Address struct {
	Line1      string `json:"line1" minLength:"1" maxLength:"255" doc:"Street address line 1" example:"1 Market Street"`
	Line2      string `json:"line2,omitempty" minLength:"1" maxLength:"255" doc:"Street address line 2"`
	City       string `json:"city,omitempty" minLength:"1" maxLength:"255" doc:"City"`
	State      string `json:"state,omitempty" minLength:"1" maxLength:"255" doc:"State, province or region"`
	PostalCode string `json:"postalCode" minLength:"1" maxLength:"32" doc:"Postal or ZIP code" example:"94105"`
	Country    string `json:"country" minLength:"2" maxLength:"2" doc:"Country code (ISO 3166-1 alpha-2)" example:"US"`
}

// EndUserTermsConsent records the customer's acceptance of the end-user terms.
type EndUserTermsConsent struct {
	AcceptedAt       time.Time `json:"acceptedAt" doc:"When the customer accepted the terms"`
	IPAddress        string    `json:"ipAddress" minLength:"1" maxLength:"45" doc:"IP address the customer accepted from" example:"198.51.100.24"`
	TermsVersion     string    `json:"termsVersion" minLength:"1" maxLength:"255" doc:"Version of the accepted terms" example:"V1"`
	AcceptanceMethod string    `json:"acceptanceMethod" enum:"CHECKBOX,CLICK_TO_ACCEPT" doc:"How the customer accepted"`
}

// CustomerFields are the writable fields shared by create and update.
type CustomerFields struct {
	Currencies          []string             `json:"currencies,omitempty" maxItems:"20" doc:"Currency codes the customer uses (ISO 4217 for fiat, tickers for crypto such as USDC). Fiat currencies of different jurisdictions need separate customers. One internal account is opened per currency." example:"[\"USD\",\"USDC\"]"`
	Email               *string              `json:"email,omitempty" format:"email" maxLength:"254" doc:"E-mail address. A customer with an e-mail gets an embedded wallet whose EMAIL_OTP credential is tied to it." example:"ana@example.com"`
	PhoneNumber         *string              `json:"phoneNumber,omitempty" pattern:"^\\+[1-9]\\d{1,14}$" patternDescription:"E.164 phone number" doc:"Phone number in strict E.164 format" example:"+14155551234"`
	UmaAddress          *string              `json:"umaAddress,omitempty" maxLength:"255" doc:"UMA address ($user@domain, user part 1-64 lowercase letters, digits, '.', '_' or '-') that routes payments to the customer; generated when omitted on create" example:"$ana@sandbox.local"`
	KycStatus           *string              `json:"kycStatus,omitempty" enum:"UNVERIFIED,PENDING,APPROVED,REJECTED,HOLD" doc:"KYC status (INDIVIDUAL customers); UNVERIFIED when omitted on create"`
	KybStatus           *string              `json:"kybStatus,omitempty" enum:"UNVERIFIED,PENDING,APPROVED,REJECTED,HOLD" doc:"KYB status (BUSINESS customers); UNVERIFIED when omitted on create"`
	Address             *Address             `json:"address,omitempty" doc:"Postal address; replaces the whole stored address on update"`
	EndUserTermsConsent *EndUserTermsConsent `json:"endUserTermsConsent,omitempty" doc:"Evidence that the customer accepted the end-user terms"`

	FullName          *string `json:"fullName,omitempty" maxLength:"255" doc:"Full name. INDIVIDUAL customers only." example:"Ana Silva"`
	BirthDate         *string `json:"birthDate,omitempty" format:"date" doc:"Date of birth (YYYY-MM-DD), not in the future. INDIVIDUAL customers only." example:"1990-01-15"`
	Nationality       *string `json:"nationality,omitempty" maxLength:"2" doc:"Country code (ISO 3166-1 alpha-2). INDIVIDUAL customers only." example:"US"`
	IDType            *string `json:"idType,omitempty" enum:"SSN,ITIN,EIN,NON_US_TAX_ID" doc:"Type of tax identification. INDIVIDUAL customers only."`
	Identifier        *string `json:"identifier,omitempty" maxLength:"64" writeOnly:"true" doc:"Identification number (SSN and ITIN as ###-##-####). Write-only: never returned. INDIVIDUAL customers only."`
	CountryOfIssuance *string `json:"countryOfIssuance,omitempty" maxLength:"2" doc:"Country that issued the identification (ISO 3166-1 alpha-2). INDIVIDUAL customers only."`

	SourceOfFundsCategories          []string `json:"sourceOfFundsCategories,omitempty" maxItems:"20" enum:"SALARY,SELF_EMPLOYMENT_INCOME,INVESTMENT_INCOME,PENSION,RENTAL_INCOME,GIFT,INHERITANCE,LOAN,SAVINGS,SALE_OF_ASSETS,OTHER" doc:"Where the account's funds come from. INDIVIDUAL customers only."`
	SourceOfFundsOtherDescription    *string  `json:"sourceOfFundsOtherDescription,omitempty" minLength:"1" maxLength:"500" doc:"Required when sourceOfFundsCategories includes OTHER. INDIVIDUAL customers only."`
	SourceOfWealthCategories         []string `json:"sourceOfWealthCategories,omitempty" maxItems:"20" enum:"SALARY,BUSINESS_INCOME,INVESTMENTS,INHERITANCE,PROPERTY_SALE,GIFT,RETIREMENT,SAVINGS,OTHER" doc:"Origin of the customer's accumulated wealth. INDIVIDUAL customers only."`
	SourceOfWealthOtherDescription   *string  `json:"sourceOfWealthOtherDescription,omitempty" minLength:"1" maxLength:"500" doc:"Required when sourceOfWealthCategories includes OTHER. INDIVIDUAL customers only."`
	PurposeOfAccount                 *string  `json:"purposeOfAccount,omitempty" enum:"CONTRACTOR_PAYOUTS,CREATOR_PAYOUTS,EMPLOYEE_PAYOUTS,MARKETPLACE_SELLER_PAYOUTS,SUPPLIER_PAYMENTS,CROSS_BORDER_B2B,AR_AUTOMATION,AP_AUTOMATION,EMBEDDED_PAYMENTS,PLATFORM_FEE_COLLECTION,P2P_TRANSFERS,CHARITABLE_DONATIONS,OTHER" doc:"Intended use of the account. INDIVIDUAL customers only."`
	PurposeOfAccountOtherDescription *string  `json:"purposeOfAccountOtherDescription,omitempty" minLength:"1" maxLength:"500" doc:"Required when purposeOfAccount is OTHER. INDIVIDUAL customers only."`
	ExpectedMonthlyTransactionCount  *string  `json:"expectedMonthlyTransactionCount,omitempty" enum:"COUNT_UNDER_10,COUNT_10_TO_100,COUNT_100_TO_500,COUNT_500_TO_1000,COUNT_OVER_1000" doc:"Expected transactions per month. INDIVIDUAL customers only."`
	ExpectedMonthlyTransactionVolume *string  `json:"expectedMonthlyTransactionVolume,omitempty" enum:"VOLUME_UNDER_10K,VOLUME_10K_TO_100K,VOLUME_100K_TO_1M,VOLUME_1M_TO_10M,VOLUME_OVER_10M" doc:"Expected monthly volume (USD equivalent). INDIVIDUAL customers only."`
	AnnualIncomeRange                *string  `json:"annualIncomeRange,omitempty" enum:"UNDER_50K,RANGE_50K_100K,RANGE_100K_250K,RANGE_250K_1M,OVER_1M" doc:"Annual income (USD equivalent). INDIVIDUAL customers only."`
	NetWorthRange                    *string  `json:"netWorthRange,omitempty" enum:"UNDER_100K,RANGE_100K_500K,RANGE_500K_1M,RANGE_1M_5M,RANGE_5M_25M,OVER_25M" doc:"Net worth (USD equivalent). INDIVIDUAL customers only."`
	PepStatus                        *string  `json:"pepStatus,omitempty" enum:"NONE,DOMESTIC,FOREIGN,HIO,FAMILY_OR_ASSOCIATE" doc:"Politically exposed person declaration. INDIVIDUAL customers only."`
}

// BusinessInfoUpdate is a business's information; on update every field is
// optional and replaces the stored one.
type BusinessInfoUpdate struct {
	LegalName                        *string  `json:"legalName,omitempty" minLength:"1" maxLength:"255" doc:"Legal name" example:"Acme Corporation"`
	DoingBusinessAs                  *string  `json:"doingBusinessAs,omitempty" maxLength:"255" doc:"Trade name, if different from the legal name"`
	Country                          *string  `json:"country,omitempty" maxLength:"2" doc:"Country of incorporation (ISO 3166-1 alpha-2)" example:"US"`
	RegistrationNumber               *string  `json:"registrationNumber,omitempty" maxLength:"255" doc:"Business registration number"`
	IncorporatedOn                   *string  `json:"incorporatedOn,omitempty" format:"date" doc:"Date of incorporation (YYYY-MM-DD), not in the future" example:"2018-03-14"`
	EntityType                       *string  `json:"entityType,omitempty" enum:"SOLE_PROPRIETORSHIP,PARTNERSHIP,LLC,CORPORATION,S_CORPORATION,NON_PROFIT,PUBLICLY_LISTED_COMPANY,TRUST,PRIVATE_FOUNDATION,CHARITY,OTHER" doc:"Legal entity type"`
	TaxID                            *string  `json:"taxId,omitempty" maxLength:"255" doc:"Tax identification number" example:"47-1234567"`
	CountriesOfOperation             []string `json:"countriesOfOperation,omitempty" maxItems:"250" doc:"Countries the business operates in (ISO 3166-1 alpha-2)"`
	BusinessType                     *string  `json:"businessType,omitempty" enum:"AGRICULTURE_FORESTRY_FISHING_AND_HUNTING,MINING_QUARRYING_AND_OIL_AND_GAS_EXTRACTION,UTILITIES,CONSTRUCTION,MANUFACTURING,WHOLESALE_TRADE,RETAIL_TRADE,TRANSPORTATION_AND_WAREHOUSING,INFORMATION,FINANCE_AND_INSURANCE,REAL_ESTATE_AND_RENTAL_AND_LEASING,PROFESSIONAL_SCIENTIFIC_AND_TECHNICAL_SERVICES,MANAGEMENT_OF_COMPANIES_AND_ENTERPRISES,ADMINISTRATIVE_AND_SUPPORT_AND_WASTE_MANAGEMENT_AND_REMEDIATION_SERVICES,EDUCATIONAL_SERVICES,HEALTH_CARE_AND_SOCIAL_ASSISTANCE,ARTS_ENTERTAINMENT_AND_RECREATION,ACCOMMODATION_AND_FOOD_SERVICES,OTHER_SERVICES,PUBLIC_ADMINISTRATION" doc:"Industry category"`
	PurposeOfAccount                 *string  `json:"purposeOfAccount,omitempty" enum:"CONTRACTOR_PAYOUTS,CREATOR_PAYOUTS,EMPLOYEE_PAYOUTS,MARKETPLACE_SELLER_PAYOUTS,SUPPLIER_PAYMENTS,CROSS_BORDER_B2B,AR_AUTOMATION,AP_AUTOMATION,EMBEDDED_PAYMENTS,PLATFORM_FEE_COLLECTION,P2P_TRANSFERS,CHARITABLE_DONATIONS,OTHER" doc:"Intended use of the account"`
	SourceOfFunds                    *string  `json:"sourceOfFunds,omitempty" maxLength:"1024" doc:"Primary source of the business's funds"`
	ExpectedMonthlyTransactionCount  *string  `json:"expectedMonthlyTransactionCount,omitempty" enum:"COUNT_UNDER_10,COUNT_10_TO_100,COUNT_100_TO_500,COUNT_500_TO_1000,COUNT_OVER_1000" doc:"Expected transactions per month"`
	ExpectedMonthlyTransactionVolume *string  `json:"expectedMonthlyTransactionVolume,omitempty" enum:"VOLUME_UNDER_10K,VOLUME_10K_TO_100K,VOLUME_100K_TO_1M,VOLUME_1M_TO_10M,VOLUME_OVER_10M" doc:"Expected monthly volume (USD equivalent)"`
	ExpectedRecipientJurisdictions   []string `json:"expectedRecipientJurisdictions,omitempty" maxItems:"250" doc:"Countries the business expects to pay to (ISO 3166-1 alpha-2)"`
	NaicsCode                        *string  `json:"naicsCode,omitempty" pattern:"^\\d{2,6}$" patternDescription:"2 to 6 digits" doc:"NAICS code of the business (2-6 digits)" example:"541511"`
	SourceOfFundsCategories          []string `json:"sourceOfFundsCategories,omitempty" maxItems:"20" enum:"OPERATING_REVENUE,INVESTMENT_INCOME,LOANS,VENTURE_CAPITAL,PERSONAL_SAVINGS,DONATIONS,OTHER" doc:"Where the business's funds come from"`
	SourceOfFundsOtherDescription    *string  `json:"sourceOfFundsOtherDescription,omitempty" minLength:"1" maxLength:"500" doc:"Source of funds when OTHER is selected"`
	PurposeOfAccountOtherDescription *string  `json:"purposeOfAccountOtherDescription,omitempty" minLength:"1" maxLength:"500" doc:"Purpose of the account when OTHER is selected"`
	ExpectedCounterpartyCountries    []string `json:"expectedCounterpartyCountries,omitempty" maxItems:"250" doc:"Countries of the expected counterparties (ISO 3166-1 alpha-2)"`
	PrimaryContactFirstName          *string  `json:"primaryContactFirstName,omitempty" maxLength:"250" doc:"First name of the primary contact (a director or authorised representative)"`
	PrimaryContactLastName           *string  `json:"primaryContactLastName,omitempty" maxLength:"250" doc:"Last name of the primary contact"`
}

// BusinessInfo is a new business's information: legalName, country, taxId
// and incorporatedOn are required.
type BusinessInfo struct {
	LegalName      *string `json:"legalName" required:"true" minLength:"1" maxLength:"255" doc:"Legal name" example:"Acme Corporation"`
	Country        *string `json:"country" required:"true" maxLength:"2" doc:"Country of incorporation (ISO 3166-1 alpha-2)" example:"US"`
	TaxID          *string `json:"taxId" required:"true" minLength:"1" maxLength:"255" doc:"Tax identification number" example:"47-1234567"`
	IncorporatedOn *string `json:"incorporatedOn" required:"true" format:"date" doc:"Date of incorporation (YYYY-MM-DD), not in the future" example:"2018-03-14"`
	BusinessInfoUpdate
}

// CustomerCreateRequest creates an INDIVIDUAL or a BUSINESS customer.
type CustomerCreateRequest struct {
	CustomerType       string  `json:"customerType" enum:"INDIVIDUAL,BUSINESS" doc:"Whether the customer is an individual or a business"`
	PlatformCustomerID *string `json:"platformCustomerId,omitempty" minLength:"1" maxLength:"255" doc:"The platform's own identifier for the customer, unique among its live customers; generated when omitted" example:"user-8812"`
	Region             *string `json:"region,omitempty" maxLength:"2" doc:"Country code (ISO 3166-1 alpha-2) of the customer's regulatory jurisdiction; immutable after creation. When currencies are omitted they are inferred from it." example:"US"`
	CustomerFields
	BusinessInfo *BusinessInfo `json:"businessInfo,omitempty" doc:"Required for BUSINESS customers; not allowed for INDIVIDUAL ones"`
}

// CustomerUpdateRequest updates some of a customer's fields (PATCH).
type CustomerUpdateRequest struct {
	CustomerType       string  `json:"customerType" enum:"INDIVIDUAL,BUSINESS" doc:"The customer's type; must match the stored one"`
	PlatformCustomerID *string `json:"platformCustomerId,omitempty" doc:"Not updatable: sending it is rejected with 400"`
	Region             *string `json:"region,omitempty" doc:"Not updatable: sending it is rejected with 400"`
	CustomerFields
	BusinessInfo *BusinessInfoUpdate `json:"businessInfo,omitempty" doc:"BUSINESS customers only; supplied fields replace the stored ones"`
}

// CustomerBusinessInfo is a business customer's information as returned.
type CustomerBusinessInfo struct {
	LegalName                        string   `json:"legalName"`
	DoingBusinessAs                  string   `json:"doingBusinessAs,omitempty"`
	Country                          string   `json:"country,omitempty"`
	RegistrationNumber               string   `json:"registrationNumber,omitempty"`
	IncorporatedOn                   string   `json:"incorporatedOn,omitempty" format:"date"`
	EntityType                       string   `json:"entityType,omitempty"`
	TaxID                            string   `json:"taxId,omitempty"`
	CountriesOfOperation             []string `json:"countriesOfOperation,omitempty"`
	BusinessType                     string   `json:"businessType,omitempty"`
	PurposeOfAccount                 string   `json:"purposeOfAccount,omitempty"`
	SourceOfFunds                    string   `json:"sourceOfFunds,omitempty"`
	ExpectedMonthlyTransactionCount  string   `json:"expectedMonthlyTransactionCount,omitempty"`
	ExpectedMonthlyTransactionVolume string   `json:"expectedMonthlyTransactionVolume,omitempty"`
	ExpectedRecipientJurisdictions   []string `json:"expectedRecipientJurisdictions,omitempty"`
	NaicsCode                        string   `json:"naicsCode,omitempty"`
	SourceOfFundsCategories          []string `json:"sourceOfFundsCategories,omitempty"`
	SourceOfFundsOtherDescription    string   `json:"sourceOfFundsOtherDescription,omitempty"`
	PurposeOfAccountOtherDescription string   `json:"purposeOfAccountOtherDescription,omitempty"`
	ExpectedCounterpartyCountries    []string `json:"expectedCounterpartyCountries,omitempty"`
	PrimaryContactFirstName          string   `json:"primaryContactFirstName,omitempty"`
	PrimaryContactLastName           string   `json:"primaryContactLastName,omitempty"`
}

// Customer is an individual or a business customer of the platform.
// Individuals carry kycStatus and their profile fields; businesses carry
// kybStatus and businessInfo. Unset optional fields are omitted.
type Customer struct {
	ID                  string                `json:"id" doc:"Customer:<uuid>" example:"Customer:3f0c8a52-5a3b-4c1e-9a55-6f3b1de7a001"`
	PlatformCustomerID  string                `json:"platformCustomerId" doc:"The platform's identifier for the customer"`
	CustomerType        string                `json:"customerType" enum:"INDIVIDUAL,BUSINESS"`
	UmaAddress          string                `json:"umaAddress" doc:"UMA address that routes payments to the customer"`
	Region              string                `json:"region,omitempty" doc:"Country code (ISO 3166-1 alpha-2) of the regulatory jurisdiction"`
	Currencies          []string              `json:"currencies,omitempty" doc:"Enabled currencies"`
	Email               string                `json:"email,omitempty" format:"email"`
	PhoneNumber         string                `json:"phoneNumber,omitempty"`
	KycStatus           string                `json:"kycStatus,omitempty" enum:"UNVERIFIED,PENDING,APPROVED,REJECTED,HOLD" doc:"KYC status (INDIVIDUAL customers)"`
	KybStatus           string                `json:"kybStatus,omitempty" enum:"UNVERIFIED,PENDING,APPROVED,REJECTED,HOLD" doc:"KYB status (BUSINESS customers)"`
	FullName            string                `json:"fullName,omitempty"`
	BirthDate           string                `json:"birthDate,omitempty" format:"date"`
	Nationality         string                `json:"nationality,omitempty"`
	IDType              string                `json:"idType,omitempty"`
	CountryOfIssuance   string                `json:"countryOfIssuance,omitempty"`
	Address             *Address              `json:"address,omitempty"`
	EndUserTermsConsent *EndUserTermsConsent  `json:"endUserTermsConsent,omitempty"`
	BusinessInfo        *CustomerBusinessInfo `json:"businessInfo,omitempty" doc:"BUSINESS customers only"`
	BeneficialOwners    []BeneficialOwner     `json:"beneficialOwners,omitempty" doc:"BUSINESS customers only: the people who own or control the business"`

	SourceOfFundsCategories          []string `json:"sourceOfFundsCategories,omitempty"`
	SourceOfFundsOtherDescription    string   `json:"sourceOfFundsOtherDescription,omitempty"`
	SourceOfWealthCategories         []string `json:"sourceOfWealthCategories,omitempty"`
	SourceOfWealthOtherDescription   string   `json:"sourceOfWealthOtherDescription,omitempty"`
	PurposeOfAccount                 string   `json:"purposeOfAccount,omitempty"`
	PurposeOfAccountOtherDescription string   `json:"purposeOfAccountOtherDescription,omitempty"`
	ExpectedMonthlyTransactionCount  string   `json:"expectedMonthlyTransactionCount,omitempty"`
	ExpectedMonthlyTransactionVolume string   `json:"expectedMonthlyTransactionVolume,omitempty"`
	AnnualIncomeRange                string   `json:"annualIncomeRange,omitempty"`
	NetWorthRange                    string   `json:"netWorthRange,omitempty"`
	PepStatus                        string   `json:"pepStatus,omitempty"`

	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	IsDeleted bool      `json:"isDeleted" doc:"Whether the customer was deleted"`
}

// CustomerList is one page of customers.
type CustomerList struct {
	Data       []Customer `json:"data"`
	HasMore    bool       `json:"hasMore" doc:"Whether more results follow this page"`
	NextCursor string     `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page (only when hasMore)"`
	TotalCount int        `json:"totalCount" doc:"Number of customers matching the filters, ignoring pagination"`
}

// ---- wire → core ----

func (f *CustomerFields) input(customerType string, platformCustomerID, region *string) customers.Input {
	in := customers.Input{
		CustomerType:       customerType,
		PlatformCustomerID: platformCustomerID,
		Region:             region,
		Currencies:         f.Currencies,
		Email:              f.Email,
		PhoneNumber:        f.PhoneNumber,
		UmaAddress:         f.UmaAddress,
		KYCStatus:          f.KycStatus,
		KYBStatus:          f.KybStatus,
		Address:            addressIn(f.Address),
		Individual: customers.IndividualFields{
			FullName:                         f.FullName,
			BirthDate:                        f.BirthDate,
			Nationality:                      f.Nationality,
			IDType:                           f.IDType,
			Identifier:                       f.Identifier,
			CountryOfIssuance:                f.CountryOfIssuance,
			SourceOfFundsCategories:          f.SourceOfFundsCategories,
			SourceOfFundsOtherDescription:    f.SourceOfFundsOtherDescription,
			SourceOfWealthCategories:         f.SourceOfWealthCategories,
			SourceOfWealthOtherDescription:   f.SourceOfWealthOtherDescription,
			PurposeOfAccount:                 f.PurposeOfAccount,
			PurposeOfAccountOtherDescription: f.PurposeOfAccountOtherDescription,
			ExpectedMonthlyTransactionCount:  f.ExpectedMonthlyTransactionCount,
			ExpectedMonthlyTransactionVolume: f.ExpectedMonthlyTransactionVolume,
			AnnualIncomeRange:                f.AnnualIncomeRange,
			NetWorthRange:                    f.NetWorthRange,
			PepStatus:                        f.PepStatus,
		},
	}
	if e := f.EndUserTermsConsent; e != nil {
		in.EndUserTermsConsent = &ports.EndUserTermsConsent{AcceptedAt: e.AcceptedAt, IPAddress: e.IPAddress,
			TermsVersion: e.TermsVersion, AcceptanceMethod: e.AcceptanceMethod}
	}
	return in
}

func (b *BusinessInfoUpdate) fields() *customers.BusinessFields {
	if b == nil {
		return nil
	}
	// The wire and core field lists are the same, so a conversion copies
	// every field (and stops compiling if they ever drift apart).
	f := customers.BusinessFields(*b)
	return &f
}

func (r *CustomerCreateRequest) input() customers.Input {
	in := r.CustomerFields.input(r.CustomerType, r.PlatformCustomerID, r.Region)
	if b := r.BusinessInfo; b != nil {
		in.Business = b.BusinessInfoUpdate.fields()
		in.Business.LegalName, in.Business.Country = b.LegalName, b.Country
		in.Business.TaxID, in.Business.IncorporatedOn = b.TaxID, b.IncorporatedOn
	}
	return in
}

func (r *CustomerUpdateRequest) input() customers.Input {
	in := r.CustomerFields.input(r.CustomerType, r.PlatformCustomerID, r.Region)
	in.Business = r.BusinessInfo.fields()
	return in
}

// ---- core → wire ----

func customerOut(c ports.Customer) Customer {
	out := Customer{
		ID:                 c.ID,
		PlatformCustomerID: c.PlatformCustomerID,
		CustomerType:       c.CustomerType,
		UmaAddress:         c.UmaAddress,
		Region:             c.Region,
		Currencies:         c.Currencies,
		Email:              c.Email,
		PhoneNumber:        c.PhoneNumber,
		CreatedAt:          c.CreatedAt.UTC(),
		UpdatedAt:          c.UpdatedAt.UTC(),
		IsDeleted:          c.IsDeleted,
		Address:            addressOut(c.Address),
	}
	if e := c.EndUserTermsConsent; e != nil {
		out.EndUserTermsConsent = &EndUserTermsConsent{AcceptedAt: e.AcceptedAt.UTC(), IPAddress: e.IPAddress,
			TermsVersion: e.TermsVersion, AcceptanceMethod: e.AcceptanceMethod}
	}
	switch c.CustomerType {
	case customers.TypeBusiness:
		out.KybStatus = c.KYCStatus
		if b := c.Business; b != nil {
			bi := CustomerBusinessInfo(*b)
			out.BusinessInfo = &bi
		}
	default:
		out.KycStatus = c.KYCStatus
		if p := c.Individual; p != nil {
			out.FullName = p.FullName
			out.BirthDate = p.BirthDate
			out.Nationality = p.Nationality
			out.IDType = p.IDType
			out.CountryOfIssuance = p.CountryOfIssuance
			out.SourceOfFundsCategories = p.SourceOfFundsCategories
			out.SourceOfFundsOtherDescription = p.SourceOfFundsOtherDescription
			out.SourceOfWealthCategories = p.SourceOfWealthCategories
			out.SourceOfWealthOtherDescription = p.SourceOfWealthOtherDescription
			out.PurposeOfAccount = p.PurposeOfAccount
			out.PurposeOfAccountOtherDescription = p.PurposeOfAccountOtherDescription
			out.ExpectedMonthlyTransactionCount = p.ExpectedMonthlyTransactionCount
			out.ExpectedMonthlyTransactionVolume = p.ExpectedMonthlyTransactionVolume
			out.AnnualIncomeRange = p.AnnualIncomeRange
			out.NetWorthRange = p.NetWorthRange
			out.PepStatus = p.PepStatus
		}
	}
	return out
}

// ---- operations ----

type createCustomerInput struct {
	Body CustomerCreateRequest
}

type customerIDInput struct {
	CustomerID string `path:"customerId" maxLength:"255" doc:"The customer's id (Customer:<uuid>)"`
}

type updateCustomerInput struct {
	CustomerID string `path:"customerId" maxLength:"255" doc:"The customer's id (Customer:<uuid>)"`
	SignedRetryHeaders
	Body CustomerUpdateRequest
}

type listCustomersInput struct {
	PlatformCustomerID string    `query:"platformCustomerId" maxLength:"255" doc:"Only the customer with this platform identifier"`
	CustomerType       string    `query:"customerType" enum:"INDIVIDUAL,BUSINESS" doc:"Only customers of this type"`
	CreatedAfter       time.Time `query:"createdAfter" doc:"Only customers created at or after this time"`
	CreatedBefore      time.Time `query:"createdBefore" doc:"Only customers created at or before this time"`
	UpdatedAfter       time.Time `query:"updatedAfter" doc:"Only customers updated at or after this time"`
	UpdatedBefore      time.Time `query:"updatedBefore" doc:"Only customers updated at or before this time"`
	Region             string    `query:"region" maxLength:"2" doc:"Only customers of this region (ISO 3166-1 alpha-2)"`
	Currency           string    `query:"currency" maxLength:"16" doc:"Only customers with this currency enabled"`
	UmaAddress         string    `query:"umaAddress" maxLength:"255" doc:"Only the customer with this UMA address"`
	IsIncludingDeleted bool      `query:"isIncludingDeleted" doc:"Include deleted customers (default false)"`
	Limit              int       `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor             string    `query:"cursor" maxLength:"1024" doc:"nextCursor of the previous page"`
}

type customerOutput struct{ Body Customer }

type customerListOutput struct{ Body CustomerList }

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

const customersTag = "Customers"

// customersAPI handles the customer operations.
type customersAPI struct{ d Deps }

func registerCustomers(api huma.API, d Deps) {
	h := customersAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.createCustomerOp(), h.createCustomer) },
		func(api huma.API) { huma.Register(api, h.listCustomersOp(), h.listCustomers) },
		func(api huma.API) { huma.Register(api, h.getCustomerOp(), h.getCustomer) },
		func(api huma.API) { huma.Register(api, h.updateCustomerOp(), h.updateCustomer) },
		func(api huma.API) { huma.Register(api, h.deleteCustomerOp(), h.deleteCustomer) },
	)
}

func (customersAPI) createCustomerOp() huma.Operation {
	return huma.Operation{
		OperationID:   "createCustomer",
		Method:        http.MethodPost,
		Path:          "/customers",
		Summary:       "Create a customer",
		Description:   "Creates an INDIVIDUAL or BUSINESS customer with its internal accounts (one per currency) and, when it has an e-mail, an embedded wallet with an EMAIL_OTP credential. Omitted platformCustomerId and umaAddress are generated; omitted currencies are inferred from the region. 409 UMA_ADDRESS_EXISTS when the UMA address is taken; 409 CONFLICT when a live customer already has the platformCustomerId.",
		Tags:          []string{customersTag},
		DefaultStatus: http.StatusCreated,
		Errors:        []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusConflict},
	}
}

func (h customersAPI) createCustomer(ctx context.Context, in *createCustomerInput) (*customerOutput, error) {
	c, err := h.d.Customers.Create(ctx, principal(ctx).PlatformID, in.Body.input())
	if err != nil {
		return nil, apiError(err)
	}
	return customerBody(ctx, h.d, c)
}

func (customersAPI) listCustomersOp() huma.Operation {
	return huma.Operation{
		OperationID: "listCustomers",
		Method:      http.MethodGet,
		Path:        "/customers",
		Summary:     "List customers",
		Description: "Lists the platform's customers, oldest first, filtered and paginated. Time bounds are inclusive. Deleted customers are left out unless isIncludingDeleted is true.",
		Tags:        []string{customersTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h customersAPI) listCustomers(ctx context.Context, in *listCustomersInput) (*customerListOutput, error) {
	if err := checkWindows(window{"createdAfter", in.CreatedAfter, "createdBefore", in.CreatedBefore},
		window{"updatedAfter", in.UpdatedAfter, "updatedBefore", in.UpdatedBefore}); err != nil {
		return nil, err
	}
	d := h.d
	cursors := cursorsOf(d, "customers")
	q := customers.ListQuery{
		Limit: in.Limit,
		Filter: ports.CustomerFilter{
			PlatformCustomerID: in.PlatformCustomerID,
			CustomerType:       in.CustomerType,
			CreatedAfter:       optTime(in.CreatedAfter),
			CreatedBefore:      optTime(in.CreatedBefore),
			UpdatedAfter:       optTime(in.UpdatedAfter),
			UpdatedBefore:      optTime(in.UpdatedBefore),
			Region:             in.Region,
			Currency:           in.Currency,
			UmaAddress:         in.UmaAddress,
			IncludeDeleted:     in.IsIncludingDeleted,
		},
	}
	if in.Cursor != "" {
		pos, err := cursors.decode(in.Cursor)
		if err != nil {
			return nil, apiError(err)
		}
		q.After = pos
	}
	res, err := d.Customers.List(ctx, principal(ctx).PlatformID, q)
	if err != nil {
		return nil, apiError(err)
	}
	out := CustomerList{Data: make([]Customer, len(res.Customers)), HasMore: res.HasMore, TotalCount: res.Total}
	for i, c := range res.Customers {
		out.Data[i] = customerOut(c)
	}
	if err := attachOwners(ctx, d, principal(ctx).PlatformID, out.Data); err != nil {
		return nil, err
	}
	out.NextCursor = cursors.next(res.HasMore, res.Next)
	return &customerListOutput{Body: out}, nil
}

func (customersAPI) getCustomerOp() huma.Operation {
	return huma.Operation{
		OperationID: "getCustomerById",
		Method:      http.MethodGet,
		Path:        "/customers/{customerId}",
		Summary:     "Get a customer",
		Description: "Returns one of the platform's customers, deleted ones included (isDeleted true). 404 USER_NOT_FOUND otherwise.",
		Tags:        []string{customersTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h customersAPI) getCustomer(ctx context.Context, in *customerIDInput) (*customerOutput, error) {
	c, err := h.d.Customers.Get(ctx, principal(ctx).PlatformID, in.CustomerID)
	if err != nil {
		return nil, apiError(err)
	}
	return customerBody(ctx, h.d, c)
}

func (customersAPI) updateCustomerOp() huma.Operation {
	return huma.Operation{
		OperationID: "updateCustomerById",
		Method:      http.MethodPatch,
		Path:        "/customers/{customerId}",
		Summary:     "Update a customer",
		Description: "Changes the supplied fields. customerType is required and must match the customer's; region and platformCustomerId cannot change. Enabling a currency opens its internal account; adding an e-mail opens the embedded wallet; changing it renames the wallet's EMAIL_OTP credential. 410 CUSTOMER_DELETED for a deleted customer.",
		Tags:        []string{customersTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusConflict, http.StatusGone},
	}
}

// updateCustomer applies the update; changing the e-mail an embedded
// wallet's EMAIL_OTP credential is tied to needs a signed retry first (202).
func (h customersAPI) updateCustomer(ctx context.Context, in *updateCustomerInput) (*signedOutput, error) {
	pid := principal(ctx).PlatformID
	update := func() (*signedOutput, error) {
		c, err := h.d.Customers.Update(ctx, pid, in.CustomerID, in.Body.input())
		if err != nil {
			return nil, apiError(err)
		}
		out, err := customerBody(ctx, h.d, c)
		if err != nil {
			return nil, err
		}
		return &signedOutput{Status: http.StatusOK, Body: out.Body}, nil
	}
	if in.Body.Email == nil || h.d.WalletAuth == nil {
		return update()
	}
	body, _ := json.Marshal(in.Body)
	c, err := h.d.WalletAuth.EmailChange(ctx, pid, in.CustomerID, *in.Body.Email, body, in.retry())
	return signedAnswer(c, "", err, update)
}

func (customersAPI) deleteCustomerOp() huma.Operation {
	return huma.Operation{
		OperationID: "deleteCustomerById",
		Method:      http.MethodDelete,
		Path:        "/customers/{customerId}",
		Summary:     "Delete a customer",
		Description: "Marks the customer deleted, closes its internal accounts (they refuse credits from then on) and returns it (isDeleted true). Its platformCustomerId becomes free; its UMA address stays reserved. 409 CUSTOMER_HAS_FUNDS, naming the balances and the payments in flight, while any of its accounts holds money or a payment of it is not final; 410 CUSTOMER_DELETED when already deleted.",
		Tags:        []string{customersTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusConflict, http.StatusGone},
	}
}

func (h customersAPI) deleteCustomer(ctx context.Context, in *customerIDInput) (*customerOutput, error) {
	c, err := h.d.Customers.Delete(ctx, principal(ctx).PlatformID, in.CustomerID)
	if err != nil {
		return nil, apiError(err)
	}
	return customerBody(ctx, h.d, c)
}
