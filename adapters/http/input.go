package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// The boundary rule: no text the API reads may hold a NUL character or be
// anything but valid UTF-8, and no JSON object may repeat a key. It is
// checked here, once, on the raw request (encoding/json would silently turn
// invalid UTF-8 and lone surrogate escapes into U+FFFD, and keep the last
// of two equal keys), and refused with 400 INVALID_INPUT naming the field:
// the JSON dot path (`destination.accountId`, `roles[0]`), the query
// parameter, the path parameter or the header.

// maxJSONDepth bounds how deeply a JSON body may nest objects and arrays.
const maxJSONDepth = 64

// Messages of the boundary rule.
const (
	msgNUL       = "must not contain a NUL character"
	msgUTF8      = "must be valid UTF-8"
	msgSurrogate = "must not contain an unpaired UTF-16 surrogate escape"
	msgDuplicate = "is given more than once"
	msgDepth     = "nests objects and arrays more than 64 levels deep"
	msgRange     = "is a number too large to read (beyond ±1.8e308)"
)

// alwaysReadHeaders are the headers read outside any operation's declared
// parameters (which checkRequest also covers, as operations register).
var alwaysReadHeaders = []string{"Authorization", "Content-Type", idempotencyHeader}

// checkText returns why s breaks the boundary rule, or "".
func checkText(s string) string {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0:
			return msgNUL
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return msgUTF8
			}
			i += size
		}
	}
	return ""
}

// printable is a name fit for an error body: NUL spelled \u0000, invalid
// UTF-8 replaced, and the empty name spelled "".
func printable(name string) string {
	if name == "" {
		return `""`
	}
	return strings.ReplaceAll(strings.ToValidUTF8(name, "\uFFFD"), "\x00", `\u0000`)
}

// noteHeaders remembers the header parameters an operation reads.
func (s *server) noteHeaders(op *huma.Operation) {
	for _, p := range op.Parameters {
		if p != nil && p.In == "header" {
			s.readHeaders[http.CanonicalHeaderKey(p.Name)] = true
		}
	}
}

// checkRequest applies the boundary rule to the request path, its query
// parameters (names and values) and the headers the API reads.
func (s *server) checkRequest(r *http.Request) *Error {
	if msg := checkText(r.URL.Path); msg != "" {
		return invalidFields(FieldError{Field: s.pathParam(r), Message: msg})
	}
	if q := r.URL.RawQuery; q != "" && needsQueryCheck(q) {
		// Only a query with escapes or non-ASCII bytes can decode to bad
		// text; parse errors are left to the operation.
		values, _ := url.ParseQuery(q)
		for name, vs := range values {
			if msg := checkText(name); msg != "" {
				return invalidFields(FieldError{Field: printable(name), Message: "parameter name " + msg})
			}
			for _, v := range vs {
				if msg := checkText(v); msg != "" {
					return invalidFields(FieldError{Field: printable(name), Message: msg})
				}
			}
		}
	}
	for _, name := range alwaysReadHeaders {
		if e := checkHeader(r, name); e != nil {
			return e
		}
	}
	for name := range s.readHeaders {
		if e := checkHeader(r, name); e != nil {
			return e
		}
	}
	return nil
}

func checkHeader(r *http.Request, name string) *Error {
	for _, v := range r.Header[name] {
		if msg := checkText(v); msg != "" {
			return invalidFields(FieldError{Field: name, Message: msg})
		}
	}
	return nil
}

