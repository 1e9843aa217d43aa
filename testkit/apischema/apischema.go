// Package apischema checks the service's responses against the reference
// OpenAPI document (the public interface of the real-world service the
// spec abstracts), for the tests that drive the HTTP stack: every response
// a test produces is validated against the reference's schema for that
// operation and status, and a violation fails the test.
//
// The reference lives outside the repository and is never committed: it is
// found through CORRIDOR_REFERENCE_OPENAPI, or by walking up from the
// working directory for shared/reference/openapi.yaml, or in /work/shared.
// Where none finds it (a clone on another machine), Load returns a nil
// checker, whose Check reports nothing.
package apischema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	"github.com/pb33f/libopenapi/orderedmap"
)

// BasePath is the service's version prefix; the reference's server URL
// carries its own, which replaces it before validation.
const BasePath = "/2025-10-13"

// OwnRoutes are the service's routes the reference does not have (its own
// extensions), by path prefix, with why; their responses are not checked.
var OwnRoutes = map[string]string{
	BasePath + "/ledger":        "ledger reports: corridor's own (README: Ledger reports)",
	BasePath + "/openapi":       "the service's own OpenAPI document",
	BasePath + "/docs":          "the service's own docs page",
	"/healthz":                  "process health, not an API operation",
	"/readyz":                   "readiness, not an API operation",
	"/metrics":                  "Prometheus metrics, not an API operation",
	BasePath + "/webhooks":      "webhook events, their attempts and the signing key: corridor's own (README: Webhooks)",
	BasePath + "/no/such/route": "a route that does not exist (tests of 404s)",
}

// SpecCodes are error codes the spec requires where the reference's enum
// for that status lacks them (the spec is the contract): a body whose only
// violation is its code, and whose code is listed here, conforms.
var SpecCodes = map[string]string{
	"QUOTE_EXPIRED": "spec: executing an expired quote is 409 QUOTE_EXPIRED",
}

// KeyCodes are the codes of the service's Idempotency-Key answers, which
// neither the spec nor the reference describes (README: Idempotency): on an
// operation whose 409 or 422 the reference lists with a code enum (a
// quote's execution), they are its only violation, and conform as
// SpecCodes do.
var KeyCodes = map[string]string{
	"IDEMPOTENCY_KEY_IN_USE": "409: a request with the same key still runs",
	"IDEMPOTENCY_KEY_REUSED": "422: the key was used with another request",
}

// headerNames maps the spec's brand-neutral header names to the
// reference's (GAPS.md's conventions).
var headerNames = map[string]string{
	"Service-Wallet-Signature": "Grid-Wallet-Signature",
	"X-Service-Signature":      "X-Grid-Signature",
}

var (
	once      sync.Once
	shared    *Checker
	loadError error
	// validating serialises validations: the validator renders the
	// reference's schemas into shared state as it goes, and two at once
	// now and then fail with "circular reference detected during inline
	// rendering" (seen in TestRaceForBalance's parallel requests).
	validating sync.Mutex
)

// Checker validates responses; Checked and Violations count what it did.
type Checker struct {
	v validator.Validator
	// server is the reference's server URL (its path holds the version).
	server *url.URL
	// Checked counts responses validated; Skipped those of routes the
	// reference does not have; Undocumented those whose method or status
	// the reference does not list for the operation.
	Checked, Skipped, Undocumented atomic.Int64
	mu                             sync.Mutex
	operations                     map[string]bool
	// schemas are the reference's component schemas, for bodies no
	// operation answers with (webhooks: CheckComponent).
	schemas *orderedmap.Map[string, *base.SchemaProxy]
	// webhooks maps each webhook type to the schema of the reference's
	// webhook whose type enum lists it (webhooks.go).
	webhooks map[string]webhook
}

