package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	kycsandbox "github.com/corridorpay/corridor/adapters/kyc/sandbox"
	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ports"
)

// kycHarness is the API with KYC (sandbox provider), customers, external
// accounts and transfers, on memory adapters.
type kycHarness struct {
	*apiHarness
	runner *jobs.Runner
}

func newKYCHarness(t *testing.T) *kycHarness {
	t.Helper()
	h := memoryHarness(t, true)
	reg := h.defaultRails(sandbox.Factory(h.clock))
	xfers := transfers.New(h.store, h.ledger, reg, h.clock, h.ids, transfers.Options{Logger: h.log})
	h.serve(httpapi.Deps{
		External:     h.external,
		Transfers:    xfers,
		Transactions: transactions.New(h.store),
		KYC:          kyc.New(h.store, kycsandbox.Provider{}, h.clock, h.ids, kyc.Options{}),
	})
	runner := jobs.NewRunner(h.store.Read().Jobs(), h.clock, h.log)
	xfers.Register(runner)
	return &kycHarness{apiHarness: h, runner: runner}
}

// filePart is one file of a multipart form.
type filePart struct {
	name, fileName, contentType string
	content                     []byte
}

// multipartReq sends a multipart form (fields, then files).
func (h *kycHarness) multipartReq(tn tenant, method, path string, fields map[string]string, files ...filePart) apiResponse {
	h.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		require.NoError(h.t, w.WriteField(k, v))
	}
	for _, f := range files {
		hdr := textproto.MIMEHeader{}
		hdr.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, f.name, f.fileName))
		if f.contentType != "" {
			hdr.Set("Content-Type", f.contentType)
		}
		part, err := w.CreatePart(hdr)
		require.NoError(h.t, err)
		_, err = part.Write(f.content)
		require.NoError(h.t, err)
	}
	require.NoError(h.t, w.Close())
	req, err := http.NewRequest(method, h.srv.URL+httpapi.BasePath+path, &buf)
	require.NoError(h.t, err)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.SetBasicAuth(tn.token, tn.secret)
	return h.do(req)
}

func (h *kycHarness) uploadDoc(tn tenant, holder, docType string, f filePart) apiResponse {
	h.t.Helper()
	return h.multipartReq(tn, http.MethodPost, "/documents", map[string]string{
		"documentHolder": holder, "documentType": docType, "country": "US"}, f)
}

var (
	pdfBytes = []byte("%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n%%EOF\n")
	pngBytes = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R', 0, 0, 0, 1}
	jpgBytes = []byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00, 0x01}
)

func pdfFile() filePart {
	return filePart{name: "file", fileName: "bill.pdf", contentType: "application/pdf", content: pdfBytes}
}

// businessBody creates a US business with the given registration number
// and (withAddress) a complete address.
func businessBody(reg string, withAddress bool) string {
	addr := ""
	if withAddress {
		addr = `,"address":{"line1":"2 Market St","city":"San Francisco","state":"CA","postalCode":"94105","country":"US"}`
	}
	return `{"customerType":"BUSINESS","region":"US","businessInfo":{"legalName":"Acme Inc","country":"US",` +
		`"taxId":"12-3456789","incorporatedOn":"2015-06-01","registrationNumber":"` + reg + `"}` + addr + `}`
}

func ownerBody(customerID, lastName string, pct int, roles string, city bool) string {
	c := ""
	if city {
		c = `"city":"Austin",`
	}
	return fmt.Sprintf(`{"customerId":%q,"roles":[%s],"ownershipPercentage":%d,"personalInfo":{"firstName":"Jane",`+
		`"lastName":%q,"birthDate":"1978-06-15","nationality":"US","idType":"SSN","identifier":"123-45-6789",`+
		`"address":{"line1":"3 Oak Ave",%s"state":"TX","postalCode":"73301","country":"US"}}}`, customerID, roles, pct, lastName, c)
}

