package platforms

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// The embedded-wallet OTP settings: the reference's bounds and defaults.
const (
	DefaultOTPLength   = 6
	MinOTPLength       = 4
	MaxOTPLength       = 12
	DefaultOTPLifetime = 5 * time.Minute
	MinOTPLifetime     = time.Second
	MaxOTPLifetime     = 24 * time.Hour
)

// MaxWebhookEndpoint bounds a webhook endpoint URL, in bytes; MaxUmaDomain
// an UMA domain (a DNS name).
const (
	MaxWebhookEndpoint = 2048
	MaxUmaDomain       = 253
)

// TransactionTypes are the values of a currency's enabledTransactionTypes.
var TransactionTypes = []string{"INCOMING", "OUTGOING"}

// CounterpartyFieldNames are the names a currency's
// requiredCounterpartyFields may ask for (the reference's
// CustomerInfoFieldName).
var CounterpartyFieldNames = []string{
	"FULL_NAME", "BIRTH_DATE", "NATIONALITY", "PHONE_NUMBER", "EMAIL", "POSTAL_ADDRESS", "TAX_ID",
	"REGISTRATION_NUMBER", "USER_TYPE", "COUNTRY_OF_RESIDENCE", "ACCOUNT_IDENTIFIER", "FI_LEGAL_ENTITY_NAME",
	"FI_ADDRESS", "PURPOSE_OF_PAYMENT", "ULTIMATE_INSTITUTION_COUNTRY", "IDENTIFIER", "BUSINESS_TYPE",
	"COMPANY_LEGAL_NAME", "ID_TYPE", "ID_NUMBER",
}

// CheckCounterpartyFields adds to errs each field of list (named field)
// whose name is not one of CounterpartyFieldNames or comes twice.
func CheckCounterpartyFields(errs *fault.Collector, field string, list []ports.CounterpartyField) {
	names := map[string]bool{}
	for j, f := range list {
		at := fmt.Sprintf("%s[%d].name", field, j)
		switch {
		case !slices.Contains(CounterpartyFieldNames, f.Name):
			errs.Add(at, "must be one of "+strings.Join(CounterpartyFieldNames, ", "))
		case names[f.Name]:
			errs.Add(at, "duplicate field "+f.Name)
		}
		names[f.Name] = true
	}
}

// OTPSettings are the length and lifetime of the EMAIL_OTP codes of p's
// embedded wallets: its configuration, else the defaults.
func OTPSettings(p ports.Platform) (length int, lifetime time.Duration) {
	length, lifetime = p.EmbeddedWallet.OTPLength, p.EmbeddedWallet.OTPLifetime
	if length == 0 {
		length = DefaultOTPLength
	}
	if lifetime == 0 {
		lifetime = DefaultOTPLifetime
	}
	return length, lifetime
}

// Config is a platform's configuration as GET /config shows it: every
// setting with its effective value.
type Config struct {
	Platform ports.Platform
	// Currencies has one setting per currency of the platform, the
	// defaults where none was set.
	Currencies  []ports.CurrencySetting
	OTPLength   int
	OTPLifetime time.Duration
	// SenderName is the OTP e-mail's sender name in effect.
	SenderName string
}

// DefaultCurrencySetting is a currency's setting until the platform sets
// one: any amount the API accepts, both directions, nothing asked of the
// counterparty.
func DefaultCurrencySetting(code string) ports.CurrencySetting {
	return ports.CurrencySetting{Code: code, MinAmount: 0, MaxAmount: money.MaxAmount,
		RequiredCounterpartyFields: []ports.CounterpartyField{}, EnabledTransactionTypes: slices.Clone(TransactionTypes)}
}

// CodeAmountOutOfRange is the reference's 400 for an amount outside a
// currency's configured minAmount..maxAmount.
const CodeAmountOutOfRange = "AMOUNT_OUT_OF_RANGE"

