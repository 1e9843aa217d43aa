package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// Cursors are opaque to clients: base64url of "v1|<createdAt unix nanos>|<id>"
// followed by an HMAC-SHA256 tag under the server's cursor key, so a client
// cannot forge or edit a position.
const cursorVersion = "v1"

func cursorTag(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("corridor-cursor|"))
	m.Write(payload)
	return m.Sum(nil)
}

// scopedCursorKey derives the cursor key of one list and its filters, so a
// cursor sent to another list (or with other filters) is refused (400
// cursor): HMAC-SHA256 under key of the scope parts joined with "|".
func scopedCursorKey(key []byte, scope ...string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(strings.Join(scope, "|")))
	return m.Sum(nil)
}

// encodeCursor makes the opaque cursor for position p.
func encodeCursor(key []byte, p ports.Position) string {
	payload := []byte(cursorVersion + "|" + strconv.FormatInt(p.CreatedAt.UnixNano(), 10) + "|" + p.ID)
	return base64.RawURLEncoding.EncodeToString(append(payload, cursorTag(key, payload)...))
}

// decodeCursor checks and opens a cursor made by encodeCursor. Anything
// else is a 400 naming `cursor`.
func decodeCursor(key []byte, s string) (*ports.Position, error) {
	bad := fault.Invalid("cursor", "is not a cursor this API returned")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) <= sha256.Size {
		return nil, bad
	}
	payload, tag := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if !hmac.Equal(tag, cursorTag(key, payload)) {
		return nil, bad
	}
	parts := strings.SplitN(string(payload), "|", 3)
	if len(parts) != 3 || parts[0] != cursorVersion || parts[2] == "" {
		return nil, bad
	}
	nanos, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return nil, bad
	}
	return &ports.Position{CreatedAt: time.Unix(0, nanos).UTC(), ID: parts[2]}, nil
}

// listCursors are one list's cursors, signed under a key of that list's
// own (scopedCursorKey of the list's name, and of the filters and order a
// cursor is only valid with): a list refuses another list's cursor with a
// 400 naming cursor. Every list makes its own (cursorsOf); there are no
// cursors of no list.
type listCursors struct{ key []byte }

// cursorsOf is the cursors of the list named by scope (its name first).
func cursorsOf(d Deps, scope ...string) listCursors {
	return listCursors{key: scopedCursorKey(d.CursorKey, scope...)}
}

// decode opens a cursor of this list (400 naming cursor otherwise).
func (c listCursors) decode(s string) (*ports.Position, error) { return decodeCursor(c.key, s) }

// encode is this list's cursor for position p.
func (c listCursors) encode(p ports.Position) string { return encodeCursor(c.key, p) }

// page builds a store page from a list request's limit and cursor.
func (c listCursors) page(limit int, cursor string) (ports.Page, error) {
	page := ports.Page{Limit: limit}
	if cursor != "" {
		pos, err := c.decode(cursor)
		if err != nil {
			return ports.Page{}, apiError(err)
		}
		page.After = pos
	}
	return page, nil
}

// next is the cursor of the page after one ending at next.
func (c listCursors) next(hasMore bool, next *ports.Position) string {
	if !hasMore || next == nil {
		return ""
	}
	return c.encode(*next)
}

// window is a pair of inclusive time bounds of a list's query.
type window struct {
	fromName string
	from     time.Time
	toName   string
	to       time.Time
}

// checkWindows refuses a window whose lower bound is after its upper one
// (400 naming the lower bound), as GET /transactions does, rather than
// answering an empty list that looks like "nothing happened".
func checkWindows(ws ...window) error {
	var errs fault.Collector
	for _, w := range ws {
		if !w.from.IsZero() && !w.to.IsZero() && w.from.After(w.to) {
			errs.Add(w.fromName, "must not be after "+w.toName)
		}
	}
	if err := errs.Err(); err != nil {
		return apiError(err)
	}
	return nil
}
