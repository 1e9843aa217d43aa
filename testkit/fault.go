package testkit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
)

// RequireFault requires err to be a domain fault of kind and code that
// names at least the given fields, and returns it for further checks.
func RequireFault(t testing.TB, err error, kind fault.Kind, code string, fields ...string) *fault.Error {
	t.Helper()
	require.Error(t, err)
	f, ok := fault.As(err)
	require.Truef(t, ok, "want a fault, got %T: %v", err, err)
	require.Equal(t, kind, f.Kind, f.Error())
	require.Equal(t, code, f.Code, f.Error())
	got := make([]string, 0, len(f.Fields))
	for _, fe := range f.Fields {
		got = append(got, fe.Field)
	}
	for _, want := range fields {
		require.Containsf(t, got, want, "fields of %v", f)
	}
	return f
}
