package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ---- helpers ----

// createCustomer posts body and requires a 201, returning the customer.
func (h *apiHarness) createCustomer(tn tenant, body string) map[string]any {
	h.t.Helper()
	r := h.post(tn, "/customers", body)
	require.Equalf(h.t, http.StatusCreated, r.status, "body %s", r.body)
	return r.object(h.t)
}

// customerAccounts lists a customer's internal accounts through the API.
func (h *apiHarness) customerAccounts(tn tenant, customerID string) []map[string]any {
	h.t.Helper()
	r := h.get(tn, "/customers/internal-accounts?limit=100&customerId="+url.QueryEscape(customerID))
	require.Equalf(h.t, http.StatusOK, r.status, "body %s", r.body)
	var list struct {
		Data []map[string]any `json:"data"`
	}
	require.NoError(h.t, json.Unmarshal(r.body, &list))
	return list.Data
}

// requireFields checks a 400 INVALID_INPUT naming exactly fields.
func requireFields(t *testing.T, r apiResponse, fields ...string) {
	t.Helper()
	m := requireError(t, r, http.StatusBadRequest, "INVALID_INPUT")
	details, ok := m["details"].(map[string]any)
	require.Truef(t, ok, "details in %s", r.body)
	errs, ok := details["errors"].([]any)
	require.Truef(t, ok, "details.errors in %s", r.body)
	var got []string
	for _, e := range errs {
		fe := e.(map[string]any)
		got = append(got, fe["field"].(string))
		assert.NotEmptyf(t, fe["message"], "message of %v", fe)
	}
	assert.ElementsMatchf(t, fields, got, "fields named in %s", r.body)
}

func customerPath(id string) string { return "/customers/" + url.PathEscape(id) }

func customerIDs(list []any) []string {
	out := make([]string, len(list))
	for i, c := range list {
		out[i] = c.(map[string]any)["id"].(string)
	}
	return out
}

// ---- create ----

func TestCustomerCreateIndividual(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()

	c := h.createCustomer(tn, `{"customerType":"INDIVIDUAL"}`)
	assert.Regexp(t, `^Customer:[0-9a-f-]{36}$`, c["id"])
	assert.Equal(t, "INDIVIDUAL", c["customerType"])
	assert.Regexp(t, `^[0-9a-f]{32}$`, c["platformCustomerId"], "generated")
	assert.Regexp(t, `^\$[0-9a-f]{32}@example\.test$`, c["umaAddress"], "generated on the platform's UMA domain")
	assert.Equal(t, []any{"USD", "USDC"}, c["currencies"])
	assert.Equal(t, "UNVERIFIED", c["kycStatus"])
	assert.Equal(t, false, c["isDeleted"])
	assert.Equal(t, "2025-10-13T12:00:00Z", c["createdAt"])
	assert.Equal(t, "2025-10-13T12:00:00Z", c["updatedAt"])
	for _, absent := range []string{"kybStatus", "businessInfo", "email", "region", "phoneNumber", "address",
		"fullName", "identifier", "endUserTermsConsent", "sourceOfFundsCategories"} {
		assert.NotContains(t, c, absent, "unset fields are omitted")
	}

	accts := h.customerAccounts(tn, c["id"].(string))
	require.Len(t, accts, 2)
	types := map[string]string{}
	for _, a := range accts {
		types[a["balance"].(map[string]any)["currency"].(map[string]any)["code"].(string)] = a["type"].(string)
		assert.Equal(t, "ACTIVE", a["status"])
		assert.Equal(t, c["id"], a["customerId"])
	}
	assert.Equal(t, map[string]string{"USD": "INTERNAL_FIAT", "USDC": "INTERNAL_CRYPTO"}, types)
}

