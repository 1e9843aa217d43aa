package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/fault"
)

// Error is the one error body every failure is written as:
//
//	{"status": 400, "code": "INVALID_INPUT", "message": "...",
//	 "details": {"errors": [{"field": "address.postalCode", "message": "..."}]}}
//
// A 401 also carries "reason", naming the failed check.
type Error struct {
	Status  int            `json:"status" doc:"The HTTP status code"`
	Code    string         `json:"code" doc:"Machine-readable error code"`
	Message string         `json:"message" doc:"Human-readable description"`
	Reason  string         `json:"reason,omitempty" doc:"The failed authentication check (401 only)"`
	Details map[string]any `json:"details,omitempty" doc:"Structured facts; on 400, errors lists every bad field"`

	header http.Header
	// cause is what went wrong inside a 5xx; it is logged, never sent.
	cause error
}

// FieldError names one bad field of a request (dot path).
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message,omitempty"`
}

func (e *Error) Error() string {
	if e.cause != nil {
		return e.Code + ": " + e.Message + ": " + e.cause.Error()
	}
	return e.Code + ": " + e.Message
}

// GetStatus makes Error a huma.StatusError.
func (e *Error) GetStatus() int { return e.Status }

// GetHeaders makes Error a huma.HeadersError (WWW-Authenticate on 401s).
func (e *Error) GetHeaders() http.Header { return e.header }

func (e *Error) Unwrap() error { return e.cause }

// Error codes the HTTP layer itself produces.
const (
	codeInvalidInput = "INVALID_INPUT"
	codeUnauthorized = "UNAUTHORIZED"
	codeNotFound     = "NOT_FOUND"
	// codeReferenceNotFound answers an id that names no resource of the
	// caller's, for the resources the reference's 404 codes do not name
	// (internal and external accounts, beneficial owners, verifications,
	// documents, ledger accounts and entries): the reference lists
	// USER_NOT_FOUND, TRANSACTION_NOT_FOUND, QUOTE_NOT_FOUND… and, for any
	// other id, REFERENCE_NOT_FOUND. NOT_FOUND stays for unknown routes.
	codeReferenceNotFound = "REFERENCE_NOT_FOUND"
	codeMethodNotAllowed  = "METHOD_NOT_ALLOWED"
	codePayloadTooLarge   = "PAYLOAD_TOO_LARGE"
	codeInternal          = "INTERNAL_ERROR"
	codeUnavailable       = "SERVICE_UNAVAILABLE"
)

var kindStatus = map[fault.Kind]int{
	fault.KindInvalid:       http.StatusBadRequest,
	fault.KindUnauthorized:  http.StatusUnauthorized,
	fault.KindForbidden:     http.StatusForbidden,
	fault.KindNotFound:      http.StatusNotFound,
	fault.KindConflict:      http.StatusConflict,
	fault.KindGone:          http.StatusGone,
	fault.KindUnprocessable: http.StatusUnprocessableEntity,
	fault.KindTooMany:       http.StatusTooManyRequests,
}

// apiError turns any error into the error body. A *fault.Error keeps its
// code, message and fields; an *Error passes through; anything else is an
// internal error whose cause is logged and not sent.
func apiError(err error) error {
	if err == nil {
		return nil
	}
	return toError(err)
}

func toError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if f, ok := fault.As(err); ok {
		return fromFault(f)
	}
	return internalError(err)
}

func internalError(cause error) *Error {
	if unavailable(cause) {
		return &Error{Status: http.StatusServiceUnavailable, Code: codeUnavailable,
			Message: "the service cannot take the request now; retry after a moment", cause: cause,
			header: http.Header{"Retry-After": {retryAfterUnavailable}}}
	}
	return &Error{Status: http.StatusInternalServerError, Code: codeInternal,
		Message: "an internal error occurred", cause: cause}
}

func fromFault(f *fault.Error) *Error {
	status, ok := kindStatus[f.Kind]
	if !ok {
		return internalError(f)
	}
	code := f.Code
	if status == http.StatusNotFound && code == codeNotFound {
		code = codeReferenceNotFound
	}
	e := &Error{Status: status, Code: code, Message: f.Message, Reason: f.Reason}
	if len(f.Details) > 0 || len(f.Fields) > 0 {
		e.Details = map[string]any{}
		for k, v := range f.Details {
			e.Details[k] = v
		}
		if len(f.Fields) > 0 {
			fields := make([]FieldError, len(f.Fields))
			for i, fe := range f.Fields {
				fields[i] = FieldError{Field: fe.Field, Message: fe.Message}
			}
			e.Details["errors"] = fields
		}
	}
	switch status {
	case http.StatusUnauthorized:
		e.header = http.Header{"Www-Authenticate": {`Basic realm="corridor"`}}
	case http.StatusTooManyRequests:
		secs := int64((f.RetryAfter + time.Second - 1) / time.Second)
		e.header = http.Header{"Retry-After": {strconv.FormatInt(max(secs, 1), 10)}}
	}
	return e
}

// invalidFields is a 400 INVALID_INPUT naming every bad field.
func invalidFields(fields ...FieldError) *Error {
	fe := make([]fault.FieldError, len(fields))
	for i, f := range fields {
		fe[i] = fault.FieldError{Field: f.Field, Message: f.Message}
	}
	return fromFault(fault.InvalidFields(fe...))
}

