package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBeneficialOwnerCRUD(t *testing.T) {
	h := newKYCHarness(t)
	tn := h.tenant("USD")
	cid := ok(t, h.post(tn, "/customers", businessBody("R-1", true)), http.StatusCreated)["id"].(string)

	o := ok(t, h.post(tn, "/beneficial-owners", ownerBody(cid, "Smith", 51, `"UBO","DIRECTOR"`, true)), http.StatusCreated)
	oid := o["id"].(string)
	assert.True(t, strings.HasPrefix(oid, "BeneficialOwner:"))
	assert.Equal(t, cid, o["customerId"])
	assert.Equal(t, []any{"UBO", "DIRECTOR"}, o["roles"])
	assert.EqualValues(t, 51, o["ownershipPercentage"])
	assert.Equal(t, "UNVERIFIED", o["kycStatus"])
	pi := o["personalInfo"].(map[string]any)
	assert.Equal(t, "1978-06-15", pi["birthDate"])
	assert.Equal(t, "Austin", pi["address"].(map[string]any)["city"])
	assert.Equal(t, "•••••6789", pi["identifier"], "returned masked")
	assert.Equal(t, o, ok(t, h.get(tn, "/beneficial-owners/"+oid), http.StatusOK))

	// PATCH: only what is sent changes; personalInfo merges.
	h.clock.Advance(1e9)
	p := ok(t, h.patch(tn, "/beneficial-owners/"+oid, `{"ownershipPercentage":75,"personalInfo":{"middleName":"Q","email":"jane@example.com"}}`), http.StatusOK)
	assert.EqualValues(t, 75, p["ownershipPercentage"])
	assert.Equal(t, []any{"UBO", "DIRECTOR"}, p["roles"])
	ppi := p["personalInfo"].(map[string]any)
	assert.Equal(t, "Q", ppi["middleName"])
	assert.Equal(t, "jane@example.com", ppi["email"])
	assert.Equal(t, "Smith", ppi["lastName"])
	assert.Equal(t, pi["address"], ppi["address"])
	assert.NotEqual(t, o["updatedAt"], p["updatedAt"])
	p = ok(t, h.patch(tn, "/beneficial-owners/"+oid, `{"roles":["CONTROL_PERSON"]}`), http.StatusOK)
	assert.Equal(t, []any{"CONTROL_PERSON"}, p["roles"])

	// List: paginated, the business's owners only.
	for i := range 3 {
		ok(t, h.post(tn, "/beneficial-owners", ownerBody(cid, fmt.Sprint("Other", i), 5, `"UBO"`, true)), http.StatusCreated)
	}
	other := ok(t, h.post(tn, "/customers", businessBody("R-2", true)), http.StatusCreated)["id"].(string)
	ok(t, h.post(tn, "/beneficial-owners", ownerBody(other, "Else", 5, `"UBO"`, true)), http.StatusCreated)
	var seen []string
	path := "/beneficial-owners?limit=3&customerId=" + url.QueryEscape(cid)
	for cursor := ""; ; {
		page := ok(t, h.get(tn, path+cursor), http.StatusOK)
		assert.EqualValues(t, 4, page["totalCount"])
		for _, row := range page["data"].([]any) {
			seen = append(seen, row.(map[string]any)["id"].(string))
		}
		if page["hasMore"] != true {
			break
		}
		cursor = "&cursor=" + url.QueryEscape(page["nextCursor"].(string))
	}
	require.Len(t, seen, 4)
	assert.Equal(t, oid, seen[0])
	requireError(t, h.get(tn, "/beneficial-owners"), http.StatusBadRequest, "INVALID_INPUT", "customerId")
}

