package platforms_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/testkit"
)

func TestAllows(t *testing.T) {
	for _, tc := range []struct {
		perms []string
		want  string
		ok    bool
	}{
		{[]string{"VIEW"}, "VIEW", true},
		{[]string{"TRANSACT"}, "VIEW", true},
		{[]string{"MANAGE"}, "VIEW", true},
		{nil, "VIEW", false},
		{[]string{"VIEW"}, "TRANSACT", false},
		{[]string{"MANAGE"}, "TRANSACT", false},
		{[]string{"TRANSACT"}, "MANAGE", false},
		{[]string{"VIEW", "TRANSACT", "MANAGE"}, "MANAGE", true},
	} {
		assert.Equal(t, tc.ok, platforms.Allows(tc.perms, tc.want), "%v needs %s", tc.perms, tc.want)
	}
}

func TestTokenLifecycle(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	p, err := e.svc.Create(ctx, "Acme", "", []string{"USD"})
	require.NoError(t, err)
	first, firstSecret, err := e.svc.IssueCredential(ctx, p.ID, "cli")
	require.NoError(t, err)
	c, err := e.svc.Authenticate(ctx, first, firstSecret)
	require.NoError(t, err)
	assert.Equal(t, platforms.AllPermissions, c.Permissions, "the CLI's credential may do everything")
	assert.True(t, strings.HasPrefix(c.ID, "Token:"), c.ID)

	e.clock.Advance(time.Second)
	nt, err := e.svc.CreateToken(ctx, p.ID, "  reports  ", []string{"MANAGE", "VIEW", "MANAGE"}, platforms.AllPermissions)
	require.NoError(t, err)
	assert.Equal(t, "reports", nt.Token.Name)
	assert.Equal(t, []string{"VIEW", "MANAGE"}, nt.Token.Permissions)
	assert.Equal(t, e.clock.Now(), nt.Token.CreatedAt)
	got, err := e.svc.GetToken(ctx, p.ID, nt.Token.ID)
	require.NoError(t, err)
	assert.Equal(t, nt.Token.ClientID, got.ClientID)

	// Deleting: the token no longer authenticates, is not found, and its
	// deletion time comes from the clock.
	e.clock.Advance(time.Second)
	del, err := e.svc.DeleteToken(ctx, p.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, e.clock.Now(), *del.DeletedAt)
	_, err = e.svc.Authenticate(ctx, first, firstSecret)
	testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")
	_, err = e.svc.GetToken(ctx, p.ID, c.ID)
	testkit.RequireFault(t, err, fault.KindNotFound, "TOKEN_NOT_FOUND")
	_, err = e.svc.DeleteToken(ctx, p.ID, c.ID)
	testkit.RequireFault(t, err, fault.KindNotFound, "TOKEN_NOT_FOUND")

	// The last MANAGE token stays.
	_, err = e.svc.CreateToken(ctx, p.ID, "viewer", []string{"VIEW", "TRANSACT"}, platforms.AllPermissions)
	require.NoError(t, err)
	_, err = e.svc.DeleteToken(ctx, p.ID, nt.Token.ID)
	f := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT")
	assert.Equal(t, "tokenId", f.Fields[0].Field)

	// Another platform sees none of it.
	q, err := e.svc.Create(ctx, "Other", "", []string{"USD"})
	require.NoError(t, err)
	_, err = e.svc.GetToken(ctx, q.ID, nt.Token.ID)
	testkit.RequireFault(t, err, fault.KindNotFound, "TOKEN_NOT_FOUND")
	_, err = e.svc.DeleteToken(ctx, q.ID, nt.Token.ID)
	testkit.RequireFault(t, err, fault.KindNotFound, "TOKEN_NOT_FOUND")
	page, err := e.svc.ListTokens(ctx, q.ID, platforms.TokenQuery{})
	require.NoError(t, err)
	assert.Zero(t, page.Total)
	page, err = e.svc.ListTokens(ctx, p.ID, platforms.TokenQuery{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, 2, page.Total)
	assert.True(t, page.HasMore)
	_, err = e.svc.ListTokens(ctx, p.ID, platforms.TokenQuery{Limit: 101})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT")
}

func TestCreateTokenValidation(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	p, err := e.svc.Create(ctx, "Acme", "", []string{"USD"})
	require.NoError(t, err)
	for _, tc := range []struct {
		name, field string
		perms       []string
	}{
		{"", "name", []string{"VIEW"}},
		{strings.Repeat("é", 256), "name", []string{"VIEW"}},
		{"x", "permissions", nil},
		{"x", "permissions[1]", []string{"VIEW", "ADMIN"}},
	} {
		_, err := e.svc.CreateToken(ctx, p.ID, tc.name, tc.perms, platforms.AllPermissions)
		f := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT")
		assert.Equal(t, tc.field, f.Fields[0].Field)
	}
	_, err = e.svc.CreateToken(ctx, "Platform:nope", "x", []string{"VIEW"}, platforms.AllPermissions)
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
}

// A configured credential deleted through the API is not re-added.
func TestAddCredentialAfterDeletion(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	p, err := e.svc.Create(ctx, "Acme", "", []string{"USD"})
	require.NoError(t, err)
	const token, secret = "configured-token", "a-configured-secret-0123"
	require.NoError(t, e.svc.AddCredential(ctx, p.ID, "configured", token, secret))
	_, err = e.svc.CreateToken(ctx, p.ID, "manager", []string{"MANAGE"}, platforms.AllPermissions)
	require.NoError(t, err)
	c, err := e.svc.Authenticate(ctx, token, secret)
	require.NoError(t, err)
	_, err = e.svc.DeleteToken(ctx, p.ID, c.ID)
	require.NoError(t, err)
	require.ErrorIs(t, e.svc.AddCredential(ctx, p.ID, "configured", token, secret), platforms.ErrCredentialTaken)
	_, err = e.svc.Authenticate(ctx, token, secret)
	testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")
}
