package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/externalfixture"
)

const extPath = "/customers/external-accounts"
const platExtPath = "/platform/external-accounts"

// extCustomer creates an INDIVIDUAL customer and returns its id.
func (h *apiHarness) extCustomer(tn tenant) string {
	h.t.Helper()
	return h.createCustomer(tn, `{"customerType":"INDIVIDUAL"}`)["id"].(string)
}

// extBody is a create body for a fixture of typ ending in suffix, edited
// by mutate (its accountInfo is body["accountInfo"]).
func extBody(customerID, typ, suffix string, mutate func(body, info map[string]any)) string {
	body := map[string]any{"currency": externalfixture.Currency[typ], "accountInfo": externalfixture.InfoJSON(externalfixture.Info(typ, suffix))}
	if customerID != "" {
		body["customerId"] = customerID
	}
	if mutate != nil {
		mutate(body, body["accountInfo"].(map[string]any))
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// requireBad checks a 400 INVALID_INPUT naming (at least) field.
func requireBad(t *testing.T, r apiResponse, field string) {
	t.Helper()
	requireError(t, r, http.StatusBadRequest, "INVALID_INPUT", field)
}

func (h *apiHarness) createExt(tn tenant, path, body string) map[string]any {
	h.t.Helper()
	r := h.post(tn, path, body)
	require.Equalf(h.t, http.StatusCreated, r.status, "body %s", r.body)
	h.clock.Advance(time.Millisecond) // list order is creation order
	return r.object(h.t)
}

func TestExternalAccountEveryVariantOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	cust := h.extCustomer(tn)
	rails := map[string][]any{
		"USD_ACCOUNT": {"ACH", "WIRE", "RTP", "FEDNOW"}, "AED_ACCOUNT": {"BANK_TRANSFER"}, "EUR_ACCOUNT": {"SEPA", "SEPA_INSTANT"},
		"MXN_ACCOUNT": {"SPEI"}, "BRL_ACCOUNT": {"PIX"}, "GBP_ACCOUNT": {"FASTER_PAYMENTS"}, "INR_ACCOUNT": {"NEFT", "RTGS"},
		"NGN_ACCOUNT": {"BANK_TRANSFER"}, "CAD_ACCOUNT": {"BANK_TRANSFER"}, "SWIFT_ACCOUNT": {"SWIFT"},
	}
	for _, typ := range externalfixture.Types() {
		t.Run(typ, func(t *testing.T) {
			info := externalfixture.Info(typ, "")
			a := h.createExt(tn, extPath, externalfixture.Body(cust, externalfixture.Currency[typ], info, nil))
			assert.Regexp(t, `^ExternalAccount:[0-9a-f-]{36}$`, a["id"])
			assert.Equal(t, cust, a["customerId"])
			assert.Equal(t, "ACTIVE", a["status"])
			assert.Equal(t, externalfixture.Currency[typ], a["currency"])
			assert.Equal(t, false, a["defaultUmaDepositAccount"])
			assert.Equal(t, "MATCHED", a["beneficiaryVerificationStatus"])
			assert.NotContains(t, a, "platformAccountId")
			r := h.get(tn, extPath+"/"+a["id"].(string))
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			assert.Equal(t, a, r.object(t), "GET returns what POST did")

			got := a["accountInfo"].(map[string]any)
			want := externalfixture.InfoJSON(info)
			if r, ok := rails[typ]; ok {
				assert.Equal(t, r, got["paymentRails"])
				assert.Equal(t, map[string]any{"fullName": "Ana Maria Silva"}, a["beneficiaryVerifiedData"])
				delete(got, "paymentRails")
			} else {
				assert.NotContains(t, got, "paymentRails", "wallets have no rails")
				assert.NotContains(t, a, "beneficiaryVerifiedData", "no beneficiary, no name")
			}
			assert.Equal(t, roundTrip(t, want), got, "accountInfo is returned as sent")
		})
	}
}

// roundTrip normalises a value through JSON (numbers, maps).
func roundTrip(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func TestExternalAccountShapesOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	cust := h.extCustomer(tn)
	for _, c := range []struct{ typ, variant string }{
		{"BRL_ACCOUNT", "PHONE"}, {"BRL_ACCOUNT", "CPF"}, {"BRL_ACCOUNT", "RANDOM"},
		{"LIGHTNING", "invoice"}, {"LIGHTNING", "bolt12"}, {"INR_ACCOUNT", "UPI"},
	} {
		info := externalfixture.InfoVariant(c.typ, "", c.variant)
		a := h.createExt(tn, extPath, externalfixture.Body(cust, externalfixture.Currency[c.typ], info, nil))
		assert.Equal(t, c.typ, a["accountInfo"].(map[string]any)["accountType"], c.variant)
	}
	// A business beneficiary, a wallet owner, optional USD fields.
	info := externalfixture.Info("USD_ACCOUNT", "456")
	info.IntermediaryRoutingNumber, info.FiToFiInformation = "011000015", "/BNF/inv 7"
	info.Beneficiary = &ports.Beneficiary{BeneficiaryType: "BUSINESS", LegalName: "Acme Ltd", TaxID: "47-1234567"}
	a := h.createExt(tn, extPath, externalfixture.Body(cust, "USD", info, map[string]any{"ownershipType": "THIRD_PARTY", "platformAccountId": "acme-1"}))
	assert.Equal(t, "THIRD_PARTY", a["ownershipType"])
	assert.Equal(t, "acme-1", a["platformAccountId"])
	assert.Equal(t, "acme-1", a["accountInfo"].(map[string]any)["platformAccountId"], "where the spec shows it in a USD_ACCOUNT")
	assert.Equal(t, map[string]any{"beneficiaryType": "BUSINESS", "legalName": "Acme Ltd", "taxId": "47-1234567"}, a["accountInfo"].(map[string]any)["beneficiary"])
	assert.Equal(t, map[string]any{"fullName": "Acme Ltd"}, a["beneficiaryVerifiedData"])

	w := externalfixture.Info("POLYGON_WALLET", "456")
	w.Beneficiary = &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ana Silva", CountryOfResidence: "BR"}
	w.VaspName = "Example Exchange"
	h.createExt(tn, extPath, externalfixture.Body(cust, "USDC", w, nil))

	// platformAccountId inside accountInfo is the top-level one.
	a = h.createExt(tn, extPath, extBody(cust, "GBP_ACCOUNT", "456", func(_, i map[string]any) { i["platformAccountId"] = "gbp-9" }))
	assert.Equal(t, "gbp-9", a["platformAccountId"])
	assert.NotContains(t, a["accountInfo"], "platformAccountId", "inside accountInfo only for a USD_ACCOUNT, where the spec shows it")
	requireBad(t, h.post(tn, extPath, extBody(cust, "GBP_ACCOUNT", "457", func(b, i map[string]any) {
		i["platformAccountId"], b["platformAccountId"] = "a", "b"
	})), "accountInfo.platformAccountId")

	// LIGHTNING_ACCOUNT is another spelling of LIGHTNING.
	a = h.createExt(tn, extPath, extBody(cust, "LIGHTNING", "456", func(_, i map[string]any) { i["accountType"] = "LIGHTNING_ACCOUNT" }))
	assert.Equal(t, "LIGHTNING", a["accountInfo"].(map[string]any)["accountType"])
}

func TestExternalAccountInvalidOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	cust := h.extCustomer(tn)
	type edit = func(body, info map[string]any)
	set := func(k string, v any) edit { return func(_, i map[string]any) { i[k] = v } }
	unset := func(k string) edit { return func(_, i map[string]any) { delete(i, k) } }
	benef := func(k string, v any) edit {
		return func(_, i map[string]any) {
			b := i["beneficiary"].(map[string]any)
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
	}
	cases := []struct {
		name, typ string
		edit      edit
		field     string
	}{
		// Checked by the schema.
		{"usd routing shape", "USD_ACCOUNT", set("routingNumber", "12345"), "accountInfo.routingNumber"},
		{"usd routing missing", "USD_ACCOUNT", unset("routingNumber"), "accountInfo.routingNumber"},
		{"usd account letters", "USD_ACCOUNT", set("accountNumber", "12AB5678"), "accountInfo.accountNumber"},
		{"usd bank account type", "USD_ACCOUNT", set("bankAccountType", "BROKERAGE"), "accountInfo.bankAccountType"},
		{"usd field of another variant", "USD_ACCOUNT", set("iban", "DE89370400440532013000"), "accountInfo.iban"},
		{"usd unknown field", "USD_ACCOUNT", set("nickname", "main"), "accountInfo.nickname"},
		{"usd wrong case", "USD_ACCOUNT", func(_, i map[string]any) { i["RoutingNumber"] = i["routingNumber"]; delete(i, "routingNumber") }, "accountInfo.RoutingNumber"},
		{"usd no beneficiary", "USD_ACCOUNT", unset("beneficiary"), "accountInfo.beneficiary"},
		{"usd beneficiary name", "USD_ACCOUNT", benef("fullName", nil), "accountInfo.beneficiary.fullName"},
		{"usd beneficiary type", "USD_ACCOUNT", benef("beneficiaryType", "TRUST"), "accountInfo.beneficiary.beneficiaryType"},
		{"usd beneficiary postal code", "USD_ACCOUNT", func(_, i map[string]any) {
			delete(i["beneficiary"].(map[string]any)["address"].(map[string]any), "postalCode")
		}, "accountInfo.beneficiary.address.postalCode"},
		{"unknown account type", "USD_ACCOUNT", set("accountType", "MARS_ACCOUNT"), "accountInfo.accountType"},
		{"no account type", "USD_ACCOUNT", unset("accountType"), "accountInfo.accountType"},
		{"aed iban shape", "AED_ACCOUNT", set("iban", "AE07033123456789012345"), "accountInfo.iban"},
		{"aed individual without address", "AED_ACCOUNT", benef("address", nil), "accountInfo.beneficiary.address"},
		{"eur individual without residence", "EUR_ACCOUNT", benef("countryOfResidence", nil), "accountInfo.beneficiary.countryOfResidence"},
		{"mxn clabe shape", "MXN_ACCOUNT", set("clabeNumber", "0321800001183597"), "accountInfo.clabeNumber"},
		{"brl pix key type", "BRL_ACCOUNT", set("pixKeyType", "IBAN"), "accountInfo.pixKeyType"},
		{"brl tax id shape", "BRL_ACCOUNT", set("taxId", "529.982.247-25"), "accountInfo.taxId"},
		{"gbp sort code", "GBP_ACCOUNT", set("sortCode", "04-00-04"), "accountInfo.sortCode"},
		{"inr ifsc", "INR_ACCOUNT", set("ifsc", "HDFC1001234"), "accountInfo.ifsc"},
		{"ngn account number", "NGN_ACCOUNT", set("accountNumber", "12345"), "accountInfo.accountNumber"},
		{"cad branch code", "CAD_ACCOUNT", set("branchCode", "123"), "accountInfo.branchCode"},
		{"swift bic", "SWIFT_ACCOUNT", set("swiftCode", "DEUT"), "accountInfo.swiftCode"},
		{"spark no address", "SPARK_WALLET", unset("address"), "accountInfo.address"},
		{"solana vasp too long", "SOLANA_WALLET", set("vaspName", strings.Repeat("v", 256)), "accountInfo.vaspName"},
		{"base routing number", "BASE_WALLET", set("routingNumber", "021000021"), "accountInfo.routingNumber"},
		{"lightning beneficiary", "LIGHTNING", set("beneficiary", map[string]any{"beneficiaryType": "INDIVIDUAL", "fullName": "Ana", "countryOfResidence": "BR"}), "accountInfo.beneficiary"},
		{"currency missing", "USD_ACCOUNT", func(b, _ map[string]any) { delete(b, "currency") }, "currency"},
		{"unknown top-level field", "USD_ACCOUNT", func(b, _ map[string]any) { b["nickname"] = "x" }, "nickname"},

		// Checked by the core (checksums, currency, cross-field rules).
		{"usd routing checksum", "USD_ACCOUNT", set("routingNumber", "021000022"), "accountInfo.routingNumber"},
		{"usd intermediary checksum", "USD_ACCOUNT", set("intermediaryRoutingNumber", "011000016"), "accountInfo.intermediaryRoutingNumber"},
		{"usd in eur", "USD_ACCOUNT", func(b, _ map[string]any) { b["currency"] = "EUR" }, "currency"},
		{"usd beneficiary born in the future", "USD_ACCOUNT", benef("birthDate", "2999-01-01"), "accountInfo.beneficiary.birthDate"},
		{"usd beneficiary email", "USD_ACCOUNT", benef("email", "nope"), "accountInfo.beneficiary.email"},
		{"aed iban check digits", "AED_ACCOUNT", set("iban", "AE070331234567890123457"), "accountInfo.iban"},
		{"eur iban mod 97", "EUR_ACCOUNT", set("iban", "DE89370400440532013001"), "accountInfo.iban"},
		{"eur iban outside sepa", "EUR_ACCOUNT", set("iban", "AE070331234567890123456"), "accountInfo.iban"},
		{"eur bic country", "EUR_ACCOUNT", set("swiftCode", "COBAXXFF"), "accountInfo.swiftCode"},
		{"mxn clabe check digit", "MXN_ACCOUNT", set("clabeNumber", "032180000118359718"), "accountInfo.clabeNumber"},
		{"brl email key", "BRL_ACCOUNT", set("pixKey", "not-an-email"), "accountInfo.pixKey"},
		{"brl cpf check digits", "BRL_ACCOUNT", set("taxId", "52998224726"), "accountInfo.taxId"},
		{"inr upi without vpa", "INR_ACCOUNT", set("rail", "UPI"), "accountInfo.rail"},
		{"inr nothing to pay", "INR_ACCOUNT", func(_, i map[string]any) { delete(i, "accountNumber"); delete(i, "ifsc"); delete(i, "rail") }, "accountInfo.vpa"},
		{"swift no account", "SWIFT_ACCOUNT", unset("accountNumber"), "accountInfo.iban"},
		{"spark checksum", "SPARK_WALLET", func(_, i map[string]any) { a := i["address"].(string); i["address"] = a[:len(a)-1] + "q" }, "accountInfo.address"},
		{"solana not base58", "SOLANA_WALLET", set("address", "0OIl"+strings.Repeat("2", 40)), "accountInfo.address"},
		{"base not an address", "BASE_WALLET", set("address", "0x1234"), "accountInfo.address"},
		{"polygon eip55", "POLYGON_WALLET", set("address", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"), "accountInfo.address"},
		{"ethereum zero address", "ETHEREUM_WALLET", set("address", "0x"+strings.Repeat("0", 40)), "accountInfo.address"},
		{"lightning two destinations", "LIGHTNING", set("bolt12", "lno1qgsqvgnwgcg35z6ee2h3yczraddm72xrfua9uve2rlrm9deu7xyfzrc"), "accountInfo.lightningAddress"},
		{"lightning invoice", "LIGHTNING", func(_, i map[string]any) { delete(i, "lightningAddress"); i["invoice"] = "lnbc1notaninvoice" }, "accountInfo.invoice"},
		{"wallet in usd", "SOLANA_WALLET", func(b, _ map[string]any) { b["currency"] = "USD" }, "currency"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seen[c.typ] = true
			requireBad(t, h.post(tn, extPath, extBody(cust, c.typ, "", c.edit)), c.field)
		})
	}
	for _, typ := range external.AccountTypes() {
		assert.Truef(t, seen[typ], "no invalid case for %s", typ)
	}
	list := decodeExtList(t, h.get(tn, extPath))
	assert.Zero(t, list.TotalCount, "nothing was created")
}

func TestExternalAccountBeneficiaryVerificationOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	cust := h.extCustomer(tn)
	cases := []struct {
		suffix, status, verification, name string
	}{
		{"102", "ACTIVE", "NOT_MATCHED", ""},
		{"103", "ACTIVE", "PARTIAL_MATCH", "A. Maria Silva"},
		{"104", "PENDING", "PENDING", ""},
		{"106", "ACTIVE", "UNSUPPORTED", ""},
		{"107", "ACTIVE", "CHECKED_BY_RECEIVING_FI", ""},
		{"108", "ACTIVE", "MATCHED", "Ana Maria Silva"},
		{"002", "ACTIVE", "MATCHED", "Ana Maria Silva"},
	}
	for _, typ := range []string{"USD_ACCOUNT", "EUR_ACCOUNT", "MXN_ACCOUNT", "BRL_ACCOUNT"} {
		for _, c := range cases {
			a := h.createExt(tn, extPath, extBody(cust, typ, c.suffix, nil))
			assert.Equal(t, c.status, a["status"], "%s %s", typ, c.suffix)
			assert.Equal(t, c.verification, a["beneficiaryVerificationStatus"], "%s %s", typ, c.suffix)
			if c.name == "" {
				assert.NotContains(t, a, "beneficiaryVerifiedData", "%s %s", typ, c.suffix)
			} else {
				assert.Equal(t, map[string]any{"fullName": c.name}, a["beneficiaryVerifiedData"], "%s %s", typ, c.suffix)
			}
		}
	}
	// 105: the receiving institution has no such account.
	for typ, field := range map[string]string{
		"USD_ACCOUNT": "accountInfo.accountNumber", "EUR_ACCOUNT": "accountInfo.iban", "MXN_ACCOUNT": "accountInfo.clabeNumber",
		"BRL_ACCOUNT": "accountInfo.pixKey", "GBP_ACCOUNT": "accountInfo.accountNumber", "LIGHTNING": "accountInfo.lightningAddress",
		"BASE_WALLET": "accountInfo.address",
	} {
		requireError(t, h.post(tn, extPath, extBody(cust, typ, "105", nil)), http.StatusBadRequest, "INVALID_BANK_ACCOUNT", field)
	}
	// The e-mail PIX key's suffix is read before the domain.
	a := h.createExt(tn, extPath, extBody(cust, "BRL_ACCOUNT", "", func(_, i map[string]any) { i["pixKey"] = "maria103@example.com" }))
	assert.Equal(t, "PARTIAL_MATCH", a["beneficiaryVerificationStatus"])
}

func TestDefaultUmaDepositAccountOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	cust := h.extCustomer(tn)
	other := h.extCustomer(tn)
	def := func(b, _ map[string]any) { b["defaultUmaDepositAccount"] = true }

	first := h.createExt(tn, extPath, extBody(cust, "USD_ACCOUNT", "201", def))
	assert.Equal(t, true, first["defaultUmaDepositAccount"])
	plain := h.createExt(tn, extPath, extBody(cust, "USD_ACCOUNT", "202", nil))
	assert.Equal(t, false, plain["defaultUmaDepositAccount"])
	theirs := h.createExt(tn, extPath, extBody(other, "USD_ACCOUNT", "203", def))
	second := h.createExt(tn, extPath, extBody(cust, "EUR_ACCOUNT", "204", def))

	defaults := func(customerID string) []string {
		var out []string
		for _, a := range decodeExtList(t, h.get(tn, extPath+"?customerId="+url.QueryEscape(customerID))).Data {
			if a["defaultUmaDepositAccount"] == true {
				out = append(out, a["id"].(string))
			}
		}
		return out
	}
	assert.Equal(t, []string{second["id"].(string)}, defaults(cust), "the default moved")
	assert.Equal(t, []string{theirs["id"].(string)}, defaults(other))
	assert.Equal(t, false, h.get(tn, extPath+"/"+first["id"].(string)).object(t)["defaultUmaDepositAccount"])

	// Only a customer's account can be the default.
	requireBad(t, h.post(tn, extPath, extBody("", "USD_ACCOUNT", "205", def)), "defaultUmaDepositAccount")
	requireBad(t, h.post(tn, platExtPath, extBody("", "USD_ACCOUNT", "205", def)), "defaultUmaDepositAccount")
}

func TestExternalAccountDeleteOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	cust := h.extCustomer(tn)
	a := h.createExt(tn, extPath, extBody(cust, "MXN_ACCOUNT", "", func(b, _ map[string]any) { b["defaultUmaDepositAccount"] = true }))
	id := a["id"].(string)

	requireError(t, h.del(tn, platExtPath+"/"+id), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	r := h.del(tn, extPath+"/"+id)
	require.Equal(t, http.StatusNoContent, r.status, string(r.body))
	assert.Empty(t, r.body)
	requireError(t, h.get(tn, extPath+"/"+id), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	requireError(t, h.del(tn, extPath+"/"+id), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	assert.Zero(t, decodeExtList(t, h.get(tn, extPath)).TotalCount)
	// The same account can be added again.
	h.createExt(tn, extPath, extBody(cust, "MXN_ACCOUNT", "", nil))

	p := h.createExt(tn, platExtPath, extBody("", "EUR_ACCOUNT", "", nil))
	r = h.del(tn, platExtPath+"/"+p["id"].(string))
	require.Equal(t, http.StatusNoContent, r.status, string(r.body))
	requireError(t, h.get(tn, platExtPath+"/"+p["id"].(string)), http.StatusNotFound, "REFERENCE_NOT_FOUND")
}

func TestExternalAccountConflictAndCustomerErrorsOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	cust := h.extCustomer(tn)
	a := h.createExt(tn, extPath, extBody(cust, "USD_ACCOUNT", "301", nil))
	m := requireError(t, h.post(tn, extPath, extBody(cust, "USD_ACCOUNT", "301", nil)), http.StatusConflict, "CONFLICT")
	assert.Equal(t, a["id"], m["details"].(map[string]any)["externalAccountId"])
	// Another bank's account with the same number is another account.
	h.createExt(tn, extPath, extBody(cust, "USD_ACCOUNT", "301", func(_, i map[string]any) { i["routingNumber"] = "011000015" }))

	requireError(t, h.post(tn, extPath, extBody("Customer:00000000-0000-0000-0000-000000000000", "USD_ACCOUNT", "", nil)), http.StatusNotFound, "USER_NOT_FOUND")
	gone := h.extCustomer(tn)
	r := h.del(tn, "/customers/"+gone)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	requireError(t, h.post(tn, extPath, extBody(gone, "USD_ACCOUNT", "", nil)), http.StatusGone, "CUSTOMER_DELETED")
}

func TestPlatformExternalAccountsOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	cust := h.extCustomer(tn)

	p := h.createExt(tn, platExtPath, extBody("", "EUR_ACCOUNT", "", func(b, _ map[string]any) { b["platformAccountId"] = "treasury-eur" }))
	assert.NotContains(t, p, "customerId")
	assert.Equal(t, "treasury-eur", p["platformAccountId"])
	// The customer path without customerId creates a platform account too.
	q := h.createExt(tn, extPath, extBody("", "USD_ACCOUNT", "", nil))
	assert.NotContains(t, q, "customerId")
	c := h.createExt(tn, extPath, extBody(cust, "USD_ACCOUNT", "", nil))

	// customerId is not a field of the platform request.
	requireBad(t, h.post(tn, platExtPath, extBody(cust, "GBP_ACCOUNT", "", nil)), "customerId")

	own := decodeExtList(t, h.get(tn, platExtPath))
	assert.Equal(t, 2, own.TotalCount)
	assert.Equal(t, []string{p["id"].(string), q["id"].(string)}, extIDs(own))
	custs := decodeExtList(t, h.get(tn, extPath))
	assert.Equal(t, []string{c["id"].(string)}, extIDs(custs), "customer lists hold customer accounts")
	eur := decodeExtList(t, h.get(tn, platExtPath+"?currency=EUR"))
	assert.Equal(t, []string{p["id"].(string)}, extIDs(eur))

	// Platform paths reach only the platform's accounts; customer paths
	// reach both.
	requireError(t, h.get(tn, platExtPath+"/"+c["id"].(string)), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	assert.Equal(t, http.StatusOK, h.get(tn, extPath+"/"+q["id"].(string)).status)
	assert.Equal(t, http.StatusOK, h.get(tn, platExtPath+"/"+q["id"].(string)).status)
	requireError(t, h.post(tn, platExtPath, extBody("", "EUR_ACCOUNT", "", nil)), http.StatusConflict, "CONFLICT")
}

func TestExternalAccountIsolationOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn, other := h.tenant(), h.tenant()
	cust := h.extCustomer(tn)
	a := h.createExt(tn, extPath, extBody(cust, "USD_ACCOUNT", "", nil))
	p := h.createExt(tn, platExtPath, extBody("", "USD_ACCOUNT", "", nil))
	for _, path := range []string{extPath + "/" + a["id"].(string), extPath + "/" + p["id"].(string), platExtPath + "/" + p["id"].(string)} {
		requireError(t, h.get(other, path), http.StatusNotFound, "REFERENCE_NOT_FOUND")
		requireError(t, h.del(other, path), http.StatusNotFound, "REFERENCE_NOT_FOUND")
	}
	assert.Zero(t, decodeExtList(t, h.get(other, extPath)).TotalCount)
	assert.Zero(t, decodeExtList(t, h.get(other, platExtPath)).TotalCount)
	// The other platform cannot attach accounts to this platform's customer.
	requireError(t, h.post(other, extPath, extBody(cust, "USD_ACCOUNT", "", nil)), http.StatusNotFound, "USER_NOT_FOUND")
	// Both still exist for their owner.
	assert.Equal(t, http.StatusOK, h.get(tn, extPath+"/"+a["id"].(string)).status)
	// The same account may belong to two platforms.
	h.createExt(other, platExtPath, extBody("", "USD_ACCOUNT", "", nil))
}