func TestBeneficialOwnerBadInput(t *testing.T) {
	h := newKYCHarness(t)
	tn := h.tenant("USD")
	cid := ok(t, h.post(tn, "/customers", businessBody("R-1", true)), http.StatusCreated)["id"].(string)
	good := ownerBody(cid, "Smith", 50, `"UBO"`, true)
	for _, tc := range []struct {
		name, body string
		field      string
	}{
		{"percentage 101", strings.Replace(good, `"ownershipPercentage":50`, `"ownershipPercentage":101`, 1), "ownershipPercentage"},
		{"percentage -1", strings.Replace(good, `"ownershipPercentage":50`, `"ownershipPercentage":-1`, 1), "ownershipPercentage"},
		{"percentage not an integer", strings.Replace(good, `"ownershipPercentage":50`, `"ownershipPercentage":50.5`, 1), "ownershipPercentage"},
		{"missing percentage", strings.Replace(good, `"ownershipPercentage":50,`, ``, 1), "ownershipPercentage"},
		{"wrong role", strings.Replace(good, `["UBO"]`, `["OWNER"]`, 1), "roles[0]"},
		{"no roles", strings.Replace(good, `["UBO"]`, `[]`, 1), "roles"},
		{"malformed birth date", strings.Replace(good, `"1978-06-15"`, `"15/06/1978"`, 1), "personalInfo.birthDate"},
		{"impossible birth date", strings.Replace(good, `"1978-06-15"`, `"1978-02-30"`, 1), "personalInfo.birthDate"},
		{"future birth date", strings.Replace(good, `"1978-06-15"`, `"2099-06-15"`, 1), "personalInfo.birthDate"},
		{"wrong id type", strings.Replace(good, `"SSN"`, `"PASSPORT"`, 1), "personalInfo.idType"},
		{"SSN shape", strings.Replace(good, `"123-45-6789"`, `"12"`, 1), "personalInfo.identifier"},
		{"nationality", strings.Replace(good, `"nationality":"US"`, `"nationality":"XX"`, 1), "personalInfo.nationality"},
		{"missing last name", strings.Replace(good, `"lastName":"Smith",`, ``, 1), "personalInfo.lastName"},
		{"unknown field", strings.Replace(good, `"roles"`, `"nickname":"x","roles"`, 1), "nickname"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, h.post(tn, "/beneficial-owners", tc.body), http.StatusBadRequest, "INVALID_INPUT", tc.field)
		})
	}
	ind := ok(t, h.post(tn, "/customers", `{"customerType":"INDIVIDUAL","region":"US"}`), http.StatusCreated)["id"].(string)
	requireError(t, h.post(tn, "/beneficial-owners", ownerBody(ind, "Smith", 10, `"UBO"`, true)), http.StatusBadRequest, "INVALID_INPUT", "customerId")
	requireError(t, h.post(tn, "/beneficial-owners", ownerBody("Customer:nope", "Smith", 10, `"UBO"`, true)), http.StatusNotFound, "USER_NOT_FOUND")

	// 100% at most together.
	ok(t, h.post(tn, "/beneficial-owners", ownerBody(cid, "Smith", 70, `"UBO"`, true)), http.StatusCreated)
	second := ok(t, h.post(tn, "/beneficial-owners", ownerBody(cid, "Jones", 30, `"UBO"`, true)), http.StatusCreated)
	requireError(t, h.post(tn, "/beneficial-owners", ownerBody(cid, "Brown", 1, `"UBO"`, true)), http.StatusBadRequest, "INVALID_INPUT", "ownershipPercentage")

	sid := second["id"].(string)
	for _, tc := range []struct{ body, field string }{
		{`{"ownershipPercentage":101}`, "ownershipPercentage"},
		{`{"ownershipPercentage":31}`, "ownershipPercentage"},
		{`{"roles":["KING"]}`, "roles[0]"},
		{`{"personalInfo":{"birthDate":"1978-13-40"}}`, "personalInfo.birthDate"},
		{`{"personalInfo":{"phoneNumber":"555"}}`, "personalInfo.phoneNumber"},
		{`{"personalInfo":{"address":{"line1":"x"}}}`, "personalInfo.address.postalCode"},
		{`{"personalInfo":{"identifier":"abc"}}`, "personalInfo.identifier"},
		{`{"kycStatus":"APPROVED"}`, "kycStatus"},
	} {
		requireError(t, h.patch(tn, "/beneficial-owners/"+sid, tc.body), http.StatusBadRequest, "INVALID_INPUT", tc.field)
	}
	assert.EqualValues(t, 30, ok(t, h.get(tn, "/beneficial-owners/"+sid), http.StatusOK)["ownershipPercentage"], "nothing changed")
	requireError(t, h.patch(tn, "/beneficial-owners/BeneficialOwner:nope", `{}`), http.StatusNotFound, "REFERENCE_NOT_FOUND")
}