// errorsOf renders a verification's errors as "resource type field".
func errorsOf(v map[string]any, names map[string]string) []string {
	out := []string{}
	for _, e := range v["errors"].([]any) {
		m := e.(map[string]any)
		s := names[m["resourceId"].(string)] + " " + m["type"].(string)
		if f, ok := m["field"].(string); ok {
			s += " " + f
		}
		out = append(out, s)
	}
	return out
}

// TestOnboardingStory: a business customer, its owners, a verification
// with errors, the fixes and the missing document, approval, then money
// out; and a rejected business is stopped.
func TestOnboardingStory(t *testing.T) {
	h := newKYCHarness(t)
	tn := h.tenant("USD")

	biz := ok(t, h.post(tn, "/customers", businessBody("HRB-4711", false)), http.StatusCreated)
	cid := biz["id"].(string)
	assert.Equal(t, "UNVERIFIED", biz["kybStatus"])

	a := ok(t, h.post(tn, "/beneficial-owners", ownerBody(cid, "Smith", 60, `"UBO","CONTROL_PERSON"`, true)), http.StatusCreated)
	b := ok(t, h.post(tn, "/beneficial-owners", ownerBody(cid, "Jones", 40, `"UBO"`, false)), http.StatusCreated)
	assert.Equal(t, "UNVERIFIED", a["kycStatus"])
	assert.Equal(t, "•••••6789", a["personalInfo"].(map[string]any)["identifier"], "the identifier is returned masked")
	names := map[string]string{cid: "business", a["id"].(string): "owner A", b["id"].(string): "owner B"}

	got := ok(t, h.get(tn, "/customers/"+cid), http.StatusOK)
	owners := got["beneficialOwners"].([]any)
	require.Len(t, owners, 2, "a business customer carries its owners")
	// Both owners were created at the same (fake) instant, so their order
	// is by id: compare as a set.
	assert.ElementsMatch(t, []any{a["id"], b["id"]}, []any{owners[0].(map[string]any)["id"], owners[1].(map[string]any)["id"]})

	// Verification with errors: the business's address, its proof of
	// address, and owner B's city.
	v := ok(t, h.post(tn, "/verifications", fmt.Sprintf(`{"customerId":%q}`, cid)), http.StatusOK)
	vid := v["id"].(string)
	assert.Equal(t, "RESOLVE_ERRORS", v["verificationStatus"])
	assert.Equal(t, []string{
		"business MISSING_FIELD customer.address.line1", "business MISSING_FIELD customer.address.city",
		"business MISSING_FIELD customer.address.state", "business MISSING_FIELD customer.address.postalCode",
		"business MISSING_PROOF_OF_ADDRESS_DOCUMENT",
		"owner B MISSING_FIELD personalInfo.address.city",
	}, errorsOf(v, names))
	poa := v["errors"].([]any)[4].(map[string]any)
	assert.Contains(t, poa["acceptedDocumentTypes"], "UTILITY_BILL")
	assert.NotEmpty(t, poa["reason"])
	assert.Equal(t, "UNVERIFIED", ok(t, h.get(tn, "/customers/"+cid), http.StatusOK)["kybStatus"])

	// Fix the data, upload the document: the verification is ready.
	ok(t, h.patch(tn, "/customers/"+cid, `{"customerType":"BUSINESS","address":{"line1":"2 Market St","city":"San Francisco","state":"CA","postalCode":"94105","country":"US"}}`), http.StatusOK)
	pb := ok(t, h.patch(tn, "/beneficial-owners/"+b["id"].(string), `{"personalInfo":{"address":{"line1":"3 Oak Ave","city":"Austin","state":"TX","postalCode":"73301","country":"US"}}}`), http.StatusOK)
	assert.Equal(t, "Jones", pb["personalInfo"].(map[string]any)["lastName"], "personalInfo merged")
	doc := ok(t, h.uploadDoc(tn, cid, "UTILITY_BILL", pdfFile()), http.StatusCreated)
	assert.Equal(t, "application/pdf", doc["contentType"])
	v = ok(t, h.get(tn, "/verifications/"+vid), http.StatusOK)
	assert.Equal(t, "READY_FOR_VERIFICATION", v["verificationStatus"])
	assert.Empty(t, v["errors"])

	// Resubmit: approved; the statuses follow.
	v = ok(t, h.post(tn, "/verifications", fmt.Sprintf(`{"customerId":%q}`, cid)), http.StatusOK)
	assert.Equal(t, vid, v["id"])
	assert.Equal(t, "APPROVED", v["verificationStatus"])
	assert.Equal(t, []any{}, v["errors"])
	got = ok(t, h.get(tn, "/customers/"+cid), http.StatusOK)
	assert.Equal(t, "APPROVED", got["kybStatus"])
	for _, o := range got["beneficialOwners"].([]any) {
		assert.Equal(t, "APPROVED", o.(map[string]any)["kycStatus"])
	}
	// The submitted document is kept as evidence.
	requireError(t, h.del(tn, "/documents/"+doc["id"].(string)), http.StatusConflict, "CONFLICT")

	// Money moves: fund the business's USD account, pay out to its bank.
	accts := ok(t, h.get(tn, "/customers/internal-accounts?customerId="+url.QueryEscape(cid)+"&currency=USD"), http.StatusOK)
	acct := accts["data"].([]any)[0].(map[string]any)["id"].(string)
	ok(t, h.post(tn, fundPath(acct), `{"amount":50000}`), http.StatusOK)
	ext := ok(t, h.post(tn, "/customers/external-accounts", fmt.Sprintf(`{"customerId":%q,"currency":"USD","accountInfo":{`+
		`"accountType":"USD_ACCOUNT","accountNumber":"123456789","routingNumber":"021000021","bankAccountType":"CHECKING",`+
		`"beneficiary":{"beneficiaryType":"BUSINESS","legalName":"Acme Inc"}}}`, cid)), http.StatusCreated)
	out := ok(t, h.post(tn, "/transfer-out", outBody(acct, ext["id"].(string), 2500, "")), http.StatusCreated)
	assert.Equal(t, "PENDING", out["status"])

	// The events of the status changes, in the outbox.
	evs, _, err := h.store.Read().Events().List(context.Background(), ports.EventFilter{PlatformID: tn.platformID}, ports.Page{})
	require.NoError(t, err)
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	assert.Contains(t, types, "CUSTOMER.KYB_APPROVED")
	assert.Contains(t, types, "VERIFICATION.RESOLVE_ERRORS")
	assert.NotContains(t, types, "VERIFICATION.READY_FOR_VERIFICATION", "no reference webhook carries it")
	assert.Contains(t, types, "VERIFICATION.APPROVED")
	assert.NotContains(t, types, "BENEFICIAL_OWNER.KYC_APPROVED", "no reference webhook type")

	// A business the provider rejects (registration number …002) is
	// stopped: 403 USER_NOT_READY for outgoing payments.
	rej := ok(t, h.post(tn, "/customers", businessBody("HRB-002", true)), http.StatusCreated)
	rid := rej["id"].(string)
	ok(t, h.post(tn, "/beneficial-owners", ownerBody(rid, "Brown", 100, `"UBO","DIRECTOR"`, true)), http.StatusCreated)
	ok(t, h.uploadDoc(tn, rid, "BANK_STATEMENT", filePart{name: "file", fileName: "s.png", content: pngBytes}), http.StatusCreated)
	rv := ok(t, h.post(tn, "/verifications", fmt.Sprintf(`{"customerId":%q}`, rid)), http.StatusOK)
	assert.Equal(t, "REJECTED", rv["verificationStatus"])
	assert.Equal(t, []string{"business APPLICANT_REJECTED"}, errorsOf(rv, map[string]string{rid: "business"}))
	assert.Equal(t, "REJECTED", ok(t, h.get(tn, "/customers/"+rid), http.StatusOK)["kybStatus"])
	err = kyc.CanSendOutgoing(context.Background(), h.store.Read(), tn.platformID, rid)
	f, isFault := fault.As(err)
	require.True(t, isFault, err)
	assert.Equal(t, "USER_NOT_READY", f.Code)
}