var statusCodes = map[int]string{
	http.StatusBadRequest:            codeInvalidInput,
	http.StatusUnauthorized:          codeUnauthorized,
	http.StatusForbidden:             "FORBIDDEN",
	http.StatusNotFound:              codeNotFound,
	http.StatusMethodNotAllowed:      codeMethodNotAllowed,
	http.StatusNotAcceptable:         "NOT_ACCEPTABLE",
	http.StatusRequestTimeout:        "REQUEST_TIMEOUT",
	http.StatusConflict:              "CONFLICT",
	http.StatusGone:                  "GONE",
	http.StatusRequestEntityTooLarge: codePayloadTooLarge,
	http.StatusUnsupportedMediaType:  "UNSUPPORTED_MEDIA_TYPE",
	http.StatusTooManyRequests:       codeRateLimited,
	http.StatusInternalServerError:   codeInternal,
	http.StatusNotImplemented:        "NOT_IMPLEMENTED",
	http.StatusServiceUnavailable:    codeUnavailable,
}

// statusError is an error body for a bare status.
func statusError(status int, message string) *Error {
	code, ok := statusCodes[status]
	if !ok {
		code = strings.Map(func(r rune) rune {
			switch {
			case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
				return r
			case r == ' ' || r == '-':
				return '_'
			}
			return -1
		}, strings.ToUpper(http.StatusText(status)))
		if code == "" {
			code = "ERROR"
		}
	}
	return &Error{Status: status, Code: code, Message: message}
}

var requiredRe = regexp.MustCompile(`^expected required property (.+) to be present$`)

// unmarshalRe matches encoding/json's message for a value that passed the
// schema but does not fit its Go field: a number too large for int64, or
// one written with an exponent ("1e3"). Group 1 is the field's JSON path,
// group 2 its Go type.
var unmarshalRe = regexp.MustCompile(`^json: cannot unmarshal \w+(?: \S+)? into Go struct field [^.\s]+\.(\S+) of type (\S+)$`)

// unmarshalField names the field of an unmarshal failure, and says what it
// must be, in place of encoding/json's message (which names Go types).
func unmarshalField(message string) (field, reason string, ok bool) {
	m := unmarshalRe.FindStringSubmatch(message)
	if m == nil {
		return "", "", false
	}
	switch m[2] {
	case "int64", "int", "int32", "uint64":
		return m[1], "must be a whole number written in digits (no fraction or exponent) within the 64-bit integer range", true
	}
	return m[1], "has the wrong type", true
}

// humaError converts the errors Huma produces itself (request validation,
// malformed bodies, oversize bodies…) into the error body. Validation
// failures, which Huma reports as 422, are 400 INVALID_INPUT naming each
// field: body fields by their dot path, parameters by their name.
func humaError(status int, msg string, errs ...error) huma.StatusError {
	if status == 0 {
		// Huma asks for an example to document the error schema.
		return &Error{}
	}
	var fields []FieldError
	var causes []error
	for _, err := range errs {
		if err == nil {
			continue
		}
		var d huma.ErrorDetailer
		if errors.As(err, &d) {
			det := d.ErrorDetail()
			field := fieldName(det.Location)
			message := timeFormatMessage(det.Message)
			if m := requiredRe.FindStringSubmatch(message); m != nil {
				field = joinField(field, m[1])
				message = "is required"
			} else if f, reason, ok := unmarshalField(message); ok {
				field, message = joinField(field, f), reason
			}
			fields = append(fields, FieldError{Field: field, Message: message})
			continue
		}
		if e, ok := fault.As(err); ok && len(e.Fields) > 0 {
			for _, f := range e.Fields {
				fields = append(fields, FieldError{Field: f.Field, Message: f.Message})
			}
			continue
		}
		causes = append(causes, err)
	}
	switch {
	case status == http.StatusUnprocessableEntity || status == http.StatusBadRequest:
		if len(fields) == 0 {
			fields = []FieldError{{Field: "body", Message: msg}}
		}
		return invalidFields(fields...)
	case status == http.StatusRequestEntityTooLarge:
		return statusError(status, "the request body is too large")
	case status >= 500:
		e := internalError(errors.Join(append([]error{errors.New(msg)}, causes...)...))
		if status != http.StatusInternalServerError {
			e.Status, e.Code = status, statusError(status, "").Code
		}
		return e
	}
	e := statusError(status, msg)
	if len(fields) > 0 {
		e.Details = map[string]any{"errors": fields}
	}
	return e
}

// timeFormatMessage says Huma's "invalid date/time for format <Go layout>"
// (a query parameter that is not a time) in words a client reads.
func timeFormatMessage(m string) string {
	layout, ok := strings.CutPrefix(m, "invalid date/time for format ")
	if !ok {
		return m
	}
	switch layout {
	case time.RFC3339Nano, time.RFC3339:
		return "must be an RFC 3339 date-time such as 2026-03-01T12:00:00Z"
	case time.DateOnly:
		return "must be a date such as 2026-03-01"
	}
	return "must be a time in the layout " + layout
}

// fieldName turns a Huma location into a field name: "body.address.line1"
// is "address.line1", "query.limit" is "limit", "header.Idempotency-Key" is
// "Idempotency-Key"; the body itself is "body".
func fieldName(loc string) string {
	if loc == "body." { // a property with an empty name
		return "body"
	}
	for _, p := range []string{"body.", "query.", "path.", "header.", "cookie."} {
		if strings.HasPrefix(loc, p) {
			return loc[len(p):]
		}
	}
	if loc == "" {
		return "body"
	}
	return loc
}

func joinField(parent, name string) string {
	if parent == "body" || parent == "" {
		return name
	}
	return parent + "." + name
}

// writeError writes e as the response (for failures outside Huma: auth,
// routing, body limits, panics).
func writeError(w http.ResponseWriter, r *http.Request, e *Error) {
	if e.cause != nil {
		noteCause(r.Context(), e.cause)
	}
	for k, vs := range e.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	body, err := json.Marshal(e)
	if err != nil {
		body = []byte(`{"status":500,"code":"INTERNAL_ERROR","message":"an internal error occurred"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(body, '\n'))
}
