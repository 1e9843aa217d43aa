package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Asking for help prints the usage and never starts a server; any other
// flag is refused (the server takes no flags).
func TestHelpNeverServes(t *testing.T) {
	// Cancelled: a run that served after all would stop at once (and show
	// its banner) rather than hang the test.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, arg := range []string{"-h", "-help", "--help", "help"} {
		var out, errOut bytes.Buffer
		require.NoError(t, run(ctx, []string{arg}, func(string) string { return "" }, &out, &errOut), arg)
		assert.Contains(t, out.String(), "usage:", arg)
		assert.Contains(t, out.String(), "corridor migrate", arg)
	}
	var out, errOut bytes.Buffer
	err := run(ctx, []string{"-port=9"}, func(string) string { return "" }, &out, &errOut)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown flag")
	assert.Empty(t, out.String(), "nothing served")
}