// SettingOf is p's setting of currency code; zero (Code "") when p has
// none for it (the defaults then apply: any amount, both directions).
func SettingOf(p ports.Platform, code string) ports.CurrencySetting {
	for _, c := range p.CurrencySettings {
		if c.Code == code {
			return c
		}
	}
	return ports.CurrencySetting{}
}

// ReadSetting reads platform platformID and returns its setting of
// currency code (SettingOf), for the payments that do not get it with
// their parties read (ports.Parties.Currency).
func ReadSetting(ctx context.Context, read interface{ Platforms() ports.PlatformRepo }, platformID, code string) (ports.CurrencySetting, error) {
	p, err := read.Platforms().Get(ctx, platformID)
	if err != nil {
		return ports.CurrencySetting{}, fmt.Errorf("read platform %s: %w", platformID, err)
	}
	return SettingOf(p, code), nil
}

// CheckSend refuses to send amount minor units of s's currency when the
// platform's setting s forbids it: 400 INVALID_INPUT when the currency's
// enabledTransactionTypes leave OUTGOING out, 400 AMOUNT_OUT_OF_RANGE
// outside minAmount..maxAmount (both inclusive). field names the amount in
// the request. A zero s (no setting) allows everything.
func CheckSend(s ports.CurrencySetting, field string, amount int64) error {
	if s.Code == "" {
		return nil
	}
	if !slices.Contains(s.EnabledTransactionTypes, "OUTGOING") {
		return fault.Invalid(field, "the platform's configuration does not enable OUTGOING payments in "+s.Code+
			" (supportedCurrencies[].enabledTransactionTypes)")
	}
	if amount < s.MinAmount || amount > s.MaxAmount {
		msg := fmt.Sprintf("%d %s is outside the platform's configured range for %s, %d to %d (supportedCurrencies[].minAmount, maxAmount)",
			amount, s.Code, s.Code, s.MinAmount, s.MaxAmount)
		return fault.InvalidCode(CodeAmountOutOfRange, field, msg)
	}
	return nil
}

// CheckReceive refuses money arriving in s's currency when the platform's
// setting s leaves INCOMING out of its enabledTransactionTypes: 400
// INVALID_INPUT naming field. A zero s (no setting) allows it. (minAmount
// and maxAmount bound what is sent, not what arrives.)
func CheckReceive(s ports.CurrencySetting, field string) error {
	if s.Code == "" || slices.Contains(s.EnabledTransactionTypes, "INCOMING") {
		return nil
	}
	return fault.Invalid(field, "the platform's configuration does not enable INCOMING payments in "+s.Code+
		" (supportedCurrencies[].enabledTransactionTypes)")
}

func configOf(p ports.Platform) Config {
	c := Config{Platform: p, Currencies: make([]ports.CurrencySetting, len(p.Currencies))}
	for i, code := range p.Currencies {
		c.Currencies[i] = SettingOf(p, code)
		if c.Currencies[i].Code == "" {
			c.Currencies[i] = DefaultCurrencySetting(code)
		}
	}
	c.OTPLength, c.OTPLifetime = OTPSettings(p)
	c.SenderName = cmp.Or(p.EmbeddedWallet.SenderName, DefaultSenderName)
	return c
}

// Config returns the platform's configuration.
func (s *Service) Config(ctx context.Context, platformID string) (Config, error) {
	p, err := s.Get(ctx, platformID)
	if err != nil {
		return Config{}, err
	}
	return configOf(p), nil
}

// ConfigUpdate is a partial update: a nil field is left as it is.
type ConfigUpdate struct {
	UmaDomain *string
	// WebhookEndpoint "" removes the endpoint.
	WebhookEndpoint *string
	// SupportedCurrencies replaces the platform's currencies and their
	// settings (nil: unchanged).
	SupportedCurrencies []ports.CurrencySetting
	OTPLength           *int
	// OTPExpirationSeconds is the OTP lifetime in seconds.
	OTPExpirationSeconds *int
	OTPAlphanumeric      *bool
	// The OTP e-mail's branding (ports.EmbeddedWalletConfig); "" unsets.
	AppName, SenderAddress, SenderName, ReplyTo, LogoURL *string
}

