package httpapi

import (
	"context"
	"net/http"
	"sort"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----
//
// accountInfo is one flat Go struct on the wire side (every variant's
// fields, all optional) whose documented and validated schema is a oneOf
// of one schema per accountType, discriminated by accountType and built
// from core/external's variant table: Huma checks the chosen variant's
// fields (names, required, lengths, patterns, enums) and refuses fields
// of other variants, naming them (accountInfo.routingNumber); the core then
// checks what a schema cannot (checksums, currency, cross-field rules).

// Beneficiary is who holds an external account: an INDIVIDUAL (fullName…)
// or a BUSINESS (legalName…).
type Beneficiary struct {
	BeneficiaryType    string   `json:"beneficiaryType"`
	FullName           string   `json:"fullName,omitempty"`
	LegalName          string   `json:"legalName,omitempty"`
	RegistrationNumber string   `json:"registrationNumber,omitempty"`
	TaxID              string   `json:"taxId,omitempty"`
	BirthDate          string   `json:"birthDate,omitempty"`
	Nationality        string   `json:"nationality,omitempty"`
	Email              string   `json:"email,omitempty"`
	PhoneNumber        string   `json:"phoneNumber,omitempty"`
	CountryOfResidence string   `json:"countryOfResidence,omitempty"`
	DocumentType       string   `json:"documentType,omitempty"`
	DocumentNumber     string   `json:"documentNumber,omitempty"`
	Address            *Address `json:"address,omitempty"`
}

// accountInfoFields are the fields shared by the create and response
// accountInfo (every variant's, flat).
type accountInfoFields struct {
	AccountType               string       `json:"accountType"`
	AccountNumber             string       `json:"accountNumber,omitempty"`
	RoutingNumber             string       `json:"routingNumber,omitempty"`
	BankAccountType           string       `json:"bankAccountType,omitempty"`
	BankName                  string       `json:"bankName,omitempty"`
	IntermediaryBankName      string       `json:"intermediaryBankName,omitempty"`
	IntermediaryRoutingNumber string       `json:"intermediaryRoutingNumber,omitempty"`
	FiToFiInformation         string       `json:"fiToFiInformation,omitempty"`
	IBAN                      string       `json:"iban,omitempty"`
	SwiftCode                 string       `json:"swiftCode,omitempty"`
	ClabeNumber               string       `json:"clabeNumber,omitempty"`
	PixKey                    string       `json:"pixKey,omitempty"`
	PixKeyType                string       `json:"pixKeyType,omitempty"`
	TaxID                     string       `json:"taxId,omitempty"`
	SortCode                  string       `json:"sortCode,omitempty"`
	IFSC                      string       `json:"ifsc,omitempty"`
	VPA                       string       `json:"vpa,omitempty"`
	Rail                      string       `json:"rail,omitempty"`
	BankCode                  string       `json:"bankCode,omitempty"`
	BranchCode                string       `json:"branchCode,omitempty"`
	PhoneNumber               string       `json:"phoneNumber,omitempty"`
	Provider                  string       `json:"provider,omitempty"`
	Region                    string       `json:"region,omitempty"`
	Country                   string       `json:"country,omitempty"`
	Address                   string       `json:"address,omitempty"`
	VaspName                  string       `json:"vaspName,omitempty"`
	Invoice                   string       `json:"invoice,omitempty"`
	Bolt12                    string       `json:"bolt12,omitempty"`
	LightningAddress          string       `json:"lightningAddress,omitempty"`
	Beneficiary               *Beneficiary `json:"beneficiary,omitempty"`
}

// ExternalAccountCreateInfo is a new account's accountInfo.
type ExternalAccountCreateInfo struct {
	accountInfoFields
	// PlatformAccountID is accepted here too (as some clients send it) and
	// means the top-level platformAccountId.
	PlatformAccountID string `json:"platformAccountId,omitempty"`
}

// ExternalAccountInfo is an account's accountInfo as returned: bank
// accounts add the rails they can be paid over. The platform's own id is
// returned here, where the spec shows it, and at the top level, where the
// reference has it.
type ExternalAccountInfo struct {
	accountInfoFields
	PlatformAccountID string   `json:"platformAccountId,omitempty"`
	PaymentRails      []string `json:"paymentRails,omitempty"`
}

// Schema documents (and Huma validates) accountInfo as a oneOf by
// accountType.
func (ExternalAccountCreateInfo) Schema(r huma.Registry) *huma.Schema {
	return accountInfoSchema(r, false)
}

// Schema documents accountInfo as a oneOf by accountType.
func (ExternalAccountInfo) Schema(r huma.Registry) *huma.Schema {
	return accountInfoSchema(r, true)
}

// BeneficiaryVerifiedData is what the receiving side returned about the
// account holder.
type BeneficiaryVerifiedData struct {
	FullName string `json:"fullName,omitempty" doc:"The account holder's name as the receiving institution has it"`
}

// ExternalAccountCreateRequest creates an account for a customer (or, with
// no customerId, for the platform).
type ExternalAccountCreateRequest struct {
	CustomerID               string                    `json:"customerId,omitempty" maxLength:"255" doc:"The customer the account belongs to; omitted: the account is the platform's own" example:"Customer:019542f5-b3e7-1d02-0000-000000000001"`
	Currency                 string                    `json:"currency" minLength:"3" maxLength:"8" doc:"Currency of the account (ISO 4217, or USDC/BTC for wallets); must be one its accountType takes" example:"USD"`
	PlatformAccountID        string                    `json:"platformAccountId,omitempty" minLength:"1" maxLength:"255" doc:"The platform's own identifier for the account" example:"ext_acc_8812"`
	OwnershipType            string                    `json:"ownershipType,omitempty" enum:"FIRST_PARTY,THIRD_PARTY" doc:"Whether the account is the customer's own or someone else's"`
	DefaultUmaDepositAccount bool                      `json:"defaultUmaDepositAccount,omitempty" doc:"Make this the customer's default UMA deposit account (false when omitted). At most one per customer: setting it moves the default here."`
	AccountInfo              ExternalAccountCreateInfo `json:"accountInfo"`
}

// PlatformExternalAccountCreateRequest creates one of the platform's own
// accounts.
type PlatformExternalAccountCreateRequest struct {
	Currency          string                    `json:"currency" minLength:"3" maxLength:"8" doc:"Currency of the account; must be one its accountType takes" example:"USD"`
	PlatformAccountID string                    `json:"platformAccountId,omitempty" minLength:"1" maxLength:"255" doc:"The platform's own identifier for the account"`
	OwnershipType     string                    `json:"ownershipType,omitempty" enum:"FIRST_PARTY,THIRD_PARTY" doc:"Whether the account is the platform's own or someone else's"`
	AccountInfo       ExternalAccountCreateInfo `json:"accountInfo"`
}

// ExternalAccount is a bank account or wallet outside the service that a
// customer or the platform is paid to or pulls from.
type ExternalAccount struct {
	ID                            string                   `json:"id" doc:"ExternalAccount:<uuid>" example:"ExternalAccount:e85dcbd6-dced-4ec4-b756-3c3a9ea3d965"`
	CustomerID                    string                   `json:"customerId,omitempty" doc:"The customer the account belongs to; absent for the platform's own accounts"`
	Status                        string                   `json:"status" enum:"PENDING,ACTIVE,UNDER_REVIEW,INACTIVE" doc:"PENDING while the beneficiary check is pending; ACTIVE accounts can be paid"`
	PlatformAccountID             string                   `json:"platformAccountId,omitempty" doc:"The platform's own identifier for the account"`
	OwnershipType                 string                   `json:"ownershipType,omitempty" enum:"FIRST_PARTY,THIRD_PARTY"`
	Currency                      string                   `json:"currency" doc:"Currency of the account" example:"USD"`
	DefaultUmaDepositAccount      bool                     `json:"defaultUmaDepositAccount" doc:"Whether incoming UMA payments to the customer land here"`
	BeneficiaryVerificationStatus string                   `json:"beneficiaryVerificationStatus,omitempty" enum:"MATCHED,PARTIAL_MATCH,NOT_MATCHED,UNSUPPORTED,CHECKED_BY_RECEIVING_FI,PENDING" doc:"How the beneficiary's name compared with the account holder's"`
	BeneficiaryVerifiedData       *BeneficiaryVerifiedData `json:"beneficiaryVerifiedData,omitempty" doc:"What the receiving side returned about the holder"`
	AccountInfo                   ExternalAccountInfo      `json:"accountInfo"`
}

// ExternalAccountList is one page of external accounts.
type ExternalAccountList struct {
	Data       []ExternalAccount `json:"data"`
	HasMore    bool              `json:"hasMore" doc:"Whether more results follow this page"`
	NextCursor string            `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page (only when hasMore)"`
	TotalCount int               `json:"totalCount" doc:"Number of accounts matching the filters, ignoring pagination"`
}

// ---- schemas from the variant table ----

const schemaRef = "#/components/schemas/"

func intPtr(n int) *int { return &n }

func fieldSchema(f external.Field) *huma.Schema {
	s := &huma.Schema{Type: huma.TypeString, Description: f.Doc, Pattern: f.Pattern, Format: f.Format}
	if f.MinLen > 0 {
		s.MinLength = intPtr(f.MinLen)
	}
	if f.MaxLen > 0 {
		s.MaxLength = intPtr(f.MaxLen)
	}
	for _, e := range f.Enum {
		s.Enum = append(s.Enum, e)
	}
	return s
}

// register adds a named schema once and returns a reference to it.
func register(r huma.Registry, name string, build func() *huma.Schema) *huma.Schema {
	if _, ok := r.Map()[name]; !ok {
		s := build()
		s.PrecomputeMessages()
		r.Map()[name] = s
	}
	return &huma.Schema{Ref: schemaRef + name}
}

func objectSchema(title string, fields []external.Field, r huma.Registry, addressName string) *huma.Schema {
	s := &huma.Schema{Type: huma.TypeObject, Title: title, Properties: map[string]*huma.Schema{}, AdditionalProperties: false}
	for _, f := range fields {
		if f.Address {
			s.Properties[f.Name] = register(r, addressName, func() *huma.Schema {
				return objectSchema("Address", external.AddressFields(), r, "")
			})
		} else {
			s.Properties[f.Name] = fieldSchema(f)
		}
		if f.Required {
			s.Required = append(s.Required, f.Name)
		}
	}
	return s
}

func beneficiarySchema(r huma.Registry, v external.Variant) *huma.Schema {
	kinds := []struct {
		typ, name, title string
		fields           []external.Field
	}{
		{external.BeneficiaryIndividual, v.SchemaName + "IndividualBeneficiary", "Individual Beneficiary", v.Beneficiary.Individual},
		{external.BeneficiaryBusiness, v.SchemaName + "BusinessBeneficiary", "Business Beneficiary", v.Beneficiary.Business},
	}
	// The properties check names a bad beneficiaryType (the oneOf alone
	// would only say that nothing matched); a missing one is reported by
	// the discriminator.
	out := &huma.Schema{Type: huma.TypeObject, Description: "The account holder, by beneficiaryType",
		Properties: map[string]*huma.Schema{"beneficiaryType": {Type: huma.TypeString,
			Enum: []any{external.BeneficiaryIndividual, external.BeneficiaryBusiness}}},
		Discriminator: &huma.Discriminator{PropertyName: "beneficiaryType", Mapping: map[string]string{}}}
	for _, k := range kinds {
		ref := register(r, k.name, func() *huma.Schema {
			s := objectSchema(k.title, k.fields, r, "BeneficiaryAddress")
			s.Properties["beneficiaryType"] = &huma.Schema{Type: huma.TypeString, Enum: []any{k.typ}}
			s.Required = append([]string{"beneficiaryType"}, s.Required...)
			return s
		})
		out.OneOf = append(out.OneOf, ref)
		out.Discriminator.Mapping[k.typ] = ref.Ref
	}
	return out
}

// lightningAlias is an accepted spelling of LIGHTNING.
const lightningAlias = "LIGHTNING_ACCOUNT"

// accountInfoSchema is the oneOf of every variant (create or response).
func accountInfoSchema(r huma.Registry, response bool) *huma.Schema {
	name, suffix := "ExternalAccountCreateInfoOneOf", "ExternalAccountCreateInfo"
	if response {
		name, suffix = "ExternalAccountInfoOneOf", "ExternalAccountInfo"
	}
	return register(r, name, func() *huma.Schema {
		all := external.AccountTypes()
		enum := make([]any, 0, len(all)+1)
		for _, t := range all {
			enum = append(enum, t)
		}
		if !response {
			enum = append(enum, lightningAlias)
		}
		// As for beneficiaries: the properties check names a bad
		// accountType; the discriminator reports a missing one (Huma then
		// leaves the property on its error path, so no required list here
		// to report it twice).
		one := &huma.Schema{
			Type:          huma.TypeObject,
			Description:   "Account details; the fields depend on accountType",
			Properties:    map[string]*huma.Schema{"accountType": {Type: huma.TypeString, Enum: enum}},
			Discriminator: &huma.Discriminator{PropertyName: "accountType", Mapping: map[string]string{}},
		}
		for _, v := range external.Variants() {
			ref := register(r, v.SchemaName+suffix, func() *huma.Schema { return variantSchema(r, v, response) })
			one.OneOf = append(one.OneOf, ref)
			one.Discriminator.Mapping[v.AccountType] = ref.Ref
			if v.AccountType == "LIGHTNING" && !response {
				one.Discriminator.Mapping[lightningAlias] = ref.Ref
			}
		}
		return one
	})
}

func variantSchema(r huma.Registry, v external.Variant, response bool) *huma.Schema {
	s := objectSchema(v.Title, v.Fields, r, "")
	types := []any{v.AccountType}
	if v.AccountType == "LIGHTNING" && !response {
		types = append(types, lightningAlias)
	}
	s.Properties["accountType"] = &huma.Schema{Type: huma.TypeString, Enum: types}
	s.Required = append([]string{"accountType"}, s.Required...)
	var notes []string
	if len(v.AnyOf) > 0 {
		var alts []string
		for _, g := range v.AnyOf {
			alts = append(alts, strings.Join(g, " and "))
		}
		notes = append(notes, "Give "+strings.Join(alts, ", or "))
	}
	if len(v.ExactlyOne) > 0 {
		notes = append(notes, "Give exactly one of "+strings.Join(v.ExactlyOne, ", "))
	}
	notes = append(notes, "Currency: "+strings.Join(v.Currencies, ", "))
	s.Description = strings.Join(notes, ". ") + "."
	switch v.Beneficiary.Presence {
	case external.BeneficiaryRequired:
		s.Properties["beneficiary"] = beneficiarySchema(r, v)
		s.Required = append(s.Required, "beneficiary")
	case external.BeneficiaryOptional:
		s.Properties["beneficiary"] = beneficiarySchema(r, v)
	}
	if response {
		if !v.Wallet {
			var rails []any
			for _, rl := range v.Rails {
				rails = append(rails, rl.Name)
			}
			s.Properties["paymentRails"] = &huma.Schema{Type: huma.TypeArray, Description: "Rails the account can be paid over",
				Items: &huma.Schema{Type: huma.TypeString, Enum: rails}}
			s.Required = append(s.Required, "paymentRails")
		}
		s.Properties["platformAccountId"] = &huma.Schema{Type: huma.TypeString,
			Description: "The platform's own identifier for the account, as at the top level"}
	} else {
		s.Properties["platformAccountId"] = &huma.Schema{Type: huma.TypeString, MinLength: intPtr(1), MaxLength: intPtr(255),
			Description: "Accepted here as well as at the top level (the same value); returned in both places"}
	}
	sort.Strings(s.Required[1:])
	return s
}

// ---- wire ↔ core ----

func (b *Beneficiary) toPort() *ports.Beneficiary {
	if b == nil {
		return nil
	}
	return &ports.Beneficiary{
		BeneficiaryType: b.BeneficiaryType, FullName: b.FullName, LegalName: b.LegalName,
		RegistrationNumber: b.RegistrationNumber, TaxID: b.TaxID, BirthDate: b.BirthDate, Nationality: b.Nationality,
		Email: b.Email, PhoneNumber: b.PhoneNumber, CountryOfResidence: b.CountryOfResidence,
		DocumentType: b.DocumentType, DocumentNumber: b.DocumentNumber, Address: addressIn(b.Address),
	}
}

func beneficiaryOut(b *ports.Beneficiary) *Beneficiary {
	if b == nil {
		return nil
	}
	return &Beneficiary{
		BeneficiaryType: b.BeneficiaryType, FullName: b.FullName, LegalName: b.LegalName,
		RegistrationNumber: b.RegistrationNumber, TaxID: b.TaxID, BirthDate: b.BirthDate, Nationality: b.Nationality,
		Email: b.Email, PhoneNumber: b.PhoneNumber, CountryOfResidence: b.CountryOfResidence,
		DocumentType: b.DocumentType, DocumentNumber: b.DocumentNumber, Address: addressOut(b.Address),
	}
}

func (f accountInfoFields) toPort() ports.AccountInfo {
	typ := f.AccountType
	if typ == lightningAlias {
		typ = "LIGHTNING"
	}
	return ports.AccountInfo{
		AccountType: typ, AccountNumber: f.AccountNumber, RoutingNumber: f.RoutingNumber,
		BankAccountType: f.BankAccountType, BankName: f.BankName, IntermediaryBankName: f.IntermediaryBankName,
		IntermediaryRoutingNumber: f.IntermediaryRoutingNumber, FiToFiInformation: f.FiToFiInformation,
		IBAN: f.IBAN, SwiftCode: f.SwiftCode, ClabeNumber: f.ClabeNumber, PixKey: f.PixKey, PixKeyType: f.PixKeyType,
		TaxID: f.TaxID, SortCode: f.SortCode, IFSC: f.IFSC, VPA: f.VPA, Rail: f.Rail, BankCode: f.BankCode,
		BranchCode: f.BranchCode, PhoneNumber: f.PhoneNumber, Provider: f.Provider, Region: f.Region,
		Country: f.Country, Address: f.Address, VaspName: f.VaspName, Invoice: f.Invoice, Bolt12: f.Bolt12,
		LightningAddress: f.LightningAddress, Beneficiary: f.Beneficiary.toPort(),
	}
}

// accountInfoOut is an account's accountInfo; platformAccountID goes in it
// only for a USD_ACCOUNT, where the spec shows it (the reference keeps it
// at the top level, where it is shown for every account).
func accountInfoOut(i ports.AccountInfo, platformAccountID string) ExternalAccountInfo {
	if i.AccountType != "USD_ACCOUNT" {
		platformAccountID = ""
	}
	return ExternalAccountInfo{
		accountInfoFields: accountInfoFields{
			AccountType: i.AccountType, AccountNumber: i.AccountNumber, RoutingNumber: i.RoutingNumber,
			BankAccountType: i.BankAccountType, BankName: i.BankName, IntermediaryBankName: i.IntermediaryBankName,
			IntermediaryRoutingNumber: i.IntermediaryRoutingNumber, FiToFiInformation: i.FiToFiInformation,
			IBAN: i.IBAN, SwiftCode: i.SwiftCode, ClabeNumber: i.ClabeNumber, PixKey: i.PixKey, PixKeyType: i.PixKeyType,
			TaxID: i.TaxID, SortCode: i.SortCode, IFSC: i.IFSC, VPA: i.VPA, Rail: i.Rail, BankCode: i.BankCode,
			BranchCode: i.BranchCode, PhoneNumber: i.PhoneNumber, Provider: i.Provider, Region: i.Region,
			Country: i.Country, Address: i.Address, VaspName: i.VaspName, Invoice: i.Invoice, Bolt12: i.Bolt12,
			LightningAddress: i.LightningAddress, Beneficiary: beneficiaryOut(i.Beneficiary),
		},
		PlatformAccountID: platformAccountID,
		PaymentRails:      external.PaymentRails(i),
	}
}

func externalAccountOut(a ports.ExternalAccount) ExternalAccount {
	out := ExternalAccount{
		ID: a.ID, CustomerID: a.CustomerID, Status: a.Status, PlatformAccountID: a.PlatformAccountID,
		OwnershipType: a.OwnershipType, Currency: a.Currency, DefaultUmaDepositAccount: a.DefaultUmaDepositAccount,
		BeneficiaryVerificationStatus: a.BeneficiaryVerificationStatus, AccountInfo: accountInfoOut(a.Info, a.PlatformAccountID),
	}
	if a.BeneficiaryVerifiedName != "" {
		out.BeneficiaryVerifiedData = &BeneficiaryVerifiedData{FullName: a.BeneficiaryVerifiedName}
	}
	return out
}

// createInput maps a request onto the core's input; a platformAccountId
// given inside accountInfo must agree with the top-level one.
func createInput(customerID, currency, platformAccountID, ownership string, def bool, info ExternalAccountCreateInfo) (external.Input, error) {
	if info.PlatformAccountID != "" {
		if platformAccountID != "" && platformAccountID != info.PlatformAccountID {
			return external.Input{}, invalidFields(FieldError{Field: "accountInfo.platformAccountId", Message: "differs from the top-level platformAccountId"})
		}
		platformAccountID = info.PlatformAccountID
	}
	return external.Input{
		CustomerID: customerID, Currency: currency, PlatformAccountID: platformAccountID,
		OwnershipType: ownership, DefaultUmaDepositAccount: def, Info: info.toPort(),
	}, nil
}

// ---- operations ----

type createExternalAccountInput struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255"`
	Body           ExternalAccountCreateRequest
}

