package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/core/invitations"
	"github.com/corridorpay/corridor/ports"
)

func newInvitationHarness(t *testing.T) *apiHarness {
	t.Helper()
	h := memoryHarness(t, true)
	svc := invitations.New(h.store, h.clock, h.ids, h.log)
	h.serve(httpapi.Deps{Invitations: svc})
	return h
}

// inviter creates a customer of tn with the UMA address uma.
func (h *apiHarness) inviter(tn tenant, uma string) {
	h.t.Helper()
	res := h.post(tn, "/customers", `{"customerType":"INDIVIDUAL","region":"US","umaAddress":"`+uma+`"}`)
	require.Equal(h.t, http.StatusCreated, res.status, string(res.body))
}

func (h *apiHarness) invite(tn tenant, body string) map[string]any {
	h.t.Helper()
	res := h.post(tn, "/invitations", body)
	require.Equal(h.t, http.StatusCreated, res.status, string(res.body))
	return res.object(h.t)
}

func TestInvitationLifecycle(t *testing.T) {
	h := newInvitationHarness(t)
	inviterP, inviteeP := h.tenant("USD"), h.tenant("EUR")
	h.inviter(inviterP, "$ana@example.test")
	expires := h.clock.Now().Add(time.Hour).Format(time.RFC3339)
	inv := h.invite(inviterP, `{"inviterUma":"$ana@example.test","firstName":"Ana","amountToSend":12550,"expiresAt":"`+expires+`"}`)
	code := inv["code"].(string)
	assert.Equal(t, "PENDING", inv["status"])
	assert.Equal(t, "https://example.test/invitations/"+code, inv["url"])
	assert.Equal(t, map[string]any{"amount": float64(12550), "currency": map[string]any{"code": "USD", "name": "United States Dollar", "symbol": "$", "decimals": float64(2)}}, inv["amountToSend"])
	assert.Equal(t, expires, inv["expiresAt"])
	assert.NotContains(t, inv, "claimedAt")
	assert.NotContains(t, inv, "inviteeUma")

	res := h.get(inviteeP, "/invitations/"+strings.ToLower(code))
	require.Equal(t, http.StatusOK, res.status, "another platform reads it, in any letter case")
	assert.Equal(t, inv, res.object(t))

	h.clock.Advance(time.Minute)
	res = h.post(inviteeP, "/invitations/"+code+"/claim", `{"inviteeUma":"$ben@other.example"}`)
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	claimed := res.object(t)
	assert.Equal(t, "CLAIMED", claimed["status"])
	assert.Equal(t, "$ben@other.example", claimed["inviteeUma"])
	assert.Equal(t, h.clock.Now().Format(time.RFC3339), claimed["claimedAt"])

	evs, _, err := h.store.Read().Events().List(context.Background(), ports.EventFilter{PlatformID: inviterP.platformID}, ports.Page{})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "INVITATION.CLAIMED", evs[0].Type)
	assert.Equal(t, code, evs[0].ResourceID)

	requireError(t, h.post(inviteeP, "/invitations/"+code+"/claim", `{"inviteeUma":"$eve@other.example"}`), http.StatusBadRequest, "INVITATION_ALREADY_CLAIMED")
	requireError(t, h.post(inviterP, "/invitations/"+code+"/cancel", ``), http.StatusBadRequest, "INVITATION_ALREADY_CLAIMED")
	evs, _, err = h.store.Read().Events().List(context.Background(), ports.EventFilter{PlatformID: inviterP.platformID}, ports.Page{})
	require.NoError(t, err)
	assert.Len(t, evs, 1, "failed claims record nothing")
}