func TestCustomerCreateIndividualProfile(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	body := `{
		"customerType": "INDIVIDUAL",
		"platformCustomerId": "ind-7b3f1a9d",
		"region": "MX",
		"email": "carlos@example.com",
		"phoneNumber": "+525512345678",
		"umaAddress": "$carlos@example.test",
		"kycStatus": "PENDING",
		"fullName": "Carlos García",
		"birthDate": "1988-05-22",
		"nationality": "MX",
		"idType": "NON_US_TAX_ID",
		"identifier": "GARC880522",
		"countryOfIssuance": "MX",
		"address": {"line1": "Av. Reforma 1", "city": "CDMX", "postalCode": "06600", "country": "MX"},
		"endUserTermsConsent": {"acceptedAt": "2025-10-13T11:00:00+02:00", "ipAddress": "2001:db8::1", "termsVersion": "V1", "acceptanceMethod": "CLICK_TO_ACCEPT"},
		"sourceOfFundsCategories": ["SALARY", "OTHER"],
		"sourceOfFundsOtherDescription": "Prize",
		"purposeOfAccount": "P2P_TRANSFERS",
		"annualIncomeRange": "RANGE_50K_100K",
		"pepStatus": "NONE"
	}`
	c := h.createCustomer(tn, body)
	want := map[string]any{
		"platformCustomerId": "ind-7b3f1a9d", "region": "MX", "currencies": []any{"MXN", "USDC"},
		"email": "carlos@example.com", "phoneNumber": "+525512345678", "umaAddress": "$carlos@example.test",
		"kycStatus": "PENDING", "fullName": "Carlos García", "birthDate": "1988-05-22", "nationality": "MX",
		"idType": "NON_US_TAX_ID", "countryOfIssuance": "MX",
		"address":                 map[string]any{"line1": "Av. Reforma 1", "city": "CDMX", "postalCode": "06600", "country": "MX"},
		"endUserTermsConsent":     map[string]any{"acceptedAt": "2025-10-13T09:00:00Z", "ipAddress": "2001:db8::1", "termsVersion": "V1", "acceptanceMethod": "CLICK_TO_ACCEPT"},
		"sourceOfFundsCategories": []any{"SALARY", "OTHER"}, "sourceOfFundsOtherDescription": "Prize",
		"purposeOfAccount": "P2P_TRANSFERS", "annualIncomeRange": "RANGE_50K_100K", "pepStatus": "NONE",
	}
	for k, v := range want {
		assert.Equal(t, v, c[k], k)
	}
	assert.NotContains(t, c, "identifier", "write-only, as the reference has it")
	assert.NotContains(t, string(h.get(tn, customerPath(c["id"].(string))).body), "GARC880522", "never returned")

	// One account per currency plus the embedded wallet in the first fiat currency.
	var wallet map[string]any
	for _, a := range h.customerAccounts(tn, c["id"].(string)) {
		if a["type"] == "EMBEDDED_WALLET" {
			require.Nil(t, wallet, "one wallet")
			wallet = a
		}
	}
	require.NotNil(t, wallet)
	assert.Equal(t, "MXN", wallet["balance"].(map[string]any)["currency"].(map[string]any)["code"])
	assert.Len(t, h.customerAccounts(tn, c["id"].(string)), 3)
}

func TestCustomerCreateBusiness(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	c := h.createCustomer(tn, `{
		"customerType": "BUSINESS",
		"platformCustomerId": "biz-acme-001",
		"region": "US",
		"currencies": ["USD", "USDC"],
		"kybStatus": "APPROVED",
		"address": {"line1": "1 Market St", "line2": "Suite 400", "city": "San Francisco", "state": "CA", "postalCode": "94105", "country": "US"},
		"businessInfo": {
			"legalName": "Acme Corporation", "doingBusinessAs": "Acme", "country": "US",
			"registrationNumber": "5523041", "incorporatedOn": "2018-03-14", "entityType": "LLC",
			"taxId": "47-1234567", "countriesOfOperation": ["US"], "businessType": "INFORMATION",
			"purposeOfAccount": "CONTRACTOR_PAYOUTS", "sourceOfFunds": "Customer payments",
			"expectedMonthlyTransactionCount": "COUNT_100_TO_500", "expectedMonthlyTransactionVolume": "VOLUME_100K_TO_1M",
			"expectedRecipientJurisdictions": ["US", "MX"], "naicsCode": "541511",
			"sourceOfFundsCategories": ["OPERATING_REVENUE"], "primaryContactFirstName": "Jane", "primaryContactLastName": "Smith"
		}
	}`)
	assert.Equal(t, "BUSINESS", c["customerType"])
	assert.Equal(t, "APPROVED", c["kybStatus"])
	assert.NotContains(t, c, "kycStatus")
	bi, ok := c["businessInfo"].(map[string]any)
	require.True(t, ok, "businessInfo in %v", c)
	assert.Equal(t, "Acme Corporation", bi["legalName"])
	assert.Equal(t, "2018-03-14", bi["incorporatedOn"])
	assert.Equal(t, []any{"US", "MX"}, bi["expectedRecipientJurisdictions"])
	assert.Equal(t, "541511", bi["naicsCode"])
	assert.NotContains(t, bi, "purposeOfAccountOtherDescription")

	// A minimal business starts UNVERIFIED.
	c = h.createCustomer(tn, `{"customerType":"BUSINESS","businessInfo":{"legalName":"B","country":"GB","taxId":"1","incorporatedOn":"2020-01-01"}}`)
	assert.Equal(t, "UNVERIFIED", c["kybStatus"])
}

