package httpapi

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/ports"
)

// documentFormOverhead is the room a document upload's body has beyond
// the file: the multipart boundaries and the metadata fields.
const documentFormOverhead = 64 << 10

func init() {
	// Upload bodies are already read into memory and bounded (limitBody,
	// bodyLimit), so multipart parsing keeps them there instead of
	// spilling files to temporary files nobody would remove.
	humago.MultipartMaxMemory = 1 << 30
}

// bodyLimit is the largest request body r may carry: MaxBodyBytes, or for
// a document upload or replacement the largest file plus the form around
// it.
func (s *server) bodyLimit(r *http.Request) int64 {
	if s.d.KYC != nil && (r.Method == http.MethodPost || r.Method == http.MethodPut) &&
		(r.URL.Path == BasePath+"/documents" || strings.HasPrefix(r.URL.Path, BasePath+"/documents/")) {
		return max(s.d.MaxBodyBytes, s.d.KYC.MaxDocumentBytes()+documentFormOverhead)
	}
	return s.d.MaxBodyBytes
}

// ---- wire models ----

// Document is an uploaded verification document's metadata.
type Document struct {
	ID               string    `json:"id" doc:"Document:<uuid>" example:"Document:019542f5-b3e7-1d02-0000-000000000001"`
	DocumentHolder   string    `json:"documentHolder" doc:"The Customer or BeneficialOwner the document belongs to"`
	DocumentType     string    `json:"documentType" enum:"PASSPORT,DRIVERS_LICENSE,NATIONAL_ID,PROOF_OF_ADDRESS,BANK_STATEMENT,TAX_RETURN,CERTIFICATE_OF_INCORPORATION,ARTICLES_OF_INCORPORATION,ARTICLES_OF_ASSOCIATION,STATE_REGISTRY_EXCERPT,GOOD_STANDING_CERTIFICATE,INFORMATION_STATEMENT,INCUMBENCY_CERTIFICATE,BUSINESS_LICENSE,SHAREHOLDER_REGISTER,POWER_OF_ATTORNEY,UTILITY_BILL,ELECTRICITY_BILL,RENT_OR_LEASE_AGREEMENT,DIRECTOR_REGISTRY,TRUST_AGREEMENT,STATE_COMPANY_REGISTRY,PARTNERSHIP_CONTROL_AGREEMENT,PARTNERSHIP_AGREEMENT,SELFIE,OTHER"`
	Side             string    `json:"side,omitempty" enum:"FRONT,BACK"`
	Country          string    `json:"country" doc:"Country that issued the document (ISO 3166-1 alpha-2)"`
	DocumentNumber   string    `json:"documentNumber,omitempty"`
	IssuingAuthority string    `json:"issuingAuthority,omitempty"`
	FileName         string    `json:"fileName" doc:"The uploaded file's name (its base name)"`
	ContentType      string    `json:"contentType" enum:"application/pdf,image/jpeg,image/png" doc:"The file's type, as read from its content"`
	Size             int64     `json:"size" doc:"The file's size in bytes"`
	SHA256           string    `json:"sha256" doc:"Hex SHA-256 of the file"`
	CreatedAt        time.Time `json:"createdAt"`
	UpdatedAt        time.Time `json:"updatedAt"`
}

// DocumentList is one page of documents.
type DocumentList struct {
	Data       []Document `json:"data"`
	HasMore    bool       `json:"hasMore" doc:"Whether more results follow this page"`
	NextCursor string     `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page (only when hasMore)"`
	TotalCount int        `json:"totalCount" doc:"Number of documents matching the filter"`
}

