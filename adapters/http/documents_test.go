package httpapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDocumentUpload(t *testing.T) {
	h := newKYCHarness(t)
	tn := h.tenant("USD")
	cid := ok(t, h.post(tn, "/customers", businessBody("R-1", true)), http.StatusCreated)["id"].(string)
	oid := ok(t, h.post(tn, "/beneficial-owners", ownerBody(cid, "Smith", 50, `"UBO"`, true)), http.StatusCreated)["id"].(string)

	// The type comes from the content: a PNG declared as text is a PNG.
	r := h.multipartReq(tn, http.MethodPost, "/documents", map[string]string{
		"documentHolder": oid, "documentType": "DRIVERS_LICENSE", "side": "FRONT", "country": "US",
		"documentNumber": "D123", "issuingAuthority": "Texas DPS"},
		filePart{name: "file", fileName: "../../license.txt", contentType: "text/plain", content: pngBytes})
	d := ok(t, r, http.StatusCreated)
	sum := sha256.Sum256(pngBytes)
	assert.True(t, strings.HasPrefix(d["id"].(string), "Document:"))
	assert.Equal(t, oid, d["documentHolder"])
	assert.Equal(t, "DRIVERS_LICENSE", d["documentType"])
	assert.Equal(t, "FRONT", d["side"])
	assert.Equal(t, "D123", d["documentNumber"])
	assert.Equal(t, "Texas DPS", d["issuingAuthority"])
	assert.Equal(t, "license.txt", d["fileName"])
	assert.Equal(t, "image/png", d["contentType"])
	assert.EqualValues(t, len(pngBytes), d["size"])
	assert.Equal(t, hex.EncodeToString(sum[:]), d["sha256"])
	did := d["id"].(string)
	assert.Equal(t, d, ok(t, h.get(tn, "/documents/"+did), http.StatusOK))

	// Replace: new file and metadata, same holder.
	rp := ok(t, h.multipartReq(tn, http.MethodPut, "/documents/"+did, map[string]string{"documentType": "PASSPORT", "country": "CA"},
		filePart{name: "file", fileName: "passport.jpg", content: jpgBytes}), http.StatusOK)
	assert.Equal(t, did, rp["id"])
	assert.Equal(t, oid, rp["documentHolder"])
	assert.Equal(t, "PASSPORT", rp["documentType"])
	assert.Equal(t, "image/jpeg", rp["contentType"])
	assert.NotContains(t, rp, "side", "the replacement's metadata replaces the old")

	// List by holder, paginated.
	ok(t, h.uploadDoc(tn, cid, "UTILITY_BILL", pdfFile()), http.StatusCreated)
	ok(t, h.uploadDoc(tn, cid, "BANK_STATEMENT", pdfFile()), http.StatusCreated)
	all := ok(t, h.get(tn, "/documents?limit=2"), http.StatusOK)
	assert.EqualValues(t, 3, all["totalCount"])
	assert.Equal(t, true, all["hasMore"])
	rest := ok(t, h.get(tn, "/documents?limit=2&cursor="+url.QueryEscape(all["nextCursor"].(string))), http.StatusOK)
	assert.Len(t, rest["data"], 1)
	byHolder := ok(t, h.get(tn, "/documents?documentHolder="+url.QueryEscape(oid)), http.StatusOK)
	assert.EqualValues(t, 1, byHolder["totalCount"])
	assert.Equal(t, did, byHolder["data"].([]any)[0].(map[string]any)["id"])

	// Delete an unsubmitted document.
	r = h.del(tn, "/documents/"+did)
	require.Equalf(t, http.StatusNoContent, r.status, "%s", r.body)
	requireError(t, h.get(tn, "/documents/"+did), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.del(tn, "/documents/"+did), http.StatusNotFound, "REFERENCE_NOT_FOUND")
}

