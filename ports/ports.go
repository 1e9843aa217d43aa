// Package ports declares what corridor's core needs from the world: stores
// (with a unit of work), the ledger store, caches, the clock and id source.
// Plain types only; adapters implement these, core consumes them.
package ports

import (
	"context"
	"errors"
	"time"

	"github.com/corridorpay/corridor/ledger"
)

// Clock is the only source of time in core. Tests use testkit.FakeClock.
type Clock interface {
	Now() time.Time
}

// Stored is t as the stores keep it: in UTC, to the microsecond (what
// PostgreSQL's timestamptz holds). A time that goes into a resource, from
// a clock or from a request, is made Stored first, so the response that
// writes the resource shows what every later read returns.
func Stored(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// StoredPtr is Stored for an optional time (nil stays nil).
func StoredPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	s := Stored(*t)
	return &s
}

// IDs makes resource identifiers of the form "<Type>:<uuid>".
type IDs interface {
	New(resourceType string) string
}

// Store errors. Adapters map their constraint violations onto these so core
// can decide without knowing SQL.
var (
	ErrNotFound = errors.New("not found")
	// ErrConflict is a unique-constraint violation; the wrapped error names it.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable says a backing service cannot take the work now (a
	// full pool, a database refusing connections); the request may be
	// retried. The HTTP adapter answers it 503 with Retry-After.
	ErrUnavailable = errors.New("backing service unavailable")
)

// ConflictError says which uniqueness rule a write broke.
type ConflictError struct {
	// Constraint is one of the Unique* names below.
	Constraint string
}

func (e *ConflictError) Error() string   { return "conflict: " + e.Constraint }
func (e *ConflictError) Is(t error) bool { return t == ErrConflict }

// Uniqueness rules the stores enforce.
const (
	UniqueUmaAddress         = "customers_uma_address"          // per platform, among all customers
	UniquePlatformCustomerID = "customers_platform_customer_id" // per platform, among non-deleted customers
	UniqueCredentialClientID = "api_credentials_token_id"
	UniqueEmailOTPPerAccount = "auth_methods_email_otp_account"
	UniquePasskeyPerAccount  = "auth_methods_passkey_account" // one live PASSKEY per account and credentialId
	UniqueOAuthPerAccount    = "auth_methods_oauth_account"   // one live OAUTH per account and issuer+subject
	UniqueInvitationCode     = "invitations_pkey"
	// ConflictSignCount is AdvanceSignCount's refusal to move a counter back.
	ConflictSignCount = "auth_methods_sign_count"
	// ConflictInvitationStatus is InvitationRepo.Update's refusal: the
	// invitation is no longer in the status the change was made from.
	ConflictInvitationStatus = "invitations_status"
)

// Store runs units of work. InTx runs fn in one transaction: everything fn
// writes through tx commits together or not at all. fn may be retried on a
// serialization failure, so it must not have side effects outside tx.
type Store interface {
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// Read gives non-transactional reads (the same repositories, no locks).
	Read() Tx
}

// Tx is a unit of work's view of the stores.
type Tx interface {
	Platforms() PlatformRepo
	Customers() CustomerRepo
	InternalAccounts() InternalAccountRepo
	AuthMethods() AuthMethodRepo
	// WalletSessions keeps embedded-wallet sessions (wallet.go).
	WalletSessions() WalletSessionRepo
	// WalletSecrets keeps embedded wallets' sealed secrets (wallet.go).
	WalletSecrets() WalletSecretRepo
	// LedgerAccounts creates ledger accounts in the same transaction as the
	// business records that own them (a customer's internal accounts).
	LedgerAccounts() LedgerAccountCreator
	ExternalAccounts() ExternalAccountRepo
	Transactions() TransactionRepo
	// Jobs enqueues background work atomically with the unit of work (and
	// claims it, outside one: Store.Read().Jobs()).
	Jobs() JobQueue
	// Lookups keeps receiver lookups for the quotes that follow them.
	Lookups() LookupRepo
	// Parties reads a payment's internal and external account and the
	// internal account's customer together (one round trip on a database).
	Parties() PartyReader
	// Quotes keeps quotes; GetForUpdate serialises executions of one quote.
	Quotes() QuoteRepo
	// KYC/KYB (kyc.go): beneficial owners, verifications, documents;
	// then Events (events.go), the one outbox of every webhook event.
	BeneficialOwners() BeneficialOwnerRepo
	Verifications() VerificationRepo
	Documents() DocumentRepo
	Events() EventRepo
	// Invitations keeps UMA invitations (invitations.go).
	Invitations() InvitationRepo
	// Agents keeps agents and their device codes, AgentActions what they
	// initiate (agents.go).
	Agents() AgentRepo
	AgentActions() AgentActionRepo
}

