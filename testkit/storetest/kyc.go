package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// ---- KYC: beneficial owners, verifications, documents, events ----

func owner(platformID, customerID string, created time.Time) ports.BeneficialOwner {
	return ports.BeneficialOwner{
		ID: newID("BeneficialOwner"), PlatformID: platformID, CustomerID: customerID,
		Roles: []string{"UBO", "DIRECTOR"}, OwnershipPercentage: 51,
		PersonalInfo: ports.PersonalInfo{
			FirstName: "Jane", MiddleName: "Q", LastName: "Doe", BirthDate: "1980-02-03", Nationality: "US",
			Email: "jane@example.com", PhoneNumber: "+14155550100", IDType: "SSN", Identifier: "123-45-6789",
			CountryOfIssuance: "US",
			Address:           &ports.Address{Line1: "1 Main St", Line2: "Apt 2", City: "Springfield", State: "IL", PostalCode: "62701", Country: "US"},
		},
		KYCStatus: "UNVERIFIED", CreatedAt: created, UpdatedAt: created,
	}
}

func normOwner(o ports.BeneficialOwner) ports.BeneficialOwner {
	o.CreatedAt, o.UpdatedAt = norm(o.CreatedAt), norm(o.UpdatedAt)
	return o
}

func ownerPos(o ports.BeneficialOwner) ports.Position {
	return ports.Position{CreatedAt: o.CreatedAt, ID: o.ID}
}

func testBeneficialOwners(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	c1, c2 := newID("Customer"), newID("Customer")
	full := owner(p.ID, c1, at(1))
	bare := ports.BeneficialOwner{ID: newID("BeneficialOwner"), PlatformID: p.ID, CustomerID: c1,
		Roles: []string{"CONTROL_PERSON"}, KYCStatus: "UNVERIFIED", CreatedAt: at(2), UpdatedAt: at(2)}
	other := owner(p.ID, c2, at(3))
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.BeneficialOwners().Create(ctx, full))
		got, err := tx.BeneficialOwners().Get(ctx, p.ID, full.ID)
		require.NoError(t, err)
		assert.Equal(t, normOwner(full), got, "a unit of work reads its own writes")
		require.NoError(t, tx.BeneficialOwners().Create(ctx, bare))
		return tx.BeneficialOwners().Create(ctx, other)
	})
	for _, want := range []ports.BeneficialOwner{full, bare, other} {
		got, err := s.Read().BeneficialOwners().Get(ctx, p.ID, want.ID)
		require.NoError(t, err)
		assert.Equal(t, normOwner(want), got)
	}
	// Copies: changing what Get returned changes nothing stored.
	got, err := s.Read().BeneficialOwners().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	got.Roles[0] = "TRUSTEE"
	got.PersonalInfo.Address.Line1 = "changed"
	again, err := s.Read().BeneficialOwners().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	assert.Equal(t, normOwner(full), again)

	_, err = s.Read().BeneficialOwners().Get(ctx, q.ID, full.ID)
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform's owner")
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.BeneficialOwners().Create(ctx, full) })
	require.ErrorIs(t, err, ports.ErrConflict, "same id twice")

	// Update keeps the customer and creation time.
	upd := full
	upd.CustomerID, upd.CreatedAt = c2, at(9)
	upd.Roles, upd.OwnershipPercentage, upd.KYCStatus, upd.UpdatedAt = []string{"UBO"}, 100, "APPROVED", at(5)
	upd.PersonalInfo.LastName, upd.PersonalInfo.Address = "Roe", nil
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.BeneficialOwners().Update(ctx, upd) })
	got, err = s.Read().BeneficialOwners().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	want := upd
	want.CustomerID, want.CreatedAt = c1, full.CreatedAt
	assert.Equal(t, normOwner(want), got)
	wrong := upd
	wrong.PlatformID = q.ID
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.BeneficialOwners().Update(ctx, wrong) })
	require.ErrorIs(t, err, ports.ErrNotFound, "update through another platform")

	rows, total, err := s.Read().BeneficialOwners().List(ctx, ports.BeneficialOwnerFilter{PlatformID: p.ID, CustomerID: c1}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	assert.Equal(t, []string{full.ID, bare.ID}, ids(rows, func(o ports.BeneficialOwner) string { return o.ID }))
	_, total, err = s.Read().BeneficialOwners().List(ctx, ports.BeneficialOwnerFilter{PlatformID: p.ID}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 3, total)
	_, total, err = s.Read().BeneficialOwners().List(ctx, ports.BeneficialOwnerFilter{PlatformID: q.ID}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Zero(t, total, "another platform sees none")

	// The owners of a page of customers, in one read.
	rows, total, err = s.Read().BeneficialOwners().List(ctx,
		ports.BeneficialOwnerFilter{PlatformID: p.ID, CustomerIDs: []string{c1, c2, newID("Customer")}}, ports.Page{})
	require.NoError(t, err)
	assert.Equal(t, 3, total)
	assert.Len(t, rows, 3)
	rows, _, err = s.Read().BeneficialOwners().List(ctx, ports.BeneficialOwnerFilter{PlatformID: p.ID, CustomerIDs: []string{c2}}, ports.Page{})
	require.NoError(t, err)
	for _, o := range rows {
		assert.Equal(t, c2, o.CustomerID)
	}
	_, total, err = s.Read().BeneficialOwners().List(ctx, ports.BeneficialOwnerFilter{PlatformID: q.ID, CustomerIDs: []string{c1, c2}}, ports.Page{})
	require.NoError(t, err)
	assert.Zero(t, total, "another platform's customers' owners are not read")
}

func testBeneficialOwnerPagination(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := newID("Customer")
	var all []ports.BeneficialOwner
	for i := range 7 {
		// Two share a creation time: the id breaks the tie.
		all = append(all, owner(p.ID, c, at(1+i/2)))
	}
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, o := range all {
			if err := tx.BeneficialOwners().Create(ctx, o); err != nil {
				return err
			}
		}
		return nil
	})
	want := sortedIDs(all, ownerPos)
	for _, limit := range []int{1, 2, 3, 7, 10} {
		got := walk(t, limit, len(all), func(pg ports.Page) ([]ports.BeneficialOwner, int, error) {
			return s.Read().BeneficialOwners().List(ctx, ports.BeneficialOwnerFilter{PlatformID: p.ID, CustomerID: c}, pg)
		}, ownerPos)
		assert.Equal(t, want, got, "limit %d", limit)
	}
}

