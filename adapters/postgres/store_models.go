package postgres

import (
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// The bun models of the business tables (migrations/0003_business.sql).
// They stay private: ports types carry no tags. The jsonb parts are mirror
// structs with JSON tags; converting between a mirror and its ports type is a
// plain Go conversion, so a field added to one and not the other fails to
// compile.

type storePlatformRow struct {
	bun.BaseModel `bun:"table:platforms"`

	ID                   string                 `bun:"id,pk"`
	Name                 string                 `bun:"name"`
	UmaDomain            string                 `bun:"uma_domain"`
	Currencies           []string               `bun:"currencies,array"`
	CurrencySettings     []storeCurrencySetting `bun:"currency_settings,type:jsonb"`
	WebhookEndpoint      string                 `bun:"webhook_endpoint"`
	OTPLength            int                    `bun:"otp_length"`
	OTPExpirationSeconds int                    `bun:"otp_expiration_seconds"`
	OTPAlphanumeric      bool                   `bun:"otp_alphanumeric"`
	OTPEmail             *storeOTPEmail         `bun:"otp_email,type:jsonb"`
	CreatedAt            time.Time              `bun:"created_at"`
	UpdatedAt            time.Time              `bun:"updated_at"`
}

// storeOTPEmail is the OTP e-mail's branding in otp_email (nil: none set).
type storeOTPEmail struct {
	AppName       string `json:"appName,omitempty"`
	SenderAddress string `json:"senderAddress,omitempty"`
	SenderName    string `json:"senderName,omitempty"`
	ReplyTo       string `json:"replyTo,omitempty"`
	LogoURL       string `json:"logoUrl,omitempty"`
}

// storeCurrencySetting mirrors ports.CurrencySetting in currency_settings.
type storeCurrencySetting struct {
	Code                       string                   `json:"code"`
	MinAmount                  int64                    `json:"minAmount"`
	MaxAmount                  int64                    `json:"maxAmount"`
	RequiredCounterpartyFields []storeCounterpartyField `json:"requiredCounterpartyFields"`
	EnabledTransactionTypes    []string                 `json:"enabledTransactionTypes"`
}

type storeCounterpartyField struct {
	Name      string `json:"name"`
	Mandatory bool   `json:"mandatory"`
}

func storePlatformToRow(p ports.Platform) storePlatformRow {
	row := storePlatformRow{
		ID: p.ID, Name: p.Name, UmaDomain: p.UmaDomain, Currencies: p.Currencies,
		WebhookEndpoint: p.WebhookEndpoint, OTPLength: p.EmbeddedWallet.OTPLength,
		OTPExpirationSeconds: int(p.EmbeddedWallet.OTPLifetime / time.Second),
		OTPAlphanumeric:      p.EmbeddedWallet.Alphanumeric,
		CreatedAt:            ports.Stored(p.CreatedAt), UpdatedAt: ports.Stored(p.UpdatedAt),
	}
	w := p.EmbeddedWallet
	if mail := (storeOTPEmail{AppName: w.AppName, SenderAddress: w.SenderAddress, SenderName: w.SenderName,
		ReplyTo: w.ReplyTo, LogoURL: w.LogoURL}); mail != (storeOTPEmail{}) {
		row.OTPEmail = &mail
	}
	if p.CurrencySettings != nil {
		row.CurrencySettings = make([]storeCurrencySetting, len(p.CurrencySettings))
		for i, c := range p.CurrencySettings {
			fields := make([]storeCounterpartyField, len(c.RequiredCounterpartyFields))
			for j, f := range c.RequiredCounterpartyFields {
				fields[j] = storeCounterpartyField(f)
			}
			row.CurrencySettings[i] = storeCurrencySetting{Code: c.Code, MinAmount: c.MinAmount, MaxAmount: c.MaxAmount,
				RequiredCounterpartyFields: fields, EnabledTransactionTypes: c.EnabledTransactionTypes}
		}
	}
	return row
}

func (r storePlatformRow) toPort() ports.Platform {
	p := ports.Platform{
		ID: r.ID, Name: r.Name, UmaDomain: r.UmaDomain, Currencies: r.Currencies,
		WebhookEndpoint: r.WebhookEndpoint,
		EmbeddedWallet: ports.EmbeddedWalletConfig{OTPLength: r.OTPLength,
			OTPLifetime: time.Duration(r.OTPExpirationSeconds) * time.Second, Alphanumeric: r.OTPAlphanumeric},
		CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt),
	}
	if m := r.OTPEmail; m != nil {
		w := &p.EmbeddedWallet
		w.AppName, w.SenderAddress, w.SenderName, w.ReplyTo, w.LogoURL = m.AppName, m.SenderAddress, m.SenderName, m.ReplyTo, m.LogoURL
	}
	if r.CurrencySettings != nil {
		p.CurrencySettings = make([]ports.CurrencySetting, len(r.CurrencySettings))
		for i, c := range r.CurrencySettings {
			p.CurrencySettings[i] = c.toPort()
		}
	}
	return p
}

