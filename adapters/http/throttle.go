package httpapi

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/corridorpay/corridor/ports"
)

const codeRateLimited = "RATE_LIMITED"

// The authentication throttle. Failed attempts (a token id and secret that
// match no credential) are counted per token id and per client address in
// a ports.FailureCounter (Redis, so the limit holds across instances); once
// either reaches its limit within the window, every request with that token
// id or from that address is 429 RATE_LIMITED with Retry-After until the
// window ends, a correct secret included, so the limit cannot be used to
// learn which guess was right. Malformed or missing credentials are not
// counted: they cost no lookup and guess nothing.
//
// The successful path pays nothing: a credential verified in the last few
// seconds (the verified cache) is not checked, and one that is not costs
// one round trip beside the credential lookup it needs anyway.

// Default throttle limits (Deps overrides them).
const (
	DefaultAuthFailuresPerToken   = 20
	DefaultAuthFailuresPerAddress = 100
	DefaultAuthFailureWindow      = time.Minute
)

// throttleKeys are the counter keys of a request's token id and address.
func throttleKeys(tokenID string, r *http.Request) []string {
	return []string{"auth:tok:" + tokenID, "auth:addr:" + clientAddress(r)}
}

// clientAddress is the request's peer IP (RemoteAddr; forwarding headers
// are not trusted).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// throttled returns the 429 for a request whose token id or address is
// over its limit, or nil. A counter that cannot be read lets the request
// through (the credential check still runs): authentication must not
// depend on the cache being up.
func (s *server) throttled(ctx context.Context, tokenID string, r *http.Request) *Error {
	return s.throttle(ctx, "auth throttle read", func(ctx context.Context, f ports.FailureCounter) ([]ports.FailureCount, error) {
		return f.Failures(ctx, throttleKeys(tokenID, r)...)
	})
}

// countFailure records a failed attempt and returns the 429 when it
// reached a limit (the answer then replaces the 401), or nil.
func (s *server) countFailure(ctx context.Context, tokenID string, r *http.Request) *Error {
	return s.throttle(ctx, "auth throttle count", func(ctx context.Context, f ports.FailureCounter) ([]ports.FailureCount, error) {
		return f.AddFailure(ctx, s.d.AuthFailureWindow, throttleKeys(tokenID, r)...)
	})
}

// throttle asks the failure counter for the counts of a request's token id
// and address (an optionalCall: unanswered, the request goes unchecked)
// and returns the 429 when one is over its limit, or nil.
func (s *server) throttle(ctx context.Context, what string,
	ask func(context.Context, ports.FailureCounter) ([]ports.FailureCount, error)) *Error {
	if s.d.Failures == nil {
		return nil
	}
	var counts []ports.FailureCount
	if !s.optionalCall(ctx, what, func(ctx context.Context) (err error) {
		counts, err = ask(ctx, s.d.Failures)
		return err
	}) {
		return nil
	}
	return s.overLimit(counts[0].N, counts[1].N, max(counts[0].ResetIn, counts[1].ResetIn))
}

func (s *server) overLimit(perToken, perAddress int64, resetIn time.Duration) *Error {
	if perToken < int64(s.d.AuthFailuresPerToken) && perAddress < int64(s.d.AuthFailuresPerAddress) {
		return nil
	}
	secs := int64((resetIn + time.Second - 1) / time.Second)
	return &Error{Status: http.StatusTooManyRequests, Code: codeRateLimited,
		Message: "too many failed authentication attempts; retry after the interval in Retry-After",
		header:  http.Header{"Retry-After": {strconv.FormatInt(max(secs, 1), 10)}}}
}
