package kyc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// DocumentTypes is the reference's DocumentType enum.
var DocumentTypes = []string{"PASSPORT", "DRIVERS_LICENSE", "NATIONAL_ID", "PROOF_OF_ADDRESS", "BANK_STATEMENT",
	"TAX_RETURN", "CERTIFICATE_OF_INCORPORATION", "ARTICLES_OF_INCORPORATION", "ARTICLES_OF_ASSOCIATION",
	"STATE_REGISTRY_EXCERPT", "GOOD_STANDING_CERTIFICATE", "INFORMATION_STATEMENT", "INCUMBENCY_CERTIFICATE",
	"BUSINESS_LICENSE", "SHAREHOLDER_REGISTER", "POWER_OF_ATTORNEY", "UTILITY_BILL", "ELECTRICITY_BILL",
	"RENT_OR_LEASE_AGREEMENT", "DIRECTOR_REGISTRY", "TRUST_AGREEMENT", "STATE_COMPANY_REGISTRY",
	"PARTNERSHIP_CONTROL_AGREEMENT", "PARTNERSHIP_AGREEMENT", "SELFIE", "OTHER"}

// DocumentSides are the sides of a two-sided document.
var DocumentSides = []string{"FRONT", "BACK"}

// FileTypes are the content types a document may have, as sniffed from its
// first bytes (the client's declared type is ignored), with their names in
// messages.
var FileTypes = map[string]string{"application/pdf": "PDF", "image/jpeg": "JPEG", "image/png": "PNG"}

// DocumentInput is an upload (HolderID set) or a replacement (HolderID
// ignored): the metadata fields and the file. Content nil is a missing
// file.
type DocumentInput struct {
	HolderID         string
	DocumentType     string
	Side             string
	Country          string
	DocumentNumber   string
	IssuingAuthority string
	FileName         string
	Content          []byte
}

func errDocumentNotFound(id string) error {
	return fault.NotFound(codeNotFound, "document "+id+" not found")
}

// checkDocument checks the metadata (and the holder id, withHolder) and
// the file, and fills d from them: the content type is sniffed, the size
// bounded, the SHA-256 computed.
func (s *Service) checkDocument(in DocumentInput, d *ports.Document, withHolder bool) error {
	chk := &checker{}
	if withHolder {
		switch {
		case in.HolderID == "":
			chk.Add("documentHolder", "is required")
		case !isHolderID(in.HolderID):
			chk.Add("documentHolder", holderIDRule)
		}
	}
	switch {
	case in.DocumentType == "":
		chk.Add("documentType", "is required")
	case !slices.Contains(DocumentTypes, in.DocumentType):
		chk.Add("documentType", "must be one of "+strings.Join(DocumentTypes, ", "))
	}
	if in.Side != "" && !slices.Contains(DocumentSides, in.Side) {
		chk.Add("side", "must be one of "+strings.Join(DocumentSides, ", "))
	}
	if in.Country == "" {
		chk.Add("country", "is required")
	} else {
		chk.country("country", in.Country)
	}
	if in.DocumentNumber != "" {
		chk.Text("documentNumber", in.DocumentNumber, maxIdentifier)
	}
	if in.IssuingAuthority != "" {
		chk.Text("issuingAuthority", in.IssuingAuthority, maxText)
	}
	var contentType string
	switch {
	case len(in.Content) == 0:
		chk.Add("file", "is required and must not be empty")
	case int64(len(in.Content)) > s.opts.MaxDocumentBytes:
		chk.Add("file", fmt.Sprintf("must be at most %d bytes (%d MiB); it has %d", s.opts.MaxDocumentBytes, s.opts.MaxDocumentBytes>>20, len(in.Content)))
	default:
		contentType = sniff(in.Content)
		if _, ok := FileTypes[contentType]; !ok {
			chk.Add("file", "must be a PDF, JPEG or PNG file; its content is "+contentType)
		}
	}
	if err := chk.Err(); err != nil {
		return err
	}
	sum := sha256.Sum256(in.Content)
	d.DocumentType, d.Side, d.Country = in.DocumentType, in.Side, in.Country
	d.DocumentNumber, d.IssuingAuthority = in.DocumentNumber, in.IssuingAuthority
	d.FileName = fileName(in.FileName, contentType)
	d.ContentType, d.Size, d.SHA256 = contentType, int64(len(in.Content)), hex.EncodeToString(sum[:])
	d.Content = slices.Clone(in.Content)
	return nil
}