func TestDocumentBadInput(t *testing.T) {
	h := newKYCHarness(t)
	tn := h.tenant("USD")
	cid := ok(t, h.post(tn, "/customers", `{"customerType":"INDIVIDUAL","region":"US"}`), http.StatusCreated)["id"].(string)
	base := func() map[string]string {
		return map[string]string{"documentHolder": cid, "documentType": "PASSPORT", "country": "US"}
	}
	with := func(k, v string) map[string]string {
		m := base()
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	limit := 10 << 20
	oversize := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{'x'}, limit)...)
	for _, tc := range []struct {
		name   string
		fields map[string]string
		files  []filePart
		field  string
	}{
		{"text declared as a PDF", base(), []filePart{{name: "file", fileName: "a.pdf", contentType: "application/pdf", content: []byte("just some text")}}, "file"},
		{"GIF", base(), []filePart{{name: "file", fileName: "a.gif", content: []byte("GIF89a\x01\x00\x01\x00\x00\x00")}}, "file"},
		{"HTML", base(), []filePart{{name: "file", fileName: "a.html", content: []byte("<!DOCTYPE html><html></html>")}}, "file"},
		{"ZIP", base(), []filePart{{name: "file", fileName: "a.pdf", content: []byte("PK\x03\x04rest")}}, "file"},
		{"empty file", base(), []filePart{{name: "file", fileName: "a.pdf", content: []byte{}}}, "file"},
		{"no file", base(), nil, "file"},
		{"over 10 MiB", base(), []filePart{{name: "file", fileName: "big.pdf", content: oversize}}, "file"},
		{"wrong document type", with("documentType", "SELFIE_VIDEO"), []filePart{pdfFile()}, "documentType"},
		{"no document type", with("documentType", ""), []filePart{pdfFile()}, "documentType"},
		{"wrong side", with("side", "TOP"), []filePart{pdfFile()}, "side"},
		{"bad country", with("country", "USA"), []filePart{pdfFile()}, "country"},
		{"no holder", with("documentHolder", ""), []filePart{pdfFile()}, "documentHolder"},
		{"holder of another kind", with("documentHolder", "Transaction:1"), []filePart{pdfFile()}, "documentHolder"},
		{"unknown field", with("note", "x"), []filePart{pdfFile()}, "note"},
		{"two files", base(), []filePart{pdfFile(), pdfFile()}, "file"},
		{"a file under another name", base(), []filePart{pdfFile(), {name: "scan", fileName: "b.pdf", content: pdfFile().content}}, "scan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.multipartReq(tn, http.MethodPost, "/documents", tc.fields, tc.files...)
			requireError(t, r, http.StatusBadRequest, "INVALID_INPUT", tc.field)
		})
	}
	// Exactly 10 MiB is accepted.
	exact := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{'x'}, limit-9)...)
	ok(t, h.multipartReq(tn, http.MethodPost, "/documents", base(), filePart{name: "file", fileName: "max.pdf", content: exact}), http.StatusCreated)
	// A body far over the limit is refused before it is read.
	huge := bytes.Repeat([]byte{'x'}, limit+(1<<20))
	requireError(t, h.multipartReq(tn, http.MethodPost, "/documents", base(), filePart{name: "file", fileName: "huge.pdf", content: huge}),
		http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	// Other routes keep the usual body limit.
	requireError(t, h.post(tn, "/verifications", `{"customerId":"`+strings.Repeat("x", 2<<20)+`"}`), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	// Not multipart at all.
	requireError(t, h.post(tn, "/documents", `{"documentHolder":"x"}`), http.StatusBadRequest, "INVALID_INPUT")
	requireError(t, h.uploadDoc(tn, "Customer:nope", "PASSPORT", pdfFile()), http.StatusNotFound, "USER_NOT_FOUND")
	requireError(t, h.uploadDoc(tn, "BeneficialOwner:nope", "PASSPORT", pdfFile()), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.multipartReq(tn, http.MethodPut, "/documents/Document:nope", map[string]string{"documentType": "PASSPORT", "country": "US"}, pdfFile()),
		http.StatusNotFound, "REFERENCE_NOT_FOUND")
	// A replacement keeps its holder: the field is not one of its form's.
	requireError(t, h.multipartReq(tn, http.MethodPut, "/documents/Document:nope", base(), pdfFile()), http.StatusBadRequest, "INVALID_INPUT", "documentHolder")
}
