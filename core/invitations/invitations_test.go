package invitations_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	railsandbox "github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/invitations"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/coretest"
)

type env struct {
	*coretest.Env
	inv      *invitations.Service
	platform string
	inviter  ports.Customer
}

func newEnv(t *testing.T) *env { return newEnvOn(t, coretest.Memory()) }

func newEnvOn(t *testing.T, b coretest.Backend) *env {
	c := coretest.New(t, b, railsandbox.Factory(b.Clock))
	e := &env{Env: c, inv: invitations.New(c.Store, c.Clock, c.IDs, coretest.QuietLog())}
	e.inv.Register(e.Runner)
	e.platform = e.Platform("EUR")
	e.inviter = e.customer(e.platform, "$ada@example.test")
	return e
}

func (e *env) customer(platformID, uma string) ports.Customer {
	e.T.Helper()
	c, err := e.Customers.Create(context.Background(), platformID, customers.Input{
		CustomerType: "INDIVIDUAL", UmaAddress: &uma, Currencies: []string{"MXN"}})
	require.NoError(e.T, err)
	return c
}

func (e *env) create(in invitations.CreateInput) ports.Invitation {
	e.T.Helper()
	if in.InviterUma == "" {
		in.InviterUma = e.inviter.UmaAddress
	}
	inv, err := e.inv.Create(context.Background(), e.platform, in)
	require.NoError(e.T, err)
	return inv
}

func (e *env) events() []ports.Event {
	e.T.Helper()
	rows, _, err := e.Store.Read().Events().List(context.Background(), ports.EventFilter{PlatformID: e.platform, Type: invitations.EventClaimed}, ports.Page{})
	require.NoError(e.T, err)
	return rows
}

func requireCode(t *testing.T, err error, kind fault.Kind, code string) {
	t.Helper()
	f, ok := fault.As(err)
	require.Truef(t, ok, "want %s, got %v", code, err)
	assert.Equal(t, kind, f.Kind)
	assert.Equal(t, code, f.Code)
}

func ptr[T any](v T) *T { return &v }

func TestCreate(t *testing.T) {
	e := newEnv(t)
	now := e.Clock.Now()
	inv := e.create(invitations.CreateInput{FirstName: "Ada", AmountToSend: ptr[int64](12550), ExpiresAt: ptr(now.Add(time.Hour))})
	assert.Equal(t, invitations.StatusPending, inv.Status)
	assert.Len(t, inv.Code, invitations.CodeLength)
	assert.Equal(t, "https://example.test/invitations/"+inv.Code, inv.URL)
	assert.Equal(t, "MXN", inv.Currency, "the inviter's currency")
	assert.Equal(t, int64(12550), inv.AmountToSend)
	assert.Equal(t, now, inv.CreatedAt)
	got, err := e.inv.Get(context.Background(), inv.Code)
	require.NoError(t, err)
	assert.Equal(t, inv, got)

	bare := e.create(invitations.CreateInput{})
	assert.Empty(t, bare.Currency, "no amount, no currency")
	assert.True(t, bare.ExpiresAt.IsZero())
	assert.NotEqual(t, inv.Code, bare.Code)

	e.Advance(time.Hour)
	got, err = e.inv.Get(context.Background(), inv.Code)
	require.NoError(t, err)
	assert.Equal(t, invitations.StatusExpired, got.Status)
	got, err = e.inv.Get(context.Background(), bare.Code)
	require.NoError(t, err)
	assert.Equal(t, invitations.StatusPending, got.Status, "without expiresAt it never expires")
}

func TestCreateRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	other := e.Platform("USD")
	e.customer(other, "$bob@example.test")
	deleted := e.customer(e.platform, "$gone@example.test")
	_, err := e.Customers.Delete(ctx, e.platform, deleted.ID)
	require.NoError(t, err)
	now := e.Clock.Now()
	for name, tc := range map[string]struct {
		in   invitations.CreateInput
		code string
	}{
		"malformed inviter":     {invitations.CreateInput{InviterUma: "ada@example.test"}, invitations.CodeInvalidUma},
		"upper-case user":       {invitations.CreateInput{InviterUma: "$Ada@example.test"}, invitations.CodeInvalidUma},
		"another platform's":    {invitations.CreateInput{InviterUma: "$bob@example.test"}, "INVALID_INPUT"},
		"nobody's":              {invitations.CreateInput{InviterUma: "$nobody@example.test"}, "INVALID_INPUT"},
		"deleted customer's":    {invitations.CreateInput{InviterUma: deleted.UmaAddress}, "INVALID_INPUT"},
		"zero amount":           {invitations.CreateInput{InviterUma: e.inviter.UmaAddress, AmountToSend: ptr[int64](0)}, "INVALID_INPUT"},
		"negative amount":       {invitations.CreateInput{InviterUma: e.inviter.UmaAddress, AmountToSend: ptr[int64](-1)}, "INVALID_INPUT"},
		"huge amount":           {invitations.CreateInput{InviterUma: e.inviter.UmaAddress, AmountToSend: ptr(money.MaxAmount + 1)}, "INVALID_INPUT"},
		"expiresAt now":         {invitations.CreateInput{InviterUma: e.inviter.UmaAddress, ExpiresAt: ptr(now)}, "INVALID_INPUT"},
		"expiresAt in the past": {invitations.CreateInput{InviterUma: e.inviter.UmaAddress, ExpiresAt: ptr(now.Add(-time.Second))}, "INVALID_INPUT"},
		"long first name":       {invitations.CreateInput{InviterUma: e.inviter.UmaAddress, FirstName: string(make([]byte, 256))}, "INVALID_INPUT"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.inv.Create(ctx, e.platform, tc.in)
			requireCode(t, err, fault.KindInvalid, tc.code)
		})
	}
}

func TestCreateNotConfigured(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p, err := e.Platforms.Create(ctx, "no domain", "", nil)
	require.NoError(t, err)
	c := e.customer(p.ID, "$cy@example.test")
	_, err = e.inv.Create(ctx, p.ID, invitations.CreateInput{InviterUma: c.UmaAddress})
	requireCode(t, err, fault.KindInvalid, invitations.CodeNotConfigured)
}

func TestGetNotFound(t *testing.T) {
	e := newEnv(t)
	for _, code := range []string{"ABCDEFGHJKMN", "", "short", "ABCDEFGHJKM0", "../../etc"} {
		_, err := e.inv.Get(context.Background(), code)
		requireCode(t, err, fault.KindNotFound, invitations.CodeNotFound)
	}
}

func TestClaim(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inv := e.create(invitations.CreateInput{ExpiresAt: ptr(e.Clock.Now().Add(time.Hour))})
	e.Clock.Advance(time.Minute)
	got, err := e.inv.Claim(ctx, inv.Code, "$eve@elsewhere.example")
	require.NoError(t, err)
	assert.Equal(t, invitations.StatusClaimed, got.Status)
	assert.Equal(t, "$eve@elsewhere.example", got.InviteeUma)
	assert.Equal(t, e.Clock.Now(), got.ClaimedAt)
	ev := e.events()
	require.Len(t, ev, 1, "the claim records its event")
	assert.Equal(t, e.platform, ev[0].PlatformID)
	assert.Equal(t, invitations.EventClaimed, ev[0].Type)
	assert.Equal(t, inv.Code, ev[0].ResourceID)
	assert.Regexp(t, `^Webhook:`, ev[0].ID)

	_, err = e.inv.Claim(ctx, inv.Code, "$mallory@elsewhere.example")
	requireCode(t, err, fault.KindInvalid, invitations.CodeAlreadyClaimed)
	assert.Len(t, e.events(), 1, "a failed claim records nothing")

	e.Advance(time.Hour)
	got, err = e.inv.Get(ctx, inv.Code)
	require.NoError(t, err)
	assert.Equal(t, invitations.StatusClaimed, got.Status, "the expiry job leaves a claimed invitation alone")
}

func TestClaimRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inv := e.create(invitations.CreateInput{})
	_, err := e.inv.Claim(ctx, inv.Code, "eve@elsewhere.example")
	requireCode(t, err, fault.KindInvalid, invitations.CodeInvalidUma)
	_, err = e.inv.Claim(ctx, inv.Code, e.inviter.UmaAddress)
	requireCode(t, err, fault.KindInvalid, "INVALID_INPUT")
	_, err = e.inv.Claim(ctx, "ABCDEFGHJKMN", "$eve@elsewhere.example")
	requireCode(t, err, fault.KindNotFound, invitations.CodeNotFound)
	assert.Empty(t, e.events())
	got, err := e.inv.Get(ctx, inv.Code)
	require.NoError(t, err)
	assert.Equal(t, invitations.StatusPending, got.Status)
}

func TestClaimLowerCaseCode(t *testing.T) {
	e := newEnv(t)
	inv := e.create(invitations.CreateInput{})
	lower := []byte(inv.Code)
	for i, b := range lower {
		if b >= 'A' && b <= 'Z' {
			lower[i] = b + 'a' - 'A'
		}
	}
	got, err := e.inv.Claim(context.Background(), string(lower), "$eve@elsewhere.example")
	require.NoError(t, err)
	assert.Equal(t, inv.Code, got.Code)
}

func TestCancel(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	other := e.Platform("USD")
	inv := e.create(invitations.CreateInput{})
	_, err := e.inv.Cancel(ctx, other, inv.Code)
	requireCode(t, err, fault.KindForbidden, invitations.CodeForbidden)
	_, err = e.inv.Cancel(ctx, e.platform, "ABCDEFGHJKMN")
	requireCode(t, err, fault.KindNotFound, invitations.CodeNotFound)
	got, err := e.inv.Cancel(ctx, e.platform, inv.Code)
	require.NoError(t, err)
	assert.Equal(t, invitations.StatusCancelled, got.Status)
	_, err = e.inv.Cancel(ctx, e.platform, inv.Code)
	requireCode(t, err, fault.KindInvalid, invitations.CodeCancelled)
	_, err = e.inv.Claim(ctx, inv.Code, "$eve@elsewhere.example")
	requireCode(t, err, fault.KindInvalid, invitations.CodeCancelled)
	assert.Empty(t, e.events())
}

// TestExpiry: the job at expiresAt expires a PENDING invitation, not
// earlier; a claim after it is 400 EXPIRED.
func TestExpiry(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inv := e.create(invitations.CreateInput{ExpiresAt: ptr(e.Clock.Now().Add(time.Hour))})
	e.Advance(time.Hour - time.Microsecond)
	got, err := e.inv.Get(ctx, inv.Code)
	require.NoError(t, err)
	assert.Equal(t, invitations.StatusPending, got.Status, "not before expiresAt")
	e.Advance(time.Microsecond)
	got, err = e.inv.Get(ctx, inv.Code)
	require.NoError(t, err)
	assert.Equal(t, invitations.StatusExpired, got.Status)
	assert.Equal(t, inv.ExpiresAt, got.UpdatedAt)
	_, err = e.inv.Claim(ctx, inv.Code, "$eve@elsewhere.example")
	requireCode(t, err, fault.KindInvalid, invitations.CodeExpired)
	_, err = e.inv.Cancel(ctx, e.platform, inv.Code)
	requireCode(t, err, fault.KindInvalid, invitations.CodeExpired)
	assert.Empty(t, e.events())
}