type extList struct {
	Data       []map[string]any `json:"data"`
	HasMore    bool             `json:"hasMore"`
	NextCursor string           `json:"nextCursor"`
	TotalCount int              `json:"totalCount"`
}

func decodeExtList(t *testing.T, r apiResponse) extList {
	t.Helper()
	require.Equalf(t, http.StatusOK, r.status, "body %s", r.body)
	var l extList
	require.NoError(t, json.Unmarshal(r.body, &l))
	raw := r.object(t)
	if l.HasMore {
		assert.NotEmpty(t, l.NextCursor)
	} else {
		assert.NotContains(t, raw, "nextCursor", "nextCursor only when hasMore")
	}
	assert.NotNil(t, raw["data"])
	return l
}

func extIDs(l extList) []string {
	out := make([]string, len(l.Data))
	for i, a := range l.Data {
		out[i] = a["id"].(string)
	}
	return out
}

func TestExternalAccountPaginationOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	cust, other := h.extCustomer(tn), h.extCustomer(tn)
	var want []string
	for i := range 23 {
		a := h.createExt(tn, extPath, extBody(cust, "GBP_ACCOUNT", fmt.Sprintf("%03d", 400+i), nil))
		want = append(want, a["id"].(string))
		if i%5 == 0 {
			h.createExt(tn, extPath, extBody(other, "GBP_ACCOUNT", fmt.Sprintf("%03d", 400+i), nil))
		}
	}
	var got []string
	path := extPath + "?limit=5&customerId=" + url.QueryEscape(cust)
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		l := decodeExtList(t, h.get(tn, path))
		assert.Equal(t, len(want), l.TotalCount)
		assert.LessOrEqual(t, len(l.Data), 5)
		got = append(got, extIDs(l)...)
		if !l.HasMore {
			break
		}
		// A new account during the walk lands after the cursor.
		if pages == 1 {
			a := h.createExt(tn, extPath, extBody(cust, "GBP_ACCOUNT", "499", nil))
			want = append(want, a["id"].(string))
		}
		path = extPath + "?limit=5&customerId=" + url.QueryEscape(cust) + "&cursor=" + url.QueryEscape(l.NextCursor)
	}
	assert.Equal(t, want, got, "every account once, in creation order")

	all := decodeExtList(t, h.get(tn, extPath))
	assert.Equal(t, 29, all.TotalCount)
	assert.Len(t, all.Data, 20, "default page size")
	assert.True(t, all.HasMore)

	requireBad(t, h.get(tn, extPath+"?cursor=forged"), "cursor")
	requireBad(t, h.get(tn, extPath+"?limit=0"), "limit")
	requireBad(t, h.get(tn, extPath+"?limit=101"), "limit")
	requireBad(t, h.get(tn, platExtPath+"?cursor=forged"), "cursor")
}

