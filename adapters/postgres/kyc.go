package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// ---- KYC: beneficial owners, verifications, documents, events
// (migrations/0008_kyc.sql) ----

func (tx *storeTx) BeneficialOwners() ports.BeneficialOwnerRepo { return storeOwners{tx} }
func (tx *storeTx) Verifications() ports.VerificationRepo       { return storeVerifications{tx} }
func (tx *storeTx) Documents() ports.DocumentRepo               { return storeDocuments{tx} }
func (tx *storeTx) Events() ports.EventRepo                     { return storeEvents{tx} }

// ---- beneficial owners ----

type storePersonalInfoJSON struct {
	FirstName         string            `json:"firstName,omitempty"`
	MiddleName        string            `json:"middleName,omitempty"`
	LastName          string            `json:"lastName,omitempty"`
	BirthDate         string            `json:"birthDate,omitempty"`
	Nationality       string            `json:"nationality,omitempty"`
	Email             string            `json:"email,omitempty"`
	PhoneNumber       string            `json:"phoneNumber,omitempty"`
	Address           *storeAddressJSON `json:"address,omitempty"`
	IDType            string            `json:"idType,omitempty"`
	Identifier        string            `json:"identifier,omitempty"`
	CountryOfIssuance string            `json:"countryOfIssuance,omitempty"`
}

type storeOwnerRow struct {
	bun.BaseModel `bun:"table:beneficial_owners"`

	ID                  string                `bun:"id,pk"`
	PlatformID          string                `bun:"platform_id"`
	CustomerID          string                `bun:"customer_id"`
	Roles               []string              `bun:"roles,array"`
	OwnershipPercentage int                   `bun:"ownership_percentage"`
	PersonalInfo        storePersonalInfoJSON `bun:"personal_info,type:jsonb"`
	KYCStatus           string                `bun:"kyc_status"`
	CreatedAt           time.Time             `bun:"created_at"`
	UpdatedAt           time.Time             `bun:"updated_at"`
}

func storeOwnerToRow(o ports.BeneficialOwner) storeOwnerRow {
	p := o.PersonalInfo
	info := storePersonalInfoJSON{
		FirstName: p.FirstName, MiddleName: p.MiddleName, LastName: p.LastName, BirthDate: p.BirthDate,
		Nationality: p.Nationality, Email: p.Email, PhoneNumber: p.PhoneNumber, IDType: p.IDType,
		Identifier: p.Identifier, CountryOfIssuance: p.CountryOfIssuance,
	}
	if p.Address != nil {
		a := storeAddressJSON(*p.Address)
		info.Address = &a
	}
	roles := o.Roles
	if roles == nil {
		roles = []string{}
	}
	return storeOwnerRow{
		ID: o.ID, PlatformID: o.PlatformID, CustomerID: o.CustomerID, Roles: roles,
		OwnershipPercentage: o.OwnershipPercentage, PersonalInfo: info, KYCStatus: o.KYCStatus,
		CreatedAt: ports.Stored(o.CreatedAt), UpdatedAt: ports.Stored(o.UpdatedAt),
	}
}

func (r storeOwnerRow) toPort() ports.BeneficialOwner {
	p := r.PersonalInfo
	info := ports.PersonalInfo{
		FirstName: p.FirstName, MiddleName: p.MiddleName, LastName: p.LastName, BirthDate: p.BirthDate,
		Nationality: p.Nationality, Email: p.Email, PhoneNumber: p.PhoneNumber, IDType: p.IDType,
		Identifier: p.Identifier, CountryOfIssuance: p.CountryOfIssuance,
	}
	if p.Address != nil {
		a := ports.Address(*p.Address)
		info.Address = &a
	}
	var roles []string
	if len(r.Roles) > 0 {
		roles = r.Roles
	}
	return ports.BeneficialOwner{
		ID: r.ID, PlatformID: r.PlatformID, CustomerID: r.CustomerID, Roles: roles,
		OwnershipPercentage: r.OwnershipPercentage, PersonalInfo: info, KYCStatus: r.KYCStatus,
		CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt),
	}
}

type storeOwners struct{ tx *storeTx }

func (r storeOwners) Create(ctx context.Context, o ports.BeneficialOwner) error {
	row := storeOwnerToRow(o)
	return r.tx.insert(ctx, "create beneficial owner "+o.ID, &row)
}

func (r storeOwners) Get(ctx context.Context, platformID, id string) (ports.BeneficialOwner, error) {
	var row storeOwnerRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ?", id).Where("platform_id = ?", platformID)
	if err := storeGet(ctx, q, "beneficial owner "+id); err != nil {
		return ports.BeneficialOwner{}, err
	}
	return row.toPort(), nil
}

// Update stores o's mutable fields; id, platform, customer and creation
// time are fixed at Create.
func (r storeOwners) Update(ctx context.Context, o ports.BeneficialOwner) error {
	row := storeOwnerToRow(o)
	return r.tx.updateColumns(ctx, "update beneficial owner "+o.ID, &row, o.PlatformID,
		"roles", "ownership_percentage", "personal_info", "kyc_status", "updated_at")
}

