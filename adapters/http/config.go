package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----

// PlatformCurrencyConfig is one currency of the platform with its settings.
type PlatformCurrencyConfig struct {
	CurrencyCode               string                        `json:"currencyCode" minLength:"1" maxLength:"16" doc:"Currency code (ISO 4217 for fiat, tickers for crypto such as USDC); the platform holds an internal account in each" example:"USD"`
	MinAmount                  int64                         `json:"minAmount" minimum:"0" doc:"Smallest amount to send, in minor units: a transfer-out or quote sending less is 400 AMOUNT_OUT_OF_RANGE"`
	MaxAmount                  int64                         `json:"maxAmount" minimum:"0" doc:"Largest amount to send, in minor units: a transfer-out or quote sending more is 400 AMOUNT_OUT_OF_RANGE"`
	RequiredCounterpartyFields []CounterpartyFieldDefinition `json:"requiredCounterpartyFields" maxItems:"20" doc:"Fields the platform asks of the sender of an incoming UMA payment in this currency: the transaction's counterpartyInformation holds the listed fields the sender shares; a mandatory one it does not share refuses the payment"`
	EnabledTransactionTypes    []string                      `json:"enabledTransactionTypes" maxItems:"2" enum:"INCOMING,OUTGOING" doc:"Transaction types enabled in the currency: without OUTGOING a transfer-out or quote sending it is 400; without INCOMING a transfer-in or UMA receive in it is 400"`
}

// EmbeddedWalletConfig is the platform's embedded-wallet settings: the
// EMAIL_OTP codes and the e-mail that carries them.
type EmbeddedWalletConfig struct {
	OTPLength               int    `json:"otpLength" doc:"Symbols of an EMAIL_OTP code"`
	ExpirationSeconds       int    `json:"expirationSeconds" doc:"How long an EMAIL_OTP code is valid, in seconds"`
	Alphanumeric            bool   `json:"alphanumeric" doc:"Whether codes hold upper-case letters as well as digits"`
	AppName                 string `json:"appName,omitempty" doc:"App name the OTP e-mail shows; omitted when unset"`
	SendFromEmailAddress    string `json:"sendFromEmailAddress,omitempty" doc:"Sender address of the OTP e-mail; omitted when unset (the deployment's sender)"`
	SendFromEmailSenderName string `json:"sendFromEmailSenderName" doc:"Sender display name of the OTP e-mail (Notifications until set)"`
	ReplyToEmailAddress     string `json:"replyToEmailAddress,omitempty" doc:"Reply-to address of the OTP e-mail; omitted when unset"`
	LogoURL                 string `json:"logoUrl,omitempty" doc:"Logo shown at the top of the OTP e-mail; omitted when unset"`
}

// EmbeddedWalletConfigUpdate changes the embedded-wallet settings; an
// omitted field is left as it is, an empty text one is unset.
type EmbeddedWalletConfigUpdate struct {
	OTPLength               *int    `json:"otpLength,omitempty" minimum:"4" maximum:"12" doc:"Symbols of an EMAIL_OTP code (4-12; 6 until set)" example:"6"`
	ExpirationSeconds       *int    `json:"expirationSeconds,omitempty" minimum:"1" maximum:"86400" doc:"How long an EMAIL_OTP code is valid, in seconds (1-86400; 300 until set)" example:"300"`
	Alphanumeric            *bool   `json:"alphanumeric,omitempty" doc:"Codes of upper-case letters and digits (without 0, 1, I, L, O) instead of digits only (false until set); a code is compared without regard to case"`
	AppName                 *string `json:"appName,omitempty" maxLength:"255" doc:"App name in the OTP e-mail's subject and heading; empty unsets" example:"Acme Wallet"`
	SendFromEmailAddress    *string `json:"sendFromEmailAddress,omitempty" maxLength:"255" doc:"Sender (From) address of the OTP e-mail, which the deployment's mail relay must accept; empty unsets" example:"noreply@acme.example"`
	SendFromEmailSenderName *string `json:"sendFromEmailSenderName,omitempty" maxLength:"255" doc:"Sender display name of the OTP e-mail (Notifications until set); empty unsets" example:"Acme Notifications"`
	ReplyToEmailAddress     *string `json:"replyToEmailAddress,omitempty" maxLength:"255" doc:"Reply-To address of the OTP e-mail; empty unsets" example:"support@acme.example"`
	LogoURL                 *string `json:"logoUrl,omitempty" maxLength:"512" doc:"An absolute http(s) URL of a PNG logo for the OTP e-mail's HTML part (shown at 340×124); empty unsets" example:"https://acme.example/logo.png"`
}