func TestExternalAccountIdempotentCreateOverHTTP(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	cust := h.extCustomer(tn)
	body := extBody(cust, "USD_ACCOUNT", "", nil)
	first := h.post(tn, extPath, body, "Idempotency-Key", "ext-1")
	require.Equal(t, http.StatusCreated, first.status, string(first.body))
	again := h.post(tn, extPath, body, "Idempotency-Key", "ext-1")
	require.Equal(t, http.StatusCreated, again.status, string(again.body))
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.JSONEq(t, string(first.body), string(again.body))
	assert.Equal(t, 1, decodeExtList(t, h.get(tn, extPath)).TotalCount)
}

func TestExternalAccountOpenAPI(t *testing.T) {
	h := newHarness(t)
	r := h.send(request{method: http.MethodGet, path: "/openapi.json"})
	require.Equal(t, http.StatusOK, r.status)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string   `json:"operationId"`
			Tags        []string `json:"tags"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(r.body, &doc))
	for path, ops := range map[string]map[string]string{
		"/customers/external-accounts":                     {"get": "listCustomerExternalAccounts", "post": "createCustomerExternalAccount"},
		"/customers/external-accounts/{externalAccountId}": {"get": "getCustomerExternalAccountById", "delete": "deleteCustomerExternalAccountById"},
		"/platform/external-accounts":                      {"get": "listPlatformExternalAccounts", "post": "createPlatformExternalAccount"},
		"/platform/external-accounts/{externalAccountId}":  {"get": "getPlatformExternalAccountById", "delete": "deletePlatformExternalAccountById"},
		"/receiver/external-account/{accountId}":           {"get": "lookupExternalAccount"},
	} {
		for method, id := range ops {
			op, ok := doc.Paths[path][method]
			require.Truef(t, ok, "%s %s", method, path)
			assert.Equal(t, id, op.OperationID)
			if id == "lookupExternalAccount" {
				assert.Equal(t, []string{"Cross-Currency Transfers"}, op.Tags)
			} else {
				assert.Equal(t, []string{"External Accounts"}, op.Tags)
			}
		}
	}
	var create struct {
		OneOf         []map[string]string `json:"oneOf"`
		Discriminator struct {
			PropertyName string            `json:"propertyName"`
			Mapping      map[string]string `json:"mapping"`
		} `json:"discriminator"`
	}
	require.NoError(t, json.Unmarshal(doc.Components.Schemas["ExternalAccountCreateInfoOneOf"], &create))
	assert.Equal(t, "accountType", create.Discriminator.PropertyName)
	for _, typ := range external.AccountTypes() {
		assert.Contains(t, create.Discriminator.Mapping, typ)
	}
	assert.Len(t, create.OneOf, len(external.AccountTypes()))
	var usd struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(doc.Components.Schemas["UsdExternalAccountCreateInfo"], &usd))
	for _, f := range []string{"accountType", "accountNumber", "routingNumber", "beneficiary"} {
		assert.Contains(t, usd.Required, f)
	}
	assert.NotContains(t, usd.Properties, "paymentRails")
	require.NoError(t, json.Unmarshal(doc.Components.Schemas["UsdExternalAccountInfo"], &usd))
	assert.Contains(t, usd.Required, "paymentRails")
	assert.True(t, slices.Contains(usd.Required, "routingNumber"))
}
