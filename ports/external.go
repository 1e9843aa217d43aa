package ports

import (
	"context"
	"time"
)

// AccountInfo is an external account's accountInfo: one flat record holding
// the fields of every accountType variant (each variant uses its subset; the
// per-type rules live in core as a table). Empty strings are unset.
//
// It, ExternalAccount, Beneficiary, Address and RailRequest are stored as
// JSON (job payloads, event snapshots, the external account's info
// column) with empty fields left out (omitzero), so a payload carries the
// fields its account type uses and no more.
type AccountInfo struct {
	AccountType string `json:",omitzero"` // USD_ACCOUNT, EUR_ACCOUNT, MXN_ACCOUNT, SPARK_WALLET, LIGHTNING, SOLANA_WALLET, ...

	AccountNumber             string `json:",omitzero"`
	RoutingNumber             string `json:",omitzero"`
	BankAccountType           string `json:",omitzero"` // CHECKING, SAVINGS
	BankName                  string `json:",omitzero"`
	IntermediaryBankName      string `json:",omitzero"`
	IntermediaryRoutingNumber string `json:",omitzero"`
	FiToFiInformation         string `json:",omitzero"`
	IBAN                      string `json:",omitzero"`
	SwiftCode                 string `json:",omitzero"`
	ClabeNumber               string `json:",omitzero"`
	PixKey                    string `json:",omitzero"`
	PixKeyType                string `json:",omitzero"`
	TaxID                     string `json:",omitzero"`
	SortCode                  string `json:",omitzero"`
	IFSC                      string `json:",omitzero"`
	VPA                       string `json:",omitzero"`
	Rail                      string `json:",omitzero"`
	BankCode                  string `json:",omitzero"`
	BranchCode                string `json:",omitzero"`
	PhoneNumber               string `json:",omitzero"`
	Provider                  string `json:",omitzero"`
	Region                    string `json:",omitzero"`
	Country                   string `json:",omitzero"`
	Address                   string `json:",omitzero"` // wallet address
	VaspName                  string `json:",omitzero"`
	Invoice                   string `json:",omitzero"`
	Bolt12                    string `json:",omitzero"`
	LightningAddress          string `json:",omitzero"`

	Beneficiary *Beneficiary `json:",omitzero"`
}

// Beneficiary is who holds an external account (reference beneficiary).
type Beneficiary struct {
	BeneficiaryType    string   `json:",omitzero"` // INDIVIDUAL or BUSINESS
	FullName           string   `json:",omitzero"`
	LegalName          string   `json:",omitzero"`
	RegistrationNumber string   `json:",omitzero"`
	TaxID              string   `json:",omitzero"`
	BirthDate          string   `json:",omitzero"`
	Nationality        string   `json:",omitzero"`
	Email              string   `json:",omitzero"`
	PhoneNumber        string   `json:",omitzero"`
	CountryOfResidence string   `json:",omitzero"`
	DocumentType       string   `json:",omitzero"`
	DocumentNumber     string   `json:",omitzero"`
	Address            *Address `json:",omitzero"`
}

type ExternalAccount struct {
	ID         string `json:",omitzero"` // "ExternalAccount:<uuid>"
	PlatformID string `json:",omitzero"`
	CustomerID string `json:",omitzero"` // empty: the platform's own account
	Currency   string `json:",omitzero"`
	// Status: PENDING, ACTIVE, UNDER_REVIEW, INACTIVE.
	Status            string      `json:",omitzero"`
	PlatformAccountID string      `json:",omitzero"`
	OwnershipType     string      `json:",omitzero"` // FIRST_PARTY, THIRD_PARTY or empty
	Info              AccountInfo `json:",omitzero"`
	// DefaultUmaDepositAccount: at most one per customer.
	DefaultUmaDepositAccount bool `json:",omitzero"`
	// BeneficiaryVerificationStatus: MATCHED, PARTIAL_MATCH, NOT_MATCHED,
	// UNSUPPORTED, CHECKED_BY_RECEIVING_FI, PENDING.
	BeneficiaryVerificationStatus string    `json:",omitzero"`
	BeneficiaryVerifiedName       string    `json:",omitzero"`
	IsDeleted                     bool      `json:",omitzero"`
	CreatedAt                     time.Time `json:",omitzero"`
	UpdatedAt                     time.Time `json:",omitzero"`
}

type ExternalAccountFilter struct {
	PlatformID string // always set by core
	// CustomerID filters to one customer's accounts; PlatformOnly selects
	// the platform's own; neither: all customer accounts of the platform.
	CustomerID   string
	PlatformOnly bool
	Currency     string
}

type ExternalAccountRepo interface {
	// Create inserts; when a.DefaultUmaDepositAccount is set it first clears
	// the customer's previous default in the same transaction.
	Create(ctx context.Context, a ExternalAccount) error
	// Get returns a live (not deleted) account of the platform or ErrNotFound.
	Get(ctx context.Context, platformID, id string) (ExternalAccount, error)
	// Update replaces a stored account; setting DefaultUmaDepositAccount
	// clears the customer's previous default in the same statement or
	// transaction, so two defaults are never visible.
	Update(ctx context.Context, a ExternalAccount) error
	// List pages live accounts by (CreatedAt, ID).
	List(ctx context.Context, f ExternalAccountFilter, page Page) (rows []ExternalAccount, total int, err error)
}