func (c storeCurrencySetting) toPort() ports.CurrencySetting {
	fields := make([]ports.CounterpartyField, len(c.RequiredCounterpartyFields))
	for j, f := range c.RequiredCounterpartyFields {
		fields[j] = ports.CounterpartyField(f)
	}
	return ports.CurrencySetting{Code: c.Code, MinAmount: c.MinAmount, MaxAmount: c.MaxAmount,
		RequiredCounterpartyFields: fields, EnabledTransactionTypes: c.EnabledTransactionTypes}
}

type storeCredentialRow struct {
	bun.BaseModel `bun:"table:api_credentials"`

	ClientID    string     `bun:"token_id,pk"`
	ID          string     `bun:"id"`
	PlatformID  string     `bun:"platform_id"`
	Name        string     `bun:"name"`
	Permissions []string   `bun:"permissions,array"`
	SecretHash  []byte     `bun:"secret_hash"`
	CreatedAt   time.Time  `bun:"created_at"`
	UpdatedAt   time.Time  `bun:"updated_at"`
	DeletedAt   *time.Time `bun:"deleted_at"`
}

func storeCredentialToRow(c ports.APICredential) storeCredentialRow {
	return storeCredentialRow{
		ClientID: c.ClientID, ID: c.ID, PlatformID: c.PlatformID, Name: c.Name, Permissions: c.Permissions,
		SecretHash: c.SecretHash, CreatedAt: ports.Stored(c.CreatedAt), UpdatedAt: ports.Stored(c.UpdatedAt),
		DeletedAt: ports.StoredPtr(c.DeletedAt),
	}
}

func (r storeCredentialRow) toPort() ports.APICredential {
	return ports.APICredential{
		ClientID: r.ClientID, ID: r.ID, PlatformID: r.PlatformID, Name: r.Name, Permissions: r.Permissions,
		SecretHash: r.SecretHash, CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt),
		DeletedAt: ports.StoredPtr(r.DeletedAt),
	}
}

type storeAddressJSON struct {
	Line1      string `json:"line1,omitempty"`
	Line2      string `json:"line2,omitempty"`
	City       string `json:"city,omitempty"`
	State      string `json:"state,omitempty"`
	PostalCode string `json:"postalCode,omitempty"`
	Country    string `json:"country,omitempty"`
}

type storeConsentJSON struct {
	AcceptedAt       time.Time `json:"acceptedAt"`
	IPAddress        string    `json:"ipAddress,omitempty"`
	TermsVersion     string    `json:"termsVersion,omitempty"`
	AcceptanceMethod string    `json:"acceptanceMethod,omitempty"`
}

type storeIndividualJSON struct {
	FullName          string `json:"fullName,omitempty"`
	BirthDate         string `json:"birthDate,omitempty"`
	Nationality       string `json:"nationality,omitempty"`
	IDType            string `json:"idType,omitempty"`
	Identifier        string `json:"identifier,omitempty"`
	CountryOfIssuance string `json:"countryOfIssuance,omitempty"`

	SourceOfFundsCategories          []string `json:"sourceOfFundsCategories"`
	SourceOfFundsOtherDescription    string   `json:"sourceOfFundsOtherDescription,omitempty"`
	SourceOfWealthCategories         []string `json:"sourceOfWealthCategories"`
	SourceOfWealthOtherDescription   string   `json:"sourceOfWealthOtherDescription,omitempty"`
	PurposeOfAccount                 string   `json:"purposeOfAccount,omitempty"`
	PurposeOfAccountOtherDescription string   `json:"purposeOfAccountOtherDescription,omitempty"`
	ExpectedMonthlyTransactionCount  string   `json:"expectedMonthlyTransactionCount,omitempty"`
	ExpectedMonthlyTransactionVolume string   `json:"expectedMonthlyTransactionVolume,omitempty"`
	AnnualIncomeRange                string   `json:"annualIncomeRange,omitempty"`
	NetWorthRange                    string   `json:"netWorthRange,omitempty"`
	PepStatus                        string   `json:"pepStatus,omitempty"`
}