func verification(platformID, customerID string, created time.Time) ports.Verification {
	return ports.Verification{
		ID: newID("Verification"), PlatformID: platformID, CustomerID: customerID, Status: "RESOLVE_ERRORS",
		Errors: []ports.VerificationError{
			{ResourceID: customerID, Type: "MISSING_FIELD", Field: "customer.address.line1", Reason: "needed"},
			{ResourceID: customerID, Type: "MISSING_PROOF_OF_ADDRESS_DOCUMENT", AcceptedDocumentTypes: []string{"UTILITY_BILL", "BANK_STATEMENT"}, Reason: "needed"},
		},
		CreatedAt: created, UpdatedAt: created,
	}
}

func normVerification(v ports.Verification) ports.Verification {
	v.CreatedAt, v.UpdatedAt = norm(v.CreatedAt), norm(v.UpdatedAt)
	if v.SubmittedAt != nil {
		s := norm(*v.SubmittedAt)
		v.SubmittedAt = &s
	}
	if v.Errors == nil {
		v.Errors = []ports.VerificationError{}
	}
	return v
}

func verificationPos(v ports.Verification) ports.Position {
	return ports.Position{CreatedAt: v.CreatedAt, ID: v.ID}
}

func testVerifications(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	c1, c2 := newID("Customer"), newID("Customer")
	_, err := s.Read().Verifications().Latest(ctx, p.ID, c1)
	require.ErrorIs(t, err, ports.ErrNotFound, "no verification yet")

	older := verification(p.ID, c1, at(1))
	newer := verification(p.ID, c1, at(2))
	newer.Status, newer.Errors = "APPROVED", nil
	other := verification(p.ID, c2, at(3))
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, v := range []ports.Verification{older, newer, other} {
			if err := tx.Verifications().Create(ctx, v); err != nil {
				return err
			}
		}
		got, err := tx.Verifications().Latest(ctx, p.ID, c1)
		require.NoError(t, err)
		assert.Equal(t, newer.ID, got.ID, "a unit of work reads its own writes")
		return nil
	})
	for _, want := range []ports.Verification{older, newer, other} {
		got, err := s.Read().Verifications().Get(ctx, p.ID, want.ID)
		require.NoError(t, err)
		assert.Equal(t, normVerification(want), got)
	}
	latest, err := s.Read().Verifications().Latest(ctx, p.ID, c1)
	require.NoError(t, err)
	assert.Equal(t, newer.ID, latest.ID)
	_, err = s.Read().Verifications().Get(ctx, q.ID, older.ID)
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform's verification")
	_, err = s.Read().Verifications().Latest(ctx, q.ID, c1)
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform's customer")

	upd := older
	submitted := at(4)
	upd.Status, upd.Errors, upd.SubmittedAt, upd.UpdatedAt = "IN_PROGRESS", nil, &submitted, at(4)
	upd.CustomerID = c2 // fixed at Create
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Verifications().Update(ctx, upd) })
	got, err := s.Read().Verifications().Get(ctx, p.ID, older.ID)
	require.NoError(t, err)
	want := upd
	want.CustomerID = c1
	assert.Equal(t, normVerification(want), got)

	for _, tc := range []struct {
		name string
		f    ports.VerificationFilter
		want []string
	}{
		{"all", ports.VerificationFilter{PlatformID: p.ID}, []string{older.ID, newer.ID, other.ID}},
		{"customer", ports.VerificationFilter{PlatformID: p.ID, CustomerID: c1}, []string{older.ID, newer.ID}},
		{"status", ports.VerificationFilter{PlatformID: p.ID, Status: "RESOLVE_ERRORS"}, []string{other.ID}},
		{"customer and status", ports.VerificationFilter{PlatformID: p.ID, CustomerID: c1, Status: "APPROVED"}, []string{newer.ID}},
		{"other platform", ports.VerificationFilter{PlatformID: q.ID}, []string{}},
	} {
		rows, total, err := s.Read().Verifications().List(ctx, tc.f, ports.Page{Limit: 10})
		require.NoError(t, err, tc.name)
		assert.Equal(t, len(tc.want), total, tc.name)
		assert.Equal(t, tc.want, ids(rows, func(v ports.Verification) string { return v.ID }), tc.name)
	}
	got2 := walk(t, 1, 3, func(pg ports.Page) ([]ports.Verification, int, error) {
		return s.Read().Verifications().List(ctx, ports.VerificationFilter{PlatformID: p.ID}, pg)
	}, verificationPos)
	assert.Equal(t, []string{older.ID, newer.ID, other.ID}, got2)
}