type createPlatformExternalAccountInput struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255"`
	Body           PlatformExternalAccountCreateRequest
}

type listExternalAccountsInput struct {
	Currency   string `query:"currency" maxLength:"8" doc:"Only accounts in this currency"`
	CustomerID string `query:"customerId" maxLength:"255" pattern:"^Customer:" doc:"Only this customer's accounts (a Customer id)"`
	Limit      int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor     string `query:"cursor" doc:"nextCursor of the previous page"`
}

type listPlatformExternalAccountsInput struct {
	Currency string `query:"currency" maxLength:"8" doc:"Only accounts in this currency"`
	Limit    int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor   string `query:"cursor" doc:"nextCursor of the previous page"`
}

type externalAccountIDInput struct {
	ExternalAccountID string `path:"externalAccountId" doc:"ExternalAccount:<uuid>"`
}

type externalAccountOutput struct{ Body ExternalAccount }

type externalAccountListOutput struct{ Body ExternalAccountList }

const externalTag = "External Accounts"

// externalCreateDoc ends both create operations' descriptions.
const externalCreateDoc = "The accountInfo fields depend on accountType and are checked for real: ABA routing " +
	"numbers (checksum), IBANs (country length and mod-97), CLABEs (check digit), BICs, PIX keys by type " +
	"(CPF/CNPJ check digits, e-mail, +55 phone, UUID), and wallet addresses (Solana base58 keys, EVM " +
	"addresses with EIP-55, Spark bech32m addresses, BOLT 11 invoices, Lightning addresses). A bad field is " +
	"a 400 naming it. The beneficiary's name is verified with the receiving institution: the account is " +
	"ACTIVE, or PENDING while the check is pending; an account the institution does not hold is 400 " +
	"INVALID_BANK_ACCOUNT. The same account twice (same owner, currency, type and identifier) is 409."

