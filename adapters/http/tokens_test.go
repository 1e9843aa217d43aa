package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/platforms"
)

// tokenBody is an ApiToken as answered.
type tokenBody struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Permissions  []string `json:"permissions"`
	ClientID     string   `json:"clientId"`
	ClientSecret *string  `json:"clientSecret"`
	CreatedAt    string   `json:"createdAt"`
	UpdatedAt    string   `json:"updatedAt"`
}

type tokenListBody struct {
	Data       []tokenBody `json:"data"`
	HasMore    bool        `json:"hasMore"`
	NextCursor string      `json:"nextCursor"`
	TotalCount int         `json:"totalCount"`
}

// tokenWith is a token of the tenant's platform with only perms.
func (h *apiHarness) tokenWith(tn tenant, perms ...string) tenant {
	h.t.Helper()
	t, err := h.platforms.CreateToken(context.Background(), tn.platformID, "only "+strings.Join(perms, "+"), perms, platforms.AllPermissions)
	require.NoError(h.t, err)
	return tenant{platformID: tn.platformID, token: t.Token.ClientID, secret: t.Secret}
}

// createToken creates a token over the API and returns it and its
// credential.
func createToken(t *testing.T, h *apiHarness, tn tenant, body string) (tokenBody, tenant) {
	t.Helper()
	r := h.post(tn, "/tokens", body)
	require.Equalf(t, http.StatusCreated, r.status, "body %s", r.body)
	var tok tokenBody
	require.NoError(t, json.Unmarshal(r.body, &tok))
	require.NotNil(t, tok.ClientSecret)
	return tok, tenant{platformID: tn.platformID, token: tok.ClientID, secret: *tok.ClientSecret}
}

// A token grants only permissions it holds: a MANAGE token cannot make
// one that moves money (VIEW, which every permission includes, it may).
func TestCreateTokenGrantsOnlyWhatItHolds(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	manager := h.tokenWith(tn, "MANAGE")
	for _, body := range []string{
		`{"name":"payer","permissions":["TRANSACT"]}`,
		`{"name":"all","permissions":["VIEW","TRANSACT","MANAGE"]}`,
	} {
		r := h.post(manager, "/tokens", body)
		m := requireError(t, r, http.StatusForbidden, "FORBIDDEN")
		assert.Contains(t, m["message"], "lacks")
		errs := m["details"].(map[string]any)["errors"].([]any)
		assert.Equal(t, "permissions", errs[0].(map[string]any)["field"], body)
	}
	// What it holds it may grant.
	createToken(t, h, manager, `{"name":"reader","permissions":["VIEW"]}`)
	_, sub := createToken(t, h, manager, `{"name":"sub-manager","permissions":["VIEW","MANAGE"]}`)
	r := h.post(sub, "/tokens", `{"name":"payer","permissions":["TRANSACT"]}`)
	requireError(t, r, http.StatusForbidden, "FORBIDDEN")
	createToken(t, h, tn, `{"name":"payer","permissions":["TRANSACT"]}`)
}

func TestCreateTokenShowsTheSecretOnce(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	tok, cred := createToken(t, h, tn, `{"name":"reporting","permissions":["MANAGE","VIEW"]}`)
	assert.True(t, strings.HasPrefix(tok.ID, "Token:"), tok.ID)
	assert.Equal(t, "reporting", tok.Name)
	assert.Equal(t, []string{"VIEW", "MANAGE"}, tok.Permissions, "in canonical order")
	assert.NotEmpty(t, tok.ClientID)
	assert.NotContains(t, tok.ClientID, ":")
	assert.NotEmpty(t, *tok.ClientSecret)
	assert.Equal(t, tok.CreatedAt, tok.UpdatedAt)

	// The new credential works, and GET never shows the secret.
	got := decode[tokenBody](t, h.get(cred, "/tokens/"+tok.ID))
	assert.Nil(t, got.ClientSecret)
	assert.Equal(t, tok.ID, got.ID)
	assert.Equal(t, tok.ClientID, got.ClientID)
	assert.NotContains(t, string(h.get(tn, "/tokens/"+tok.ID).body), *tok.ClientSecret)
	list := h.get(tn, "/tokens")
	assert.NotContains(t, string(list.body), *tok.ClientSecret)
	assert.NotContains(t, string(list.body), "clientSecret")

	// Only the hash is stored.
	stored, err := h.store.Read().Platforms().CredentialByClientID(context.Background(), tok.ClientID)
	require.NoError(t, err)
	assert.NotContains(t, string(stored.SecretHash), *tok.ClientSecret)
	assert.Len(t, stored.SecretHash, 32)
}

