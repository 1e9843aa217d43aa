package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadInputIsRefusedAtTheBoundary sends the examples, and the
// same rule on query, path, header and form text, to the whole handler on
// memory and on PostgreSQL: each is 400 INVALID_INPUT naming the field, and
// nothing is written.
func TestBadInputIsRefusedAtTheBoundary(t *testing.T) {
	for _, backendName := range []string{"memory", "postgres"} {
		t.Run(backendName, func(t *testing.T) {
			e := newFuzzEnv(t, backendName)
			op := map[string]fuzzOp{}
			for _, o := range e.ops {
				op[o.name()] = o
			}
			cust := strings.TrimPrefix(op["PATCH /customers/{customerId}"].path, "/customers/")
			owner := op["POST /beneficial-owners"].seeds[0]
			out := op["POST /transfer-out"].seeds[0]
			form := func(holder string) []byte {
				var b bytes.Buffer
				mw := multipart.NewWriter(&b)
				_ = mw.SetBoundary(fuzzBoundary)
				_ = mw.WriteField("documentHolder", holder)
				_ = mw.WriteField("documentType", "PASSPORT")
				_ = mw.WriteField("country", "US")
				fw, _ := mw.CreateFormFile("file", "a.pdf")
				_, _ = fw.Write([]byte("%PDF-1.4\n\x00\xff binary is fine in a file\n%%EOF\n"))
				_ = mw.Close()
				return b.Bytes()
			}
			for _, c := range []struct {
				name, method, path, contentType, body string
				header                                []string
				field                                 string
			}{
				{"NUL escape in a body string", "POST", "/verifications", "", `{"customerId":"\u0000"}`, nil, "customerId"},
				{"NUL in an external account's customer", "POST", "/customers/external-accounts", "",
					strings.Replace(op["POST /customers/external-accounts"].seeds[0], `"customerId":"`, `"customerId":"\u0000`, 1), nil, "customerId"},
				{"array in a uniqueItems-like array", "POST", "/beneficial-owners", "", strings.Replace(owner, `["UBO","DIRECTOR"]`, `[[]]`, 1), nil, "roles[0]"},
				{"object and null roles", "POST", "/beneficial-owners", "", strings.Replace(owner, `["UBO","DIRECTOR"]`, `[{}, null]`, 1), nil, "roles[0]"},
				{"a role listed twice", "POST", "/beneficial-owners", "", strings.Replace(owner, `["UBO","DIRECTOR"]`, `["UBO","UBO"]`, 1), nil, "roles[1]"},
				{"duplicate amount", "POST", "/transfer-out", "", strings.Replace(out, `"amount":100`, `"amount":100,"amount":90000`, 1), nil, "amount"},
				{"duplicate nested key", "POST", "/transfer-out", "", strings.Replace(out, `"destination":{`, `"destination":{"accountId":"x",`, 1), nil, "destination.accountId"},
				{"invalid UTF-8 in a name", "POST", "/customers", "", "{\"customerType\":\"INDIVIDUAL\",\"fullName\":\"Ab\xff\xfeCd\"}", nil, "fullName"},
				{"lone surrogate in a name", "POST", "/customers", "", `{"customerType":"INDIVIDUAL","fullName":"Ab\ud800Cd"}`, nil, "fullName"},
				{"NUL in a query parameter", "GET", "/customers?platformCustomerId=a%00b", "", "", nil, "platformCustomerId"},
				{"invalid UTF-8 in a query parameter", "GET", "/transactions?customerId=%ff", "", "", nil, "customerId"},
				{"NUL in a path parameter", "GET", "/customers/Customer:%00", "", "", nil, "customerId"},
				{"invalid UTF-8 in a path parameter", "PATCH", "/customers/" + cust + "%ff", "", `{"customerType":"INDIVIDUAL"}`, nil, "customerId"},
				{"NUL in Idempotency-Key", "POST", "/customers", "", `{"customerType":"INDIVIDUAL"}`, []string{"Idempotency-Key", "k\x00"}, "Idempotency-Key"},
				{"invalid UTF-8 in Idempotency-Key", "POST", "/customers", "", `{"customerType":"INDIVIDUAL"}`, []string{"Idempotency-Key", "k\xff"}, "Idempotency-Key"},
				{"invalid UTF-8 in the operator token", "GET", "/ledger/trial-balance", "", "", []string{"Corridor-Operator-Token", "\xff"}, "Corridor-Operator-Token"},
				{"NUL in Content-Type", "POST", "/customers", "application/json\x00", `{"customerType":"INDIVIDUAL"}`, nil, "Content-Type"},
				{"NUL in a form field", "POST", "/documents", "multipart/form-data; boundary=" + fuzzBoundary, string(form("Customer:\x00")), nil, "documentHolder"},
			} {
				t.Run(c.name, func(t *testing.T) {
					ct := c.contentType
					if ct == "" && c.body != "" {
						ct = "application/json"
					}
					before := e.counts()
					rec := e.call(c.method, c.path, ct, []byte(c.body), c.header...)
					require.Equalf(t, http.StatusBadRequest, rec.Code, "body %s", rec.Body)
					var body struct {
						Status  int
						Code    string
						Details struct{ Errors []struct{ Field string } }
					}
					require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
					assert.Equal(t, 400, body.Status)
					assert.Equal(t, "INVALID_INPUT", body.Code)
					require.NotEmptyf(t, body.Details.Errors, "%s", rec.Body)
					assert.Equalf(t, c.field, body.Details.Errors[0].Field, "%s", rec.Body)
					assert.True(t, maps.Equal(before, e.counts()), "a refused request wrote")
				})
			}
			// A NUL inside a credential's token id is a failed credential
			// (401), never a statement error.
			tok := "Basic " + base64.StdEncoding.EncodeToString([]byte("\x00:secret"))
			rec := e.call("GET", "/customers", "", nil, "Authorization", tok)
			assert.Equalf(t, http.StatusUnauthorized, rec.Code, "body %s", rec.Body)
			tok = "Basic " + base64.StdEncoding.EncodeToString([]byte("tok\xff:sec\x00ret"))
			rec = e.call("GET", "/customers", "", nil, "Authorization", tok)
			assert.Equalf(t, http.StatusUnauthorized, rec.Code, "body %s", rec.Body)
			// The binary file of a valid upload may hold NUL and any byte.
			rec = e.call("POST", "/documents", "multipart/form-data; boundary="+fuzzBoundary, form("Customer:"+strings.TrimPrefix(cust, "Customer:")))
			assert.Equalf(t, http.StatusCreated, rec.Code, "body %s", rec.Body)
		})
	}
}