// externalAPI handles the external-account operations: the customers'
// (/customers/external-accounts) and the platform's own
// (/platform/external-accounts) share list, create, get and delete.
type externalAPI struct{ d Deps }

func registerExternal(api huma.API, d Deps) {
	h := externalAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.listCustomerAccountsOp(), h.listCustomerAccounts) },
		func(api huma.API) { huma.Register(api, h.createCustomerAccountOp(), h.createCustomerAccount) },
		func(api huma.API) { huma.Register(api, h.getCustomerAccountOp(), h.getCustomerAccount) },
		func(api huma.API) { huma.Register(api, h.deleteCustomerAccountOp(), h.deleteCustomerAccount) },
		func(api huma.API) { huma.Register(api, h.listPlatformAccountsOp(), h.listPlatformAccounts) },
		func(api huma.API) { huma.Register(api, h.createPlatformAccountOp(), h.createPlatformAccount) },
		func(api huma.API) { huma.Register(api, h.getPlatformAccountOp(), h.getPlatformAccount) },
		func(api huma.API) { huma.Register(api, h.deletePlatformAccountOp(), h.deletePlatformAccount) },
	)
}

func (h externalAPI) list(ctx context.Context, f external.Filter, limit int, cursor string) (*externalAccountListOutput, error) {
	cursors := cursorsOf(h.d, "external-accounts")
	page, err := cursors.page(limit, cursor)
	if err != nil {
		return nil, err
	}
	res, err := h.d.External.List(ctx, principal(ctx).PlatformID, f, page)
	if err != nil {
		return nil, apiError(err)
	}
	out := ExternalAccountList{Data: make([]ExternalAccount, len(res.Accounts)), HasMore: res.HasMore, TotalCount: res.Total}
	for i, a := range res.Accounts {
		out.Data[i] = externalAccountOut(a)
	}
	out.NextCursor = cursors.next(res.HasMore, res.Next)
	return &externalAccountListOutput{Body: out}, nil
}

