package platforms_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

type env struct {
	svc    *platforms.Service
	store  ports.Store
	ledger ports.LedgerStore
	clock  *testkit.FakeClock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clock := testkit.NewFakeClock(time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC))
	l := memory.NewLedger(clock)
	st := memory.NewStore(l)
	return &env{svc: platforms.New(st, l, clock, system.IDs{}), store: st, ledger: l, clock: clock}
}

func platformAccounts(t *testing.T, e *env, platformID string) []ports.InternalAccount {
	t.Helper()
	rows, total, err := e.store.Read().InternalAccounts().List(context.Background(),
		ports.InternalAccountFilter{PlatformID: platformID, PlatformOnly: true}, ports.Page{Limit: 100})
	require.NoError(t, err)
	require.Equal(t, len(rows), total)
	return rows
}

func TestCreateDefaultCurrencies(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	p, err := e.svc.Create(ctx, "  Acme  ", "acme.example", nil)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(p.ID, "Platform:"))
	assert.Equal(t, "Acme", p.Name)
	assert.Equal(t, "acme.example", p.UmaDomain)
	assert.Equal(t, platforms.DefaultCurrencies, p.Currencies)
	assert.Equal(t, e.clock.Now(), p.CreatedAt)

	got, err := e.svc.Get(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, p.ID, got.ID)

	accts := platformAccounts(t, e, p.ID)
	require.Len(t, accts, len(platforms.DefaultCurrencies))
	byCurrency := map[string]ports.InternalAccount{}
	ids := make([]string, 0, len(accts))
	for _, a := range accts {
		byCurrency[a.Currency] = a
		ids = append(ids, a.ID)
		assert.True(t, strings.HasPrefix(a.ID, "InternalAccount:"), a.ID)
		assert.Empty(t, a.CustomerID)
		assert.Equal(t, "ACTIVE", a.Status)
		assert.Equal(t, p.ID, a.PlatformID)
	}
	for _, c := range []string{"USD", "EUR", "MXN", "BRL", "GBP"} {
		assert.Equal(t, "INTERNAL_FIAT", byCurrency[c].Type, c)
	}
	for _, c := range []string{"USDC", "BTC"} {
		assert.Equal(t, "INTERNAL_CRYPTO", byCurrency[c].Type, c)
	}

	// Each internal account has its ledger account, same id and currency.
	las, err := e.ledger.Accounts(ctx, ids...)
	require.NoError(t, err)
	require.Len(t, las, len(ids))
	for i, la := range las {
		assert.Equal(t, ids[i], la.ID)
		assert.Equal(t, accts[i].Currency, la.Currency)
		assert.Equal(t, ledger.KindInternal, la.Kind)
		assert.Equal(t, ledger.DebitsMustNotExceedCredits, la.Flags)
		assert.Equal(t, p.ID, la.PlatformID)
	}

	// The currencies' system accounts exist, so sandbox funding has a source.
	for _, c := range platforms.DefaultCurrencies {
		sys, err := e.ledger.Account(ctx, ledger.SandboxFundingID(c))
		require.NoError(t, err, c)
		assert.Equal(t, ledger.KindSandboxFunding, sys.Kind)
	}
}

func TestCreateChosenCurrenciesAndValidation(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	p, err := e.svc.Create(ctx, "Two", "", []string{"JPY", "USDC"})
	require.NoError(t, err)
	accts := platformAccounts(t, e, p.ID)
	require.Len(t, accts, 2)

	tests := []struct {
		name       string
		pname      string
		currencies []string
		fields     []string
	}{
		{"empty name", " ", nil, []string{"name"}},
		{"unknown currency", "x", []string{"USD", "XXX"}, []string{"currencies[1]"}},
		{"duplicate currency", "x", []string{"USD", "USD"}, []string{"currencies[1]"}},
		{"everything wrong", "", []string{"usd"}, []string{"name", "currencies[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := e.svc.List(ctx)
			require.NoError(t, err)
			_, err = e.svc.Create(ctx, tt.pname, "", tt.currencies)
			f := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT")
			var fields []string
			for _, fe := range f.Fields {
				fields = append(fields, fe.Field)
			}
			assert.Equal(t, tt.fields, fields)
			after, err := e.svc.List(ctx)
			require.NoError(t, err)
			assert.Len(t, after, len(before), "a refused platform is not created")
		})
	}
}

