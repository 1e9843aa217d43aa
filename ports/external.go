package ports

import (
	"context"
	"time"
)

// AccountInfo is an external account's accountInfo: one flat record holding
// the fields of every accountType variant (each variant uses its subset; the
// per-type rules live in core as a table). Empty strings are unset.
type AccountInfo struct {
	AccountType string // USD_ACCOUNT, EUR_ACCOUNT, MXN_ACCOUNT, SPARK_WALLET, LIGHTNING, SOLANA_WALLET, ...

	AccountNumber             string
	RoutingNumber             string
	BankAccountType           string // CHECKING, SAVINGS
	BankName                  string
	IntermediaryBankName      string
	IntermediaryRoutingNumber string
	FiToFiInformation         string
	IBAN                      string
	SwiftCode                 string
	ClabeNumber               string
	PixKey                    string
	PixKeyType                string
	TaxID                     string
	SortCode                  string
	IFSC                      string
	VPA                       string
	Rail                      string
	BankCode                  string
	BranchCode                string
	PhoneNumber               string
	Provider                  string
	Region                    string
	Country                   string
	Address                   string // wallet address
	VaspName                  string
	Invoice                   string
	Bolt12                    string
	LightningAddress          string

	Beneficiary *Beneficiary
}

// Beneficiary is who holds an external account (reference beneficiary).
type Beneficiary struct {
	BeneficiaryType    string // INDIVIDUAL or BUSINESS
	FullName           string
	LegalName          string
	RegistrationNumber string
	TaxID              string
	BirthDate          string
	Nationality        string
	Email              string
	PhoneNumber        string
	CountryOfResidence string
	DocumentType       string
	DocumentNumber     string
	Address            *Address
}

type ExternalAccount struct {
	ID         string // "ExternalAccount:<uuid>"
	PlatformID string
	CustomerID string // empty: the platform's own account
	Currency   string
	// Status: PENDING, ACTIVE, UNDER_REVIEW, INACTIVE.
	Status            string
	PlatformAccountID string
	OwnershipType     string // FIRST_PARTY, THIRD_PARTY or empty
	Info              AccountInfo
	// DefaultUmaDepositAccount: at most one per customer.
	DefaultUmaDepositAccount bool
	// BeneficiaryVerificationStatus: MATCHED, PARTIAL_MATCH, NOT_MATCHED,
	// UNSUPPORTED, CHECKED_BY_RECEIVING_FI, PENDING.
	BeneficiaryVerificationStatus string
	BeneficiaryVerifiedName       string
	IsDeleted                     bool
	CreatedAt                     time.Time
	UpdatedAt                     time.Time
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
