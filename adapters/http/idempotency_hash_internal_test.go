package httpapi

import (
	"bytes"
	"mime/multipart"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A request's hash reads a JSON body in its canonical form, and still
// matches a record stored with the hash of the exact bytes (as every
// record was before the canonical form).
func TestRequestHashCanonicalAndRaw(t *testing.T) {
	r := httptest.NewRequest("POST", "/2025-10-13/transfer-out", nil)
	hash := func(body string) requestHash { return hashOf(r, []byte(body)) }

	firstBody := []byte(`{"source":{"accountId":"a"},"amount":5}`)
	first := hashOf(r, firstBody)
	for _, same := range []string{`{"amount":5,"source":{"accountId":"a"}}`, "{ \"source\" : { \"accountId\": \"a\" },\n \"amount\": 5 }\n"} {
		assert.True(t, hash(same).matches(first.canonical), same)
	}
	for _, other := range []string{`{"source":{"accountId":"a"},"amount":6}`, `{"source":{"accountId":"a"},"amount":5.0}`,
		`{"source":{"accountId":"b"},"amount":5}`, `{"source":{"accountId":"a"}}`} {
		assert.False(t, hash(other).matches(first.canonical), other)
	}
	// A record stored with the raw hash: the same bytes match it.
	raw := hashParts(r, firstBody)
	assert.True(t, first.matches(raw))
	assert.NotEqual(t, raw, first.canonical)

	// Not one JSON value: compared as bytes.
	for _, body := range []string{`{"amount":5`, `{"a":1}{"b":2}`, `amount=5`, ``} {
		assert.Equal(t, hashParts(r, []byte(body)), hash(body).canonical, body)
	}
	// Another path or query is another request.
	q := httptest.NewRequest("POST", "/2025-10-13/transfer-out?x=1", nil)
	assert.False(t, hashOf(q, []byte(`{"amount":5}`)).matches(hash(`{"amount":5}`).canonical))
}

// A multipart form is the same request whatever boundary the client drew
// for it; another field value, file name or file content is another one.
func TestRequestHashMultipartIgnoresTheBoundary(t *testing.T) {
	form := func(boundary, holder, filename, content string) requestHash {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		require.NoError(t, mw.SetBoundary(boundary))
		require.NoError(t, mw.WriteField("documentHolder", holder))
		require.NoError(t, mw.WriteField("documentType", "PASSPORT"))
		fw, err := mw.CreateFormFile("file", filename)
		require.NoError(t, err)
		_, _ = fw.Write([]byte(content))
		require.NoError(t, mw.Close())
		r := httptest.NewRequest("POST", "/2025-10-13/documents", nil)
		r.Header.Set("Content-Type", mw.FormDataContentType())
		return hashOf(r, b.Bytes())
	}
	first := form("aaaaaaaaaaaaaaaa", "Customer:1", "p.pdf", "%PDF-1.4 a")
	assert.True(t, form("bbbbbbbbbbbbbbbbbbbb", "Customer:1", "p.pdf", "%PDF-1.4 a").matches(first.canonical), "another boundary")
	for _, other := range []requestHash{
		form("bbbbbbbbbbbbbbbb", "Customer:2", "p.pdf", "%PDF-1.4 a"),
		form("bbbbbbbbbbbbbbbb", "Customer:1", "q.pdf", "%PDF-1.4 a"),
		form("bbbbbbbbbbbbbbbb", "Customer:1", "p.pdf", "%PDF-1.4 b"),
	} {
		assert.False(t, other.matches(first.canonical))
	}
}

// What the canonical form adds to a keyed request: a transfer-out's body
// hashed as it is, and read and re-encoded first.
func BenchmarkRequestHash(b *testing.B) {
	r := httptest.NewRequest("POST", "/2025-10-13/transfer-out", nil)
	body := []byte(`{"source":{"accountId":"InternalAccount:a12dcbd6-dced-4ec4-b756-3c3a9ea3d123"},` +
		`"destination":{"accountId":"ExternalAccount:e85dcbd6-dced-4ec4-b756-3c3a9ea3d965","paymentRail":"ACH"},"amount":12550}`)
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			hashParts(r, body)
		}
	})
	b.Run("canonical", func(b *testing.B) {
		for b.Loop() {
			hashOf(r, body)
		}
	})
}