// documentForm is a replacement's multipart form. The values are checked
// by the core (naming each field), not by the schema.
type documentForm struct {
	File             huma.FormFile `form:"file" required:"true" contentType:"application/octet-stream" doc:"The document: PDF, JPEG or PNG (the type is read from the content, not from the name or the declared type), at most 10 MiB"`
	DocumentType     string        `form:"documentType" required:"true" enum:"PASSPORT,DRIVERS_LICENSE,NATIONAL_ID,PROOF_OF_ADDRESS,BANK_STATEMENT,TAX_RETURN,CERTIFICATE_OF_INCORPORATION,ARTICLES_OF_INCORPORATION,ARTICLES_OF_ASSOCIATION,STATE_REGISTRY_EXCERPT,GOOD_STANDING_CERTIFICATE,INFORMATION_STATEMENT,INCUMBENCY_CERTIFICATE,BUSINESS_LICENSE,SHAREHOLDER_REGISTER,POWER_OF_ATTORNEY,UTILITY_BILL,ELECTRICITY_BILL,RENT_OR_LEASE_AGREEMENT,DIRECTOR_REGISTRY,TRUST_AGREEMENT,STATE_COMPANY_REGISTRY,PARTNERSHIP_CONTROL_AGREEMENT,PARTNERSHIP_AGREEMENT,SELFIE,OTHER" doc:"Type of document"`
	Side             string        `form:"side" required:"false" enum:"FRONT,BACK" doc:"Side of a two-sided document"`
	Country          string        `form:"country" required:"true" maxLength:"2" doc:"Country that issued the document (ISO 3166-1 alpha-2)"`
	DocumentNumber   string        `form:"documentNumber" required:"false" maxLength:"64" doc:"The document's number"`
	IssuingAuthority string        `form:"issuingAuthority" required:"false" maxLength:"255" doc:"Who issued the document"`
}

// documentUploadForm is an upload's form: a replacement's and the holder.
type documentUploadForm struct {
	File             huma.FormFile `form:"file" required:"true" contentType:"application/octet-stream" doc:"The document: PDF, JPEG or PNG (the type is read from the content, not from the name or the declared type), at most 10 MiB"`
	DocumentHolder   string        `form:"documentHolder" required:"true" maxLength:"255" doc:"The Customer:… or BeneficialOwner:… the document belongs to"`
	DocumentType     string        `form:"documentType" required:"true" enum:"PASSPORT,DRIVERS_LICENSE,NATIONAL_ID,PROOF_OF_ADDRESS,BANK_STATEMENT,TAX_RETURN,CERTIFICATE_OF_INCORPORATION,ARTICLES_OF_INCORPORATION,ARTICLES_OF_ASSOCIATION,STATE_REGISTRY_EXCERPT,GOOD_STANDING_CERTIFICATE,INFORMATION_STATEMENT,INCUMBENCY_CERTIFICATE,BUSINESS_LICENSE,SHAREHOLDER_REGISTER,POWER_OF_ATTORNEY,UTILITY_BILL,ELECTRICITY_BILL,RENT_OR_LEASE_AGREEMENT,DIRECTOR_REGISTRY,TRUST_AGREEMENT,STATE_COMPANY_REGISTRY,PARTNERSHIP_CONTROL_AGREEMENT,PARTNERSHIP_AGREEMENT,SELFIE,OTHER" doc:"Type of document"`
	Side             string        `form:"side" required:"false" enum:"FRONT,BACK" doc:"Side of a two-sided document"`
	Country          string        `form:"country" required:"true" maxLength:"2" doc:"Country that issued the document (ISO 3166-1 alpha-2)"`
	DocumentNumber   string        `form:"documentNumber" required:"false" maxLength:"64" doc:"The document's number"`
	IssuingAuthority string        `form:"issuingAuthority" required:"false" maxLength:"255" doc:"Who issued the document"`
}

func documentOut(d ports.Document) Document {
	return Document{
		ID: d.ID, DocumentHolder: d.HolderID, DocumentType: d.DocumentType, Side: d.Side, Country: d.Country,
		DocumentNumber: d.DocumentNumber, IssuingAuthority: d.IssuingAuthority, FileName: d.FileName,
		ContentType: d.ContentType, Size: d.Size, SHA256: d.SHA256, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
	}
}

// readFile reads an uploaded file, at most limit+1 bytes (the core names
// the field when that is too many).
func readFile(f huma.FormFile, limit int64) ([]byte, error) {
	if !f.IsSet || f.File == nil {
		return nil, nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f.File, limit+1))
	if err != nil {
		return nil, invalidFields(FieldError{Field: "file", Message: "could not be read"})
	}
	return b, nil
}