// Parties are what a payment between an internal and an external account
// of one platform reads before it moves money. Each part is what its own
// repository's Get returns, or the zero value where that Get would answer
// ErrNotFound: Internal as InternalAccounts().Get, External as
// ExternalAccounts().Get (deleted accounts are absent), Customer as
// Customers().Get of Internal.CustomerID (deleted customers are present,
// with IsDeleted; zero for a platform account).
type Parties struct {
	Internal InternalAccount
	External ExternalAccount
	Customer Customer
	// Sessions are an EMBEDDED_WALLET's sessions active at the read's
	// sessionsAt, oldest first (what its stamps are checked against);
	// none when sessionsAt is zero.
	Sessions []WalletSession
	// Currency is the platform's setting of the internal account's
	// currency (PATCH /config supportedCurrencies); zero (Code "") when
	// the platform has none for it, or the account is absent.
	Currency CurrencySetting
}

// PartyReader reads Parties. sessionsAt is the time an embedded wallet's
// sessions must be active at; zero when the caller checks no stamp, which
// spares the read (a quote's creation, a transfer).
type PartyReader interface {
	Get(ctx context.Context, platformID, internalAccountID, externalAccountID string, sessionsAt time.Time) (Parties, error)
	// OfQuote reads the platform's quote (as Quotes().Get; ErrNotFound
	// when absent) and the Parties of its source and destination accounts
	// together: a quote's execution reads both before it moves money, in
	// one round trip on a database.
	OfQuote(ctx context.Context, platformID, quoteID string, sessionsAt time.Time) (Quote, Parties, error)
}

// LedgerAccountCreator creates ledger accounts; creating an account that
// already exists with the same currency, kind and flags is a no-op.
type LedgerAccountCreator interface {
	Create(ctx context.Context, accts ...ledger.Account) error
}

// Page asks for one page of a list: Limit rows after the opaque position
// After (empty for the first page). Lists are ordered by (CreatedAt, ID)
// ascending unless a list says otherwise.
type Page struct {
	Limit int
	After *Position
}

// Position is a keyset cursor position: the sort key of the last row seen.
type Position struct {
	CreatedAt time.Time
	ID        string
}

// ---- platforms and credentials ----