func needsQueryCheck(q string) bool {
	for i := 0; i < len(q); i++ {
		if c := q[i]; c == '%' || c == 0 || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// pathParam names the path parameter holding bad text (the route's
// wildcard at that segment), or "path".
func (s *server) pathParam(r *http.Request) string {
	_, pattern := s.mux.Handler(r)
	if _, rest, ok := strings.Cut(pattern, " "); ok {
		pattern = rest
	}
	pat := strings.Split(strings.Trim(pattern, "/"), "/")
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	for i, seg := range segs {
		if i >= len(pat) || checkText(seg) == "" {
			continue
		}
		if p := pat[i]; strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			return strings.TrimSuffix(strings.Trim(p, "{}"), "...")
		}
	}
	return "path"
}

// checkBody applies the boundary rule to a request body: JSON in one pass
// over its bytes; the text fields of a multipart form (its files
// are binary and not checked).
func checkBody(r *http.Request, body []byte) *Error {
	if len(body) == 0 {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if len(ct) >= 10 && strings.EqualFold(ct[:10], "multipart/") {
		return checkMultipart(ct, body)
	}
	// Any other body is scanned as JSON (the only other format the API
	// decodes); one that is not JSON stops the scan at its first byte.
	if f := scanJSON(body); f != nil {
		return invalidFields(*f)
	}
	return nil
}

// checkMultipart checks a form's text fields and file names. A malformed
// form is left to the operation.
func checkMultipart(ct string, body []byte) *Error {
	_, params, err := mime.ParseMediaType(ct)
	if err != nil || params["boundary"] == "" {
		return nil
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			return nil
		}
		name := p.FormName()
		if msg := checkText(name); msg != "" {
			return invalidFields(FieldError{Field: printable(name), Message: "form field name " + msg})
		}
		if isFilePart(p) {
			if msg := checkText(p.FileName()); msg != "" {
				return invalidFields(FieldError{Field: printable(name), Message: "file name " + msg})
			}
			continue
		}
		v, err := io.ReadAll(io.LimitReader(p, int64(len(body))))
		if err != nil {
			return nil
		}
		if msg := checkText(string(v)); msg != "" {
			return invalidFields(FieldError{Field: printable(name), Message: msg})
		}
	}
}

// isFilePart tells a file (named, or of a type other than text) from a
// text field.
func isFilePart(p *multipart.Part) bool {
	ct := p.Header.Get("Content-Type")
	return p.FileName() != "" || ct != "" && !strings.HasPrefix(ct, "text/")
}

// scanJSON checks a JSON body in one pass: every string, value or key, is
// valid UTF-8 (no unpaired surrogate escape) without NUL; no object repeats
// a key; nesting is at most maxJSONDepth deep. It returns the first
// violation, or nil, also for a body that is not well-formed JSON (the
// decoder reports that).
func scanJSON(body []byte) *FieldError {
	sc := scanners.Get().(*jsonScanner)
	sc.b, sc.i, sc.keys = body, 0, sc.keys[:0]
	err := sc.value(0)
	sc.b = nil
	clear(sc.keys)
	scanners.Put(sc)
	if bad, ok := err.(*badJSON); ok {
		return &FieldError{Field: bad.field(), Message: bad.msg}
	}
	return nil
}

var scanners = sync.Pool{New: func() any { return &jsonScanner{} }}

type jsonScanner struct {
	b []byte
	i int
	// keys holds the keys of every open object, innermost last.
	keys [][]byte
}

// errSyntax stops the scan at malformed JSON.
var errSyntax = errors.New("malformed JSON")

// badJSON is a violation; path collects the segments ("name", "[0]")
// innermost first as the scan unwinds.
type badJSON struct {
	msg  string
	path []string
}

func (e *badJSON) Error() string { return e.field() + " " + e.msg }

func (e *badJSON) field() string {
	if len(e.path) == 0 {
		return "body"
	}
	var sb strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		seg := e.path[i]
		if sb.Len() > 0 && !strings.HasPrefix(seg, "[") {
			sb.WriteByte('.')
		}
		sb.WriteString(seg)
	}
	return sb.String()
}

func (e *badJSON) under(seg string) *badJSON {
	if seg == "" {
		seg = printable(seg)
	}
	e.path = append(e.path, seg)
	return e
}