func (h externalAPI) create(ctx context.Context, in external.Input) (*externalAccountOutput, error) {
	a, err := h.d.External.Create(ctx, principal(ctx).PlatformID, in)
	if err != nil {
		return nil, apiError(err)
	}
	return &externalAccountOutput{Body: externalAccountOut(a)}, nil
}

func (h externalAPI) get(ctx context.Context, id string, scope external.Scope) (*externalAccountOutput, error) {
	a, err := h.d.External.Get(ctx, principal(ctx).PlatformID, id, scope)
	if err != nil {
		return nil, apiError(err)
	}
	return &externalAccountOutput{Body: externalAccountOut(a)}, nil
}

func (h externalAPI) del(ctx context.Context, id string, scope external.Scope) (*struct{}, error) {
	if err := h.d.External.Delete(ctx, principal(ctx).PlatformID, id, scope); err != nil {
		return nil, apiError(err)
	}
	return nil, nil
}

func (externalAPI) listCustomerAccountsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listCustomerExternalAccounts",
		Method:      http.MethodGet,
		Path:        "/customers/external-accounts",
		Summary:     "List customer external accounts",
		Description: "Lists the external accounts of the platform's customers (or of one customer), oldest first, paginated.",
		Tags:        []string{externalTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h externalAPI) listCustomerAccounts(ctx context.Context, in *listExternalAccountsInput) (*externalAccountListOutput, error) {
	return h.list(ctx, external.Filter{CustomerID: in.CustomerID, Currency: in.Currency}, in.Limit, in.Cursor)
}

