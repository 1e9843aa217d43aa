package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every list with a time window refuses one whose lower bound is after its
// upper bound (400 naming the lower bound), as GET /transactions does; an
// empty window of one instant is fine.
func TestListWindowsOutOfOrder(t *testing.T) {
	const early, late = "2025-01-01T00:00:00Z", "2025-06-01T00:00:00Z"
	onAPIBackends(t, func(t *testing.T, env *apiEnv, a apiTarget) {
		for _, c := range []struct{ list, from, to string }{
			{"/customers", "createdAfter", "createdBefore"},
			{"/customers", "updatedAfter", "updatedBefore"},
			{"/tokens", "createdAfter", "createdBefore"},
			{"/tokens", "updatedAfter", "updatedBefore"},
			{"/agents", "createdAfter", "createdBefore"},
			{"/agents", "updatedAfter", "updatedBefore"},
			{"/agents/approvals", "startDate", "endDate"},
			{"/transactions", "startDate", "endDate"},
		} {
			r := a.do(t, 0, "GET", c.list+"?"+c.from+"="+late+"&"+c.to+"="+early, "")
			require.Equal(t, 400, r.status, "%s %s: %s", c.list, c.from, r.body)
			body := r.json(t)
			assert.Equal(t, "INVALID_INPUT", body["code"])
			errs := body["details"].(map[string]any)["errors"].([]any)
			assert.Equal(t, c.from, errs[0].(map[string]any)["field"], c.list)
			r = a.do(t, 0, "GET", c.list+"?"+c.from+"="+early+"&"+c.to+"="+early, "")
			assert.Equal(t, 200, r.status, "%s %s: %s", c.list, c.from, r.body)
		}
	})
}

// A list's customerId filter that is no Customer id (nor, for
// transactions, the platform's own id) is 400 naming it, not an empty
// page that reads as "this customer has none".
func TestListCustomerFilterMustBeACustomerID(t *testing.T) {
	onAPIBackends(t, func(t *testing.T, env *apiEnv, a apiTarget) {
		for _, list := range []string{"/transactions", "/customers/internal-accounts", "/customers/external-accounts",
			"/agents", "/agents/approvals", "/verifications"} {
			for _, bad := range []string{"garbage", "ExternalAccount:1"} {
				r := a.do(t, 0, "GET", list+"?customerId="+bad, "")
				require.Equal(t, 400, r.status, "%s %s: %s", list, bad, r.body)
				errs := r.json(t)["details"].(map[string]any)["errors"].([]any)
				assert.Equal(t, "customerId", errs[0].(map[string]any)["field"], list)
			}
			r := a.do(t, 0, "GET", list+"?customerId=Customer:00000000-0000-0000-0000-000000000000", "")
			assert.Equal(t, 200, r.status, "%s: %s", list, r.body)
		}
	})
}
