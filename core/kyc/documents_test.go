package kyc_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/ports"
)

func TestUploadDocument(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.addCustomer(t, usBusiness("1"))
	o := e.createOwner(t, ownerInput(c.ID, "Doe", 10))
	for _, tc := range []struct {
		holder  string
		content []byte
		want    string
	}{
		{c.ID, pdf, "application/pdf"}, {o.ID, jpeg, "image/jpeg"}, {o.ID, png, "image/png"},
	} {
		in := kyc.DocumentInput{HolderID: tc.holder, DocumentType: "PASSPORT", Side: "FRONT", Country: "US",
			DocumentNumber: "X1", IssuingAuthority: "State", FileName: `C:\scans\..\passport.bin`, Content: tc.content}
		d, err := e.svc.UploadDocument(ctx, e.platform, in)
		require.NoError(t, err)
		sum := sha256.Sum256(tc.content)
		assert.Equal(t, tc.want, d.ContentType, "sniffed, whatever the name says")
		assert.Equal(t, hex.EncodeToString(sum[:]), d.SHA256)
		assert.Equal(t, int64(len(tc.content)), d.Size)
		assert.Equal(t, c.ID, d.CustomerID, "an owner's document belongs to its business")
		assert.Equal(t, tc.holder, d.HolderID)
		assert.Equal(t, "passport.bin", d.FileName, "only the base name is kept")
		assert.Nil(t, d.Content)
		got, content, err := e.svc.DocumentContent(ctx, e.platform, d.ID)
		require.NoError(t, err)
		assert.Equal(t, d, got)
		assert.Equal(t, tc.content, content)
	}
	list, err := e.svc.ListDocuments(ctx, e.platform, o.ID, ports.Page{})
	require.NoError(t, err)
	assert.Equal(t, 2, list.Total)
	list, err = e.svc.ListDocuments(ctx, e.platform, "", ports.Page{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, 3, list.Total)
	assert.True(t, list.HasMore)
	list, err = e.svc.ListDocuments(ctx, e.addPlatform(t), "", ports.Page{})
	require.NoError(t, err)
	assert.Zero(t, list.Total, "another platform sees none")
	_, err = e.svc.ListDocuments(ctx, e.platform, "garbage", ports.Page{})
	requireFields(t, err, "documentHolder")
}

func TestUploadDocumentBadInput(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.addCustomer(t, usIndividual("Ada"))
	max := e.svc.MaxDocumentBytes()
	big := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{'a'}, int(max))...)
	for _, tc := range []struct {
		name   string
		edit   func(*kyc.DocumentInput)
		fields []string
	}{
		{"text file named .pdf", func(in *kyc.DocumentInput) { in.Content, in.FileName = []byte("hello, world"), "a.pdf" }, []string{"file"}},
		{"gif", func(in *kyc.DocumentInput) { in.Content = []byte("GIF89a\x01\x00\x01\x00") }, []string{"file"}},
		{"html", func(in *kyc.DocumentInput) { in.Content = []byte("<html><body>x</body></html>") }, []string{"file"}},
		{"empty", func(in *kyc.DocumentInput) { in.Content = nil }, []string{"file"}},
		{"over the limit", func(in *kyc.DocumentInput) { in.Content = big }, []string{"file"}},
		{"document type", func(in *kyc.DocumentInput) { in.DocumentType = "PHOTO" }, []string{"documentType"}},
		{"no document type", func(in *kyc.DocumentInput) { in.DocumentType = "" }, []string{"documentType"}},
		{"side", func(in *kyc.DocumentInput) { in.Side = "LEFT" }, []string{"side"}},
		{"country", func(in *kyc.DocumentInput) { in.Country = "" }, []string{"country"}},
		{"holder kind", func(in *kyc.DocumentInput) { in.HolderID = "Transaction:1" }, []string{"documentHolder"}},
		{"no holder, bad type", func(in *kyc.DocumentInput) { in.HolderID, in.DocumentType = "", "X" }, []string{"documentHolder", "documentType"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := kyc.DocumentInput{HolderID: c.ID, DocumentType: "PASSPORT", Country: "US", Content: pdf}
			tc.edit(&in)
			_, err := e.svc.UploadDocument(ctx, e.platform, in)
			requireFields(t, err, tc.fields...)
		})
	}
	exact := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{'a'}, int(max)-9)...)
	_, err := e.svc.UploadDocument(ctx, e.platform, kyc.DocumentInput{HolderID: c.ID, DocumentType: "PASSPORT", Country: "US", Content: exact})
	require.NoError(t, err, "exactly the limit is fine")

	for _, holder := range []string{"Customer:nope", "BeneficialOwner:nope"} {
		_, err := e.svc.UploadDocument(ctx, e.platform, kyc.DocumentInput{HolderID: holder, DocumentType: "PASSPORT", Country: "US", Content: pdf})
		f, ok := fault.As(err)
		require.True(t, ok, err)
		assert.Equal(t, fault.KindNotFound, f.Kind, holder)
	}
	_, err = e.svc.UploadDocument(ctx, e.addPlatform(t), kyc.DocumentInput{HolderID: c.ID, DocumentType: "PASSPORT", Country: "US", Content: pdf})
	requireKind(t, err, fault.KindNotFound, "USER_NOT_FOUND")
}