// checkFormFields refuses a form field that the form type T has no place
// for (as an unknown JSON property is refused) and one given more than
// once (as a repeated JSON key is), naming each.
func checkFormFields[T any](f *multipart.Form) error {
	t := reflect.TypeFor[T]()
	known := func(name string) bool {
		for i := range t.NumField() {
			if t.Field(i).Tag.Get("form") == name {
				return true
			}
		}
		return false
	}
	var bad []FieldError
	check := func(name string, n int) {
		switch {
		case !known(name):
			bad = append(bad, FieldError{Field: printable(name), Message: "unexpected property"})
		case n > 1:
			bad = append(bad, FieldError{Field: name, Message: msgDuplicate})
		}
	}
	for name, vs := range f.Value {
		check(name, len(vs))
	}
	for name, fs := range f.File {
		check(name, len(fs))
	}
	if len(bad) == 0 {
		return nil
	}
	slices.SortFunc(bad, func(a, b FieldError) int { return cmp.Compare(a.Field, b.Field) })
	return invalidFields(bad...)
}

// ---- operations ----

type uploadDocumentInput struct {
	RawBody huma.MultipartFormFiles[documentUploadForm]
}

type replaceDocumentInput struct {
	DocumentID string `path:"documentId" maxLength:"255" doc:"Document:<uuid>"`
	RawBody    huma.MultipartFormFiles[documentForm]
}

type documentIDInput struct {
	DocumentID string `path:"documentId" maxLength:"255" doc:"Document:<uuid>"`
}

type listDocumentsInput struct {
	DocumentHolder string `query:"documentHolder" maxLength:"255" doc:"Only this Customer's or BeneficialOwner's documents"`
	Limit          int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor         string `query:"cursor" maxLength:"1024" doc:"nextCursor of the previous page"`
}

type documentOutput struct{ Body Document }

type documentListOutput struct{ Body DocumentList }

const documentsTag = "Documents"

// documentsAPI handles the document operations; limit is the largest file
// an upload or replacement may carry.
type documentsAPI struct {
	d     Deps
	limit int64
}

func registerDocuments(api huma.API, d Deps) {
	h := documentsAPI{d: d, limit: d.KYC.MaxDocumentBytes()}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.uploadDocumentOp(), h.uploadDocument) },
		func(api huma.API) { huma.Register(api, h.listDocumentsOp(), h.listDocuments) },
		func(api huma.API) { huma.Register(api, h.getDocumentOp(), h.getDocument) },
		func(api huma.API) { huma.Register(api, h.replaceDocumentOp(), h.replaceDocument) },
		func(api huma.API) { huma.Register(api, h.deleteDocumentOp(), h.deleteDocument) },
	)
}

// formDoc describes the upload and replacement forms.
func (h documentsAPI) formDoc() string {
	return fmt.Sprintf("multipart/form-data with the file in `file` (PDF, JPEG or PNG, at most %d MiB; the type is "+
		"read from the content) and the metadata in the other fields. A bad field is a 400 naming it.", h.limit>>20)
}

func (h documentsAPI) uploadDocumentOp() huma.Operation {
	return huma.Operation{
		OperationID:   "uploadDocument",
		Method:        http.MethodPost,
		Path:          "/documents",
		Summary:       "Upload a document",
		DefaultStatus: http.StatusCreated,
		Description: "Uploads a verification document for a customer or a beneficial owner (documentHolder). " + h.formDoc() +
			" The file is stored with its SHA-256. A verification waiting for documents is checked again at once.",
		Tags:   []string{documentsTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusGone, http.StatusRequestEntityTooLarge},
		// The core checks the form values and names each bad one.
		SkipValidateParams: true,
	}
}

func (h documentsAPI) uploadDocument(ctx context.Context, in *uploadDocumentInput) (*documentOutput, error) {
	defer func() { _ = in.RawBody.Form.RemoveAll() }()
	if err := checkFormFields[documentUploadForm](in.RawBody.Form); err != nil {
		return nil, err
	}
	f := in.RawBody.Data()
	content, err := readFile(f.File, h.limit)
	if err != nil {
		return nil, err
	}
	doc, err := h.d.KYC.UploadDocument(ctx, principal(ctx).PlatformID, kyc.DocumentInput{
		HolderID: f.DocumentHolder, DocumentType: f.DocumentType, Side: f.Side, Country: f.Country,
		DocumentNumber: f.DocumentNumber, IssuingAuthority: f.IssuingAuthority, FileName: f.File.Filename, Content: content,
	})
	if err != nil {
		return nil, apiError(err)
	}
	return &documentOutput{Body: documentOut(doc)}, nil
}