// TestKYBSandboxSuffixes: every sandbox suffix of the registration number
// and of an owner's last name, over HTTP.
func TestKYBSandboxSuffixes(t *testing.T) {
	h := newKYCHarness(t)
	tn := h.tenant("USD")
	for _, tc := range []struct {
		reg, ownerLast         string
		verification, kyb, kyc string
	}{
		{"REG-000123", "Smith", "APPROVED", "APPROVED", "APPROVED"},
		{"REG-000001", "Smith", "IN_PROGRESS", "PENDING", "APPROVED"},
		{"REG-000002", "Smith", "REJECTED", "REJECTED", "APPROVED"},
		{"REG-000123", "Smith001", "IN_PROGRESS", "PENDING", "PENDING"},
		{"REG-000123", "Smith002", "REJECTED", "REJECTED", "REJECTED"},
		{"REG-000123", "Smith003", "APPROVED", "APPROVED", "APPROVED"},
		{"REG-000001", "Smith002", "REJECTED", "REJECTED", "REJECTED"},
	} {
		t.Run(tc.reg+"/"+tc.ownerLast, func(t *testing.T) {
			c := ok(t, h.post(tn, "/customers", businessBody(tc.reg, true)), http.StatusCreated)
			cid := c["id"].(string)
			o := ok(t, h.post(tn, "/beneficial-owners", ownerBody(cid, tc.ownerLast, 100, `"UBO","CONTROL_PERSON"`, true)), http.StatusCreated)
			ok(t, h.uploadDoc(tn, cid, "PROOF_OF_ADDRESS", pdfFile()), http.StatusCreated)
			v := ok(t, h.post(tn, "/verifications", fmt.Sprintf(`{"customerId":%q}`, cid)), http.StatusOK)
			assert.Equal(t, tc.verification, v["verificationStatus"])
			if tc.verification != "REJECTED" {
				assert.Equal(t, []any{}, v["errors"], "no errors unless rejected")
			} else {
				assert.NotEmpty(t, v["errors"])
			}
			assert.Equal(t, tc.kyb, ok(t, h.get(tn, "/customers/"+cid), http.StatusOK)["kybStatus"])
			assert.Equal(t, tc.kyc, ok(t, h.get(tn, "/beneficial-owners/"+o["id"].(string)), http.StatusOK)["kycStatus"])
			wantBlocked := tc.kyb != "APPROVED"
			err := kyc.CanSendOutgoing(context.Background(), h.store.Read(), tn.platformID, cid)
			assert.Equal(t, wantBlocked, err != nil, "outgoing payments blocked")
		})
	}

	// A pending KYB is resubmitted after the data changes: the sandbox
	// answers again.
	c := ok(t, h.post(tn, "/customers", businessBody("REG-001", true)), http.StatusCreated)
	cid := c["id"].(string)
	ok(t, h.post(tn, "/beneficial-owners", ownerBody(cid, "Lee", 100, `"UBO","CONTROL_PERSON"`, true)), http.StatusCreated)
	ok(t, h.uploadDoc(tn, cid, "PROOF_OF_ADDRESS", pdfFile()), http.StatusCreated)
	assert.Equal(t, "IN_PROGRESS", ok(t, h.post(tn, "/verifications", fmt.Sprintf(`{"customerId":%q}`, cid)), http.StatusOK)["verificationStatus"])
	ok(t, h.patch(tn, "/customers/"+cid, `{"customerType":"BUSINESS","businessInfo":{"registrationNumber":"REG-777"}}`), http.StatusOK)
	assert.Equal(t, "APPROVED", ok(t, h.post(tn, "/verifications", fmt.Sprintf(`{"customerId":%q}`, cid)), http.StatusOK)["verificationStatus"])
}