func TestCustomerCreateValidation(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	biz := func(info string) string { return `{"customerType":"BUSINESS","businessInfo":` + info + `}` }
	ind := func(fields string) string { return `{"customerType":"INDIVIDUAL",` + fields + `}` }
	tests := []struct {
		name   string
		body   string
		fields []string
	}{
		{"empty object", `{}`, []string{"customerType"}},
		{"unknown customerType", `{"customerType":"ROBOT"}`, []string{"customerType"}},
		{"customerType wrong type", `{"customerType":1}`, []string{"customerType"}},
		{"currencies wrong type", ind(`"currencies":"USD"`), []string{"currencies"}},
		{"isDeleted is read-only", ind(`"isDeleted":true`), []string{"isDeleted"}},
		{"unknown field", ind(`"nickname":"x"`), []string{"nickname"}},
		{"unknown nested field", ind(`"address":{"line1":"a","postalCode":"1","country":"US","zip":"1"}`), []string{"address.zip"}},
		{"other letter case", `{"CustomerType":"INDIVIDUAL"}`, []string{"customerType", "CustomerType"}},
		{"unknown enum", ind(`"pepStatus":"MAYBE"`), []string{"pepStatus"}},
		{"unknown enum in a list", ind(`"sourceOfWealthCategories":["SALARY","LOTTERY"]`), []string{"sourceOfWealthCategories[1]"}},
		{"bad date", ind(`"birthDate":"1990-13-01"`), []string{"birthDate"}},
		{"impossible date", ind(`"birthDate":"1990-02-30"`), []string{"birthDate"}},
		{"future date", ind(`"birthDate":"2025-10-14"`), []string{"birthDate"}},
		{"bad region", ind(`"region":"XX"`), []string{"region"}},
		{"bad nationality", ind(`"nationality":"ZZ"`), []string{"nationality"}},
		{"bad email", ind(`"email":"nope"`), []string{"email"}},
		{"bad phone", ind(`"phoneNumber":"555-1234"`), []string{"phoneNumber"}},
		{"bad uma address", ind(`"umaAddress":"carlos@example.test"`), []string{"umaAddress"}},
		{"huge string", ind(`"fullName":"` + strings.Repeat("x", 300) + `"`), []string{"fullName"}},
		{"empty string", ind(`"fullName":""`), []string{"fullName"}},
		{"unknown currency", ind(`"currencies":["USD","XYZ"]`), []string{"currencies[1]"}},
		{"mixed jurisdictions", ind(`"currencies":["USD","EUR"]`), []string{"currencies"}},
		{"address required fields", ind(`"address":{"city":"x"}`), []string{"address.line1", "address.postalCode", "address.country"}},
		{"address bad country", ind(`"address":{"line1":"a","postalCode":"1","country":"QQ"}`), []string{"address.country"}},
		{"consent bad time", ind(`"endUserTermsConsent":{"acceptedAt":"yesterday","ipAddress":"1.2.3.4","termsVersion":"V1","acceptanceMethod":"CHECKBOX"}`),
			[]string{"endUserTermsConsent.acceptedAt"}},
		{"kybStatus on individual", ind(`"kybStatus":"APPROVED"`), []string{"kybStatus"}},
		{"businessInfo on individual", ind(`"businessInfo":{"legalName":"a","country":"US","taxId":"1","incorporatedOn":"2020-01-01"}`),
			[]string{"businessInfo"}},
		{"business without businessInfo", `{"customerType":"BUSINESS"}`, []string{"businessInfo"}},
		{"business missing required", biz(`{"doingBusinessAs":"A"}`),
			[]string{"businessInfo.legalName", "businessInfo.country", "businessInfo.taxId", "businessInfo.incorporatedOn"}},
		{"business bad values", biz(`{"legalName":"A","country":"XX","taxId":"1","incorporatedOn":"2099-01-01","naicsCode":"12"}`),
			[]string{"businessInfo.country", "businessInfo.incorporatedOn"}},
		{"business bad naics", biz(`{"legalName":"A","country":"US","taxId":"1","incorporatedOn":"2019-01-01","naicsCode":"1"}`),
			[]string{"businessInfo.naicsCode"}},
		{"business bad enum", biz(`{"legalName":"A","country":"US","taxId":"1","incorporatedOn":"2019-01-01","entityType":"GMBH"}`),
			[]string{"businessInfo.entityType"}},
		{"business with individual fields", `{"customerType":"BUSINESS","fullName":"A","kycStatus":"APPROVED","businessInfo":{"legalName":"A","country":"US","taxId":"1","incorporatedOn":"2019-01-01"}}`,
			[]string{"fullName", "kycStatus"}},
		{"every schema error at once", ind(`"pepStatus":"MAYBE","idType":"PASSPORT","phoneNumber":"1","extra":1,"currencies":[1]`),
			[]string{"pepStatus", "idType", "phoneNumber", "extra", "currencies[0]"}},
		{"every semantic error at once", ind(`"region":"XX","email":"Ana <ana@example.com>","currencies":["USD","GBP"],"nationality":"QQ","birthDate":"2030-01-01"`),
			[]string{"region", "email", "currencies", "nationality", "birthDate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireFields(t, h.post(tn, "/customers", tt.body), tt.fields...)
		})
	}

	// Malformed JSON and a non-object body are 400s too.
	for _, body := range []string{`{"customerType":`, `[]`, `"INDIVIDUAL"`, `{"customerType":"INDIVIDUAL"}{}`} {
		r := h.post(tn, "/customers", body)
		requireError(t, r, http.StatusBadRequest, "INVALID_INPUT")
	}

	// The mixed-jurisdiction error says which currencies conflict.
	r := h.post(tn, "/customers", ind(`"currencies":["USD","EUR","USDC"]`))
	assert.Contains(t, string(r.body), "USD (US)")
	assert.Contains(t, string(r.body), "EUR (EU)")
	assert.Contains(t, string(r.body), "separate customers")

	// Nothing was created by any of the refused requests.
	list := h.get(tn, "/customers?isIncludingDeleted=true").object(t)
	assert.EqualValues(t, 0, list["totalCount"])
}

