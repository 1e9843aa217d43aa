package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A verification waiting on data is checked again when the customer's own
// fields change (PATCH /customers/{id}), as when documents or owners do:
// it lists what is still missing, then READY_FOR_VERIFICATION, and a POST
// submits it. Each answer is checked against the reference's schema.
func TestCustomerUpdateRechecksItsVerification(t *testing.T) {
	onAPIBackends(t, func(t *testing.T, env *apiEnv, a apiTarget) {
		cust := a.created(t, "POST", "/customers", `{"customerType":"INDIVIDUAL","region":"US","email":"rita@example.com"}`)
		r := a.do(t, 0, "POST", "/verifications", fmt.Sprintf(`{"customerId":%q}`, cust))
		require.Contains(t, []int{200, 201}, r.status, "%s", r.body)
		v := r.json(t)
		require.Equal(t, "RESOLVE_ERRORS", v["verificationStatus"])
		id := v["id"].(string)
		missing := func() []string {
			t.Helper()
			r := a.do(t, 0, "GET", "/verifications/"+id, "")
			require.Equal(t, 200, r.status, "%s", r.body)
			var out []string
			for _, e := range r.json(t)["errors"].([]any) {
				out = append(out, e.(map[string]any)["field"].(string))
			}
			return out
		}
		require.Contains(t, missing(), "customer.fullName")

		// Some fields: the rest are still listed.
		r = a.do(t, 0, "PATCH", "/customers/"+cust, `{"customerType":"INDIVIDUAL","fullName":"Rita Levi","birthDate":"1990-01-01"}`)
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Equal(t, []string{"customer.address.line1", "customer.address.city", "customer.address.state",
			"customer.address.postalCode", "customer.idType", "customer.identifier"}, missing())

		r = a.do(t, 0, "PATCH", "/customers/"+cust, `{"customerType":"INDIVIDUAL","idType":"SSN","identifier":"123-45-6789",
			"address":{"line1":"1 Main St","city":"Austin","state":"TX","postalCode":"78701","country":"US"}}`)
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Empty(t, missing())
		r = a.do(t, 0, "GET", "/verifications/"+id, "")
		assert.Equal(t, "READY_FOR_VERIFICATION", r.json(t)["verificationStatus"])

		r = a.do(t, 0, "POST", "/verifications", fmt.Sprintf(`{"customerId":%q}`, cust))
		require.Contains(t, []int{200, 201}, r.status, "%s", r.body)
		assert.Equal(t, id, r.json(t)["id"], "the same verification, submitted")
		assert.Equal(t, "APPROVED", r.json(t)["verificationStatus"])

		// A final verification is not reopened by a later change.
		r = a.do(t, 0, "PATCH", "/customers/"+cust, `{"customerType":"INDIVIDUAL","fullName":"Rita Levi-Montalcini"}`)
		require.Equal(t, 200, r.status, "%s", r.body)
		r = a.do(t, 0, "GET", "/verifications/"+id, "")
		assert.Equal(t, "APPROVED", r.json(t)["verificationStatus"])
	})
}