func TestReplaceAndDeleteDocument(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.addCustomer(t, usIndividual("Ada"))
	d := e.upload(t, c.ID, "PASSPORT", pdf)

	r, err := e.svc.ReplaceDocument(ctx, e.platform, d.ID, kyc.DocumentInput{DocumentType: "DRIVERS_LICENSE", Side: "BACK", Country: "CA", FileName: "back.png", Content: png})
	require.NoError(t, err)
	assert.Equal(t, d.ID, r.ID)
	assert.Equal(t, d.HolderID, r.HolderID)
	assert.Equal(t, d.CreatedAt, r.CreatedAt)
	assert.Equal(t, "image/png", r.ContentType)
	assert.Equal(t, "DRIVERS_LICENSE", r.DocumentType)
	_, content, err := e.svc.DocumentContent(ctx, e.platform, d.ID)
	require.NoError(t, err)
	assert.Equal(t, png, content)
	_, err = e.svc.ReplaceDocument(ctx, e.platform, d.ID, kyc.DocumentInput{DocumentType: "PASSPORT", Country: "US", Content: []byte("plain text")})
	requireFields(t, err, "file")
	_, err = e.svc.ReplaceDocument(ctx, e.platform, "Document:nope", kyc.DocumentInput{DocumentType: "PASSPORT", Country: "US", Content: pdf})
	requireKind(t, err, fault.KindNotFound, "NOT_FOUND")

	// Once a verification submitted it, the document is evidence: no
	// delete (409); a replacement is a new, unsubmitted file.
	e.submit(t, c.ID)
	got, err := e.svc.GetDocument(ctx, e.platform, d.ID)
	require.NoError(t, err)
	assert.True(t, got.Submitted)
	requireKind(t, e.svc.DeleteDocument(ctx, e.platform, d.ID), fault.KindConflict, "CONFLICT")
	r, err = e.svc.ReplaceDocument(ctx, e.platform, d.ID, kyc.DocumentInput{DocumentType: "PASSPORT", Country: "US", Content: jpeg})
	require.NoError(t, err)
	assert.False(t, r.Submitted)

	other := e.upload(t, c.ID, "SELFIE", jpeg)
	requireKind(t, e.svc.DeleteDocument(ctx, e.addPlatform(t), other.ID), fault.KindNotFound, "NOT_FOUND")
	require.NoError(t, e.svc.DeleteDocument(ctx, e.platform, other.ID))
	_, err = e.svc.GetDocument(ctx, e.platform, other.ID)
	requireKind(t, err, fault.KindNotFound, "NOT_FOUND")
	requireKind(t, e.svc.DeleteDocument(ctx, e.platform, other.ID), fault.KindNotFound, "NOT_FOUND")
}