func TestCustomerCreateConflicts(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	h.createCustomer(tn, `{"customerType":"INDIVIDUAL","platformCustomerId":"u-1","umaAddress":"$ana@example.test"}`)

	r := h.post(tn, "/customers", `{"customerType":"INDIVIDUAL","platformCustomerId":"u-1"}`)
	requireError(t, r, http.StatusConflict, "CONFLICT")
	r = h.post(tn, "/customers", `{"customerType":"BUSINESS","umaAddress":"$ana@example.test","businessInfo":{"legalName":"A","country":"US","taxId":"1","incorporatedOn":"2019-01-01"}}`)
	requireError(t, r, http.StatusConflict, "UMA_ADDRESS_EXISTS")
}

func TestCustomerCreateIdempotencyKey(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	body := `{"customerType":"INDIVIDUAL","email":"ana@example.com"}`
	first := h.post(tn, "/customers", body, "Idempotency-Key", "create-ana")
	require.Equal(t, http.StatusCreated, first.status, string(first.body))
	again := h.post(tn, "/customers", body, "Idempotency-Key", "create-ana")
	require.Equal(t, http.StatusCreated, again.status, string(again.body))
	assert.Equal(t, first.object(t)["id"], again.object(t)["id"], "the replay returns the same customer")
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	list := h.get(tn, "/customers").object(t)
	assert.EqualValues(t, 1, list["totalCount"], "one customer created")
}

