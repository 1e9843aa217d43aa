package main

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Requests that race to delete (or replace) the same resource: one wins,
// the others find nothing (404), none fails with a 500; on both backends.
func TestConcurrentDeletesFindNothing(t *testing.T) {
	onAPIBackends(t, func(t *testing.T, env *apiEnv, a apiTarget) {
		p := newPayer(t, a, "racing-deletes@example.com")
		document := func() string {
			t.Helper()
			body, ct := documentForm(t, p.customer)
			r := a.do(t, 0, "POST", "/documents", string(body), "Content-Type", ct)
			require.Equal(t, 201, r.status, "%s", r.body)
			return r.json(t)["id"].(string)
		}
		race := func(reqs []func() *http.Request) map[int]int {
			t.Helper()
			codes := make([]int, len(reqs))
			var wg sync.WaitGroup
			for i, mk := range reqs {
				wg.Go(func() {
					resp, err := http.DefaultClient.Do(mk())
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					codes[i] = resp.StatusCode
				})
			}
			wg.Wait()
			count := map[int]int{}
			for _, c := range codes {
				count[c]++
			}
			return count
		}
		request := func(method, path string, body []byte, ct string) func() *http.Request {
			return func() *http.Request {
				req, _ := http.NewRequest(method, a.bases[0]+BasePath+path, bytes.NewReader(body))
				req.Header.Set("Authorization", a.auth)
				if ct != "" {
					req.Header.Set("Content-Type", ct)
				}
				return req
			}
		}
		const n = 16
		for round := range 3 {
			var deletes []func() *http.Request
			for range n {
				deletes = append(deletes, request("DELETE", "/customers/external-accounts/"+p.external, nil, ""))
			}
			got := race(deletes)
			assert.Equal(t, map[int]int{204: 1, 404: n - 1}, got, "external account, round %d", round)
			p = newPayer(t, a, fmt.Sprintf("racing-deletes-%d@example.com", round))

			doc := document()
			deletes = deletes[:0]
			for range n {
				deletes = append(deletes, request("DELETE", "/documents/"+doc, nil, ""))
			}
			got = race(deletes)
			assert.Equal(t, map[int]int{204: 1, 404: n - 1}, got, "document, round %d", round)

			doc = document()
			body, ct := documentForm(t, "")
			var mixed []func() *http.Request
			for range n / 2 {
				mixed = append(mixed, request("PUT", "/documents/"+doc, body, ct), request("DELETE", "/documents/"+doc, nil, ""))
			}
			got = race(mixed)
			assert.Equal(t, 1, got[204], "one delete wins, round %d: %v", round, got)
			assert.Zero(t, got[500], "no 500, round %d: %v", round, got)
			assert.Equal(t, n, got[200]+got[204]+got[404], "round %d: %v", round, got)
		}
	})
}

// documentForm is a document upload (holder "" for a replacement's form)
// and its content type.
func documentForm(t *testing.T, holder string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if holder != "" {
		require.NoError(t, mw.WriteField("documentHolder", holder))
	}
	require.NoError(t, mw.WriteField("documentType", "PASSPORT"))
	require.NoError(t, mw.WriteField("country", "US"))
	fw, err := mw.CreateFormFile("file", "passport.pdf")
	require.NoError(t, err)
	_, _ = fw.Write([]byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"))
	require.NoError(t, mw.Close())
	return b.Bytes(), mw.FormDataContentType()
}