func (r storeOwners) List(ctx context.Context, f ports.BeneficialOwnerFilter, page ports.Page) ([]ports.BeneficialOwner, int, error) {
	return storeList[storeOwnerRow, ports.BeneficialOwner](ctx, r.tx.db, func(q *bun.SelectQuery) *bun.SelectQuery {
		q = q.Where("platform_id = ?", f.PlatformID)
		if f.CustomerID != "" {
			q = q.Where("customer_id = ?", f.CustomerID)
		}
		if len(f.CustomerIDs) > 0 {
			q = q.Where("customer_id = ANY(?)", textArray(f.CustomerIDs))
		}
		return q
	}, page, "beneficial owners")
}

// ---- verifications ----

type storeVerificationErrorJSON struct {
	ResourceID            string   `json:"resourceId"`
	Type                  string   `json:"type"`
	Field                 string   `json:"field,omitempty"`
	AcceptedDocumentTypes []string `json:"acceptedDocumentTypes,omitempty"`
	Reason                string   `json:"reason"`
}

type storeVerificationRow struct {
	bun.BaseModel `bun:"table:verifications"`

	ID          string                       `bun:"id,pk"`
	PlatformID  string                       `bun:"platform_id"`
	CustomerID  string                       `bun:"customer_id"`
	Status      string                       `bun:"status"`
	Errors      []storeVerificationErrorJSON `bun:"errors,type:jsonb"`
	SubmittedAt *time.Time                   `bun:"submitted_at"`
	CreatedAt   time.Time                    `bun:"created_at"`
	UpdatedAt   time.Time                    `bun:"updated_at"`
}

func storeVerificationToRow(v ports.Verification) storeVerificationRow {
	errs := make([]storeVerificationErrorJSON, len(v.Errors))
	for i, e := range v.Errors {
		errs[i] = storeVerificationErrorJSON(e)
	}
	return storeVerificationRow{
		ID: v.ID, PlatformID: v.PlatformID, CustomerID: v.CustomerID, Status: v.Status, Errors: errs,
		SubmittedAt: ports.StoredPtr(v.SubmittedAt), CreatedAt: ports.Stored(v.CreatedAt), UpdatedAt: ports.Stored(v.UpdatedAt),
	}
}

func (r storeVerificationRow) toPort() ports.Verification {
	errs := make([]ports.VerificationError, len(r.Errors))
	for i, e := range r.Errors {
		errs[i] = ports.VerificationError(e)
	}
	return ports.Verification{
		ID: r.ID, PlatformID: r.PlatformID, CustomerID: r.CustomerID, Status: r.Status, Errors: errs,
		SubmittedAt: ports.StoredPtr(r.SubmittedAt), CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt),
	}
}

type storeVerifications struct{ tx *storeTx }

func (r storeVerifications) Create(ctx context.Context, v ports.Verification) error {
	row := storeVerificationToRow(v)
	return r.tx.insert(ctx, "create verification "+v.ID, &row)
}

func (r storeVerifications) Get(ctx context.Context, platformID, id string) (ports.Verification, error) {
	var row storeVerificationRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ?", id).Where("platform_id = ?", platformID)
	if err := storeGet(ctx, q, "verification "+id); err != nil {
		return ports.Verification{}, err
	}
	return row.toPort(), nil
}

func (r storeVerifications) Latest(ctx context.Context, platformID, customerID string) (ports.Verification, error) {
	var row storeVerificationRow
	q := r.tx.db.NewSelect().Model(&row).Where("platform_id = ?", platformID).Where("customer_id = ?", customerID).
		OrderExpr("created_at DESC, id DESC").Limit(1)
	if err := storeGet(ctx, q, "verification of "+customerID); err != nil {
		return ports.Verification{}, err
	}
	return row.toPort(), nil
}

// Update stores v's mutable fields (status, errors, submission and update
// times).
func (r storeVerifications) Update(ctx context.Context, v ports.Verification) error {
	row := storeVerificationToRow(v)
	return r.tx.updateColumns(ctx, "update verification "+v.ID, &row, v.PlatformID, "status", "errors", "submitted_at", "updated_at")
}

func (r storeVerifications) List(ctx context.Context, f ports.VerificationFilter, page ports.Page) ([]ports.Verification, int, error) {
	return storeList[storeVerificationRow, ports.Verification](ctx, r.tx.db, func(q *bun.SelectQuery) *bun.SelectQuery {
		q = q.Where("platform_id = ?", f.PlatformID)
		if f.CustomerID != "" {
			q = q.Where("customer_id = ?", f.CustomerID)
		}
		if f.Status != "" {
			q = q.Where("status = ?", f.Status)
		}
		return q
	}, page, "verifications")
}

// ---- documents ----

