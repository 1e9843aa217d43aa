package httpapi

import (
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/corridorpay/corridor/ports"
)

// retryAfterUnavailable is the Retry-After (seconds) of a 503: a full pool
// or a database at its connection limit usually frees up within a second.
const retryAfterUnavailable = "1"

// unavailable reports whether err says a backing service cannot take the
// work now rather than that something is broken: ports.ErrUnavailable, a
// PostgreSQL refusal by SQLSTATE (class 08 connection exceptions, 53300
// too_many_connections, 57P01–57P03 shutting down or starting up), or a
// connection that could not be dialled. Such a request is answered 503
// with Retry-After, never 500.
func unavailable(err error) bool {
	if errors.Is(err, ports.ErrUnavailable) || errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var pg interface{ Field(byte) string }
	if errors.As(err, &pg) {
		code := pg.Field('C')
		switch {
		case strings.HasPrefix(code, "08"), code == "53300", code == "57P01", code == "57P02", code == "57P03":
			return true
		}
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