type Platform struct {
	ID        string // "Platform:<uuid>"
	Name      string
	UmaDomain string
	// Currencies the platform holds internal accounts in.
	Currencies []string
	// CurrencySettings are the per-currency settings set through the
	// platform configuration, at most one per code of Currencies (a
	// currency without one has the defaults).
	CurrencySettings []CurrencySetting
	// WebhookEndpoint is where the platform's events go (empty: none).
	WebhookEndpoint string
	EmbeddedWallet  EmbeddedWalletConfig
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// CurrencySetting is a platform's setting of one of its currencies.
type CurrencySetting struct {
	Code string
	// MinAmount and MaxAmount bound an amount sent, in minor units.
	MinAmount, MaxAmount int64
	// RequiredCounterpartyFields are the counterparty fields the platform
	// asks for (CustomerInfoFieldName values).
	RequiredCounterpartyFields []CounterpartyField
	// EnabledTransactionTypes are INCOMING and/or OUTGOING.
	EnabledTransactionTypes []string
}

// CounterpartyField is one field asked of a counterparty.
type CounterpartyField struct {
	Name      string
	Mandatory bool
}

// EmbeddedWalletConfig is a platform's embedded-wallet settings; a zero
// field is unset (the service's default applies).
type EmbeddedWalletConfig struct {
	OTPLength   int           // symbols of an EMAIL_OTP code
	OTPLifetime time.Duration // how long a code lives (whole seconds)
	// Alphanumeric codes draw upper-case letters as well as digits.
	Alphanumeric bool
	// The OTP e-mail's branding: the app name it shows, its sender's
	// address and display name, its reply-to address and a logo URL.
	AppName, SenderAddress, SenderName, ReplyTo, LogoURL string
}

// APICredential is a platform's API token: its Basic credential and what
// it may do. Only the SHA-256 of the secret is stored (secrets are 256-bit
// random values, so a fast hash is the right tool); comparisons are
// constant-time. A deleted token is kept (DeletedAt set) and no longer
// authenticates, nor is it listed or found.
type APICredential struct {
	ID          string // "Token:<uuid>"
	ClientID    string // the Basic user name
	PlatformID  string
	Name        string
	Permissions []string // VIEW, TRANSACT, MANAGE (core/platforms), in that order
	SecretHash  []byte
	CreatedAt   time.Time
	UpdatedAt   time.Time
	DeletedAt   *time.Time
}

// Position is the token's place in a list (creation time, id).
func (c APICredential) Position() Position { return Position{CreatedAt: c.CreatedAt, ID: c.ID} }

// CredentialFilter is the reference's listTokens query. Zero values do not
// filter; deleted tokens are never listed.
type CredentialFilter struct {
	PlatformID    string // always set by core
	Name          string
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	UpdatedAfter  *time.Time
	UpdatedBefore *time.Time
}

type PlatformRepo interface {
	Create(ctx context.Context, p Platform) error
	Get(ctx context.Context, id string) (Platform, error)
	// GetForUpdate is Get with the row locked until the unit of work ends.
	GetForUpdate(ctx context.Context, id string) (Platform, error)
	// Update writes every field of p but ID, Name and CreatedAt
	// (ErrNotFound when no such platform).
	Update(ctx context.Context, p Platform) error
	List(ctx context.Context) ([]Platform, error)
	// CreateCredential inserts; a taken client id (deleted tokens' too) is
	// a *ConflictError naming UniqueCredentialClientID.
	CreateCredential(ctx context.Context, c APICredential) error
	// CredentialByClientID returns the credential with that Basic user
	// name, deleted ones included (DeletedAt set: core refuses them), or
	// ErrNotFound.
	CredentialByClientID(ctx context.Context, clientID string) (APICredential, error)
	// Credential returns the platform's live token with that id, or
	// ErrNotFound (another platform's, or deleted).
	Credential(ctx context.Context, platformID, id string) (APICredential, error)
	// ListCredentials returns up to page.Limit+1 live tokens (the extra tells
	// hasMore) in (CreatedAt, ID) order, and the total matching the filter.
	ListCredentials(ctx context.Context, f CredentialFilter, page Page) (rows []APICredential, total int, err error)
	// LiveCredentialsForUpdate returns the platform's live tokens with their
	// rows locked until the transaction ends, so two units deciding on the
	// same platform's tokens (the last MANAGE token) run one after the other.
	LiveCredentialsForUpdate(ctx context.Context, platformID string) ([]APICredential, error)
	// DeleteCredential marks the platform's live token deleted at `at`, or
	// answers ErrNotFound.
	DeleteCredential(ctx context.Context, platformID, id string, at time.Time) error
}

// ---- customers ----

type Address struct {
	Line1, Line2, City, State, PostalCode, Country string `json:",omitzero"`
}

type EndUserTermsConsent struct {
	AcceptedAt       time.Time
	IPAddress        string
	TermsVersion     string
	AcceptanceMethod string
}

// IndividualInfo holds an INDIVIDUAL customer's profile (reference
// IndividualCustomerFields and CustomerEdd). Empty strings are unset.
type IndividualInfo struct {
	FullName          string
	BirthDate         string // YYYY-MM-DD
	Nationality       string
	IDType            string
	Identifier        string // write-only on the wire
	CountryOfIssuance string

	SourceOfFundsCategories          []string
	SourceOfFundsOtherDescription    string
	SourceOfWealthCategories         []string
	SourceOfWealthOtherDescription   string
	PurposeOfAccount                 string
	PurposeOfAccountOtherDescription string
	ExpectedMonthlyTransactionCount  string
	ExpectedMonthlyTransactionVolume string
	AnnualIncomeRange                string
	NetWorthRange                    string
	PepStatus                        string
}

// BusinessInfo is a BUSINESS customer's businessInfo (reference BusinessInfo).
type BusinessInfo struct {
	LegalName                        string
	DoingBusinessAs                  string
	Country                          string
	RegistrationNumber               string
	IncorporatedOn                   string // YYYY-MM-DD
	EntityType                       string
	TaxID                            string
	CountriesOfOperation             []string
	BusinessType                     string
	PurposeOfAccount                 string
	SourceOfFunds                    string
	ExpectedMonthlyTransactionCount  string
	ExpectedMonthlyTransactionVolume string
	ExpectedRecipientJurisdictions   []string
	NaicsCode                        string
	SourceOfFundsCategories          []string
	SourceOfFundsOtherDescription    string
	PurposeOfAccountOtherDescription string
	ExpectedCounterpartyCountries    []string
	PrimaryContactFirstName          string
	PrimaryContactLastName           string
}

type Customer struct {
	ID                 string // "Customer:<uuid>"
	PlatformID         string
	PlatformCustomerID string
	CustomerType       string // INDIVIDUAL or BUSINESS
	UmaAddress         string
	Region             string
	Currencies         []string
	Email              string
	PhoneNumber        string
	// KYCStatus is kycStatus for individuals and kybStatus for businesses.
	KYCStatus           string
	Address             *Address
	EndUserTermsConsent *EndUserTermsConsent
	Individual          *IndividualInfo // set when CustomerType is INDIVIDUAL
	Business            *BusinessInfo   // set when CustomerType is BUSINESS
	IsDeleted           bool
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// CustomerFilter is the reference's listCustomers query. Zero values do not
// filter.
type CustomerFilter struct {
	PlatformID         string // always set by core
	PlatformCustomerID string
	CustomerType       string
	CreatedAfter       *time.Time
	CreatedBefore      *time.Time
	UpdatedAfter       *time.Time
	UpdatedBefore      *time.Time
	Region             string
	Currency           string
	UmaAddress         string
	IncludeDeleted     bool
}

type CustomerRepo interface {
	// Create inserts; a taken UMA address or live platformCustomerId is a
	// *ConflictError naming the rule.
	Create(ctx context.Context, c Customer) error
	// Get returns the platform's customer (deleted ones too) or ErrNotFound.
	Get(ctx context.Context, platformID, id string) (Customer, error)
	// GetForUpdate is Get with a row lock held until the transaction ends.
	GetForUpdate(ctx context.Context, platformID, id string) (Customer, error)
	// Update replaces the stored customer (same id and platform).
	Update(ctx context.Context, c Customer) error
	// List returns up to page.Limit+1 rows (the extra tells hasMore) and the
	// total count matching the filter.
	List(ctx context.Context, f CustomerFilter, page Page) (rows []Customer, total int, err error)
}

// ---- internal accounts ----

type InternalAccount struct {
	ID         string // "InternalAccount:<uuid>"; also its ledger account id
	PlatformID string
	CustomerID string // empty for a platform account
	Type       string // INTERNAL_FIAT, INTERNAL_CRYPTO, EMBEDDED_WALLET
	Status     string // PENDING, ACTIVE, CLOSED, FROZEN, FAILED
	Currency   string
	// PrivateEnabled is wallet privacy (EMBEDDED_WALLET only).
	PrivateEnabled bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// InternalAccountBalance is an internal account with its ledger
// balances, in minor units of its currency: what GET returns of it, and
// the data of its INTERNAL_ACCOUNT.* events (core/accounts.Account).
type InternalAccountBalance struct {
	InternalAccount
	// Balance is what the account may spend: posted credits minus posted
	// and held debits.
	Balance int64
	// TotalBalance includes pending and held funds.
	TotalBalance int64
}

// WithBalance is a with the balances of its ledger account la.
func WithBalance(a InternalAccount, la ledger.Account) InternalAccountBalance {
	if changed := Stored(la.UpdatedAt); changed.After(a.UpdatedAt) {
		a.UpdatedAt = changed // a balance change updates the account
	}
	return InternalAccountBalance{InternalAccount: a, Balance: la.Available(), TotalBalance: la.Total()}
}

type InternalAccountFilter struct {
	PlatformID string // always set by core
	// CustomerID filters to one customer's accounts. PlatformOnly selects the
	// platform's own accounts (CustomerID empty); otherwise customer accounts.
	CustomerID   string
	PlatformOnly bool
	Currency     string
	Type         string
}

type InternalAccountRepo interface {
	Create(ctx context.Context, a InternalAccount) error
	Get(ctx context.Context, platformID, id string) (InternalAccount, error)
	// Update stores a's status, privateEnabled and updatedAt (the rest of
	// an account never changes); ErrNotFound when a is not its platform's.
	Update(ctx context.Context, a InternalAccount) error
	List(ctx context.Context, f InternalAccountFilter, page Page) (rows []InternalAccount, total int, err error)
}

// ---- wallet credentials (used by the wallet-auth issue) ----

type AuthMethod struct {
	ID         string // "AuthMethod:<uuid>"
	PlatformID string
	AccountID  string // InternalAccount:<uuid>
	Type       string // EMAIL_OTP, OAUTH, PASSKEY
	Nickname   string
	// CredentialID is the WebAuthn rawId, base64url (PASSKEY only).
	CredentialID string
	// Issuer, Subject and Audience are the OIDC identity an OAUTH
	// credential is bound to (its iss, sub and aud).
	Issuer, Subject, Audience string
	// Passkey is a PASSKEY's WebAuthn credential record (public key,
	// flags, authenticator), opaque to the store; SignCount its signature
	// counter, moved only by AdvanceSignCount.
	Passkey   []byte
	SignCount uint32
	CreatedAt time.Time
	UpdatedAt time.Time
}

type AuthMethodRepo interface {
	Create(ctx context.Context, m AuthMethod) error
	Get(ctx context.Context, platformID, id string) (AuthMethod, error)
	ListByAccount(ctx context.Context, platformID, accountID string) ([]AuthMethod, error)
	// Update replaces a stored auth method (same id and platform), e.g. the
	// EMAIL_OTP nickname when the customer's e-mail changes; ErrNotFound
	// when it does not exist.
	Update(ctx context.Context, m AuthMethod) error
	// Revoke retires the platform's credential id at at: from then on Get
	// and ListByAccount no longer see it (ErrNotFound when it is unknown
	// or already revoked).
	Revoke(ctx context.Context, platformID, id string, at time.Time) error
	// AdvanceSignCount moves a passkey's signature counter to count, only
	// forward (count greater than the stored one, or both zero for an
	// authenticator without a counter); ErrConflict otherwise, so of two
	// racing assertions with one counter value at most one succeeds.
	AdvanceSignCount(ctx context.Context, platformID, id string, count uint32, at time.Time) error
}
