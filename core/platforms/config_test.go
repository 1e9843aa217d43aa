package platforms_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// hook records the endpoint changes it hears of.
type hook struct {
	calls []string
	err   error
}

func (h *hook) WebhookEndpointChanged(_ context.Context, _ ports.Tx, platformID, endpoint string) error {
	h.calls = append(h.calls, platformID+" "+endpoint)
	return h.err
}

func configEnv(t *testing.T, sandbox bool) (*env, *hook) {
	t.Helper()
	e := newEnv(t)
	h := &hook{}
	e.svc = platforms.New(e.store, e.ledger, e.clock, system.IDs{}, platforms.Sandbox(sandbox), platforms.OnEndpointChange(h))
	return e, h
}

func ptr[T any](v T) *T { return &v }

func TestConfigDefaults(t *testing.T) {
	e, _ := configEnv(t, false)
	p, err := e.svc.Create(context.Background(), "acme", "acme.example", []string{"USD", "EUR"})
	require.NoError(t, err)
	c, err := e.svc.Config(context.Background(), p.ID)
	require.NoError(t, err)
	assert.Equal(t, "acme.example", c.Platform.UmaDomain)
	assert.Empty(t, c.Platform.WebhookEndpoint)
	assert.Equal(t, 6, c.OTPLength)
	assert.Equal(t, 5*time.Minute, c.OTPLifetime)
	require.Len(t, c.Currencies, 2)
	assert.Equal(t, platforms.DefaultCurrencySetting("EUR"), c.Currencies[1])
	assert.Equal(t, money.MaxAmount, c.Currencies[0].MaxAmount)

	_, err = e.svc.Config(context.Background(), "Platform:nope")
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
}

// A partial update changes what it names, moves updatedAt, opens an
// account for a new currency (and keeps a removed one's), tells the hook
// of a new endpoint once in its unit of work, and leaves other platforms alone.
func TestUpdateConfig(t *testing.T) {
	ctx := context.Background()
	e, h := configEnv(t, false)
	p, err := e.svc.Create(ctx, "acme", "acme.example", []string{"USD", "EUR"})
	require.NoError(t, err)
	other, err := e.svc.Create(ctx, "other", "other.example", []string{"USD"})
	require.NoError(t, err)
	e.clock.Advance(time.Minute)

	c, err := e.svc.UpdateConfig(ctx, p.ID, platforms.ConfigUpdate{OTPLength: ptr(8)})
	require.NoError(t, err)
	assert.Equal(t, 8, c.OTPLength)
	assert.Equal(t, 5*time.Minute, c.OTPLifetime, "unchanged")
	assert.Equal(t, "acme.example", c.Platform.UmaDomain, "unchanged")
	assert.Equal(t, e.clock.Now(), c.Platform.UpdatedAt)
	assert.Equal(t, p.CreatedAt, c.Platform.CreatedAt)
	assert.Empty(t, h.calls)

	e.clock.Advance(time.Minute)
	usd := ports.CurrencySetting{Code: "USD", MinAmount: 100, MaxAmount: 1_000_000, EnabledTransactionTypes: []string{"OUTGOING"},
		RequiredCounterpartyFields: []ports.CounterpartyField{{Name: "FULL_NAME", Mandatory: true}}}
	brl := platforms.DefaultCurrencySetting("BRL")
	c, err = e.svc.UpdateConfig(ctx, p.ID, platforms.ConfigUpdate{
		UmaDomain: ptr("pay.acme.example"), WebhookEndpoint: ptr("https://hooks.acme.example/corridor"),
		SupportedCurrencies: []ports.CurrencySetting{usd, brl}, OTPExpirationSeconds: ptr(600),
	})
	require.NoError(t, err)
	assert.Equal(t, "pay.acme.example", c.Platform.UmaDomain)
	assert.Equal(t, "https://hooks.acme.example/corridor", c.Platform.WebhookEndpoint)
	assert.Equal(t, []ports.CurrencySetting{usd, brl}, c.Currencies)
	assert.Equal(t, []string{"USD", "BRL"}, c.Platform.Currencies)
	assert.Equal(t, 8, c.OTPLength)
	assert.Equal(t, 10*time.Minute, c.OTPLifetime)
	assert.Equal(t, e.clock.Now(), c.Platform.UpdatedAt)
	assert.Equal(t, []string{p.ID + " https://hooks.acme.example/corridor"}, h.calls)
	var currencies []string
	for _, a := range platformAccounts(t, e, p.ID) {
		currencies = append(currencies, a.Currency)
	}
	assert.ElementsMatch(t, []string{"USD", "EUR", "BRL"}, currencies, "BRL opened, EUR kept")

	// The same endpoint again is no change. The hook works in the
	// change's unit of work: its failure fails the change, which leaves
	// nothing behind.
	_, err = e.svc.UpdateConfig(ctx, p.ID, platforms.ConfigUpdate{WebhookEndpoint: ptr("https://hooks.acme.example/corridor")})
	require.NoError(t, err)
	assert.Len(t, h.calls, 1)
	h.err = errors.New("outbox down")
	_, err = e.svc.UpdateConfig(ctx, p.ID, platforms.ConfigUpdate{WebhookEndpoint: ptr("https://hooks2.acme.example/"), OTPLength: ptr(7)})
	require.ErrorIs(t, err, h.err)
	c, err = e.svc.Config(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, "https://hooks.acme.example/corridor", c.Platform.WebhookEndpoint, "rolled back")
	assert.Equal(t, 8, c.OTPLength, "rolled back with it")
	h.err = nil
	c, err = e.svc.UpdateConfig(ctx, p.ID, platforms.ConfigUpdate{WebhookEndpoint: ptr("https://hooks2.acme.example/")})
	require.NoError(t, err)
	assert.Equal(t, "https://hooks2.acme.example/", c.Platform.WebhookEndpoint)
	assert.Len(t, h.calls, 3)
	// "" removes the endpoint, without a TEST event.
	c, err = e.svc.UpdateConfig(ctx, p.ID, platforms.ConfigUpdate{WebhookEndpoint: ptr("")})
	require.NoError(t, err)
	assert.Empty(t, c.Platform.WebhookEndpoint)
	assert.Len(t, h.calls, 3)

	// Re-adding a removed currency reuses its account.
	_, err = e.svc.UpdateConfig(ctx, p.ID, platforms.ConfigUpdate{SupportedCurrencies: []ports.CurrencySetting{platforms.DefaultCurrencySetting("EUR")}})
	require.NoError(t, err)
	assert.Len(t, platformAccounts(t, e, p.ID), 3)

	o, err := e.svc.Config(ctx, other.ID)
	require.NoError(t, err)
	assert.Equal(t, other, o.Platform, "another platform is untouched")

	_, err = e.svc.UpdateConfig(ctx, "Platform:nope", platforms.ConfigUpdate{OTPLength: ptr(8)})
	testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
}