func document(platformID, holderID, customerID string, created time.Time, content []byte) ports.Document {
	sum := sha256.Sum256(content)
	return ports.Document{
		ID: newID("Document"), PlatformID: platformID, HolderID: holderID, CustomerID: customerID,
		DocumentType: "UTILITY_BILL", Side: "FRONT", Country: "US", DocumentNumber: "N-1", IssuingAuthority: "City",
		FileName: "bill.pdf", ContentType: "application/pdf", Size: int64(len(content)), SHA256: hex.EncodeToString(sum[:]),
		Content: content, CreatedAt: created, UpdatedAt: created,
	}
}

// meta is a document as Get and List return it: no content.
func meta(d ports.Document) ports.Document {
	d.Content = nil
	d.CreatedAt, d.UpdatedAt = norm(d.CreatedAt), norm(d.UpdatedAt)
	return d
}

func documentPos(d ports.Document) ports.Position {
	return ports.Position{CreatedAt: d.CreatedAt, ID: d.ID}
}

func testDocuments(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	cust, ownerID, cust2 := newID("Customer"), newID("BeneficialOwner"), newID("Customer")
	pdf := []byte("%PDF-1.7\n\x00\x01\x02binary\xff")
	ofCustomer := document(p.ID, cust, cust, at(1), pdf)
	ofOwner := document(p.ID, ownerID, cust, at(2), []byte("\x89PNG\r\n\x1a\nimage"))
	ofOwner.DocumentType, ofOwner.Side, ofOwner.ContentType = "PASSPORT", "", "image/png"
	ofOther := document(p.ID, cust2, cust2, at(3), []byte("%PDF-other"))
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, d := range []ports.Document{ofCustomer, ofOwner, ofOther} {
			if err := tx.Documents().Create(ctx, d); err != nil {
				return err
			}
		}
		got, err := tx.Documents().Content(ctx, p.ID, ofCustomer.ID)
		require.NoError(t, err)
		assert.Equal(t, pdf, got, "a unit of work reads its own writes")
		return nil
	})
	for _, want := range []ports.Document{ofCustomer, ofOwner, ofOther} {
		got, err := s.Read().Documents().Get(ctx, p.ID, want.ID)
		require.NoError(t, err)
		assert.Equal(t, meta(want), got, "Get has no content")
		content, err := s.Read().Documents().Content(ctx, p.ID, want.ID)
		require.NoError(t, err)
		assert.Equal(t, want.Content, content, "the bytes come back exactly")
	}
	_, err := s.Read().Documents().Get(ctx, q.ID, ofCustomer.ID)
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform's document")
	_, err = s.Read().Documents().Content(ctx, q.ID, ofCustomer.ID)
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform's document content")

	checkDocumentUpdates(t, s, ofCustomer, ownerID)

	// MarkSubmitted flags the customer's and its owners' documents only.
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.Documents().MarkSubmitted(ctx, p.ID, cust, at(6))
	})
	for id, submitted := range map[string]bool{ofCustomer.ID: true, ofOwner.ID: true, ofOther.ID: false} {
		got, err := s.Read().Documents().Get(ctx, p.ID, id)
		require.NoError(t, err)
		assert.Equal(t, submitted, got.Submitted, id)
		if submitted {
			assert.Equal(t, norm(at(6)), got.UpdatedAt, id)
		}
	}

	for _, tc := range []struct {
		name string
		f    ports.DocumentFilter
		want []string
	}{
		{"all", ports.DocumentFilter{PlatformID: p.ID}, []string{ofCustomer.ID, ofOwner.ID, ofOther.ID}},
		{"holder", ports.DocumentFilter{PlatformID: p.ID, HolderID: ownerID}, []string{ofOwner.ID}},
		{"customer and owners", ports.DocumentFilter{PlatformID: p.ID, CustomerID: cust}, []string{ofCustomer.ID, ofOwner.ID}},
		{"other platform", ports.DocumentFilter{PlatformID: q.ID}, []string{}},
	} {
		rows, total, err := s.Read().Documents().List(ctx, tc.f, ports.Page{Limit: 10})
		require.NoError(t, err, tc.name)
		assert.Equal(t, len(tc.want), total, tc.name)
		assert.Equal(t, tc.want, ids(rows, func(d ports.Document) string { return d.ID }), tc.name)
		for _, r := range rows {
			assert.Nil(t, r.Content, "lists carry no content")
		}
	}
	seen := walk(t, 2, 3, func(pg ports.Page) ([]ports.Document, int, error) {
		return s.Read().Documents().List(ctx, ports.DocumentFilter{PlatformID: p.ID}, pg)
	}, documentPos)
	assert.Equal(t, []string{ofCustomer.ID, ofOwner.ID, ofOther.ID}, seen)

	checkDocumentDelete(t, s, q.ID, ofOwner)
}