// The reference's bounds of the OTP e-mail's branding, in characters.
const (
	MaxBrandingText = 255
	MaxLogoURL      = 512
)

// DefaultSenderName is the OTP e-mail's sender name until one is set.
const DefaultSenderName = "Notifications"

// UpdateConfig applies u to the platform's configuration and moves its
// updatedAt; every bad field is named in one 400. A currency that is new to
// the platform gets its internal account (a removed one keeps its account
// and balance, as a customer's does). After the change commits, a changed
// webhook endpoint is told to the EndpointChanged hook, whose failure is
// logged, not returned: the configuration has changed.
func (s *Service) UpdateConfig(ctx context.Context, platformID string, u ConfigUpdate) (Config, error) {
	if err := s.checkUpdate(u); err != nil {
		return Config{}, err
	}
	var added []money.Currency
	if u.SupportedCurrencies != nil {
		codes := make([]string, len(u.SupportedCurrencies))
		for i, c := range u.SupportedCurrencies {
			codes[i] = c.Code
		}
		if err := s.createSystemAccounts(ctx, codes); err != nil {
			return Config{}, err
		}
	}
	var out, before ports.Platform
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		p, err := tx.Platforms().GetForUpdate(ctx, platformID)
		if errors.Is(err, ports.ErrNotFound) {
			return fault.NotFound("NOT_FOUND", "platform not found")
		}
		if err != nil {
			return fmt.Errorf("read platform %s: %w", platformID, err)
		}
		before = p
		if u.UmaDomain != nil {
			p.UmaDomain = *u.UmaDomain
		}
		if u.WebhookEndpoint != nil {
			p.WebhookEndpoint = *u.WebhookEndpoint
		}
		if u.OTPLength != nil {
			p.EmbeddedWallet.OTPLength = *u.OTPLength
		}
		if u.OTPExpirationSeconds != nil {
			p.EmbeddedWallet.OTPLifetime = time.Duration(*u.OTPExpirationSeconds) * time.Second
		}
		if u.OTPAlphanumeric != nil {
			p.EmbeddedWallet.Alphanumeric = *u.OTPAlphanumeric
		}
		w := &p.EmbeddedWallet
		for _, f := range []struct {
			to   *string
			from *string
		}{{&w.AppName, u.AppName}, {&w.SenderAddress, u.SenderAddress}, {&w.SenderName, u.SenderName},
			{&w.ReplyTo, u.ReplyTo}, {&w.LogoURL, u.LogoURL}} {
			if f.from != nil {
				*f.to = *f.from
			}
		}
		if u.SupportedCurrencies != nil {
			p.Currencies = make([]string, len(u.SupportedCurrencies))
			p.CurrencySettings = make([]ports.CurrencySetting, len(u.SupportedCurrencies))
			for i, c := range u.SupportedCurrencies {
				p.Currencies[i] = c.Code
				p.CurrencySettings[i] = c
			}
			added = nil
			for _, code := range p.Currencies {
				if !slices.Contains(before.Currencies, code) {
					cur, _ := money.Lookup(code)
					added = append(added, cur)
				}
			}
		}
		p.UpdatedAt = ports.Stored(s.clock.Now())
		if err := tx.Platforms().Update(ctx, p); err != nil {
			return fmt.Errorf("update platform %s: %w", platformID, err)
		}
		for _, c := range added {
			if err := s.ensureAccount(ctx, tx, p.ID, c, p.UpdatedAt); err != nil {
				return err
			}
		}
		if p.WebhookEndpoint != before.WebhookEndpoint && p.WebhookEndpoint != "" {
			if err := s.endpointChanged.WebhookEndpointChanged(ctx, tx, p.ID, p.WebhookEndpoint); err != nil {
				return fmt.Errorf("webhook endpoint of %s: %w", platformID, err)
			}
		}
		out = p
		return nil
	})
	if err != nil {
		return Config{}, err
	}
	return configOf(out), nil
}