func (sc *jsonScanner) space() {
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

func (sc *jsonScanner) value(depth int) error {
	sc.space()
	if sc.i >= len(sc.b) {
		return errSyntax
	}
	switch c := sc.b[sc.i]; {
	case c == '{' || c == '[':
		if depth >= maxJSONDepth {
			return &badJSON{msg: msgDepth}
		}
		if c == '{' {
			return sc.object(depth + 1)
		}
		return sc.array(depth + 1)
	case c == '"':
		_, err := sc.str(false)
		return err
	case c == 't':
		return sc.literal("true")
	case c == 'f':
		return sc.literal("false")
	case c == 'n':
		return sc.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		start := sc.i
	digits:
		for sc.i < len(sc.b) {
			switch c := sc.b[sc.i]; {
			case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
				sc.i++
			default:
				break digits
			}
		}
		return numberInRange(sc.b[start:sc.i])
	}
	return errSyntax
}

// numberInRange refuses a number beyond float64's range (1e400), which
// encoding/json would refuse without naming the field. Only a number with
// an exponent or of more than 308 digits can be; one that is not well
// formed is left to the decoder.
func numberInRange(lit []byte) error {
	if len(lit) <= 308 && !bytes.ContainsAny(lit, "eE") {
		return nil
	}
	if _, err := strconv.ParseFloat(string(lit), 64); errors.Is(err, strconv.ErrRange) {
		return &badJSON{msg: msgRange}
	}
	return nil
}

func (sc *jsonScanner) literal(lit string) error {
	if !bytes.HasPrefix(sc.b[sc.i:], []byte(lit)) {
		return errSyntax
	}
	sc.i += len(lit)
	return nil
}

// manyKeys is the key count above which an object's keys are compared
// through a map instead of one by one.
const manyKeys = 32

func (sc *jsonScanner) object(depth int) error {
	sc.i++ // {
	base := len(sc.keys)
	defer func() { sc.keys = sc.keys[:base] }()
	var seen map[string]struct{}
	sc.space()
	if sc.i < len(sc.b) && sc.b[sc.i] == '}' {
		sc.i++
		return nil
	}
	for {
		sc.space()
		if sc.i >= len(sc.b) || sc.b[sc.i] != '"' {
			return errSyntax
		}
		start := sc.i
		key, err := sc.str(true)
		if err != nil {
			if bad, ok := err.(*badJSON); ok {
				return bad.under(keyName(sc.b, start))
			}
			return err
		}
		if dup := sc.seen(base, key, &seen); dup {
			return (&badJSON{msg: msgDuplicate}).under(string(key))
		}
		sc.space()
		if sc.i >= len(sc.b) || sc.b[sc.i] != ':' {
			return errSyntax
		}
		sc.i++
		if err := sc.value(depth); err != nil {
			if bad, ok := err.(*badJSON); ok {
				return bad.under(string(key))
			}
			return err
		}
		if done, err := sc.next('}'); done || err != nil {
			return err
		}
	}
}

// next reads what follows a member of an object or array: a comma (more
// follow) or its closing byte (done).
func (sc *jsonScanner) next(closing byte) (done bool, err error) {
	sc.space()
	if sc.i >= len(sc.b) {
		return false, errSyntax
	}
	switch sc.b[sc.i] {
	case ',':
		sc.i++
		return false, nil
	case closing:
		sc.i++
		return true, nil
	}
	return false, errSyntax
}

// seen records key among the open object's keys (from base), reporting
// whether it was already there.
func (sc *jsonScanner) seen(base int, key []byte, set *map[string]struct{}) bool {
	if *set != nil {
		if _, ok := (*set)[string(key)]; ok {
			return true
		}
		(*set)[string(key)] = struct{}{}
		return false
	}
	for _, k := range sc.keys[base:] {
		if bytes.Equal(k, key) {
			return true
		}
	}
	sc.keys = append(sc.keys, key)
	if len(sc.keys)-base > manyKeys {
		*set = make(map[string]struct{}, 2*manyKeys)
		for _, k := range sc.keys[base:] {
			(*set)[string(k)] = struct{}{}
		}
	}
	return false
}

// keyName names the bad key whose string starts at b[start] (its quote):
// decoded, then made printable.
func keyName(b []byte, start int) string {
	end := start + 1
	for end < len(b) && b[end] != '"' {
		if b[end] == '\\' {
			end++
		}
		end++
	}
	var s string
	if end >= len(b) || json.Unmarshal(b[start:end+1], &s) != nil {
		s = string(b[start+1 : min(end, len(b))])
	}
	return printable(s)
}

func (sc *jsonScanner) array(depth int) error {
	sc.i++ // [
	sc.space()
	if sc.i < len(sc.b) && sc.b[sc.i] == ']' {
		sc.i++
		return nil
	}
	for n := 0; ; n++ {
		if err := sc.value(depth); err != nil {
			if bad, ok := err.(*badJSON); ok {
				return bad.under("[" + strconv.Itoa(n) + "]")
			}
			return err
		}
		if done, err := sc.next(']'); done || err != nil {
			return err
		}
	}
}

// str scans the string at sc.i (its opening quote). For a key it returns
// the decoded text (the raw bytes unless the key holds escapes).
func (sc *jsonScanner) str(key bool) ([]byte, error) {
	sc.i++ // "
	start, escaped := sc.i, false
	for sc.i < len(sc.b) {
		c := sc.b[sc.i]
		switch {
		case c == '"':
			raw := sc.b[start:sc.i]
			sc.i++
			if !key || !escaped {
				return raw, nil
			}
			var s string
			if err := json.Unmarshal(sc.b[start-1:sc.i], &s); err != nil {
				return nil, errSyntax
			}
			return []byte(s), nil
		case c == '\\':
			escaped = true
			if sc.i+1 >= len(sc.b) {
				return nil, errSyntax
			}
			if sc.b[sc.i+1] != 'u' {
				switch sc.b[sc.i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					sc.i += 2
					continue
				}
				return nil, errSyntax
			}
			r, ok := hex4(sc.b, sc.i+2)
			if !ok {
				return nil, errSyntax
			}
			sc.i += 6
			switch {
			case r == 0:
				return nil, &badJSON{msg: msgNUL}
			case r >= 0xD800 && r < 0xDC00:
				if sc.i+1 < len(sc.b) && sc.b[sc.i] == '\\' && sc.b[sc.i+1] == 'u' {
					if r2, ok := hex4(sc.b, sc.i+2); ok && r2 >= 0xDC00 && r2 < 0xE000 {
						sc.i += 6
						continue
					}
				}
				return nil, &badJSON{msg: msgSurrogate}
			case r >= 0xDC00 && r < 0xE000:
				return nil, &badJSON{msg: msgSurrogate}
			}
		case c == 0:
			return nil, &badJSON{msg: msgNUL}
		case c < 0x20:
			return nil, errSyntax
		case c < utf8.RuneSelf:
			sc.i++
		default:
			r, size := utf8.DecodeRune(sc.b[sc.i:])
			if r == utf8.RuneError && size == 1 {
				return nil, &badJSON{msg: msgUTF8}
			}
			sc.i += size
		}
	}
	return nil, errSyntax
}

// hex4 reads the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