// TestIndividualVerificationRegions: the error lists of two regions with
// different requirements, over HTTP.
func TestIndividualVerificationRegions(t *testing.T) {
	h := newKYCHarness(t)
	tn := h.tenant("USD", "EUR")
	us := ok(t, h.post(tn, "/customers", `{"customerType":"INDIVIDUAL","region":"US","fullName":"Ada Lovelace","birthDate":"1990-01-15"}`), http.StatusCreated)
	de := ok(t, h.post(tn, "/customers", `{"customerType":"INDIVIDUAL","region":"DE","fullName":"Ada Lovelace","birthDate":"1990-01-15"}`), http.StatusCreated)
	names := map[string]string{us["id"].(string): "us", de["id"].(string): "de"}

	v := ok(t, h.post(tn, "/verifications", fmt.Sprintf(`{"customerId":%q}`, us["id"])), http.StatusOK)
	assert.Equal(t, []string{
		"us MISSING_FIELD customer.address.line1", "us MISSING_FIELD customer.address.city",
		"us MISSING_FIELD customer.address.state", "us MISSING_FIELD customer.address.postalCode",
		"us MISSING_FIELD customer.idType", "us MISSING_FIELD customer.identifier",
	}, errorsOf(v, names), "the US needs a state and a tax id, no documents")

	v = ok(t, h.post(tn, "/verifications", fmt.Sprintf(`{"customerId":%q}`, de["id"])), http.StatusOK)
	assert.Equal(t, []string{
		"de MISSING_FIELD customer.nationality", "de MISSING_FIELD customer.address.line1",
		"de MISSING_FIELD customer.address.city", "de MISSING_FIELD customer.address.postalCode",
		"de MISSING_IDENTITY_DOCUMENT", "de MISSING_PROOF_OF_ADDRESS_DOCUMENT",
	}, errorsOf(v, names), "the EU needs nationality, an identity document and proof of address, no state")

	// The DE customer completes its file: approved, then the identity
	// document cannot be deleted.
	ok(t, h.patch(tn, "/customers/"+de["id"].(string), `{"customerType":"INDIVIDUAL","nationality":"DE","address":{"line1":"Unter den Linden 1","city":"Berlin","postalCode":"10117","country":"DE"}}`), http.StatusOK)
	id := ok(t, h.uploadDoc(tn, de["id"].(string), "PASSPORT", filePart{name: "file", fileName: "p.jpg", content: jpgBytes}), http.StatusCreated)
	ok(t, h.uploadDoc(tn, de["id"].(string), "UTILITY_BILL", pdfFile()), http.StatusCreated)
	v = ok(t, h.post(tn, "/verifications", fmt.Sprintf(`{"customerId":%q}`, de["id"])), http.StatusOK)
	assert.Equal(t, "APPROVED", v["verificationStatus"])
	assert.Equal(t, "APPROVED", ok(t, h.get(tn, "/customers/"+de["id"].(string)), http.StatusOK)["kycStatus"])
	requireError(t, h.del(tn, "/documents/"+id["id"].(string)), http.StatusConflict, "CONFLICT")

	// Lists: by customer and by status.
	list := ok(t, h.get(tn, "/verifications?verificationStatus=APPROVED"), http.StatusOK)
	assert.EqualValues(t, 1, list["totalCount"])
	list = ok(t, h.get(tn, "/verifications?customerId="+url.QueryEscape(us["id"].(string))), http.StatusOK)
	assert.EqualValues(t, 1, list["totalCount"])
	assert.Equal(t, "RESOLVE_ERRORS", list["data"].([]any)[0].(map[string]any)["verificationStatus"])
	list = ok(t, h.get(tn, "/verifications?limit=1"), http.StatusOK)
	assert.Equal(t, true, list["hasMore"])
	next := ok(t, h.get(tn, "/verifications?limit=1&cursor="+url.QueryEscape(list["nextCursor"].(string))), http.StatusOK)
	assert.NotEqual(t, list["data"].([]any)[0].(map[string]any)["id"], next["data"].([]any)[0].(map[string]any)["id"])
	assert.Equal(t, false, next["hasMore"])
}