type storeBusinessJSON struct {
	LegalName                        string   `json:"legalName,omitempty"`
	DoingBusinessAs                  string   `json:"doingBusinessAs,omitempty"`
	Country                          string   `json:"country,omitempty"`
	RegistrationNumber               string   `json:"registrationNumber,omitempty"`
	IncorporatedOn                   string   `json:"incorporatedOn,omitempty"`
	EntityType                       string   `json:"entityType,omitempty"`
	TaxID                            string   `json:"taxId,omitempty"`
	CountriesOfOperation             []string `json:"countriesOfOperation"`
	BusinessType                     string   `json:"businessType,omitempty"`
	PurposeOfAccount                 string   `json:"purposeOfAccount,omitempty"`
	SourceOfFunds                    string   `json:"sourceOfFunds,omitempty"`
	ExpectedMonthlyTransactionCount  string   `json:"expectedMonthlyTransactionCount,omitempty"`
	ExpectedMonthlyTransactionVolume string   `json:"expectedMonthlyTransactionVolume,omitempty"`
	ExpectedRecipientJurisdictions   []string `json:"expectedRecipientJurisdictions"`
	NaicsCode                        string   `json:"naicsCode,omitempty"`
	SourceOfFundsCategories          []string `json:"sourceOfFundsCategories"`
	SourceOfFundsOtherDescription    string   `json:"sourceOfFundsOtherDescription,omitempty"`
	PurposeOfAccountOtherDescription string   `json:"purposeOfAccountOtherDescription,omitempty"`
	ExpectedCounterpartyCountries    []string `json:"expectedCounterpartyCountries"`
	PrimaryContactFirstName          string   `json:"primaryContactFirstName,omitempty"`
	PrimaryContactLastName           string   `json:"primaryContactLastName,omitempty"`
}

type storeCustomerRow struct {
	bun.BaseModel `bun:"table:customers"`

	ID                  string               `bun:"id,pk"`
	PlatformID          string               `bun:"platform_id"`
	PlatformCustomerID  string               `bun:"platform_customer_id"`
	CustomerType        string               `bun:"customer_type"`
	UmaAddress          string               `bun:"uma_address"`
	Region              string               `bun:"region"`
	Currencies          []string             `bun:"currencies,array"`
	Email               string               `bun:"email"`
	PhoneNumber         string               `bun:"phone_number"`
	KYCStatus           string               `bun:"kyc_status"`
	Address             *storeAddressJSON    `bun:"address,type:jsonb"`
	EndUserTermsConsent *storeConsentJSON    `bun:"end_user_terms_consent,type:jsonb"`
	Individual          *storeIndividualJSON `bun:"individual,type:jsonb"`
	Business            *storeBusinessJSON   `bun:"business,type:jsonb"`
	IsDeleted           bool                 `bun:"is_deleted"`
	CreatedAt           time.Time            `bun:"created_at"`
	UpdatedAt           time.Time            `bun:"updated_at"`
}

func storeCustomerToRow(c ports.Customer) storeCustomerRow {
	r := storeCustomerRow{
		ID: c.ID, PlatformID: c.PlatformID, PlatformCustomerID: c.PlatformCustomerID,
		CustomerType: c.CustomerType, UmaAddress: c.UmaAddress, Region: c.Region,
		Currencies: c.Currencies, Email: c.Email, PhoneNumber: c.PhoneNumber, KYCStatus: c.KYCStatus,
		IsDeleted: c.IsDeleted, CreatedAt: ports.Stored(c.CreatedAt), UpdatedAt: ports.Stored(c.UpdatedAt),
	}
	if c.Address != nil {
		a := storeAddressJSON(*c.Address)
		r.Address = &a
	}
	if c.EndUserTermsConsent != nil {
		e := storeConsentJSON(*c.EndUserTermsConsent)
		e.AcceptedAt = ports.Stored(e.AcceptedAt)
		r.EndUserTermsConsent = &e
	}
	if c.Individual != nil {
		in := storeIndividualJSON(*c.Individual)
		r.Individual = &in
	}
	if c.Business != nil {
		b := storeBusinessJSON(*c.Business)
		r.Business = &b
	}
	return r
}

