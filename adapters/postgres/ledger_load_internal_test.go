package postgres

import (
	"fmt"
	"strings"
	"testing"
)

// The load statements number every placeholder: seven parameters, eight
// with reversals, no bun placeholder left, and no transaction of their own.
func TestLoadStatementsNumberTheirParameters(t *testing.T) {
	for i, want := range []int{7, 8} {
		q := loadStatements[i]
		if strings.Contains(q, "?") {
			t.Errorf("statement %d keeps a ? placeholder", i)
		}
		if !strings.Contains(q, fmt.Sprintf("$%d", want)) || strings.Contains(q, fmt.Sprintf("$%d", want+1)) {
			t.Errorf("statement %d: want parameters $1…$%d", i, want)
		}
		if strings.Contains(q, "BEGIN") {
			t.Errorf("statement %d opens a transaction itself", i)
		}
	}
}