// sniff names the content's media type from its first bytes
// (http.DetectContentType: PDF by %PDF-, JPEG by FF D8 FF, PNG by its
// 8-byte signature), without parameters.
func sniff(b []byte) string {
	t := http.DetectContentType(b)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t)
}

// fileName keeps the base of the client's file name, printable and
// bounded; an unusable name becomes "document" with the type's extension.
func fileName(name, contentType string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	if utf8.RuneCountInString(name) > maxText {
		name = string([]rune(name)[:maxText])
	}
	if strings.Trim(name, ". /") == "" {
		ext := map[string]string{"application/pdf": ".pdf", "image/jpeg": ".jpg", "image/png": ".png"}[contentType]
		name = "document" + ext
	}
	return name
}

// holder resolves a document holder id to its customer: a customer of the
// platform (live), or a beneficial owner of one of its customers.
func holder(ctx context.Context, tx kycTx, platformID, id string, lock bool) (ports.Customer, error) {
	switch {
	case strings.HasPrefix(id, customerIDPrefix):
		return customer(ctx, tx, platformID, id, lock)
	case strings.HasPrefix(id, ownerIDPrefix):
		o, err := tx.BeneficialOwners().Get(ctx, platformID, id)
		if errors.Is(err, ports.ErrNotFound) {
			return ports.Customer{}, errOwnerNotFound(id)
		}
		if err != nil {
			return ports.Customer{}, fmt.Errorf("read beneficial owner %s: %w", id, err)
		}
		return customer(ctx, tx, platformID, o.CustomerID, lock)
	}
	return ports.Customer{}, fault.Invalid("documentHolder", holderIDRule)
}

// holderIDRule is what a documentHolder must be.
const holderIDRule = "must be a Customer:… or BeneficialOwner:… id"

// isHolderID reports whether id can name a document holder.
func isHolderID(id string) bool {
	return strings.HasPrefix(id, customerIDPrefix) || strings.HasPrefix(id, ownerIDPrefix)
}

// UploadDocument stores a document for a customer or beneficial owner. A
// verification waiting on documents is checked again at once.
func (s *Service) UploadDocument(ctx context.Context, platformID string, in DocumentInput) (ports.Document, error) {
	now := s.now()
	d := ports.Document{PlatformID: platformID, HolderID: in.HolderID, CreatedAt: now, UpdatedAt: now}
	if err := s.checkDocument(in, &d, true); err != nil {
		return ports.Document{}, err
	}
	d.ID = s.ids.New("Document")
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		c, err := holder(ctx, tx, platformID, in.HolderID, true)
		if err != nil {
			return err
		}
		d.CustomerID = c.ID
		if err := tx.Documents().Create(ctx, d); err != nil {
			return fmt.Errorf("create document: %w", err)
		}
		return s.recheck(ctx, tx, c, now)
	})
	if err != nil {
		return ports.Document{}, err
	}
	d.Content = nil
	return d, nil
}

// ReplaceDocument replaces a document's file and metadata (for example a
// rejected scan). The new file has not been submitted yet.
func (s *Service) ReplaceDocument(ctx context.Context, platformID, id string, in DocumentInput) (ports.Document, error) {
	now := s.now()
	var repl ports.Document
	if err := s.checkDocument(in, &repl, false); err != nil {
		return ports.Document{}, err
	}
	var out ports.Document
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		d, c, err := s.document(ctx, tx, platformID, id)
		if err != nil {
			return err
		}
		repl.ID, repl.PlatformID, repl.HolderID, repl.CustomerID, repl.CreatedAt = d.ID, d.PlatformID, d.HolderID, d.CustomerID, d.CreatedAt
		repl.UpdatedAt, repl.Submitted = now, false
		if err := tx.Documents().Update(ctx, repl); err != nil {
			return fmt.Errorf("replace document %s: %w", id, err)
		}
		out = repl
		out.Content = nil
		return s.recheck(ctx, tx, c, now)
	})
	if err != nil {
		return ports.Document{}, err
	}
	return out, nil
}