// ---- update ----

func TestCustomerUpdate(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	c := h.createCustomer(tn, `{"customerType":"INDIVIDUAL","region":"US","fullName":"Ana Silva","birthDate":"1990-01-15"}`)
	id := c["id"].(string)

	h.clock.Advance(time.Hour)
	r := h.patch(tn, customerPath(id), `{"customerType":"INDIVIDUAL","fullName":"Ana S. Silva","kycStatus":"APPROVED","umaAddress":"$ana.silva@example.test","currencies":["USD","BTC"]}`)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	u := r.object(t)
	assert.Equal(t, "Ana S. Silva", u["fullName"])
	assert.Equal(t, "1990-01-15", u["birthDate"], "untouched")
	assert.Equal(t, "APPROVED", u["kycStatus"])
	assert.Equal(t, "$ana.silva@example.test", u["umaAddress"])
	assert.Equal(t, []any{"USD", "BTC"}, u["currencies"])
	assert.Equal(t, "US", u["region"])
	assert.Equal(t, c["platformCustomerId"], u["platformCustomerId"])
	assert.Equal(t, c["createdAt"], u["createdAt"])
	assert.Equal(t, "2025-10-13T13:00:00Z", u["updatedAt"], "updatedAt moves")

	// BTC got an account; USDC kept its own.
	var codes []string
	for _, a := range h.customerAccounts(tn, id) {
		codes = append(codes, a["balance"].(map[string]any)["currency"].(map[string]any)["code"].(string))
	}
	assert.ElementsMatch(t, []string{"USD", "USDC", "BTC"}, codes)

	// Adding an e-mail opens the embedded wallet.
	r = h.patch(tn, customerPath(id), `{"customerType":"INDIVIDUAL","email":"ana@example.com"}`)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Len(t, h.customerAccounts(tn, id), 4)
	r = h.patch(tn, customerPath(id), `{"customerType":"INDIVIDUAL","email":"ana@new.example.com"}`)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, "ana@new.example.com", r.object(t)["email"])
	assert.Len(t, h.customerAccounts(tn, id), 4, "still one wallet")

	got := h.get(tn, customerPath(id)).object(t)
	assert.Equal(t, "ana@new.example.com", got["email"])
}

func TestCustomerUpdateBusiness(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	c := h.createCustomer(tn, `{"customerType":"BUSINESS","businessInfo":{"legalName":"Acme","country":"US","taxId":"1","incorporatedOn":"2019-01-01"}}`)
	r := h.patch(tn, customerPath(c["id"].(string)), `{"customerType":"BUSINESS","kybStatus":"HOLD","businessInfo":{"doingBusinessAs":"ACME"}}`)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	u := r.object(t)
	assert.Equal(t, "HOLD", u["kybStatus"])
	bi := u["businessInfo"].(map[string]any)
	assert.Equal(t, "Acme", bi["legalName"], "merged, not replaced")
	assert.Equal(t, "ACME", bi["doingBusinessAs"])
}

