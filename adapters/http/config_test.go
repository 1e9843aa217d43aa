package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/corridorpay/corridor/adapters/http"
)

func TestGetConfig(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD", "EUR")
	c := decode[httpapi.PlatformConfig](t, h.get(tn, "/config"))
	assert.Equal(t, "PlatformConfig:"+strings.TrimPrefix(tn.platformID, "Platform:"), c.ID)
	assert.Equal(t, "example.test", c.UmaDomain)
	assert.Empty(t, c.WebhookEndpoint)
	assert.Equal(t, httpapi.EmbeddedWalletConfig{OTPLength: 6, ExpirationSeconds: 300, SendFromEmailSenderName: "Notifications"},
		c.EmbeddedWalletConfig)
	require.Len(t, c.SupportedCurrencies, 2)
	assert.Equal(t, "USD", c.SupportedCurrencies[0].CurrencyCode)
	assert.Equal(t, []string{"INCOMING", "OUTGOING"}, c.SupportedCurrencies[1].EnabledTransactionTypes)
	assert.Equal(t, h.clock.Now(), c.CreatedAt)
	assert.Equal(t, c.CreatedAt, c.UpdatedAt)

	requireError(t, h.send(request{method: http.MethodGet, path: "/config"}), http.StatusUnauthorized, "UNAUTHORIZED")
}

// Each field changes alone; the others stay; updatedAt moves; another
// platform's configuration is untouched.
func TestPatchConfigFields(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	other := h.tenant("USD")
	before := decode[httpapi.PlatformConfig](t, h.get(other, "/config"))
	created := h.clock.Now()

	h.clock.Advance(time.Minute)
	c := decode[httpapi.PlatformConfig](t, h.patch(tn, "/config", `{"umaDomain":"pay.acme.example"}`))
	assert.Equal(t, "pay.acme.example", c.UmaDomain)
	assert.Equal(t, created, c.CreatedAt)
	assert.Equal(t, h.clock.Now(), c.UpdatedAt)

	h.clock.Advance(time.Minute)
	c = decode[httpapi.PlatformConfig](t, h.patch(tn, "/config", `{"webhookEndpoint":"https://hooks.acme.example/corridor"}`))
	assert.Equal(t, "https://hooks.acme.example/corridor", c.WebhookEndpoint)
	assert.Equal(t, "pay.acme.example", c.UmaDomain, "kept")
	assert.Equal(t, h.clock.Now(), c.UpdatedAt)

	h.clock.Advance(time.Minute)
	c = decode[httpapi.PlatformConfig](t, h.patch(tn, "/config", `{"embeddedWalletConfig":{"otpLength":8}}`))
	assert.Equal(t, httpapi.EmbeddedWalletConfig{OTPLength: 8, ExpirationSeconds: 300, SendFromEmailSenderName: "Notifications"},
		c.EmbeddedWalletConfig)
	c = decode[httpapi.PlatformConfig](t, h.patch(tn, "/config", `{"embeddedWalletConfig":{"expirationSeconds":600}}`))
	assert.Equal(t, httpapi.EmbeddedWalletConfig{OTPLength: 8, ExpirationSeconds: 600, SendFromEmailSenderName: "Notifications"},
		c.EmbeddedWalletConfig)
	branded := httpapi.EmbeddedWalletConfig{OTPLength: 8, ExpirationSeconds: 600, Alphanumeric: true, AppName: "Acme Wallet",
		SendFromEmailAddress: "noreply@acme.example", SendFromEmailSenderName: "Acme Notifications",
		ReplyToEmailAddress: "support@acme.example", LogoURL: "https://acme.example/logo.png"}
	c = decode[httpapi.PlatformConfig](t, h.patch(tn, "/config", `{"embeddedWalletConfig":{"alphanumeric":true,"appName":"Acme Wallet",
		"sendFromEmailAddress":"noreply@acme.example","sendFromEmailSenderName":"Acme Notifications",
		"replyToEmailAddress":"support@acme.example","logoUrl":"https://acme.example/logo.png"}}`))
	assert.Equal(t, branded, c.EmbeddedWalletConfig)
	c = decode[httpapi.PlatformConfig](t, h.patch(tn, "/config", `{"embeddedWalletConfig":{"replyToEmailAddress":""}}`))
	branded.ReplyToEmailAddress = ""
	assert.Equal(t, branded, c.EmbeddedWalletConfig, "an empty text unsets it alone")

	h.clock.Advance(time.Minute)
	c = decode[httpapi.PlatformConfig](t, h.patch(tn, "/config", `{"supportedCurrencies":[
		{"currencyCode":"USD","minAmount":100,"maxAmount":1000000,"enabledTransactionTypes":["OUTGOING"],
		 "requiredCounterpartyFields":[{"name":"FULL_NAME","mandatory":true}]},
		{"currencyCode":"BRL","minAmount":0,"maxAmount":5000,"enabledTransactionTypes":["INCOMING","OUTGOING"],"requiredCounterpartyFields":[]}]}`))
	require.Len(t, c.SupportedCurrencies, 2)
	assert.Equal(t, httpapi.PlatformCurrencyConfig{CurrencyCode: "USD", MinAmount: 100, MaxAmount: 1000000,
		EnabledTransactionTypes:    []string{"OUTGOING"},
		RequiredCounterpartyFields: []httpapi.CounterpartyFieldDefinition{{Name: "FULL_NAME", Mandatory: true}}}, c.SupportedCurrencies[0])
	assert.Equal(t, "BRL", c.SupportedCurrencies[1].CurrencyCode)
	assert.Equal(t, "https://hooks.acme.example/corridor", c.WebhookEndpoint, "kept")
	assert.Equal(t, 8, c.EmbeddedWalletConfig.OTPLength, "kept")
	h.platformAccount(tn, "BRL") // opened with the currency

	again := decode[httpapi.PlatformConfig](t, h.get(tn, "/config"))
	assert.Equal(t, c, again, "GET shows what PATCH stored")

	// "" removes the endpoint.
	c = decode[httpapi.PlatformConfig](t, h.patch(tn, "/config", `{"webhookEndpoint":""}`))
	assert.Empty(t, c.WebhookEndpoint)

	assert.Equal(t, before, decode[httpapi.PlatformConfig](t, h.get(other, "/config")), "another platform is untouched")
}