func TestListTokensFiltersAndPages(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant() // its own token is the first
	var ids []string
	for _, name := range []string{"ci", "ops", "ci"} {
		h.clock.Advance(time.Minute)
		tok, _ := createToken(t, h, tn, `{"name":"`+name+`","permissions":["VIEW"]}`)
		ids = append(ids, tok.ID)
	}
	all := decode[tokenListBody](t, h.get(tn, "/tokens"))
	assert.Equal(t, 4, all.TotalCount)
	require.Len(t, all.Data, 4)
	assert.False(t, all.HasMore)
	assert.Equal(t, ids, []string{all.Data[1].ID, all.Data[2].ID, all.Data[3].ID}, "oldest first")

	ci := decode[tokenListBody](t, h.get(tn, "/tokens?name=ci"))
	assert.Equal(t, 2, ci.TotalCount)
	assert.Equal(t, []string{ids[0], ids[2]}, []string{ci.Data[0].ID, ci.Data[1].ID})

	after := decode[tokenListBody](t, h.get(tn, "/tokens?createdAfter="+all.Data[2].CreatedAt))
	assert.Equal(t, 2, after.TotalCount)
	before := decode[tokenListBody](t, h.get(tn, "/tokens?createdBefore="+all.Data[1].CreatedAt+"&updatedBefore="+all.Data[1].UpdatedAt))
	assert.Equal(t, 2, before.TotalCount)

	var walked []string
	path := "/tokens?limit=1"
	for range 10 {
		page := decode[tokenListBody](t, h.get(tn, path))
		require.Len(t, page.Data, 1)
		assert.Equal(t, 4, page.TotalCount)
		walked = append(walked, page.Data[0].ID)
		if !page.HasMore {
			assert.Empty(t, page.NextCursor)
			break
		}
		path = "/tokens?limit=1&cursor=" + page.NextCursor
	}
	assert.Equal(t, []string{all.Data[0].ID, ids[0], ids[1], ids[2]}, walked)

	requireError(t, h.get(tn, "/tokens?limit=0"), http.StatusBadRequest, "INVALID_INPUT", "limit")
	requireError(t, h.get(tn, "/tokens?cursor=nope"), http.StatusBadRequest, "INVALID_INPUT", "cursor")
	// A cursor belongs to its list: another list refuses it.
	first := decode[tokenListBody](t, h.get(tn, "/tokens?limit=1"))
	require.NotEmpty(t, first.NextCursor)
	requireError(t, h.get(tn, "/customers?cursor="+first.NextCursor), http.StatusBadRequest, "INVALID_INPUT", "cursor")
	requireError(t, h.get(tn, "/tokens?createdAfter=yesterday"), http.StatusBadRequest, "INVALID_INPUT", "createdAfter")
}

func TestDeletedTokenFailsItsNextRequest(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	tok, cred := createToken(t, h, tn, `{"name":"short-lived","permissions":["VIEW"]}`)
	// Used just before, so its verification is in the auth cache.
	ok(t, h.get(cred, "/tokens"), http.StatusOK)

	r := h.del(tn, "/tokens/"+tok.ID)
	require.Equalf(t, http.StatusNoContent, r.status, "body %s", r.body)
	assert.Empty(t, r.body)
	requireError(t, h.get(cred, "/tokens"), http.StatusUnauthorized, "UNAUTHORIZED")

	requireError(t, h.get(tn, "/tokens/"+tok.ID), http.StatusNotFound, "TOKEN_NOT_FOUND")
	requireError(t, h.del(tn, "/tokens/"+tok.ID), http.StatusNotFound, "TOKEN_NOT_FOUND")
	list := decode[tokenListBody](t, h.get(tn, "/tokens"))
	assert.Equal(t, 1, list.TotalCount, "deleted tokens are not listed")

	// A token may delete itself (another MANAGE token remains); its
	// very next request is refused.
	self, selfCred := createToken(t, h, tn, `{"name":"self","permissions":["MANAGE"]}`)
	ok(t, h.get(selfCred, "/tokens"), http.StatusOK)
	require.Equal(t, http.StatusNoContent, h.del(selfCred, "/tokens/"+self.ID).status)
	requireError(t, h.get(selfCred, "/tokens"), http.StatusUnauthorized, "UNAUTHORIZED")
}

func TestLastManageTokenCannotBeDeleted(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	list := decode[tokenListBody](t, h.get(tn, "/tokens"))
	require.Len(t, list.Data, 1)
	first := list.Data[0]
	assert.Equal(t, []string{"VIEW", "TRANSACT", "MANAGE"}, first.Permissions, "the CLI's credential has every permission")

	// Tokens without MANAGE do not count.
	createToken(t, h, tn, `{"name":"viewer","permissions":["VIEW","TRANSACT"]}`)
	m := requireError(t, h.del(tn, "/tokens/"+first.ID), http.StatusBadRequest, "INVALID_INPUT", "tokenId")
	assert.Contains(t, m["message"], "MANAGE")
	ok(t, h.get(tn, "/tokens"), http.StatusOK) // still usable

	manager, managerCred := createToken(t, h, tn, `{"name":"manager","permissions":["MANAGE"]}`)
	require.Equal(t, http.StatusNoContent, h.del(managerCred, "/tokens/"+first.ID).status)
	requireError(t, h.del(managerCred, "/tokens/"+manager.ID), http.StatusBadRequest, "INVALID_INPUT", "tokenId")
}