// ensureAccount opens the platform's account in c unless it has one (it
// had the currency before).
func (s *Service) ensureAccount(ctx context.Context, tx ports.Tx, platformID string, c money.Currency, now time.Time) error {
	f := ports.InternalAccountFilter{PlatformID: platformID, PlatformOnly: true, Currency: c.Code}
	rows, _, err := tx.InternalAccounts().List(ctx, f, ports.Page{Limit: 1})
	if err != nil {
		return fmt.Errorf("list platform %s accounts: %w", c.Code, err)
	}
	if len(rows) > 0 {
		return nil
	}
	return s.openAccount(ctx, tx, platformID, c, now)
}

// checkUpdate names every bad field of u.
func (s *Service) checkUpdate(u ConfigUpdate) error {
	var errs fault.Collector
	if u.UmaDomain != nil && !validDomain(*u.UmaDomain) {
		errs.Add("umaDomain", fmt.Sprintf("must be a DNS name of dot-separated labels (letters, digits, '-'), at most %d characters", MaxUmaDomain))
	}
	if u.WebhookEndpoint != nil && *u.WebhookEndpoint != "" {
		if msg := s.checkEndpoint(*u.WebhookEndpoint); msg != "" {
			errs.Add("webhookEndpoint", msg)
		}
	}
	if u.SupportedCurrencies != nil {
		checkCurrencies(&errs, u.SupportedCurrencies)
	}
	if u.OTPLength != nil && (*u.OTPLength < MinOTPLength || *u.OTPLength > MaxOTPLength) {
		errs.Add("embeddedWalletConfig.otpLength", fmt.Sprintf("must be between %d and %d", MinOTPLength, MaxOTPLength))
	}
	if v := u.OTPExpirationSeconds; v != nil && (*v < int(MinOTPLifetime/time.Second) || *v > int(MaxOTPLifetime/time.Second)) {
		errs.Add("embeddedWalletConfig.expirationSeconds", fmt.Sprintf("must be between %d and %d",
			int(MinOTPLifetime/time.Second), int(MaxOTPLifetime/time.Second)))
	}
	checkBranding(&errs, u)
	return errs.Err()
}

// checkBranding names each bad branding field of u: text of at most
// MaxBrandingText characters without control characters (they would
// break the e-mail's headers), bare e-mail addresses, an absolute http(s)
// logo URL of at most MaxLogoURL characters. "" (unset) is always fine.
func checkBranding(errs *fault.Collector, u ConfigUpdate) {
	// text checks a set value and reports whether it passed.
	text := func(field string, v *string, limit int) bool {
		switch {
		case v == nil || *v == "":
			return false
		case utf8.RuneCountInString(*v) > limit:
			errs.Add("embeddedWalletConfig."+field, fmt.Sprintf("must be at most %d characters", limit))
		case strings.ContainsFunc(*v, unicode.IsControl):
			errs.Add("embeddedWalletConfig."+field, "must not contain control characters")
		default:
			return true
		}
		return false
	}
	text("appName", u.AppName, MaxBrandingText)
	text("sendFromEmailSenderName", u.SenderName, MaxBrandingText)
	for _, f := range []struct {
		name string
		v    *string
	}{{"sendFromEmailAddress", u.SenderAddress}, {"replyToEmailAddress", u.ReplyTo}} {
		if text(f.name, f.v, MaxBrandingText) && !bareAddress(*f.v) {
			errs.Add("embeddedWalletConfig."+f.name, "must be an e-mail address (name@example.com, without a display name)")
		}
	}
	if text("logoUrl", u.LogoURL, MaxLogoURL) {
		l, err := url.Parse(*u.LogoURL)
		if err != nil || (l.Scheme != "https" && l.Scheme != "http") || l.Host == "" || l.User != nil ||
			strings.ContainsFunc(*u.LogoURL, unicode.IsSpace) {
			errs.Add("embeddedWalletConfig.logoUrl", "must be an absolute http or https URL with a host and no user information")
		}
	}
}