func TestInvitationErrors(t *testing.T) {
	h := newInvitationHarness(t)
	a, b := h.tenant("USD"), h.tenant("USD")
	h.inviter(a, "$ana@example.test")
	newCode := func() string { return h.invite(a, `{"inviterUma":"$ana@example.test"}`)["code"].(string) }

	t.Run("cancel", func(t *testing.T) {
		code := newCode()
		requireError(t, h.post(b, "/invitations/"+code+"/cancel", ``), http.StatusForbidden, "FORBIDDEN")
		res := h.post(a, "/invitations/"+code+"/cancel", ``)
		require.Equal(t, http.StatusOK, res.status, string(res.body))
		assert.Equal(t, "CANCELLED", res.object(t)["status"])
		requireError(t, h.post(a, "/invitations/"+code+"/cancel", ``), http.StatusBadRequest, "INVITATION_CANCELLED")
		requireError(t, h.post(b, "/invitations/"+code+"/claim", `{"inviteeUma":"$ben@other.example"}`), http.StatusBadRequest, "INVITATION_CANCELLED")
	})
	t.Run("expired", func(t *testing.T) {
		expires := h.clock.Now().Add(time.Minute).Format(time.RFC3339)
		code := h.invite(a, `{"inviterUma":"$ana@example.test","expiresAt":"`+expires+`"}`)["code"].(string)
		h.clock.Advance(time.Minute)
		requireError(t, h.post(b, "/invitations/"+code+"/claim", `{"inviteeUma":"$ben@other.example"}`), http.StatusBadRequest, "EXPIRED")
		requireError(t, h.post(a, "/invitations/"+code+"/cancel", ``), http.StatusBadRequest, "EXPIRED")
		assert.Equal(t, "EXPIRED", h.get(a, "/invitations/"+code).object(t)["status"])
	})
	t.Run("not found", func(t *testing.T) {
		for _, code := range []string{"ABCDEFGHJKMN", "nope", strings.Repeat("A", 64)} {
			requireError(t, h.get(a, "/invitations/"+code), http.StatusNotFound, "INVITATION_NOT_FOUND")
			requireError(t, h.post(a, "/invitations/"+code+"/claim", `{"inviteeUma":"$ben@other.example"}`), http.StatusNotFound, "INVITATION_NOT_FOUND")
			requireError(t, h.post(a, "/invitations/"+code+"/cancel", ``), http.StatusNotFound, "INVITATION_NOT_FOUND")
		}
	})
	t.Run("uma addresses", func(t *testing.T) {
		requireError(t, h.post(a, "/invitations", `{"inviterUma":"ana@example.test"}`), http.StatusBadRequest, "INVALID_UMA_ADDRESS")
		requireError(t, h.post(a, "/invitations", `{"inviterUma":"$nobody@example.test"}`), http.StatusBadRequest, "INVALID_INPUT")
		requireError(t, h.post(b, "/invitations", `{"inviterUma":"$ana@example.test"}`), http.StatusBadRequest, "INVALID_INPUT")
		code := newCode()
		requireError(t, h.post(b, "/invitations/"+code+"/claim", `{"inviteeUma":"$BEN@other"}`), http.StatusBadRequest, "INVALID_UMA_ADDRESS")
		requireError(t, h.post(b, "/invitations/"+code+"/claim", `{"inviteeUma":"$ana@example.test"}`), http.StatusBadRequest, "INVALID_INPUT")
	})
	t.Run("not configured", func(t *testing.T) {
		ctx := context.Background()
		p, err := h.platforms.Create(ctx, "no domain", "", nil)
		require.NoError(t, err)
		token, secret, err := h.platforms.IssueCredential(ctx, p.ID, "test")
		require.NoError(t, err)
		c := tenant{platformID: p.ID, token: token, secret: secret}
		h.inviter(c, "$cy@example.test")
		requireError(t, h.post(c, "/invitations", `{"inviterUma":"$cy@example.test"}`), http.StatusBadRequest, "INVITATIONS_NOT_CONFIGURED")
	})
	t.Run("unauthenticated", func(t *testing.T) {
		code := newCode()
		for _, rq := range []request{
			{method: http.MethodPost, path: "/invitations", body: `{"inviterUma":"$ana@example.test"}`, hasBody: true},
			{method: http.MethodGet, path: "/invitations/" + code},
			{method: http.MethodPost, path: "/invitations/" + code + "/claim", body: `{"inviteeUma":"$ben@other.example"}`, hasBody: true},
			{method: http.MethodPost, path: "/invitations/" + code + "/cancel"},
		} {
			requireError(t, h.send(rq), http.StatusUnauthorized, "UNAUTHORIZED")
		}
		assert.Equal(t, "PENDING", h.get(a, "/invitations/"+code).object(t)["status"])
	})
}