// TestExpiryBeforeTheJob: a claim at expiresAt, before the job ran,
// expires the invitation itself.
func TestExpiryBeforeTheJob(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inv := e.create(invitations.CreateInput{ExpiresAt: ptr(e.Clock.Now().Add(time.Hour))})
	e.Clock.Advance(time.Hour)
	_, err := e.inv.Claim(ctx, inv.Code, "$eve@elsewhere.example")
	requireCode(t, err, fault.KindInvalid, invitations.CodeExpired)
	got, err := e.inv.Get(ctx, inv.Code)
	require.NoError(t, err)
	assert.Equal(t, invitations.StatusExpired, got.Status, "committed although the claim failed")
	assert.Empty(t, e.events())
	assert.Equal(t, 1, e.RunJobs(), "the job still runs, and changes nothing")
}

// TestActions is every status × every action: only a PENDING invitation
// is claimed, cancelled or expired; the others answer their status's code
// and stay as they are.
func TestActions(t *testing.T) {
	type action func(e *env, code string) error
	actions := map[string]action{
		"claim": func(e *env, code string) error {
			_, err := e.inv.Claim(context.Background(), code, "$eve@elsewhere.example")
			return err
		},
		"cancel": func(e *env, code string) error {
			_, err := e.inv.Cancel(context.Background(), e.platform, code)
			return err
		},
		"expire": func(e *env, _ string) error { e.Advance(2 * time.Hour); return nil },
	}
	into := map[string]func(e *env, code string){
		invitations.StatusPending: func(*env, string) {},
		invitations.StatusClaimed: func(e *env, code string) {
			_, err := e.inv.Claim(context.Background(), code, "$first@elsewhere.example")
			require.NoError(e.T, err)
		},
		invitations.StatusCancelled: func(e *env, code string) {
			_, err := e.inv.Cancel(context.Background(), e.platform, code)
			require.NoError(e.T, err)
		},
		invitations.StatusExpired: func(e *env, _ string) { e.Advance(time.Hour) },
	}
	after := map[string]string{"claim": invitations.StatusClaimed, "cancel": invitations.StatusCancelled, "expire": invitations.StatusExpired}
	codeOf := map[string]string{
		invitations.StatusClaimed: invitations.CodeAlreadyClaimed, invitations.StatusCancelled: invitations.CodeCancelled,
		invitations.StatusExpired: invitations.CodeExpired,
	}
	for from, setUp := range into {
		for name, act := range actions {
			t.Run(from+"/"+name, func(t *testing.T) {
				e := newEnv(t)
				inv := e.create(invitations.CreateInput{ExpiresAt: ptr(e.Clock.Now().Add(time.Hour))})
				setUp(e, inv.Code)
				events := len(e.events())
				err := act(e, inv.Code)
				got, gerr := e.inv.Get(context.Background(), inv.Code)
				require.NoError(t, gerr)
				if from == invitations.StatusPending {
					require.NoError(t, err)
					assert.Equal(t, after[name], got.Status)
					wantEvents := events
					if name == "claim" {
						wantEvents++
					}
					assert.Len(t, e.events(), wantEvents)
					return
				}
				if name != "expire" {
					requireCode(t, err, fault.KindInvalid, codeOf[from])
				}
				assert.Equal(t, from, got.Status, "a final status stays")
				assert.Len(t, e.events(), events, "no event")
			})
		}
	}
}

// TestConcurrentClaims: of many claims at once exactly one wins and one
// event is recorded; the others are 400 INVITATION_ALREADY_CLAIMED.
func TestConcurrentClaims(t *testing.T) {
	t.Run("memory", func(t *testing.T) { concurrentClaims(t, newEnv(t)) })
	t.Run("postgres", func(t *testing.T) { concurrentClaims(t, newEnvOn(t, coretest.Postgres(t))) })
}

func concurrentClaims(t *testing.T, e *env) {
	inv := e.create(invitations.CreateInput{})
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = e.inv.Claim(context.Background(), inv.Code, "$eve@elsewhere.example")
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		requireCode(t, err, fault.KindInvalid, invitations.CodeAlreadyClaimed)
	}
	assert.Equal(t, 1, won)
	assert.Len(t, e.events(), 1)
}