func TestCustomerUpdateRules(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	c := h.createCustomer(tn, `{"customerType":"INDIVIDUAL","fullName":"Ana"}`)
	path := customerPath(c["id"].(string))
	tests := []struct {
		name   string
		body   string
		fields []string
	}{
		{"customerType required", `{"fullName":"B"}`, []string{"customerType"}},
		{"customerType must match", `{"customerType":"BUSINESS"}`, []string{"customerType"}},
		{"region not updatable", `{"customerType":"INDIVIDUAL","region":"US"}`, []string{"region"}},
		{"platformCustomerId not updatable", `{"customerType":"INDIVIDUAL","platformCustomerId":"x"}`, []string{"platformCustomerId"}},
		{"unknown field", `{"customerType":"INDIVIDUAL","id":"Customer:x"}`, []string{"id"}},
		{"bad values", `{"customerType":"INDIVIDUAL","email":"Ana <ana@example.com>","birthDate":"2030-01-01","currencies":["EUR","GBP"]}`,
			[]string{"email", "birthDate", "currencies"}},
		{"empty string does not clear", `{"customerType":"INDIVIDUAL","fullName":""}`, []string{"fullName"}},
		{"businessInfo on an individual", `{"customerType":"INDIVIDUAL","businessInfo":{"legalName":"A"}}`, []string{"businessInfo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireFields(t, h.patch(tn, path, tt.body), tt.fields...)
		})
	}
	got := h.get(tn, path).object(t)
	assert.Equal(t, "Ana", got["fullName"], "refused updates change nothing")
	assert.Equal(t, c["updatedAt"], got["updatedAt"])

	other := h.createCustomer(tn, `{"customerType":"INDIVIDUAL"}`)
	r := h.patch(tn, path, fmt.Sprintf(`{"customerType":"INDIVIDUAL","umaAddress":%q}`, other["umaAddress"]))
	requireError(t, r, http.StatusConflict, "UMA_ADDRESS_EXISTS")

	r = h.patch(tn, customerPath("Customer:00000000-0000-0000-0000-000000000000"), `{"customerType":"INDIVIDUAL"}`)
	requireError(t, r, http.StatusNotFound, "USER_NOT_FOUND")
}

// ---- delete ----

func TestCustomerDelete(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	c := h.createCustomer(tn, `{"customerType":"INDIVIDUAL","platformCustomerId":"u-1"}`)
	path := customerPath(c["id"].(string))

	h.clock.Advance(time.Minute)
	r := h.del(tn, path)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	d := r.object(t)
	assert.Equal(t, true, d["isDeleted"])
	assert.Equal(t, c["id"], d["id"])
	assert.Equal(t, "2025-10-13T12:01:00Z", d["updatedAt"])

	r = h.get(tn, path)
	require.Equal(t, http.StatusOK, r.status, "a deleted customer can be read")
	assert.Equal(t, true, r.object(t)["isDeleted"])

	requireError(t, h.del(tn, path), http.StatusGone, "CUSTOMER_DELETED")
	requireError(t, h.patch(tn, path, `{"customerType":"INDIVIDUAL","fullName":"x"}`), http.StatusGone, "CUSTOMER_DELETED")
	requireError(t, h.del(tn, customerPath("Customer:00000000-0000-0000-0000-000000000000")), http.StatusNotFound, "USER_NOT_FOUND")
	requireError(t, h.get(tn, customerPath("nonsense")), http.StatusNotFound, "USER_NOT_FOUND")

	// The platformCustomerId of a deleted customer can be reused.
	h.createCustomer(tn, `{"customerType":"INDIVIDUAL","platformCustomerId":"u-1"}`)
}

// A customer whose account holds money is not deleted: 409 naming the
// balance, and the customer and its account are as they were.
func TestCustomerDeleteRefusedWhileFunded(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	c := h.createCustomer(tn, `{"customerType":"INDIVIDUAL","platformCustomerId":"rich"}`)
	id := c["id"].(string)
	acct := h.customerAccount(tn, id, "INTERNAL_FIAT", "USD")
	r := h.post(tn, fundPath(acct.ID), `{"amount":5000}`)
	require.Equal(t, http.StatusOK, r.status, string(r.body))

	r = h.del(tn, customerPath(id))
	body := requireError(t, r, http.StatusConflict, "CUSTOMER_HAS_FUNDS")
	assert.Contains(t, body["message"], "1 account(s) hold money")
	balances := body["details"].(map[string]any)["balances"].([]any)
	require.Len(t, balances, 1)
	assert.Equal(t, map[string]any{"accountId": acct.ID, "currency": "USD", "balance": float64(5000), "pending": float64(0)}, balances[0])
	assert.Equal(t, false, h.get(tn, customerPath(id)).object(t)["isDeleted"])
	assert.Equal(t, "ACTIVE", h.customerAccount(tn, id, "INTERNAL_FIAT", "USD").Status)
}

// ---- list ----