// checkDocumentUpdates requires a metadata-only update of d (stored with
// its content) to keep the content and the holder (fixed at Create, so an
// update naming otherHolderID does not move it), and an update with new
// content to replace the content.
func checkDocumentUpdates(t *testing.T, s ports.Store, d ports.Document, otherHolderID string) {
	ctx := context.Background()
	upd := d
	upd.DocumentType, upd.FileName, upd.UpdatedAt, upd.Content = "BANK_STATEMENT", "statement.pdf", at(4), nil
	upd.HolderID = otherHolderID // fixed at Create
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Documents().Update(ctx, upd) })
	got, err := s.Read().Documents().Get(ctx, d.PlatformID, d.ID)
	require.NoError(t, err)
	want := upd
	want.HolderID = d.HolderID
	assert.Equal(t, meta(want), got)
	content, err := s.Read().Documents().Content(ctx, d.PlatformID, d.ID)
	require.NoError(t, err)
	assert.Equal(t, d.Content, content)

	jpeg := []byte("\xff\xd8\xff\xe0 new jpeg")
	repl := document(d.PlatformID, d.HolderID, d.CustomerID, at(1), jpeg)
	repl.ID, repl.ContentType, repl.UpdatedAt = d.ID, "image/jpeg", at(5)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Documents().Update(ctx, repl) })
	got, err = s.Read().Documents().Get(ctx, d.PlatformID, d.ID)
	require.NoError(t, err)
	assert.Equal(t, meta(repl), got)
	content, err = s.Read().Documents().Content(ctx, d.PlatformID, d.ID)
	require.NoError(t, err)
	assert.Equal(t, jpeg, content)
}