func TestGetUnknownPlatform(t *testing.T) {
	_, err := newEnv(t).svc.Get(context.Background(), "Platform:nope")
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
}

func TestIssueCredentialAndAuthenticate(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	p, err := e.svc.Create(ctx, "Acme", "", []string{"USD"})
	require.NoError(t, err)

	tokenID, secret, err := e.svc.IssueCredential(ctx, p.ID, "server")
	require.NoError(t, err)
	assert.NotContains(t, tokenID, ":", "a Basic user name cannot contain ':'")
	raw, err := base64.RawURLEncoding.DecodeString(secret)
	require.NoError(t, err)
	assert.Len(t, raw, 32)

	// Only the hash is stored.
	stored, err := e.store.Read().Platforms().CredentialByClientID(ctx, tokenID)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(secret))
	assert.Equal(t, sum[:], stored.SecretHash)
	assert.NotContains(t, string(stored.SecretHash), secret)
	assert.Equal(t, "server", stored.Name)

	c, err := e.svc.Authenticate(ctx, tokenID, secret)
	require.NoError(t, err)
	assert.Equal(t, p.ID, c.PlatformID)
	assert.Equal(t, tokenID, c.ClientID)

	// A second credential is distinct and works too.
	tokenID2, secret2, err := e.svc.IssueCredential(ctx, p.ID, "other")
	require.NoError(t, err)
	assert.NotEqual(t, tokenID, tokenID2)
	assert.NotEqual(t, secret, secret2)
	_, err = e.svc.Authenticate(ctx, tokenID2, secret2)
	require.NoError(t, err)

	tests := []struct {
		name, token, secret, reason string
	}{
		{"wrong secret", tokenID, secret2, "invalid API token id or client secret"},
		{"empty secret", tokenID, "", "invalid API token id or client secret"},
		{"secret with a suffix", tokenID, secret + "x", "invalid API token id or client secret"},
		{"unknown token", "tok_unknown", secret, "invalid API token id or client secret"},
		{"empty token", "", secret, "invalid API token id or client secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.svc.Authenticate(ctx, tt.token, tt.secret)
			f := testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")
			assert.Equal(t, tt.reason, f.Reason)
		})
	}

	_, _, err = e.svc.IssueCredential(ctx, "Platform:nope", "x")
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
}

func TestAddCredential(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	p, err := e.svc.Create(ctx, "Acme", "", []string{"USD"})
	require.NoError(t, err)
	q, err := e.svc.Create(ctx, "Other", "", []string{"USD"})
	require.NoError(t, err)

	const token, secret = "configured-token", "a-configured-secret-0123"
	require.NoError(t, e.svc.AddCredential(ctx, p.ID, "configured", token, secret))
	c, err := e.svc.Authenticate(ctx, token, secret)
	require.NoError(t, err)
	assert.Equal(t, p.ID, c.PlatformID)

	// The same pair again is a no-op.
	require.NoError(t, e.svc.AddCredential(ctx, p.ID, "configured", token, secret))

	// The token id with another secret, or for another platform, is refused.
	err = e.svc.AddCredential(ctx, p.ID, "configured", token, "another-secret-0123456")
	require.ErrorIs(t, err, platforms.ErrCredentialTaken)
	err = e.svc.AddCredential(ctx, q.ID, "configured", token, secret)
	require.ErrorIs(t, err, platforms.ErrCredentialTaken)
	_, err = e.svc.Authenticate(ctx, token, "another-secret-0123456")
	testkit.RequireFault(t, err, fault.KindUnauthorized, "UNAUTHORIZED")

	for _, bad := range []string{"", "with:colon", "with space", strings.Repeat("t", 256)} {
		err := e.svc.AddCredential(ctx, p.ID, "x", bad, secret)
		f := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT")
		assert.Equal(t, "tokenId", f.Fields[0].Field, bad)
	}
	err = e.svc.AddCredential(ctx, p.ID, "x", "tok-2", "")
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT")
	err = e.svc.AddCredential(ctx, "Platform:nope", "x", "tok-3", secret)
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
}