func TestCustomerListFilters(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	mk := func(body string) string {
		c := h.createCustomer(tn, body)
		h.clock.Advance(time.Minute)
		return c["id"].(string)
	}
	us := mk(`{"customerType":"INDIVIDUAL","region":"US","platformCustomerId":"u-us"}`)              // 12:00
	mx := mk(`{"customerType":"INDIVIDUAL","region":"MX"}`)                                          // 12:01
	biz := mk(`{"customerType":"BUSINESS","currencies":["EUR"],"umaAddress":"$acme@example.test",` + // 12:02
		`"businessInfo":{"legalName":"A","country":"DE","taxId":"1","incorporatedOn":"2019-01-01"}}`)
	gone := mk(`{"customerType":"INDIVIDUAL"}`) // 12:03
	require.Equal(t, http.StatusOK, h.del(tn, customerPath(gone)).status)
	h.clock.Advance(time.Minute)
	require.Equal(t, http.StatusOK, h.patch(tn, customerPath(us), `{"customerType":"INDIVIDUAL","kycStatus":"PENDING"}`).status) // updated 12:05

	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{us, mx, biz}},
		{"isIncludingDeleted=true", []string{us, mx, biz, gone}},
		{"isIncludingDeleted=false", []string{us, mx, biz}},
		{"platformCustomerId=u-us", []string{us}},
		{"customerType=BUSINESS", []string{biz}},
		{"customerType=INDIVIDUAL&isIncludingDeleted=true", []string{us, mx, gone}},
		{"region=MX", []string{mx}},
		{"currency=EUR", []string{biz}},
		{"currency=USDC", []string{us, mx}},
		{"umaAddress=" + url.QueryEscape("$acme@example.test"), []string{biz}},
		{"createdAfter=2025-10-13T12:01:00Z", []string{mx, biz}},
		{"createdBefore=2025-10-13T12:01:00Z", []string{us, mx}},
		{"createdAfter=2025-10-13T14:01:00%2B02:00&createdBefore=2025-10-13T12:01:00Z", []string{mx}},
		{"updatedAfter=2025-10-13T12:05:00Z", []string{us}},
		{"updatedBefore=2025-10-13T12:02:00Z", []string{mx, biz}},
		{"region=JP", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := h.get(tn, "/customers?"+tt.query)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			m := r.object(t)
			assert.Equal(t, tt.want, customerIDs(m["data"].([]any)))
			assert.EqualValues(t, len(tt.want), m["totalCount"])
			assert.Equal(t, false, m["hasMore"])
			assert.NotContains(t, m, "nextCursor")
		})
	}

	for _, tt := range []struct{ query, field string }{
		{"limit=0", "limit"},
		{"limit=101", "limit"},
		{"limit=ten", "limit"},
		{"customerType=ROBOT", "customerType"},
		{"createdAfter=yesterday", "createdAfter"},
		{"isIncludingDeleted=maybe", "isIncludingDeleted"},
		{"region=USA", "region"},
		{"region=XX", "region"},
		{"currency=DOGE", "currency"},
		{"cursor=not-a-cursor", "cursor"},
	} {
		requireFields(t, h.get(tn, "/customers?"+tt.query), tt.field)
	}
}

func TestCustomerListPagination(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	var want []string
	for i := range 7 {
		want = append(want, h.createCustomer(tn, `{"customerType":"INDIVIDUAL"}`)["id"].(string))
		if i%3 == 0 {
			h.clock.Advance(time.Second) // others share a creation time
		}
	}
	var got []string
	path := "/customers?limit=3"
	for pages := 1; ; pages++ {
		require.LessOrEqual(t, pages, 3)
		m := h.get(tn, path).object(t)
		assert.EqualValues(t, 7, m["totalCount"])
		page := customerIDs(m["data"].([]any))
		got = append(got, page...)
		if m["hasMore"] == false {
			assert.NotContains(t, m, "nextCursor")
			assert.Len(t, page, 1)
			break
		}
		require.Len(t, page, 3)
		path = "/customers?limit=3&cursor=" + url.QueryEscape(m["nextCursor"].(string))
	}
	assert.ElementsMatch(t, want, got)
	assert.Len(t, got, 7, "no customer twice")

	// The default page holds up to 20.
	m := h.get(tn, "/customers").object(t)
	assert.Len(t, m["data"], 7)
}

