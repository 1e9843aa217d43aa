package httpapi_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/corridorpay/corridor/testkit/apischema"
)

// TestMain reports how many responses the run checked against the
// reference (every response the harness reads is checked).
func TestMain(m *testing.M) {
	code := m.Run()
	if c, _ := apischema.Load(); c != nil {
		fmt.Printf("apischema: %d responses validated against the reference (%d operations); %d with a status or method the reference does not list; %d of corridor's own routes\n",
			c.Checked.Load(), c.Operations(), c.Undocumented.Load(), c.Skipped.Load())
	}
	os.Exit(code)
}