// TestInvitationBadInput: wrong types, unknown fields, NUL, huge values
// and past times are 400s that create nothing.
func TestInvitationBadInput(t *testing.T) {
	h := newInvitationHarness(t)
	a := h.tenant("USD")
	h.inviter(a, "$ana@example.test")
	past := h.clock.Now().Add(-time.Second).Format(time.RFC3339)
	for _, body := range []string{
		``,
		`[]`,
		`{}`,
		`{"inviterUma":12}`,
		`{"inviterUma":null}`,
		`{"inviterUma":"$ana@example.test","amountToSend":"12"}`,
		`{"inviterUma":"$ana@example.test","amountToSend":12.5}`,
		`{"inviterUma":"$ana@example.test","amountToSend":0}`,
		`{"inviterUma":"$ana@example.test","amountToSend":-1}`,
		`{"inviterUma":"$ana@example.test","amountToSend":9000000000000001}`,
		`{"inviterUma":"$ana@example.test","amountToSend":9223372036854775808}`,
		`{"inviterUma":"$ana@example.test","amountToSend":1e300}`,
		`{"inviterUma":"$ana@example.test","expiresAt":"tomorrow"}`,
		`{"inviterUma":"$ana@example.test","expiresAt":"` + past + `"}`,
		`{"inviterUma":"$ana@example.test","firstName":"` + strings.Repeat("a", 256) + `"}`,
		`{"inviterUma":"$ana@example.test","firstName":"A\u0000na"}`,
		`{"inviterUma":"$ana@example.test\u0000"}`,
		`{"inviterUma":"` + strings.Repeat("a", 1<<16) + `"}`,
		`{"inviterUma":"$ana@example.test","inviteeUma":"$ben@other.example"}`,
		`{"inviterUma":"$ana@example.test","InviterUma":"$ana@example.test"}`,
		`{"inviterUma":"$ana@example.test","inviterUma":"$ana@example.test"}`,
	} {
		res := h.post(a, "/invitations", body)
		assert.Equalf(t, http.StatusBadRequest, res.status, "%.80s: %s", body, res.body)
	}
	code := h.invite(a, `{"inviterUma":"$ana@example.test"}`)["code"].(string)
	for _, body := range []string{
		``, `{}`, `{"inviteeUma":7}`, `{"inviteeUma":"$ben@other.example","extra":1}`,
		`{"inviteeUma":"$ben@other.example\u0000"}`, `{"inviteeUma":"` + strings.Repeat("b", 300) + `"}`,
	} {
		res := h.post(a, "/invitations/"+code+"/claim", body)
		assert.Equalf(t, http.StatusBadRequest, res.status, "%.80s: %s", body, res.body)
	}
	assert.Equal(t, "PENDING", h.get(a, "/invitations/"+code).object(t)["status"])
	res := h.get(a, "/invitations/"+strings.Repeat("A", 65))
	assert.Equal(t, http.StatusBadRequest, res.status, "an over-long code is refused before the core")
	res = h.get(a, "/invitations/"+fmt.Sprintf("%s%%00", code[:11]))
	assert.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, res.status)
}

// TestInvitationIdempotencyKey: like every POST, a create retried with its
// key answers the first invitation instead of making a second.
func TestInvitationIdempotencyKey(t *testing.T) {
	h := newInvitationHarness(t)
	a := h.tenant("USD")
	h.inviter(a, "$ana@example.test")
	first := h.post(a, "/invitations", `{"inviterUma":"$ana@example.test"}`, "Idempotency-Key", "inv-1")
	require.Equal(t, http.StatusCreated, first.status, string(first.body))
	again := h.post(a, "/invitations", `{"inviterUma":"$ana@example.test"}`, "Idempotency-Key", "inv-1")
	require.Equal(t, http.StatusCreated, again.status)
	assert.Equal(t, first.body, again.body)
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	requireError(t, h.post(a, "/invitations", `{"inviterUma":"$ana@example.test","firstName":"X"}`, "Idempotency-Key", "inv-1"),
		http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
}