// ---- isolation ----

func TestCustomerIsolation(t *testing.T) {
	h := newHarness(t)
	a := h.tenant()
	b := h.tenant()
	c := h.createCustomer(a, `{"customerType":"INDIVIDUAL","platformCustomerId":"shared","umaAddress":"$ana@example.test","email":"ana@example.com"}`)
	path := customerPath(c["id"].(string))

	requireError(t, h.get(b, path), http.StatusNotFound, "USER_NOT_FOUND")
	requireError(t, h.patch(b, path, `{"customerType":"INDIVIDUAL","fullName":"Mallory"}`), http.StatusNotFound, "USER_NOT_FOUND")
	requireError(t, h.del(b, path), http.StatusNotFound, "USER_NOT_FOUND")

	for _, q := range []string{"", "?isIncludingDeleted=true", "?platformCustomerId=shared", "?umaAddress=" + url.QueryEscape("$ana@example.test")} {
		m := h.get(b, "/customers"+q).object(t)
		assert.Empty(t, m["data"], q)
		assert.EqualValues(t, 0, m["totalCount"], q)
	}
	assert.Empty(t, h.customerAccounts(b, c["id"].(string)), "nor its accounts")

	// The other platform has its own namespace for platformCustomerId.
	h.createCustomer(b, `{"customerType":"INDIVIDUAL","platformCustomerId":"shared"}`)

	// A cursor from one platform's list reveals nothing on the other's.
	for range 2 {
		h.createCustomer(a, `{"customerType":"INDIVIDUAL"}`)
	}
	m := h.get(a, "/customers?limit=1").object(t)
	require.Equal(t, true, m["hasMore"])
	r := h.get(b, "/customers?limit=1&cursor="+url.QueryEscape(m["nextCursor"].(string)))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	for _, id := range customerIDs(r.object(t)["data"].([]any)) {
		assert.NotEqual(t, c["id"], id)
	}

	// And the owner still sees it unchanged.
	got := h.get(a, path).object(t)
	assert.Equal(t, false, got["isDeleted"])
	assert.NotContains(t, got, "fullName")
}

// ---- documentation ----

func TestCustomerOpenAPI(t *testing.T) {
	h := newHarness(t)
	r := h.send(request{method: http.MethodGet, path: "/openapi.json"})
	require.Equal(t, http.StatusOK, r.status)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string   `json:"operationId"`
			Tags        []string `json:"tags"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties           map[string]map[string]any `json:"properties"`
				Required             []string                  `json:"required"`
				AdditionalProperties any                       `json:"additionalProperties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(r.body, &doc))
	for path, ops := range map[string]map[string]string{
		"/customers":              {"post": "createCustomer", "get": "listCustomers"},
		"/customers/{customerId}": {"get": "getCustomerById", "patch": "updateCustomerById", "delete": "deleteCustomerById"},
	} {
		for method, id := range ops {
			op, ok := doc.Paths[path][method]
			require.Truef(t, ok, "%s %s documented", method, path)
			assert.Equal(t, id, op.OperationID)
			assert.Equal(t, []string{"Customers"}, op.Tags)
		}
	}
	schemas := doc.Components.Schemas
	assert.NotContains(t, schemas["Customer"].Properties, "identifier", "write-only: never returned")
	assert.Contains(t, schemas["CustomerCreateRequest"].Properties, "identifier")
	assert.Equal(t, false, schemas["CustomerCreateRequest"].AdditionalProperties, "strict body")
	assert.Contains(t, schemas["CustomerCreateRequest"].Required, "customerType")
	assert.Contains(t, schemas["CustomerUpdateRequest"].Required, "customerType")
	assert.ElementsMatch(t, []string{"legalName", "country", "taxId", "incorporatedOn"}, schemas["BusinessInfo"].Required)
	assert.Empty(t, schemas["BusinessInfoUpdate"].Required)
	assert.Equal(t, []any{"INDIVIDUAL", "BUSINESS"}, schemas["CustomerCreateRequest"].Properties["customerType"]["enum"])
}
