package httpapi

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/corridorpay/corridor/ports"
)

// sqlState is a driver error carrying a SQLSTATE, as pgdriver.Error does.
type sqlState string

func (s sqlState) Error() string       { return "pg: " + string(s) }
func (s sqlState) Field(k byte) string { return map[byte]string{'C': string(s)}[k] }

func TestUnavailableErrorsAre503WithRetryAfter(t *testing.T) {
	for name, err := range map[string]error{
		"ports.ErrUnavailable": fmt.Errorf("read: %w", ports.ErrUnavailable),
		"too_many_connections": fmt.Errorf("read customer: %w", sqlState("53300")),
		"connection failure":   sqlState("08006"),
		"cannot connect now":   sqlState("57P03"),
		"admin shutdown":       sqlState("57P01"),
		"dial refused":         &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")},
	} {
		e := toError(err)
		assert.Equal(t, http.StatusServiceUnavailable, e.Status, name)
		assert.Equal(t, codeUnavailable, e.Code, name)
		assert.Equal(t, "1", e.GetHeaders().Get("Retry-After"), name)
	}
	for name, err := range map[string]error{
		"unique violation": sqlState("23505"),
		"syntax error":     sqlState("42601"),
		"plain error":      errors.New("boom"),
		"read on a conn":   &net.OpError{Op: "read", Net: "tcp", Err: errors.New("reset")},
	} {
		assert.Equal(t, http.StatusInternalServerError, toError(err).Status, name)
	}
}