// checkDocumentDelete deletes d, whose customer holds one other document:
// it is then gone for every read; a second delete, an update, or a delete
// on another platform (otherID) is ErrNotFound; a rolled-back delete leaves
// it.
func checkDocumentDelete(t *testing.T, s ports.Store, otherID string, d ports.Document) {
	ctx := context.Background()
	err := s.InTx(ctx, func(tx ports.Tx) error { return tx.Documents().Delete(ctx, otherID, d.ID) })
	require.ErrorIs(t, err, ports.ErrNotFound)
	rollback := errors.New("roll back")
	err = s.InTx(ctx, func(tx ports.Tx) error {
		require.NoError(t, tx.Documents().Delete(ctx, d.PlatformID, d.ID))
		_, err := tx.Documents().Get(ctx, d.PlatformID, d.ID)
		require.ErrorIs(t, err, ports.ErrNotFound, "the unit sees its own delete")
		return rollback
	})
	require.ErrorIs(t, err, rollback)
	_, err = s.Read().Documents().Get(ctx, d.PlatformID, d.ID)
	require.NoError(t, err, "a rolled-back delete leaves the document")
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Documents().Delete(ctx, d.PlatformID, d.ID) })
	_, err = s.Read().Documents().Get(ctx, d.PlatformID, d.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	_, err = s.Read().Documents().Content(ctx, d.PlatformID, d.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	_, total, err := s.Read().Documents().List(ctx, ports.DocumentFilter{PlatformID: d.PlatformID, CustomerID: d.CustomerID}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Documents().Delete(ctx, d.PlatformID, d.ID) })
	require.ErrorIs(t, err, ports.ErrNotFound, "deleted twice")
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Documents().Update(ctx, d) })
	require.ErrorIs(t, err, ports.ErrNotFound, "update of a deleted document")
}

// testDocumentLarge stores a 10 MiB document and reads it back exactly.
func testDocumentLarge(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	big := make([]byte, 10<<20)
	for i := range big {
		big[i] = byte(i * 31)
	}
	d := document(p.ID, newID("Customer"), newID("Customer"), at(1), big)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Documents().Create(ctx, d) })
	got, err := s.Read().Documents().Content(ctx, p.ID, d.ID)
	require.NoError(t, err)
	require.Equal(t, len(big), len(got))
	sum := sha256.Sum256(got)
	assert.Equal(t, d.SHA256, hex.EncodeToString(sum[:]))
}