func (documentsAPI) listDocumentsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listDocuments",
		Method:      http.MethodGet,
		Path:        "/documents",
		Summary:     "List documents",
		Description: "Lists the platform's documents (one holder's, with documentHolder), oldest first, paginated.",
		Tags:        []string{documentsTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h documentsAPI) listDocuments(ctx context.Context, in *listDocumentsInput) (*documentListOutput, error) {
	cursors := cursorsOf(h.d, "documents")
	page, err := cursors.page(in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	res, err := h.d.KYC.ListDocuments(ctx, principal(ctx).PlatformID, in.DocumentHolder, page)
	if err != nil {
		return nil, apiError(err)
	}
	out := DocumentList{Data: make([]Document, len(res.Rows)), HasMore: res.HasMore,
		TotalCount: res.Total, NextCursor: cursors.next(res.HasMore, res.Next)}
	for i, doc := range res.Rows {
		out.Data[i] = documentOut(doc)
	}
	return &documentListOutput{Body: out}, nil
}

func (documentsAPI) getDocumentOp() huma.Operation {
	return huma.Operation{
		OperationID: "getDocument",
		Method:      http.MethodGet,
		Path:        "/documents/{documentId}",
		Summary:     "Get a document",
		Description: "Returns a document's metadata.",
		Tags:        []string{documentsTag},
		Errors:      []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h documentsAPI) getDocument(ctx context.Context, in *documentIDInput) (*documentOutput, error) {
	doc, err := h.d.KYC.GetDocument(ctx, principal(ctx).PlatformID, in.DocumentID)
	if err != nil {
		return nil, apiError(err)
	}
	return &documentOutput{Body: documentOut(doc)}, nil
}

func (h documentsAPI) replaceDocumentOp() huma.Operation {
	return huma.Operation{
		OperationID: "replaceDocument",
		Method:      http.MethodPut,
		Path:        "/documents/{documentId}",
		Summary:     "Replace a document",
		Description: "Replaces a document's file and metadata (for example a rejected scan); the holder stays. " + h.formDoc(),
		Tags:        []string{documentsTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusRequestEntityTooLarge},
		// The core checks the form values and names each bad one.
		SkipValidateParams: true,
	}
}

func (h documentsAPI) replaceDocument(ctx context.Context, in *replaceDocumentInput) (*documentOutput, error) {
	defer func() { _ = in.RawBody.Form.RemoveAll() }()
	if err := checkFormFields[documentForm](in.RawBody.Form); err != nil {
		return nil, err
	}
	f := in.RawBody.Data()
	content, err := readFile(f.File, h.limit)
	if err != nil {
		return nil, err
	}
	doc, err := h.d.KYC.ReplaceDocument(ctx, principal(ctx).PlatformID, in.DocumentID, kyc.DocumentInput{
		DocumentType: f.DocumentType, Side: f.Side, Country: f.Country, DocumentNumber: f.DocumentNumber,
		IssuingAuthority: f.IssuingAuthority, FileName: f.File.Filename, Content: content,
	})
	if err != nil {
		return nil, apiError(err)
	}
	return &documentOutput{Body: documentOut(doc)}, nil
}

func (documentsAPI) deleteDocumentOp() huma.Operation {
	return huma.Operation{
		OperationID:   "deleteDocument",
		Method:        http.MethodDelete,
		Path:          "/documents/{documentId}",
		Summary:       "Delete a document",
		DefaultStatus: http.StatusNoContent,
		Description:   "Deletes a document no verification has submitted yet; a submitted one is kept (409 CONFLICT): replace it instead.",
		Tags:          []string{documentsTag},
		Errors:        []int{http.StatusUnauthorized, http.StatusNotFound, http.StatusConflict},
	}
}

func (h documentsAPI) deleteDocument(ctx context.Context, in *documentIDInput) (*struct{}, error) {
	if err := h.d.KYC.DeleteDocument(ctx, principal(ctx).PlatformID, in.DocumentID); err != nil {
		return nil, apiError(err)
	}
	return nil, nil
}