func (externalAPI) createCustomerAccountOp() huma.Operation {
	return huma.Operation{
		OperationID:   "createCustomerExternalAccount",
		Method:        http.MethodPost,
		Path:          "/customers/external-accounts",
		Summary:       "Add an external account",
		DefaultStatus: http.StatusCreated,
		Description: "Adds a bank account or wallet for a customer, or for the platform itself when customerId " +
			"is omitted. Setting defaultUmaDepositAccount moves the customer's default UMA deposit account here. " + externalCreateDoc,
		Tags:   []string{externalTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusConflict, http.StatusGone},
	}
}

func (h externalAPI) createCustomerAccount(ctx context.Context, in *createExternalAccountInput) (*externalAccountOutput, error) {
	b := in.Body
	ci, err := createInput(b.CustomerID, b.Currency, b.PlatformAccountID, b.OwnershipType, b.DefaultUmaDepositAccount, b.AccountInfo)
	if err != nil {
		return nil, err
	}
	return h.create(ctx, ci)
}

func (externalAPI) getCustomerAccountOp() huma.Operation {
	return huma.Operation{
		OperationID: "getCustomerExternalAccountById",
		Method:      http.MethodGet,
		Path:        "/customers/external-accounts/{externalAccountId}",
		Summary:     "Get an external account",
		Description: "Returns one of the platform's external accounts (a customer's, or the platform's own created on this path).",
		Tags:        []string{externalTag},
		Errors:      []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h externalAPI) getCustomerAccount(ctx context.Context, in *externalAccountIDInput) (*externalAccountOutput, error) {
	return h.get(ctx, in.ExternalAccountID, external.ScopeAll)
}

func (externalAPI) deleteCustomerAccountOp() huma.Operation {
	return huma.Operation{
		OperationID:   "deleteCustomerExternalAccountById",
		Method:        http.MethodDelete,
		Path:          "/customers/external-accounts/{externalAccountId}",
		Summary:       "Delete an external account",
		DefaultStatus: http.StatusNoContent,
		Description:   "Deletes an external account: it can no longer be paid or used, and stops being the customer's default UMA deposit account. Past transactions keep naming it.",
		Tags:          []string{externalTag},
		Errors:        []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h externalAPI) deleteCustomerAccount(ctx context.Context, in *externalAccountIDInput) (*struct{}, error) {
	return h.del(ctx, in.ExternalAccountID, external.ScopeAll)
}

func (externalAPI) listPlatformAccountsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listPlatformExternalAccounts",
		Method:      http.MethodGet,
		Path:        "/platform/external-accounts",
		Summary:     "List platform external accounts",
		Description: "Lists the platform's own external accounts, oldest first, paginated.",
		Tags:        []string{externalTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h externalAPI) listPlatformAccounts(ctx context.Context, in *listPlatformExternalAccountsInput) (*externalAccountListOutput, error) {
	return h.list(ctx, external.Filter{PlatformOnly: true, Currency: in.Currency}, in.Limit, in.Cursor)
}

func (externalAPI) createPlatformAccountOp() huma.Operation {
	return huma.Operation{
		OperationID:   "createPlatformExternalAccount",
		Method:        http.MethodPost,
		Path:          "/platform/external-accounts",
		Summary:       "Add a platform external account",
		DefaultStatus: http.StatusCreated,
		Description:   "Adds a bank account or wallet of the platform itself. " + externalCreateDoc,
		Tags:          []string{externalTag},
		Errors:        []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusConflict},
	}
}

func (h externalAPI) createPlatformAccount(ctx context.Context, in *createPlatformExternalAccountInput) (*externalAccountOutput, error) {
	b := in.Body
	ci, err := createInput("", b.Currency, b.PlatformAccountID, b.OwnershipType, false, b.AccountInfo)
	if err != nil {
		return nil, err
	}
	return h.create(ctx, ci)
}

func (externalAPI) getPlatformAccountOp() huma.Operation {
	return huma.Operation{
		OperationID: "getPlatformExternalAccountById",
		Method:      http.MethodGet,
		Path:        "/platform/external-accounts/{externalAccountId}",
		Summary:     "Get a platform external account",
		Description: "Returns one of the platform's own external accounts.",
		Tags:        []string{externalTag},
		Errors:      []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h externalAPI) getPlatformAccount(ctx context.Context, in *externalAccountIDInput) (*externalAccountOutput, error) {
	return h.get(ctx, in.ExternalAccountID, external.ScopePlatform)
}

func (externalAPI) deletePlatformAccountOp() huma.Operation {
	return huma.Operation{
		OperationID:   "deletePlatformExternalAccountById",
		Method:        http.MethodDelete,
		Path:          "/platform/external-accounts/{externalAccountId}",
		Summary:       "Delete a platform external account",
		DefaultStatus: http.StatusNoContent,
		Description:   "Deletes one of the platform's own external accounts.",
		Tags:          []string{externalTag},
		Errors:        []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h externalAPI) deletePlatformAccount(ctx context.Context, in *externalAccountIDInput) (*struct{}, error) {
	return h.del(ctx, in.ExternalAccountID, external.ScopePlatform)
}