// Every bad field is named, and nothing changes.
func TestUpdateConfigInvalid(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		sandbox bool
		u       platforms.ConfigUpdate
		fields  []string
	}{
		{"http outside the sandbox", false, platforms.ConfigUpdate{WebhookEndpoint: ptr("http://127.0.0.1:9000/hook")}, []string{"webhookEndpoint"}},
		{"http to a public host", true, platforms.ConfigUpdate{WebhookEndpoint: ptr("http://hooks.example.com/")}, []string{"webhookEndpoint"}},
		{"relative", true, platforms.ConfigUpdate{WebhookEndpoint: ptr("/hooks")}, []string{"webhookEndpoint"}},
		{"no host", true, platforms.ConfigUpdate{WebhookEndpoint: ptr("https:///hooks")}, []string{"webhookEndpoint"}},
		{"userinfo", true, platforms.ConfigUpdate{WebhookEndpoint: ptr("https://u:p@hooks.example.com/")}, []string{"webhookEndpoint"}},
		{"other scheme", true, platforms.ConfigUpdate{WebhookEndpoint: ptr("ftp://hooks.example.com/")}, []string{"webhookEndpoint"}},
		{"fragment", true, platforms.ConfigUpdate{WebhookEndpoint: ptr("https://hooks.example.com/#x")}, []string{"webhookEndpoint"}},
		{"space", true, platforms.ConfigUpdate{WebhookEndpoint: ptr("https://hooks.example.com/a b")}, []string{"webhookEndpoint"}},
		{"bad port", true, platforms.ConfigUpdate{WebhookEndpoint: ptr("https://hooks.example.com:70000/")}, []string{"webhookEndpoint"}},
		{"too long", true, platforms.ConfigUpdate{WebhookEndpoint: ptr("https://hooks.example.com/" + string(make([]byte, 2048)))}, []string{"webhookEndpoint"}},
		{"uma domain", false, platforms.ConfigUpdate{UmaDomain: ptr("not a domain")}, []string{"umaDomain"}},
		{"empty uma domain", false, platforms.ConfigUpdate{UmaDomain: ptr("")}, []string{"umaDomain"}},
		{"otp bounds", false, platforms.ConfigUpdate{OTPLength: ptr(3), OTPExpirationSeconds: ptr(86401)},
			[]string{"embeddedWalletConfig.otpLength", "embeddedWalletConfig.expirationSeconds"}},
		{"otp high", false, platforms.ConfigUpdate{OTPLength: ptr(13), OTPExpirationSeconds: ptr(0)},
			[]string{"embeddedWalletConfig.otpLength", "embeddedWalletConfig.expirationSeconds"}},
		{"branding", false, platforms.ConfigUpdate{AppName: ptr(strings.Repeat("x", 256)), SenderAddress: ptr("Acme <a@b.example>"),
			SenderName: ptr("Acme\nBcc: x@y.z"), ReplyTo: ptr("nobody"), LogoURL: ptr("ftp://acme.example/logo.png")}, []string{
			"embeddedWalletConfig.appName", "embeddedWalletConfig.sendFromEmailAddress", "embeddedWalletConfig.sendFromEmailSenderName",
			"embeddedWalletConfig.replyToEmailAddress", "embeddedWalletConfig.logoUrl"}},
		{"no currencies", false, platforms.ConfigUpdate{SupportedCurrencies: []ports.CurrencySetting{}}, []string{"supportedCurrencies"}},
		{"currencies", false, platforms.ConfigUpdate{SupportedCurrencies: []ports.CurrencySetting{
			{Code: "XYZ", MaxAmount: 1},
			{Code: "USD", MinAmount: 10, MaxAmount: 5, EnabledTransactionTypes: []string{"SIDEWAYS"},
				RequiredCounterpartyFields: []ports.CounterpartyField{{Name: "SHOE_SIZE"}}},
			{Code: "USD", MinAmount: -1, MaxAmount: money.MaxAmount + 1, EnabledTransactionTypes: []string{"INCOMING", "INCOMING"},
				RequiredCounterpartyFields: []ports.CounterpartyField{{Name: "EMAIL"}, {Name: "EMAIL"}}},
		}}, []string{
			"supportedCurrencies[0].currencyCode", "supportedCurrencies[1].maxAmount",
			"supportedCurrencies[1].enabledTransactionTypes[0]", "supportedCurrencies[1].requiredCounterpartyFields[0].name",
			"supportedCurrencies[2].currencyCode", "supportedCurrencies[2].minAmount", "supportedCurrencies[2].maxAmount",
			"supportedCurrencies[2].enabledTransactionTypes[1]", "supportedCurrencies[2].requiredCounterpartyFields[1].name",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, h := configEnv(t, tc.sandbox)
			p, err := e.svc.Create(ctx, "acme", "acme.example", []string{"USD"})
			require.NoError(t, err)
			e.clock.Advance(time.Minute)
			_, err = e.svc.UpdateConfig(ctx, p.ID, tc.u)
			fe := testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT")
			var got []string
			for _, f := range fe.Fields {
				got = append(got, f.Field)
			}
			assert.ElementsMatch(t, tc.fields, got)
			after, err := e.svc.Get(ctx, p.ID)
			require.NoError(t, err)
			assert.Equal(t, p, after)
			assert.Empty(t, h.calls)
		})
	}
}

