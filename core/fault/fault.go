// Package fault is how core says why a request cannot be done, in terms the
// HTTP adapter maps to a status and the reference's error codes.
package fault

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies a failure; the HTTP adapter maps each to one status.
type Kind int

const (
	KindInvalid       Kind = iota + 1 // 400
	KindUnauthorized                  // 401
	KindForbidden                     // 403
	KindNotFound                      // 404
	KindConflict                      // 409
	KindGone                          // 410
	KindUnprocessable                 // 422
	KindTooMany                       // 429, with RetryAfter
)

// FieldError names one bad field (dot path, as the reference's FieldError).
type FieldError struct {
	Field   string
	Message string
}

// Error is a domain failure with the reference's error code.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// Fields lists the bad fields of an invalid request.
	Fields []FieldError
	// Reason names the failed check of a 401 (the spec's `reason`).
	Reason string
	// Details carries extra structured facts for the error body.
	Details map[string]any
	// RetryAfter is how long a KindTooMany caller should wait.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := e.Code + ": " + e.Message
	for _, f := range e.Fields {
		s += fmt.Sprintf(" [%s: %s]", f.Field, f.Message)
	}
	return s
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// Invalid is a 400 INVALID_INPUT naming one field.
func Invalid(field, message string) *Error {
	return &Error{Kind: KindInvalid, Code: "INVALID_INPUT", Message: field + ": " + message,
		Fields: []FieldError{{Field: field, Message: message}}}
}

// InvalidCode is Invalid with a code of its own in place of INVALID_INPUT
// (AMOUNT_OUT_OF_RANGE, WEBHOOK_ENDPOINT_NOT_SET, …), still naming field.
func InvalidCode(code, field, message string) *Error {
	e := Invalid(field, message)
	e.Code = code
	return e
}

// InvalidFields is a 400 INVALID_INPUT naming every bad field.
func InvalidFields(fields ...FieldError) *Error {
	msg := "invalid input"
	if len(fields) > 0 {
		msg = fields[0].Field + ": " + fields[0].Message
		if len(fields) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(fields)-1)
		}
	}
	return &Error{Kind: KindInvalid, Code: "INVALID_INPUT", Message: msg, Fields: fields}
}

// New builds an error of any kind with a code and message.
func New(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message}
}

// NotFound is a 404 with the given code (USER_NOT_FOUND, NOT_FOUND…).
func NotFound(code, message string) *Error { return New(KindNotFound, code, message) }

// Conflict is a 409 with the given code.
func Conflict(code, message string) *Error { return New(KindConflict, code, message) }

// CodeKeyReused is the code of an Idempotency-Key sent again with another
// request.
const CodeKeyReused = "IDEMPOTENCY_KEY_REUSED"

// KeyReused is the one answer, in every use case, to an Idempotency-Key
// whose first request differs from this one (what names the thing the key
// made: "funding", "transfer", "quote"): 422 IDEMPOTENCY_KEY_REUSED,
// whichever layer notices.
func KeyReused(what string) *Error {
	return New(KindUnprocessable, CodeKeyReused, "the idempotency key was already used for a different "+what)
}

// Unauthorized is a 401 UNAUTHORIZED naming the failed check.
func Unauthorized(reason string) *Error {
	return &Error{Kind: KindUnauthorized, Code: "UNAUTHORIZED", Message: "authentication failed: " + reason, Reason: reason}
}

// Collector gathers field errors so a request reports all its bad fields.
type Collector struct{ fields []FieldError }

// Add records a bad field.
func (c *Collector) Add(field, message string) {
	c.fields = append(c.fields, FieldError{field, message})
}

// Err returns the gathered errors as one *Error, or nil.
func (c *Collector) Err() error {
	if len(c.fields) == 0 {
		return nil
	}
	return InvalidFields(c.fields...)
}