// In the sandbox an http endpoint on a loopback host is accepted.
func TestPatchConfigSandboxLoopback(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	c := decode[httpapi.PlatformConfig](t, h.patch(tn, "/config", `{"webhookEndpoint":"http://127.0.0.1:9000/hooks"}`))
	assert.Equal(t, "http://127.0.0.1:9000/hooks", c.WebhookEndpoint)
}

// Every bad input is a 400 naming the field, and changes nothing.
func TestPatchConfigInvalid(t *testing.T) {
	cases := []struct {
		name, body, field string
		production        bool
	}{
		{"http outside the sandbox", `{"webhookEndpoint":"http://127.0.0.1:9000/hooks"}`, "webhookEndpoint", true},
		{"http to a non-loopback host", `{"webhookEndpoint":"http://hooks.example.com/"}`, "webhookEndpoint", false},
		{"not absolute", `{"webhookEndpoint":"hooks.example.com/x"}`, "webhookEndpoint", false},
		{"userinfo", `{"webhookEndpoint":"https://user:pw@hooks.example.com/"}`, "webhookEndpoint", false},
		{"too long", `{"webhookEndpoint":"https://hooks.example.com/` + strings.Repeat("a", 2048) + `"}`, "webhookEndpoint", false},
		{"endpoint type", `{"webhookEndpoint":42}`, "webhookEndpoint", false},
		{"endpoint NUL", `{"webhookEndpoint":"https://hooks.example.com/\u0000"}`, "webhookEndpoint", false},
		{"unknown currency", `{"supportedCurrencies":[{"currencyCode":"XYZ","minAmount":0,"maxAmount":1,"enabledTransactionTypes":[],"requiredCounterpartyFields":[]}]}`, "supportedCurrencies[0].currencyCode", false},
		{"no currencies", `{"supportedCurrencies":[]}`, "supportedCurrencies", false},
		{"currency missing fields", `{"supportedCurrencies":[{"currencyCode":"USD"}]}`, "supportedCurrencies[0].minAmount", false},
		{"min above max", `{"supportedCurrencies":[{"currencyCode":"USD","minAmount":10,"maxAmount":1,"enabledTransactionTypes":[],"requiredCounterpartyFields":[]}]}`, "supportedCurrencies[0].maxAmount", false},
		{"bad transaction type", `{"supportedCurrencies":[{"currencyCode":"USD","minAmount":0,"maxAmount":1,"enabledTransactionTypes":["SIDEWAYS"],"requiredCounterpartyFields":[]}]}`, "supportedCurrencies[0].enabledTransactionTypes[0]", false},
		{"currencies type", `{"supportedCurrencies":"USD"}`, "supportedCurrencies", false},
		{"otp too short", `{"embeddedWalletConfig":{"otpLength":3}}`, "embeddedWalletConfig.otpLength", false},
		{"otp too long", `{"embeddedWalletConfig":{"otpLength":13}}`, "embeddedWalletConfig.otpLength", false},
		{"otp lifetime zero", `{"embeddedWalletConfig":{"expirationSeconds":0}}`, "embeddedWalletConfig.expirationSeconds", false},
		{"otp lifetime too long", `{"embeddedWalletConfig":{"expirationSeconds":86401}}`, "embeddedWalletConfig.expirationSeconds", false},
		{"otp type", `{"embeddedWalletConfig":{"otpLength":"8"}}`, "embeddedWalletConfig.otpLength", false},
		{"otp fraction", `{"embeddedWalletConfig":{"otpLength":6.5}}`, "embeddedWalletConfig.otpLength", false},
		{"unknown field", `{"webhookUrl":"https://hooks.example.com/"}`, "webhookUrl", false},
		{"unknown nested field", `{"embeddedWalletConfig":{"appTitle":"Acme"}}`, "embeddedWalletConfig.appTitle", false},
		{"app name too long", `{"embeddedWalletConfig":{"appName":"` + strings.Repeat("é", 256) + `"}}`, "embeddedWalletConfig.appName", false},
		{"sender name line break", `{"embeddedWalletConfig":{"sendFromEmailSenderName":"Acme\r\nBcc: x@y.z"}}`, "embeddedWalletConfig.sendFromEmailSenderName", false},
		{"sender address", `{"embeddedWalletConfig":{"sendFromEmailAddress":"not an address"}}`, "embeddedWalletConfig.sendFromEmailAddress", false},
		{"sender address with name", `{"embeddedWalletConfig":{"sendFromEmailAddress":"Acme <noreply@acme.example>"}}`, "embeddedWalletConfig.sendFromEmailAddress", false},
		{"reply-to", `{"embeddedWalletConfig":{"replyToEmailAddress":"support@"}}`, "embeddedWalletConfig.replyToEmailAddress", false},
		{"logo scheme", `{"embeddedWalletConfig":{"logoUrl":"javascript:alert(1)"}}`, "embeddedWalletConfig.logoUrl", false},
		{"logo relative", `{"embeddedWalletConfig":{"logoUrl":"/logo.png"}}`, "embeddedWalletConfig.logoUrl", false},
		{"logo too long", `{"embeddedWalletConfig":{"logoUrl":"https://acme.example/` + strings.Repeat("a", 512) + `"}}`, "embeddedWalletConfig.logoUrl", false},
		{"alphanumeric type", `{"embeddedWalletConfig":{"alphanumeric":"yes"}}`, "embeddedWalletConfig.alphanumeric", false},
		{"read-only field", `{"id":"PlatformConfig:x"}`, "id", false},
		{"uma domain", `{"umaDomain":"not a domain"}`, "umaDomain", false},
		{"uma domain NUL", `{"umaDomain":"acme\u0000.example"}`, "umaDomain", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{production: tc.production})
			tn := h.tenant("USD")
			before := decode[httpapi.PlatformConfig](t, h.get(tn, "/config"))
			h.clock.Advance(time.Minute)
			requireError(t, h.patch(tn, "/config", tc.body), http.StatusBadRequest, "INVALID_INPUT", tc.field)
			assert.Equal(t, before, decode[httpapi.PlatformConfig](t, h.get(tn, "/config")))
		})
	}
}

func TestPatchConfigMalformed(t *testing.T) {
	h := newHarness(t)
	tn := h.tenant("USD")
	requireError(t, h.patch(tn, "/config", `{"umaDomain":`), http.StatusBadRequest, "INVALID_INPUT")
	requireError(t, h.patch(tn, "/config", `[]`), http.StatusBadRequest, "INVALID_INPUT")
}