// PlatformConfig is the platform's configuration.
type PlatformConfig struct {
	ID                   string                   `json:"id" doc:"PlatformConfig:<uuid>, the uuid being the platform's" example:"PlatformConfig:3f0c8a52-5a3b-4c1e-9a55-6f3b1de7a001"`
	UmaDomain            string                   `json:"umaDomain,omitempty" doc:"Domain of the platform's customers' generated UMA addresses; omitted when the platform has none (the deployment's default domain is used)"`
	WebhookEndpoint      string                   `json:"webhookEndpoint,omitempty" doc:"Where the platform's webhook events are sent; omitted when none is set"`
	SupportedCurrencies  []PlatformCurrencyConfig `json:"supportedCurrencies" doc:"The platform's currencies"`
	EmbeddedWalletConfig EmbeddedWalletConfig     `json:"embeddedWalletConfig" doc:"Embedded-wallet settings in effect"`
	CreatedAt            time.Time                `json:"createdAt"`
	UpdatedAt            time.Time                `json:"updatedAt"`
}

// PlatformConfigUpdateRequest changes the supplied settings.
type PlatformConfigUpdateRequest struct {
	UmaDomain            *string                     `json:"umaDomain,omitempty" maxLength:"253" doc:"Domain of generated customer UMA addresses (a DNS name)" example:"pay.example.com"`
	WebhookEndpoint      *string                     `json:"webhookEndpoint,omitempty" maxLength:"2048" doc:"An absolute https URL without user information (plain http only to a loopback host, in the sandbox); empty removes it. A new endpoint is sent a TEST event." example:"https://hooks.example.com/corridor"`
	SupportedCurrencies  []PlatformCurrencyConfig    `json:"supportedCurrencies,omitempty" maxItems:"64" doc:"Replaces the platform's currencies and their settings; a new currency gets its platform internal account, a removed one keeps its account"`
	EmbeddedWalletConfig *EmbeddedWalletConfigUpdate `json:"embeddedWalletConfig,omitempty" doc:"Embedded-wallet settings (the EMAIL_OTP codes and their e-mail); omitted fields are left as they are"`
}

type configOutput struct{ Body PlatformConfig }

type updateConfigInput struct {
	Body PlatformConfigUpdateRequest
}

// ---- wire ↔ core ----

func (r *PlatformConfigUpdateRequest) update() platforms.ConfigUpdate {
	u := platforms.ConfigUpdate{UmaDomain: r.UmaDomain, WebhookEndpoint: r.WebhookEndpoint}
	if r.SupportedCurrencies != nil {
		u.SupportedCurrencies = make([]ports.CurrencySetting, len(r.SupportedCurrencies))
		for i, c := range r.SupportedCurrencies {
			fields := make([]ports.CounterpartyField, len(c.RequiredCounterpartyFields))
			for j, f := range c.RequiredCounterpartyFields {
				fields[j] = ports.CounterpartyField(f)
			}
			types := c.EnabledTransactionTypes
			if types == nil {
				types = []string{}
			}
			u.SupportedCurrencies[i] = ports.CurrencySetting{Code: c.CurrencyCode, MinAmount: c.MinAmount, MaxAmount: c.MaxAmount,
				RequiredCounterpartyFields: fields, EnabledTransactionTypes: types}
		}
	}
	if w := r.EmbeddedWalletConfig; w != nil {
		u.OTPLength, u.OTPExpirationSeconds, u.OTPAlphanumeric = w.OTPLength, w.ExpirationSeconds, w.Alphanumeric
		u.AppName, u.SenderAddress, u.SenderName, u.ReplyTo, u.LogoURL = w.AppName, w.SendFromEmailAddress,
			w.SendFromEmailSenderName, w.ReplyToEmailAddress, w.LogoURL
	}
	return u
}