func (r storeCustomerRow) toPort() ports.Customer {
	c := ports.Customer{
		ID: r.ID, PlatformID: r.PlatformID, PlatformCustomerID: r.PlatformCustomerID,
		CustomerType: r.CustomerType, UmaAddress: r.UmaAddress, Region: r.Region,
		Currencies: r.Currencies, Email: r.Email, PhoneNumber: r.PhoneNumber, KYCStatus: r.KYCStatus,
		IsDeleted: r.IsDeleted, CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt),
	}
	if r.Address != nil {
		a := ports.Address(*r.Address)
		c.Address = &a
	}
	if r.EndUserTermsConsent != nil {
		e := ports.EndUserTermsConsent(*r.EndUserTermsConsent)
		e.AcceptedAt = ports.Stored(e.AcceptedAt)
		c.EndUserTermsConsent = &e
	}
	if r.Individual != nil {
		in := ports.IndividualInfo(*r.Individual)
		c.Individual = &in
	}
	if r.Business != nil {
		b := ports.BusinessInfo(*r.Business)
		c.Business = &b
	}
	return c
}

type storeAccountRow struct {
	bun.BaseModel `bun:"table:internal_accounts"`

	// The json names are the columns' (a balance event's snapshot is
	// to_jsonb of the row).
	ID             string    `bun:"id,pk" json:"id"`
	PlatformID     string    `bun:"platform_id" json:"platform_id"`
	CustomerID     string    `bun:"customer_id" json:"customer_id"`
	Type           string    `bun:"type" json:"type"`
	Status         string    `bun:"status" json:"status"`
	Currency       string    `bun:"currency" json:"currency"`
	PrivateEnabled bool      `bun:"private_enabled" json:"private_enabled"`
	CreatedAt      time.Time `bun:"created_at" json:"created_at"`
	UpdatedAt      time.Time `bun:"updated_at" json:"updated_at"`
}

func storeAccountToRow(a ports.InternalAccount) storeAccountRow {
	return storeAccountRow{
		ID: a.ID, PlatformID: a.PlatformID, CustomerID: a.CustomerID, Type: a.Type, Status: a.Status,
		Currency: a.Currency, PrivateEnabled: a.PrivateEnabled,
		CreatedAt: ports.Stored(a.CreatedAt), UpdatedAt: ports.Stored(a.UpdatedAt),
	}
}

func (r storeAccountRow) toPort() ports.InternalAccount {
	return ports.InternalAccount{
		ID: r.ID, PlatformID: r.PlatformID, CustomerID: r.CustomerID, Type: r.Type, Status: r.Status,
		Currency: r.Currency, PrivateEnabled: r.PrivateEnabled,
		CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt),
	}
}

type storeAuthMethodRow struct {
	bun.BaseModel `bun:"table:auth_methods"`

	ID           string     `bun:"id,pk"`
	PlatformID   string     `bun:"platform_id"`
	AccountID    string     `bun:"account_id"`
	Type         string     `bun:"type"`
	Nickname     string     `bun:"nickname"`
	CredentialID string     `bun:"credential_id"`
	Issuer       string     `bun:"oidc_issuer"`
	Subject      string     `bun:"oidc_subject"`
	Audience     string     `bun:"oidc_audience"`
	Passkey      []byte     `bun:"passkey"`
	SignCount    int64      `bun:"sign_count"`
	CreatedAt    time.Time  `bun:"created_at"`
	UpdatedAt    time.Time  `bun:"updated_at"`
	RevokedAt    *time.Time `bun:"revoked_at"`
}

func storeAuthMethodToRow(m ports.AuthMethod) storeAuthMethodRow {
	return storeAuthMethodRow{
		ID: m.ID, PlatformID: m.PlatformID, AccountID: m.AccountID, Type: m.Type, Nickname: m.Nickname,
		CredentialID: m.CredentialID, Issuer: m.Issuer, Subject: m.Subject, Audience: m.Audience, Passkey: m.Passkey,
		SignCount: int64(m.SignCount), CreatedAt: ports.Stored(m.CreatedAt), UpdatedAt: ports.Stored(m.UpdatedAt),
	}
}

func (r storeAuthMethodRow) toPort() ports.AuthMethod {
	return ports.AuthMethod{
		ID: r.ID, PlatformID: r.PlatformID, AccountID: r.AccountID, Type: r.Type, Nickname: r.Nickname,
		CredentialID: r.CredentialID, Issuer: r.Issuer, Subject: r.Subject, Audience: r.Audience, Passkey: r.Passkey,
		SignCount: uint32(r.SignCount), CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt),
	}
}