// bareAddress reports whether v is an e-mail address and nothing more.
func bareAddress(v string) bool {
	a, err := mail.ParseAddress(v)
	return err == nil && a.Name == "" && a.Address == v
}

// checkEndpoint says what is wrong with a webhook endpoint ("" when
// nothing): an absolute https URL with a host, no user information and no
// fragment; plain http only to a loopback host in the sandbox.
func (s *Service) checkEndpoint(v string) string {
	if len(v) > MaxWebhookEndpoint {
		return fmt.Sprintf("must be at most %d characters", MaxWebhookEndpoint)
	}
	if strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "must not contain spaces or control characters"
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || !u.IsAbs() || u.Opaque != "" || u.Host == "":
		return "must be an absolute URL with a host, such as https://hooks.example.com/corridor"
	case u.User != nil:
		return "must not carry user information (user:password@)"
	case u.Fragment != "" || strings.Contains(v, "#"):
		return "must not have a fragment (#…)"
	case u.Port() != "" && !validPort(u.Port()):
		return "must have a port between 1 and 65535"
	case u.Scheme == "https":
		return ""
	case u.Scheme != "http":
		return "must be an https URL"
	case !loopback(u.Hostname()):
		return "must be https: plain http is allowed only to a loopback host (localhost, 127.0.0.1, [::1]) in the sandbox"
	case !s.sandbox:
		return "must be https: plain http to a loopback host is allowed only in the sandbox"
	}
	return ""
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validDomain accepts a DNS host name of dot-separated labels.
func validDomain(d string) bool {
	if d == "" || len(d) > MaxUmaDomain {
		return false
	}
	for label := range strings.SplitSeq(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// checkCurrencies names every bad entry of a supportedCurrencies list.
func checkCurrencies(errs *fault.Collector, cs []ports.CurrencySetting) {
	if len(cs) == 0 {
		errs.Add("supportedCurrencies", "must name at least one currency")
		return
	}
	seen := map[string]bool{}
	for i, c := range cs {
		at := fmt.Sprintf("supportedCurrencies[%d]", i)
		switch _, ok := money.Lookup(c.Code); {
		case !ok:
			errs.Add(at+".currencyCode", "unknown currency "+c.Code+"; supported: "+strings.Join(money.Codes(), ", "))
		case seen[c.Code]:
			errs.Add(at+".currencyCode", "duplicate currency "+c.Code)
		}
		seen[c.Code] = true
		if c.MinAmount < 0 {
			errs.Add(at+".minAmount", "must not be negative")
		}
		switch {
		case c.MaxAmount < 0 || c.MaxAmount > money.MaxAmount:
			errs.Add(at+".maxAmount", fmt.Sprintf("must be between 0 and %d", money.MaxAmount))
		case c.MaxAmount < c.MinAmount:
			errs.Add(at+".maxAmount", "must not be below minAmount")
		}
		CheckCounterpartyFields(errs, at+".requiredCounterpartyFields", c.RequiredCounterpartyFields)
		types := map[string]bool{}
		for j, t := range c.EnabledTransactionTypes {
			field := fmt.Sprintf("%s.enabledTransactionTypes[%d]", at, j)
			switch {
			case !slices.Contains(TransactionTypes, t):
				errs.Add(field, "must be one of "+strings.Join(TransactionTypes, ", "))
			case types[t]:
				errs.Add(field, "duplicate transaction type "+t)
			}
			types[t] = true
		}
	}
}
