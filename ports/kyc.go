package ports

import (
	"context"
	"time"
)

// ---- KYC/KYB: beneficial owners, verifications, documents, the provider ----

// BeneficialOwner is a person who owns or controls a BUSINESS customer
// (reference BeneficialOwner).
type BeneficialOwner struct {
	ID         string // "BeneficialOwner:<uuid>"
	PlatformID string
	CustomerID string // the business customer
	// Roles: UBO, DIRECTOR, COMPANY_OFFICER, CONTROL_PERSON, TRUSTEE,
	// GENERAL_PARTNER.
	Roles               []string
	OwnershipPercentage int // 0-100
	PersonalInfo        PersonalInfo
	// KYCStatus: UNVERIFIED, PENDING, APPROVED, REJECTED, HOLD.
	KYCStatus string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// PersonalInfo is a beneficial owner's personalInfo. Empty strings are
// unset.
type PersonalInfo struct {
	FirstName         string
	MiddleName        string
	LastName          string
	BirthDate         string // YYYY-MM-DD
	Nationality       string
	Email             string
	PhoneNumber       string
	Address           *Address
	IDType            string // SSN, ITIN, EIN, NON_US_TAX_ID
	Identifier        string
	CountryOfIssuance string
}

type BeneficialOwnerFilter struct {
	PlatformID string // always set by core
	CustomerID string // empty: every owner of the platform
	// CustomerIDs, when not empty, selects the owners of any of these
	// customers (one read for a page of customers).
	CustomerIDs []string
}

type BeneficialOwnerRepo interface {
	Create(ctx context.Context, o BeneficialOwner) error
	// Get returns the platform's owner or ErrNotFound.
	Get(ctx context.Context, platformID, id string) (BeneficialOwner, error)
	// Update replaces a stored owner (same id and platform).
	Update(ctx context.Context, o BeneficialOwner) error
	// List pages by (CreatedAt, ID): up to page.Limit+1 rows and the count
	// matching f.
	List(ctx context.Context, f BeneficialOwnerFilter, page Page) (rows []BeneficialOwner, total int, err error)
}

// Verification is a customer's KYC (individual) or KYB (business)
// verification (reference Verification).
type Verification struct {
	ID         string // "Verification:<uuid>"
	PlatformID string
	CustomerID string
	// Status: RESOLVE_ERRORS, READY_FOR_VERIFICATION, IN_PROGRESS,
	// PENDING_MANUAL_REVIEW, APPROVED, REJECTED.
	Status string
	// Errors block the verification; empty unless RESOLVE_ERRORS (or a
	// REJECTED verification's reasons).
	Errors []VerificationError
	// SubmittedAt is when the data was last sent to the KYC provider.
	SubmittedAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// VerificationError is one issue blocking a verification (reference
// VerificationError).
type VerificationError struct {
	ResourceID string // the Customer, BeneficialOwner or Document
	Type       string // MISSING_FIELD, MISSING_PROOF_OF_ADDRESS_DOCUMENT, ...
	// Field is the dot path of a missing or invalid field.
	Field string
	// AcceptedDocumentTypes are the documents that satisfy a missing
	// document.
	AcceptedDocumentTypes []string
	Reason                string
}

type VerificationFilter struct {
	PlatformID string // always set by core
	CustomerID string
	Status     string
}

type VerificationRepo interface {
	Create(ctx context.Context, v Verification) error
	// Get returns the platform's verification or ErrNotFound.
	Get(ctx context.Context, platformID, id string) (Verification, error)
	// Latest returns the customer's newest verification or ErrNotFound.
	Latest(ctx context.Context, platformID, customerID string) (Verification, error)
	// Update replaces a stored verification (same id and platform).
	Update(ctx context.Context, v Verification) error
	List(ctx context.Context, f VerificationFilter, page Page) (rows []Verification, total int, err error)
}

// Document is an uploaded verification document. The content is kept with
// its SHA-256; lists and Get leave Content empty (see DocumentRepo.Content).
type Document struct {
	ID         string // "Document:<uuid>"
	PlatformID string
	// HolderID is the Customer or BeneficialOwner the document belongs to;
	// CustomerID is that holder's customer (the business, for an owner).
	HolderID         string
	CustomerID       string
	DocumentType     string
	Side             string // FRONT, BACK or empty
	Country          string
	DocumentNumber   string
	IssuingAuthority string
	FileName         string
	// ContentType is sniffed from the content (application/pdf,
	// image/jpeg, image/png), never taken from the client.
	ContentType string
	Size        int64
	SHA256      string // lowercase hex of the content's SHA-256
	Content     []byte
	// Submitted is set once a verification sent the document to the KYC
	// provider; a submitted document cannot be deleted.
	Submitted bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

type DocumentFilter struct {
	PlatformID string // always set by core
	HolderID   string
	CustomerID string
}

type DocumentRepo interface {
	// Create stores the document with its content.
	Create(ctx context.Context, d Document) error
	// Get returns the platform's document without its content, or
	// ErrNotFound.
	Get(ctx context.Context, platformID, id string) (Document, error)
	// Content returns the document's bytes.
	Content(ctx context.Context, platformID, id string) ([]byte, error)
	// Update replaces the document's metadata, and its content when
	// d.Content is not nil.
	Update(ctx context.Context, d Document) error
	// MarkSubmitted flags the documents of a customer (and its owners).
	MarkSubmitted(ctx context.Context, platformID, customerID string, at time.Time) error
	Delete(ctx context.Context, platformID, id string) error
	// List pages documents (without content) by (CreatedAt, ID).
	List(ctx context.Context, f DocumentFilter, page Page) (rows []Document, total int, err error)
}

// Decisions a KYCProvider returns.
const (
	KYCApproved = "APPROVED"
	KYCPending  = "PENDING" // the provider is still checking
	KYCReview   = "REVIEW"  // a person must review the case
	KYCRejected = "REJECTED"
)

// KYCDecision is a provider's answer about one applicant: Status is one of
// the KYC* decisions; Errors explain a rejection (APPLICANT_* types) or
// name what the provider could not accept.
type KYCDecision struct {
	Status string
	Errors []VerificationError
}

// KYCProvider verifies people and businesses. Documents are those on file
// for the applicant (metadata; Content is empty).
type KYCProvider interface {
	VerifyIndividual(ctx context.Context, c Customer, docs []Document) (KYCDecision, error)
	VerifyBusiness(ctx context.Context, c Customer, owners []BeneficialOwner, docs []Document) (KYCDecision, error)
	VerifyOwner(ctx context.Context, o BeneficialOwner, docs []Document) (KYCDecision, error)
}
