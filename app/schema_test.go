package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/testkit/apischema"
)

// Every operation the service serves is one of the reference's, except
// the routes apischema.OwnRoutes lists as corridor's own: a path the checker
// cannot map would otherwise go unchecked.
func TestEveryOperationIsTheReferences(t *testing.T) {
	c, err := apischema.Load()
	require.NoError(t, err)
	if c == nil {
		t.Skip("the reference OpenAPI document is not on this machine (set CORRIDOR_REFERENCE_OPENAPI)")
	}
	e := newFuzzEnv(t, "memory")
	checked := 0
	for _, op := range e.allOperations() {
		method, pattern, _ := strings.Cut(op, " ")
		path := BasePath + paramRe.ReplaceAllString(pattern, "x")
		if apischema.IsOwn(path) {
			continue
		}
		checked++
		assert.True(t, c.Has(method, path), "%s is in no operation of the reference: list it in apischema.OwnRoutes or fix the path", op)
	}
	assert.GreaterOrEqual(t, checked, 40)
}