func TestTokensOfAnotherPlatformAreNotFound(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenant(), h.tenant()
	tok, _ := createToken(t, h, a, `{"name":"a's","permissions":["VIEW"]}`)
	requireError(t, h.get(b, "/tokens/"+tok.ID), http.StatusNotFound, "TOKEN_NOT_FOUND")
	requireError(t, h.del(b, "/tokens/"+tok.ID), http.StatusNotFound, "TOKEN_NOT_FOUND")
	requireError(t, h.get(b, "/tokens/Token:00000000-0000-0000-0000-000000000000"), http.StatusNotFound, "TOKEN_NOT_FOUND")
	list := decode[tokenListBody](t, h.get(b, "/tokens"))
	assert.Equal(t, 1, list.TotalCount, "b sees only its own token")
	assert.NotEqual(t, tok.ID, list.Data[0].ID)
	ok(t, h.get(a, "/tokens/"+tok.ID), http.StatusOK) // untouched
}

func TestCreateTokenBadInput(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	for _, tc := range []struct {
		name, body string
		fields     []string
	}{
		{"unknown permission", `{"name":"x","permissions":["ADMIN"]}`, []string{"permissions[0]"}},
		{"empty permissions", `{"name":"x","permissions":[]}`, []string{"permissions"}},
		{"missing permissions", `{"name":"x"}`, []string{"permissions"}},
		{"null permissions", `{"name":"x","permissions":null}`, []string{"permissions"}},
		{"repeated permission", `{"name":"x","permissions":["VIEW","VIEW"]}`, []string{"permissions"}},
		{"missing name", `{"permissions":["VIEW"]}`, []string{"name"}},
		{"empty name", `{"name":"","permissions":["VIEW"]}`, []string{"name"}},
		{"blank name", `{"name":"   ","permissions":["VIEW"]}`, []string{"name"}},
		{"huge name", `{"name":"` + strings.Repeat("n", 256) + `","permissions":["VIEW"]}`, []string{"name"}},
		{"name of the wrong type", `{"name":5,"permissions":["VIEW"]}`, []string{"name"}},
		{"permissions of the wrong type", `{"name":"x","permissions":"VIEW"}`, []string{"permissions"}},
		{"permission of the wrong type", `{"name":"x","permissions":[1]}`, []string{"permissions[0]"}},
		{"unknown field", `{"name":"x","permissions":["VIEW"],"expiresAt":"2030-01-01T00:00:00Z"}`, []string{"expiresAt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, h.post(tn, "/tokens", tc.body), http.StatusBadRequest, "INVALID_INPUT", tc.fields...)
		})
	}
	// Its answer carries a secret no store may keep, so it cannot be
	// replayed: a key is refused rather than ignored.
	r := h.post(tn, "/tokens", `{"name":"x","permissions":["VIEW"]}`, "Idempotency-Key", "k")
	requireError(t, r, http.StatusBadRequest, "INVALID_INPUT", "Idempotency-Key")
	list := decode[tokenListBody](t, h.get(tn, "/tokens"))
	assert.Equal(t, 1, list.TotalCount, "no refused request made a token")
	assert.Zero(t, h.idem.Len(), "nothing was stored under a key")
}

func TestTokenPermissionsAreEnforced(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant()
	viewer, transactor, manager := h.tokenWith(tn, "VIEW"), h.tokenWith(tn, "TRANSACT"), h.tokenWith(tn, "MANAGE")
	customer := `{"customerType":"INDIVIDUAL","region":"US"}`

	for _, who := range []tenant{viewer, transactor, manager} {
		ok(t, h.get(who, "/customers"), http.StatusOK) // every permission reads
		ok(t, h.get(who, "/tokens"), http.StatusOK)
	}
	for _, who := range []tenant{viewer, transactor} {
		m := requireError(t, h.post(who, "/customers", customer), http.StatusForbidden, "FORBIDDEN")
		assert.Contains(t, m["message"], "MANAGE")
		assert.Equal(t, "MANAGE", m["details"].(map[string]any)["requiredPermission"])
		requireError(t, h.post(who, "/tokens", `{"name":"x","permissions":["MANAGE"]}`), http.StatusForbidden, "FORBIDDEN")
	}
	ok(t, h.post(manager, "/customers", customer), http.StatusCreated)

	// Moving money: VIEW and MANAGE are refused before the body is read
	// (even an invalid one), TRANSACT reaches the operation.
	fund := fundPath(h.platformAccount(tn, "USD").ID)
	for _, who := range []tenant{viewer, manager} {
		m := requireError(t, h.post(who, fund, `{"amount":"lots"}`, "Idempotency-Key", "k1"), http.StatusForbidden, "FORBIDDEN")
		assert.Contains(t, m["message"], "TRANSACT")
	}
	// A refusal stores nothing under the key: a permitted retry runs.
	ok(t, h.post(transactor, fund, `{"amount":100}`, "Idempotency-Key", "k1"), http.StatusOK)
}
