package httpapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMaskIdentifier(t *testing.T) {
	for in, want := range map[string]string{
		"123-45-6789":    "•••••6789",
		"12-3456789":     "•••••6789",
		"X1234567890123": "•••••0123",
		"ÄÖÜ12345":       "•••••2345",
		"1234":           "•••••",
		"9":              "•••••",
		"":               "",
	} {
		assert.Equal(t, want, maskIdentifier(in), in)
	}
}