type storeDocumentRow struct {
	bun.BaseModel `bun:"table:documents"`

	ID               string    `bun:"id,pk"`
	PlatformID       string    `bun:"platform_id"`
	HolderID         string    `bun:"holder_id"`
	CustomerID       string    `bun:"customer_id"`
	DocumentType     string    `bun:"document_type"`
	Side             string    `bun:"side"`
	Country          string    `bun:"country"`
	DocumentNumber   string    `bun:"document_number"`
	IssuingAuthority string    `bun:"issuing_authority"`
	FileName         string    `bun:"file_name"`
	ContentType      string    `bun:"content_type"`
	Size             int64     `bun:"size"`
	SHA256           string    `bun:"sha256"`
	Content          []byte    `bun:"content"`
	Submitted        bool      `bun:"submitted"`
	CreatedAt        time.Time `bun:"created_at"`
	UpdatedAt        time.Time `bun:"updated_at"`
}

// storeDocumentMeta are the columns Get and List read (never the content).
var storeDocumentMeta = []string{"id", "platform_id", "holder_id", "customer_id", "document_type", "side", "country",
	"document_number", "issuing_authority", "file_name", "content_type", "size", "sha256", "submitted", "created_at", "updated_at"}

func storeDocumentToRow(d ports.Document) storeDocumentRow {
	return storeDocumentRow{
		ID: d.ID, PlatformID: d.PlatformID, HolderID: d.HolderID, CustomerID: d.CustomerID,
		DocumentType: d.DocumentType, Side: d.Side, Country: d.Country, DocumentNumber: d.DocumentNumber,
		IssuingAuthority: d.IssuingAuthority, FileName: d.FileName, ContentType: d.ContentType,
		Size: d.Size, SHA256: d.SHA256, Content: d.Content, Submitted: d.Submitted,
		CreatedAt: ports.Stored(d.CreatedAt), UpdatedAt: ports.Stored(d.UpdatedAt),
	}
}

func (r storeDocumentRow) toPort() ports.Document {
	return ports.Document{
		ID: r.ID, PlatformID: r.PlatformID, HolderID: r.HolderID, CustomerID: r.CustomerID,
		DocumentType: r.DocumentType, Side: r.Side, Country: r.Country, DocumentNumber: r.DocumentNumber,
		IssuingAuthority: r.IssuingAuthority, FileName: r.FileName, ContentType: r.ContentType,
		Size: r.Size, SHA256: r.SHA256, Submitted: r.Submitted,
		CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt),
	}
}

type storeDocuments struct{ tx *storeTx }

func (r storeDocuments) Create(ctx context.Context, d ports.Document) error {
	row := storeDocumentToRow(d)
	if row.Content == nil {
		row.Content = []byte{}
	}
	return r.tx.insert(ctx, "create document "+d.ID, &row)
}

func (r storeDocuments) Get(ctx context.Context, platformID, id string) (ports.Document, error) {
	var row storeDocumentRow
	q := r.tx.db.NewSelect().Model(&row).Column(storeDocumentMeta...).Where("id = ?", id).Where("platform_id = ?", platformID)
	if err := storeGet(ctx, q, "document "+id); err != nil {
		return ports.Document{}, err
	}
	return row.toPort(), nil
}

func (r storeDocuments) Content(ctx context.Context, platformID, id string) ([]byte, error) {
	var row storeDocumentRow
	q := r.tx.db.NewSelect().Model(&row).Column("content").Where("id = ?", id).Where("platform_id = ?", platformID)
	if err := storeGet(ctx, q, "document "+id); err != nil {
		return nil, err
	}
	return row.Content, nil
}

// Update replaces the metadata, and the content (with its size, type and
// checksum) when d.Content is not nil. Holder, customer and creation time
// are fixed at Create.
func (r storeDocuments) Update(ctx context.Context, d ports.Document) error {
	row := storeDocumentToRow(d)
	cols := []string{"document_type", "side", "country", "document_number", "issuing_authority", "file_name", "submitted", "updated_at"}
	if d.Content != nil {
		cols = append(cols, "content_type", "size", "sha256", "content")
	}
	return r.tx.updateColumns(ctx, "update document "+d.ID, &row, d.PlatformID, cols...)
}

func (r storeDocuments) MarkSubmitted(ctx context.Context, platformID, customerID string, at time.Time) error {
	_, err := r.tx.execPlain(ctx, "mark documents of "+customerID+" submitted", func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model((*storeDocumentRow)(nil)).
			Set("submitted = true").Set("updated_at = ?", ports.Stored(at)).
			Where("platform_id = ?", platformID).Where("customer_id = ?", customerID).Where("NOT submitted").
			Exec(ctx)
	})
	return err
}

func (r storeDocuments) Delete(ctx context.Context, platformID, id string) error {
	what := "delete document " + id
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewDelete().Model((*storeDocumentRow)(nil)).Where("id = ?", id).Where("platform_id = ?", platformID).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

func (r storeDocuments) List(ctx context.Context, f ports.DocumentFilter, page ports.Page) ([]ports.Document, int, error) {
	return storeList[storeDocumentRow, ports.Document](ctx, r.tx.db, func(q *bun.SelectQuery) *bun.SelectQuery {
		q = q.Column(storeDocumentMeta...).Where("platform_id = ?", f.PlatformID)
		if f.HolderID != "" {
			q = q.Where("holder_id = ?", f.HolderID)
		}
		if f.CustomerID != "" {
			q = q.Where("customer_id = ?", f.CustomerID)
		}
		return q
	}, page, "documents")
}

// ---- events (outbox) ----