// In the sandbox, http to a loopback host is allowed.
func TestUpdateConfigSandboxLoopback(t *testing.T) {
	for _, v := range []string{"http://localhost:8081/hooks", "http://127.0.0.1:9000/", "http://[::1]/x", "https://localhost/"} {
		e, _ := configEnv(t, true)
		p, err := e.svc.Create(context.Background(), "acme", "", nil)
		require.NoError(t, err)
		c, err := e.svc.UpdateConfig(context.Background(), p.ID, platforms.ConfigUpdate{WebhookEndpoint: ptr(v)})
		require.NoError(t, err, v)
		assert.Equal(t, v, c.Platform.WebhookEndpoint)
	}
}

func TestCheckSend(t *testing.T) {
	usd := ports.CurrencySetting{Code: "USD", MinAmount: 100, MaxAmount: 5000, EnabledTransactionTypes: []string{"INCOMING", "OUTGOING"}}
	inOnly := usd
	inOnly.EnabledTransactionTypes = []string{"INCOMING"}
	for _, c := range []struct {
		name    string
		setting ports.CurrencySetting
		amount  int64
		code    string // "" allowed
	}{
		{"no setting allows anything", ports.CurrencySetting{}, 1 << 62, ""},
		{"the minimum", usd, 100, ""},
		{"one under the minimum", usd, 99, platforms.CodeAmountOutOfRange},
		{"the maximum", usd, 5000, ""},
		{"one over the maximum", usd, 5001, platforms.CodeAmountOutOfRange},
		{"OUTGOING not enabled", inOnly, 1000, "INVALID_INPUT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := platforms.CheckSend(c.setting, "amount", c.amount)
			if c.code == "" {
				require.NoError(t, err)
				return
			}
			var f *fault.Error
			require.ErrorAs(t, err, &f)
			assert.Equal(t, c.code, f.Code)
			assert.Equal(t, fault.KindInvalid, f.Kind)
			assert.Contains(t, f.Message, "amount")
		})
	}
	require.NoError(t, platforms.CheckReceive(ports.CurrencySetting{}, "f"), "no setting")
	require.NoError(t, platforms.CheckReceive(usd, "f"))
	outOnly := usd
	outOnly.EnabledTransactionTypes = []string{"OUTGOING"}
	var f *fault.Error
	require.ErrorAs(t, platforms.CheckReceive(outOnly, "f"), &f)
	assert.Equal(t, "INVALID_INPUT", f.Code)
	assert.Equal(t, usd, platforms.SettingOf(ports.Platform{CurrencySettings: []ports.CurrencySetting{inOnly, usd}[1:]}, "USD"))
	assert.Zero(t, platforms.SettingOf(ports.Platform{CurrencySettings: []ports.CurrencySetting{usd}}, "EUR"))
}