// document reads a document and locks its customer, then reads the
// document again under that lock: the changes of one customer's documents
// are serialised by it, so a request that lost a race to a delete finds no
// document (404), not a row gone between its read and its write.
func (s *Service) document(ctx context.Context, tx kycTx, platformID, id string) (ports.Document, ports.Customer, error) {
	read := func() (ports.Document, error) {
		d, err := tx.Documents().Get(ctx, platformID, id)
		if errors.Is(err, ports.ErrNotFound) {
			return ports.Document{}, errDocumentNotFound(id)
		}
		if err != nil {
			return ports.Document{}, fmt.Errorf("read document %s: %w", id, err)
		}
		return d, nil
	}
	d, err := read()
	if err != nil {
		return ports.Document{}, ports.Customer{}, err
	}
	c, err := customer(ctx, tx, platformID, d.CustomerID, true)
	if err != nil {
		return ports.Document{}, ports.Customer{}, err
	}
	if d, err = read(); err != nil {
		return ports.Document{}, ports.Customer{}, err
	}
	return d, c, nil
}

// GetDocument returns a document's metadata.
func (s *Service) GetDocument(ctx context.Context, platformID, id string) (ports.Document, error) {
	d, err := s.store.Read().Documents().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Document{}, errDocumentNotFound(id)
	}
	if err != nil {
		return ports.Document{}, fmt.Errorf("get document %s: %w", id, err)
	}
	return d, nil
}

// DocumentContent returns a document's bytes with its metadata.
func (s *Service) DocumentContent(ctx context.Context, platformID, id string) (ports.Document, []byte, error) {
	d, err := s.GetDocument(ctx, platformID, id)
	if err != nil {
		return ports.Document{}, nil, err
	}
	b, err := s.store.Read().Documents().Content(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Document{}, nil, errDocumentNotFound(id)
	}
	if err != nil {
		return ports.Document{}, nil, fmt.Errorf("read document %s: %w", id, err)
	}
	return d, b, nil
}

// ListDocuments pages the platform's documents (one holder's, when set),
// oldest first.
func (s *Service) ListDocuments(ctx context.Context, platformID, holderID string, page ports.Page) (Page[ports.Document], error) {
	if holderID != "" && !isHolderID(holderID) {
		return Page[ports.Document]{}, fault.Invalid("documentHolder", holderIDRule)
	}
	return listPage(page, func(p ports.Page) ([]ports.Document, int, error) {
		return s.store.Read().Documents().List(ctx, ports.DocumentFilter{PlatformID: platformID, HolderID: holderID}, p)
	}, func(d ports.Document) ports.Position { return ports.Position{CreatedAt: d.CreatedAt, ID: d.ID} })
}

// DeleteDocument removes a document that no verification has submitted;
// a submitted one is kept as evidence (409 CONFLICT).
func (s *Service) DeleteDocument(ctx context.Context, platformID, id string) error {
	now := s.now()
	return s.store.InTx(ctx, func(tx ports.Tx) error {
		d, c, err := s.document(ctx, tx, platformID, id)
		if err != nil {
			return err
		}
		if d.Submitted {
			return fault.Conflict(codeConflict, "document "+id+" was submitted for verification and cannot be deleted; replace it instead")
		}
		if err := tx.Documents().Delete(ctx, platformID, id); err != nil {
			return fmt.Errorf("delete document %s: %w", id, err)
		}
		return s.recheck(ctx, tx, c, now)
	})
}