// Load returns the process's checker, built once (parsing the reference
// takes a while). It is nil, with a nil error, when the reference is not
// found.
func Load() (*Checker, error) {
	once.Do(func() {
		path := locate()
		if path == "" {
			return
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			loadError = err
			return
		}
		doc, err := libopenapi.NewDocument(raw)
		if err != nil {
			loadError = fmt.Errorf("apischema: parse %s: %w", path, err)
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			loadError = fmt.Errorf("apischema: build validator: %v", errs)
			return
		}
		model, merr := doc.BuildV3Model()
		if merr != nil || len(model.Model.Servers) == 0 {
			loadError = fmt.Errorf("apischema: the reference names no server: %v", merr)
			return
		}
		u, err := url.Parse(model.Model.Servers[0].URL)
		if err != nil {
			loadError = fmt.Errorf("apischema: server URL: %w", err)
			return
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		hooks, err := webhookSchemas(model.Model.Webhooks)
		if err != nil {
			loadError = fmt.Errorf("apischema: webhooks: %w", err)
			return
		}
		shared = &Checker{v: v, server: u, operations: map[string]bool{}, webhooks: hooks}
		if model.Model.Components != nil {
			shared.schemas = model.Model.Components.Schemas
		}
	})
	return shared, loadError
}

const workplaceReference = "/work/shared/reference/openapi.yaml"

// locate finds the reference document, or "".
func locate() string {
	if p := os.Getenv("CORRIDOR_REFERENCE_OPENAPI"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	for err == nil {
		p := filepath.Join(dir, "shared", "reference", "openapi.yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	// The workplace's shared folder, for a clone made elsewhere.
	if _, err := os.Stat(workplaceReference); err == nil {
		return workplaceReference
	}
	return ""
}

// IsOwn reports whether path is one of the service's own routes
// (OwnRoutes).
func IsOwn(path string) bool {
	for prefix := range OwnRoutes {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// referenceURL is u (a request URL under BasePath) on the reference's
// server.
func (c *Checker) referenceURL(u url.URL) *url.URL {
	u.Scheme, u.Host, u.RawPath = c.server.Scheme, c.server.Host, ""
	u.Path = c.server.Path + strings.TrimPrefix(u.Path, BasePath)
	return &u
}

// Check validates one response to req (method and URL are what matter)
// and returns the violations, each a line naming the operation and the
// reason; nil when the response conforms or its route is the service's own.
func (c *Checker) Check(req *http.Request, status int, header http.Header, body []byte) []string {
	if c == nil {
		return nil
	}
	path := req.URL.Path
	if IsOwn(path) || !strings.HasPrefix(path, BasePath+"/") {
		c.Skipped.Add(1)
		return nil
	}
	vreq := &http.Request{Method: req.Method, URL: c.referenceURL(*req.URL), Header: http.Header{}}
	for k, vs := range req.Header {
		if ref, ok := headerNames[http.CanonicalHeaderKey(k)]; ok {
			k = ref
		}
		vreq.Header[k] = vs
	}
	validate := func(body []byte) (bool, []*verrors.ValidationError) {
		resp := &http.Response{StatusCode: status, Header: header.Clone(), Body: io.NopCloser(bytes.NewReader(referenceBody(body))), Request: vreq}
		for brand, ref := range headerNames {
			if v := resp.Header.Values(brand); len(v) > 0 {
				resp.Header[ref] = v
				resp.Header.Del(brand)
			}
		}
		validating.Lock()
		defer validating.Unlock()
		return c.v.ValidateHttpResponse(vreq, resp)
	}
	ok, errs := validate(body)
	if !ok && undocumented(errs) {
		// A method the reference lacks on that path (405), or a status it
		// does not list for the operation: the spec's own answers (409
		// IDEMPOTENCY_KEY_IN_USE, 422 IDEMPOTENCY_KEY_REUSED, 413…, and any
		// 401 or 500), with no schema to check against.
		c.Undocumented.Add(1)
		return nil
	}
	c.Checked.Add(1)
	c.mu.Lock()
	c.operations[req.Method+" "+paramShape.ReplaceAllString(path, "{id}")] = true
	c.mu.Unlock()
	if ok || specCode(errs, body) {
		return nil
	}
	if alt, changed := referenceStatuses(body); changed {
		if ok, _ := validate(alt); ok {
			return nil
		}
	}
	var out []string
	for _, e := range errs {
		line := fmt.Sprintf("%s %s → %d: %s: %s", req.Method, path, status, e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			line += fmt.Sprintf("\n    at %s: %s", f.FieldPath, f.Reason)
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return append(out, "    body: "+truncate(string(body), 600))
}

// CheckComponent validates body against the reference's component schema
// name (a webhook's body, "IncomingPaymentWebhook"), returning its
// violations; an unknown name is one.
func (c *Checker) CheckComponent(name string, body []byte) []string {
	if c == nil {
		return nil
	}
	var proxy *base.SchemaProxy
	if c.schemas != nil {
		proxy = c.schemas.GetOrZero(name)
	}
	if proxy == nil {
		return []string{"the reference has no component schema " + name}
	}
	schema := proxy.Schema()
	if schema == nil {
		return []string{fmt.Sprintf("component schema %s: %v", name, proxy.GetBuildError())}
	}
	return validateBody(name, schema, body, nil)
}

// validateBody validates body (with the reference's field names) against
// schema and returns its violations, each a line led by label, less those
// at a field path allowed accepts (nil: none); nil when it conforms.
func validateBody(label string, schema *base.Schema, body []byte, allowed func(fieldPath string) bool) []string {
	validating.Lock()
	ok, errs := schema_validation.NewSchemaValidator().ValidateSchemaBytes(schema, referenceBody(body))
	validating.Unlock()
	if ok {
		return nil
	}
	var out []string
	for _, e := range errs {
		for _, f := range e.SchemaValidationErrors {
			if allowed == nil || !allowed(f.FieldPath) {
				out = append(out, fmt.Sprintf("%s: at %s: %s", label, f.FieldPath, f.Reason))
			}
		}
		if len(e.SchemaValidationErrors) == 0 {
			out = append(out, fmt.Sprintf("%s: %s: %s", label, e.Message, e.Reason))
		}
	}
	if len(out) == 0 {
		return nil
	}
	sort.Strings(out)
	out = slices.Compact(out)
	return append(out, "    body: "+truncate(string(body), 600))
}

// undocumented reports whether every error says the reference has no
// such operation or no such status for it (nothing to validate against).
func undocumented(errs []*verrors.ValidationError) bool {
	for _, e := range errs {
		if !pathMissing(e) && !(strings.Contains(e.Message, "response code '") && strings.Contains(e.Message, "does not exist")) {
			return false
		}
	}
	return len(errs) > 0
}

// pathMissing reports whether e says the reference has no such path (or
// no such method on it).
func pathMissing(e *verrors.ValidationError) bool {
	return strings.Contains(e.Message, "Path '") && strings.HasSuffix(e.Message, "not found")
}

// paramShape is an id segment ("Customer:…", "InternalAccount:missing").
var paramShape = regexp.MustCompile(`/[A-Za-z]+:[^/]*`)

// Operations counts the distinct operations (method and path, ids
// folded) checked.
func (c *Checker) Operations() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.operations)
}

// Has reports whether the reference has an operation for method on path
// (a request path under BasePath, ids filled in).
func (c *Checker) Has(method, path string) bool {
	req := &http.Request{Method: method, URL: c.referenceURL(url.URL{Path: path}), Header: http.Header{}}
	validating.Lock()
	defer validating.Unlock()
	_, errs := c.v.ValidateHttpResponse(req, &http.Response{StatusCode: 599, Header: http.Header{},
		Body: io.NopCloser(bytes.NewReader(nil)), Request: req})
	return !slices.ContainsFunc(errs, pathMissing)
}

// specCode reports whether the only schema failure is the code of an error
// body, and that code is one of SpecCodes or KeyCodes.
func specCode(errs []*verrors.ValidationError, body []byte) bool {
	var e struct {
		Code string `json:"code"`
	}
	if json.Unmarshal(body, &e) != nil || (SpecCodes[e.Code] == "" && KeyCodes[e.Code] == "") {
		return false
	}
	for _, ve := range errs {
		if len(ve.SchemaValidationErrors) == 0 {
			return false
		}
		for _, f := range ve.SchemaValidationErrors {
			if f.FieldPath != "$.code" {
				return false
			}
		}
	}
	return true
}

// referenceStatuses is body with each transaction's (an object whose type
// is INCOMING or OUTGOING) status among SpecStatuses made FAILED, a status
// both of the reference's variants have, so that a response whose only
// departure is the spec's status conforms; changed is false when there
// was none.
func referenceStatuses(body []byte) (out []byte, changed bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return body, false
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if st, _ := x["status"].(string); SpecStatuses[st] != "" && (x["type"] == "INCOMING" || x["type"] == "OUTGOING") {
				x["status"], changed = "FAILED", true
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	if !changed {
		return body, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body, false
	}
	return out, true
}

// bodyNames maps the spec's neutral field names to the reference's
// (GAPS.md's conventions: the rate fields).
var bodyNames = strings.NewReplacer(`"serviceApi`, `"gridApi`)

// referenceBody is the response body with the reference's field names.
func referenceBody(b []byte) []byte {
	if !bytes.Contains(b, []byte(`"serviceApi`)) {
		return b
	}
	return []byte(bodyNames.Replace(string(b)))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Verify fails t when a response does not match the reference's schema
// for its operation and status (nothing is checked where the reference is
// not on the machine).
func Verify(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatalf("apischema: %v", err)
	}
	for _, v := range c.Check(req, status, header, body) {
		t.Errorf("response does not match the reference: %s", v)
	}
}