func TestVerificationBadInput(t *testing.T) {
	h := newKYCHarness(t)
	tn := h.tenant("USD")
	requireError(t, h.post(tn, "/verifications", `{}`), http.StatusBadRequest, "INVALID_INPUT", "customerId")
	requireError(t, h.post(tn, "/verifications", `{"customerId":"Customer:nope"}`), http.StatusNotFound, "USER_NOT_FOUND")
	requireError(t, h.post(tn, "/verifications", `{"customerId":"x","extra":1}`), http.StatusBadRequest, "INVALID_INPUT", "extra")
	requireError(t, h.get(tn, "/verifications?verificationStatus=DONE"), http.StatusBadRequest, "INVALID_INPUT", "verificationStatus")
	requireError(t, h.get(tn, "/verifications?limit=0"), http.StatusBadRequest, "INVALID_INPUT", "limit")
	requireError(t, h.get(tn, "/verifications?cursor=forged"), http.StatusBadRequest, "INVALID_INPUT", "cursor")
	requireError(t, h.get(tn, "/verifications/Verification:nope"), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	r := h.send(request{method: http.MethodGet, path: "/verifications"})
	requireError(t, r, http.StatusUnauthorized, "UNAUTHORIZED")
}

// TestKYCPlatformIsolation: a platform sees and touches only its own
// owners, verifications and documents.
func TestKYCPlatformIsolation(t *testing.T) {
	h := newKYCHarness(t)
	a, b := h.tenant("USD"), h.tenant("USD")
	c := ok(t, h.post(a, "/customers", businessBody("R-123", true)), http.StatusCreated)
	cid := c["id"].(string)
	o := ok(t, h.post(a, "/beneficial-owners", ownerBody(cid, "Smith", 50, `"UBO","DIRECTOR"`, true)), http.StatusCreated)
	oid := o["id"].(string)
	d := ok(t, h.uploadDoc(a, cid, "UTILITY_BILL", pdfFile()), http.StatusCreated)
	v := ok(t, h.post(a, "/verifications", fmt.Sprintf(`{"customerId":%q}`, cid)), http.StatusOK)

	requireError(t, h.post(b, "/beneficial-owners", ownerBody(cid, "Evil", 10, `"UBO"`, true)), http.StatusNotFound, "USER_NOT_FOUND")
	requireError(t, h.get(b, "/beneficial-owners/"+oid), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.patch(b, "/beneficial-owners/"+oid, `{"ownershipPercentage":1}`), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.get(b, "/beneficial-owners?customerId="+url.QueryEscape(cid)), http.StatusNotFound, "USER_NOT_FOUND")
	requireError(t, h.post(b, "/verifications", fmt.Sprintf(`{"customerId":%q}`, cid)), http.StatusNotFound, "USER_NOT_FOUND")
	requireError(t, h.get(b, "/verifications/"+v["id"].(string)), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	assert.EqualValues(t, 0, ok(t, h.get(b, "/verifications"), http.StatusOK)["totalCount"])
	requireError(t, h.get(b, "/documents/"+d["id"].(string)), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.del(b, "/documents/"+d["id"].(string)), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.multipartReq(b, http.MethodPut, "/documents/"+d["id"].(string),
		map[string]string{"documentType": "PASSPORT", "country": "US"}, pdfFile()), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.uploadDoc(b, oid, "PASSPORT", pdfFile()), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	assert.EqualValues(t, 0, ok(t, h.get(b, "/documents"), http.StatusOK)["totalCount"])
	assert.EqualValues(t, 1, ok(t, h.get(a, "/documents"), http.StatusOK)["totalCount"])
	assert.EqualValues(t, 1, ok(t, h.get(a, "/beneficial-owners?customerId="+url.QueryEscape(cid)), http.StatusOK)["totalCount"])
}