func configOut(c platforms.Config) PlatformConfig {
	p := c.Platform
	out := PlatformConfig{
		ID:        "PlatformConfig:" + strings.TrimPrefix(p.ID, "Platform:"),
		UmaDomain: p.UmaDomain, WebhookEndpoint: p.WebhookEndpoint,
		SupportedCurrencies: make([]PlatformCurrencyConfig, len(c.Currencies)),
		EmbeddedWalletConfig: EmbeddedWalletConfig{OTPLength: c.OTPLength, ExpirationSeconds: int(c.OTPLifetime / time.Second),
			Alphanumeric: p.EmbeddedWallet.Alphanumeric, AppName: p.EmbeddedWallet.AppName,
			SendFromEmailAddress: p.EmbeddedWallet.SenderAddress, SendFromEmailSenderName: c.SenderName,
			ReplyToEmailAddress: p.EmbeddedWallet.ReplyTo, LogoURL: p.EmbeddedWallet.LogoURL},
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
	}
	for i, s := range c.Currencies {
		fields := make([]CounterpartyFieldDefinition, len(s.RequiredCounterpartyFields))
		for j, f := range s.RequiredCounterpartyFields {
			fields[j] = CounterpartyFieldDefinition(f)
		}
		types := s.EnabledTransactionTypes
		if types == nil {
			types = []string{}
		}
		out.SupportedCurrencies[i] = PlatformCurrencyConfig{CurrencyCode: s.Code, MinAmount: s.MinAmount, MaxAmount: s.MaxAmount,
			RequiredCounterpartyFields: fields, EnabledTransactionTypes: types}
	}
	return out
}

// ---- operations ----

const configTag = "Platform Configuration"

// configAPI handles GET and PATCH /config.
type configAPI struct{ d Deps }

func registerConfig(api huma.API, d Deps) {
	h := configAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.getConfigOp(), h.getConfig) },
		func(api huma.API) { huma.Register(api, h.updateConfigOp(), h.updateConfig) },
	)
}

func (configAPI) getConfigOp() huma.Operation {
	return huma.Operation{
		OperationID: "getPlatformConfig",
		Method:      http.MethodGet,
		Path:        "/config",
		Summary:     "Get platform configuration",
		Description: "Returns the calling platform's configuration: UMA domain, webhook endpoint, currencies with their settings, and the embedded-wallet OTP settings in effect.",
		Tags:        []string{configTag},
		Errors:      []int{http.StatusUnauthorized},
	}
}

func (h configAPI) getConfig(ctx context.Context, _ *struct{}) (*configOutput, error) {
	c, err := h.d.Platforms.Config(ctx, principal(ctx).PlatformID)
	if err != nil {
		return nil, apiError(err)
	}
	return &configOutput{Body: configOut(c)}, nil
}

func (configAPI) updateConfigOp() huma.Operation {
	return huma.Operation{
		OperationID: "updatePlatformConfig",
		Method:      http.MethodPatch,
		Path:        "/config",
		Summary:     "Update platform configuration",
		Description: "Changes the supplied settings and moves updatedAt; omitted fields are left as they are. 400 INVALID_INPUT names every bad field. A new webhookEndpoint is sent a TEST event.",
		Tags:        []string{configTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h configAPI) updateConfig(ctx context.Context, in *updateConfigInput) (*configOutput, error) {
	c, err := h.d.Platforms.UpdateConfig(ctx, principal(ctx).PlatformID, in.Body.update())
	if err != nil {
		return nil, apiError(err)
	}
	return &configOutput{Body: configOut(c)}, nil
}
