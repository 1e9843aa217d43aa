package customers

import (
	"fmt"
	"net/mail"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// Customer types.
const (
	TypeIndividual = "INDIVIDUAL"
	TypeBusiness   = "BUSINESS"
)

// Verification statuses (kycStatus of individuals, kybStatus of businesses).
const (
	StatusUnverified = "UNVERIFIED"
	StatusPending    = "PENDING"
	StatusApproved   = "APPROVED"
	StatusRejected   = "REJECTED"
	StatusHold       = "HOLD"
)

// AuthEmailOTP is the credential type of a new embedded wallet.
const AuthEmailOTP = "EMAIL_OTP"

// Enumerations of the reference's customer schema. Each is a closed set: a
// value outside it is a 400 naming the field.
var (
	CustomerTypes        = []string{TypeIndividual, TypeBusiness}
	VerificationStatuses = []string{StatusUnverified, StatusPending, StatusApproved, StatusRejected, StatusHold}
	IDTypes              = []string{"SSN", "ITIN", "EIN", "NON_US_TAX_ID"}
	AcceptanceMethods    = []string{"CHECKBOX", "CLICK_TO_ACCEPT"}

	IndividualSourceOfFundsCategories = []string{"SALARY", "SELF_EMPLOYMENT_INCOME", "INVESTMENT_INCOME", "PENSION",
		"RENTAL_INCOME", "GIFT", "INHERITANCE", "LOAN", "SAVINGS", "SALE_OF_ASSETS", "OTHER"}
	SourceOfWealthCategories = []string{"SALARY", "BUSINESS_INCOME", "INVESTMENTS", "INHERITANCE", "PROPERTY_SALE",
		"GIFT", "RETIREMENT", "SAVINGS", "OTHER"}
	PurposesOfAccount = []string{"CONTRACTOR_PAYOUTS", "CREATOR_PAYOUTS", "EMPLOYEE_PAYOUTS", "MARKETPLACE_SELLER_PAYOUTS",
		"SUPPLIER_PAYMENTS", "CROSS_BORDER_B2B", "AR_AUTOMATION", "AP_AUTOMATION", "EMBEDDED_PAYMENTS",
		"PLATFORM_FEE_COLLECTION", "P2P_TRANSFERS", "CHARITABLE_DONATIONS", "OTHER"}
	MonthlyTransactionCounts  = []string{"COUNT_UNDER_10", "COUNT_10_TO_100", "COUNT_100_TO_500", "COUNT_500_TO_1000", "COUNT_OVER_1000"}
	MonthlyTransactionVolumes = []string{"VOLUME_UNDER_10K", "VOLUME_10K_TO_100K", "VOLUME_100K_TO_1M", "VOLUME_1M_TO_10M", "VOLUME_OVER_10M"}
	AnnualIncomeRanges        = []string{"UNDER_50K", "RANGE_50K_100K", "RANGE_100K_250K", "RANGE_250K_1M", "OVER_1M"}
	NetWorthRanges            = []string{"UNDER_100K", "RANGE_100K_500K", "RANGE_500K_1M", "RANGE_1M_5M", "RANGE_5M_25M", "OVER_25M"}
	PepStatuses               = []string{"NONE", "DOMESTIC", "FOREIGN", "HIO", "FAMILY_OR_ASSOCIATE"}

	EntityTypes = []string{"SOLE_PROPRIETORSHIP", "PARTNERSHIP", "LLC", "CORPORATION", "S_CORPORATION", "NON_PROFIT",
		"PUBLICLY_LISTED_COMPANY", "TRUST", "PRIVATE_FOUNDATION", "CHARITY", "OTHER"}
	BusinessTypes = []string{"AGRICULTURE_FORESTRY_FISHING_AND_HUNTING", "MINING_QUARRYING_AND_OIL_AND_GAS_EXTRACTION",
		"UTILITIES", "CONSTRUCTION", "MANUFACTURING", "WHOLESALE_TRADE", "RETAIL_TRADE", "TRANSPORTATION_AND_WAREHOUSING",
		"INFORMATION", "FINANCE_AND_INSURANCE", "REAL_ESTATE_AND_RENTAL_AND_LEASING",
		"PROFESSIONAL_SCIENTIFIC_AND_TECHNICAL_SERVICES", "MANAGEMENT_OF_COMPANIES_AND_ENTERPRISES",
		"ADMINISTRATIVE_AND_SUPPORT_AND_WASTE_MANAGEMENT_AND_REMEDIATION_SERVICES", "EDUCATIONAL_SERVICES",
		"HEALTH_CARE_AND_SOCIAL_ASSISTANCE", "ARTS_ENTERTAINMENT_AND_RECREATION", "ACCOMMODATION_AND_FOOD_SERVICES",
		"OTHER_SERVICES", "PUBLIC_ADMINISTRATION"}
	BusinessSourceOfFundsCategories = []string{"OPERATING_REVENUE", "INVESTMENT_INCOME", "LOANS", "VENTURE_CAPITAL",
		"PERSONAL_SAVINGS", "DONATIONS", "OTHER"}
)

// String length limits. The reference fixes a few (descriptions 1–500,
// primary contact names ≤250, ipAddress ≤45); the rest are corridor's own
// bounds so no field can carry an unbounded value.
const (
	MaxShort            = 255  // names, address lines, ids, versions
	MaxLong             = 1024 // free text (business sourceOfFunds)
	MaxDescription      = 500  // *OtherDescription
	MaxContactName      = 250  // primaryContactFirstName/LastName
	MaxIPAddress        = 45
	MaxEmail            = 254
	MaxPostalCode       = 32
	MaxIdentifier       = 64
	MaxUmaUser          = 64
	MaxUmaAddress       = lookup.MaxUmaAddress
	MaxCurrencies       = 20
	MaxListItems        = 250 // country lists
	MaxCategoryItems    = 20  // category lists
	MaxPlatformCustomer = MaxShort
)

var (
	phoneRe      = regexp.MustCompile(`^\+[1-9]\d{1,14}$`)
	naicsRe      = regexp.MustCompile(`^\d{2,6}$`)
	hostLabelRe  = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
	usTaxIDRe    = regexp.MustCompile(`^\d{3}-?\d{2}-?\d{4}$`)
	dateOnlySpec = "YYYY-MM-DD"
)

// Fields is the customer field rules for another package's input (a
// beneficial owner's personalInfo, a document's text), so a rule is
// checked in one place. The zero value gathers errors like checker.
type Fields struct{ checker }

// Text checks a free-text value as the customer fields are checked.
func (f *Fields) Text(field, v string, max int) { f.text(field, v, max) }

// Address checks a postal address as the customer addresses are checked.
func (f *Fields) Address(field string, a *ports.Address) { f.address(field, a) }

// checker wraps a fault.Collector with the field rules customers share.
type checker struct {
	fault.Collector
	now time.Time
}

// text checks a free-text value: valid UTF-8, not blank, at most max
// runes, no control characters (free text longer than MaxShort may hold
// tabs and line breaks).
func (c *checker) text(field, v string, max int) {
	switch {
	case !utf8.ValidString(v):
		c.Add(field, "must be valid UTF-8")
	case strings.TrimSpace(v) == "":
		c.Add(field, "must not be empty")
	case utf8.RuneCountInString(v) > max:
		c.Add(field, fmt.Sprintf("must be at most %d characters", max))
	case strings.IndexFunc(v, func(r rune) bool { return badControl(r, max > MaxShort) }) >= 0:
		c.Add(field, "must not contain control characters")
	}
}

// badControl reports a control character not allowed in text; free text
// (multiLine) may hold tabs and line breaks.
func badControl(r rune, multiLine bool) bool {
	if multiLine && (r == '\n' || r == '\r' || r == '\t') {
		return false
	}
	return unicode.IsControl(r)
}

// optText is text for an optional value ("" is unset).
func (c *checker) optText(field, v string, max int) {
	if v != "" {
		c.text(field, v, max)
	}
}

// required records a missing required value.
func (c *checker) required(field, v string) bool {
	if v == "" {
		c.Add(field, "is required")
		return false
	}
	return true
}

func (c *checker) enum(field, v string, allowed []string) {
	if v != "" && !slices.Contains(allowed, v) {
		c.Add(field, "must be one of "+strings.Join(allowed, ", "))
	}
}

func (c *checker) enumList(field string, vs []string, allowed []string) {
	if len(vs) > MaxCategoryItems {
		c.Add(field, fmt.Sprintf("must have at most %d items", MaxCategoryItems))
		return
	}
	for i, v := range vs {
		if !slices.Contains(allowed, v) {
			c.Add(fmt.Sprintf("%s[%d]", field, i), "must be one of "+strings.Join(allowed, ", "))
		}
	}
}

func (c *checker) country(field, v string) {
	if v != "" && !money.IsCountry(v) {
		c.Add(field, "must be an ISO 3166-1 alpha-2 country code")
	}
}

func (c *checker) countries(field string, vs []string) {
	if len(vs) > MaxListItems {
		c.Add(field, fmt.Sprintf("must have at most %d items", MaxListItems))
		return
	}
	for i, v := range vs {
		if !money.IsCountry(v) {
			c.Add(fmt.Sprintf("%s[%d]", field, i), "must be an ISO 3166-1 alpha-2 country code")
		}
	}
}

// pastDate checks a YYYY-MM-DD calendar date that is not after today.
func (c *checker) pastDate(field, v string) {
	if v == "" {
		return
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		c.Add(field, "must be a real date formatted "+dateOnlySpec)
		return
	}
	today := c.now.UTC().Format(time.DateOnly)
	if d.Format(time.DateOnly) > today {
		c.Add(field, "must not be in the future")
	}
}

func (c *checker) email(field, v string) {
	if v == "" {
		return
	}
	if len(v) > MaxEmail {
		c.Add(field, fmt.Sprintf("must be at most %d characters", MaxEmail))
		return
	}
	if !validEmail(v) {
		c.Add(field, "must be an e-mail address")
	}
}

// ValidEmail reports whether v is an e-mail address as a customer's e-mail
// is checked: at most MaxEmail bytes, a bare addr-spec with a dotted domain.
func ValidEmail(v string) bool { return len(v) <= MaxEmail && validEmail(v) }

// ValidPhone reports whether v is an E.164 phone number.
func ValidPhone(v string) bool { return phoneRe.MatchString(v) }

// ValidUSTaxID reports whether v looks like an SSN or ITIN (###-##-####).
func ValidUSTaxID(v string) bool { return usTaxIDRe.MatchString(v) }

// validEmail accepts a bare addr-spec (no display name) with a dotted domain.
func validEmail(v string) bool {
	a, err := mail.ParseAddress(v)
	if err != nil || a.Address != v || a.Name != "" {
		return false
	}
	at := strings.LastIndexByte(v, '@')
	return at > 0 && validDomain(v[at+1:]) && strings.Contains(v[at+1:], ".")
}

func (c *checker) phone(field, v string) {
	if v != "" && !phoneRe.MatchString(v) {
		c.Add(field, "must be an E.164 phone number (+ then up to 15 digits)")
	}
}

// umaAddress checks a supplied UMA address: "$" + user + "@" + domain.
func (c *checker) umaAddress(field, v string) {
	if v == "" {
		return
	}
	if len(v) > MaxUmaAddress {
		c.Add(field, fmt.Sprintf("must be at most %d characters", MaxUmaAddress))
		return
	}
	if !lookup.ValidUmaAddress(v) {
		c.Add(field, "must be $<user>@<domain>, the user part 1-64 lowercase letters, digits, '.', '_' or '-'")
	}
}

// validDomain accepts a DNS host name of dot-separated labels.
func validDomain(d string) bool {
	if d == "" || len(d) > 253 {
		return false
	}
	for _, l := range strings.Split(d, ".") {
		if !hostLabelRe.MatchString(l) {
			return false
		}
	}
	return true
}

func (c *checker) address(field string, a *ports.Address) {
	if a == nil {
		return
	}
	if c.required(field+".line1", a.Line1) {
		c.text(field+".line1", a.Line1, MaxShort)
	}
	c.optText(field+".line2", a.Line2, MaxShort)
	c.optText(field+".city", a.City, MaxShort)
	c.optText(field+".state", a.State, MaxShort)
	if c.required(field+".postalCode", a.PostalCode) {
		c.text(field+".postalCode", a.PostalCode, MaxPostalCode)
	}
	if c.required(field+".country", a.Country) {
		c.country(field+".country", a.Country)
	}
}

func (c *checker) consent(field string, e *ports.EndUserTermsConsent) {
	if e == nil {
		return
	}
	if e.AcceptedAt.IsZero() {
		c.Add(field+".acceptedAt", "is required")
	} else if e.AcceptedAt.After(c.now.Add(consentClockSkew)) {
		c.Add(field+".acceptedAt", "must not be in the future")
	}
	if c.required(field+".ipAddress", e.IPAddress) {
		if len(e.IPAddress) > MaxIPAddress {
			c.Add(field+".ipAddress", fmt.Sprintf("must be at most %d characters", MaxIPAddress))
		} else if _, err := netip.ParseAddr(e.IPAddress); err != nil {
			c.Add(field+".ipAddress", "must be an IPv4 or IPv6 address")
		}
	}
	if c.required(field+".termsVersion", e.TermsVersion) {
		c.text(field+".termsVersion", e.TermsVersion, MaxShort)
	}
	if c.required(field+".acceptanceMethod", e.AcceptanceMethod) {
		c.enum(field+".acceptanceMethod", e.AcceptanceMethod, AcceptanceMethods)
	}
}

// consentClockSkew tolerates a client clock slightly ahead of ours.
const consentClockSkew = 5 * time.Minute

// currencies validates a currency list and returns it deduplicated (first
// occurrence wins). Fiat currencies of different jurisdictions need separate
// customers: such a list is rejected naming the conflicting currencies.
func (c *checker) currencies(field string, vs []string) []string {
	if len(vs) == 0 {
		c.Add(field, "must list at least one currency")
		return nil
	}
	if len(vs) > MaxCurrencies {
		c.Add(field, fmt.Sprintf("must have at most %d items", MaxCurrencies))
		return nil
	}
	var out []string
	ok := true
	for i, code := range vs {
		if _, known := money.Lookup(code); !known {
			c.Add(fmt.Sprintf("%s[%d]", field, i), "unknown currency code "+quoteCode(code)+"; supported: "+strings.Join(money.Codes(), ", "))
			ok = false
			continue
		}
		if !slices.Contains(out, code) {
			out = append(out, code)
		}
	}
	if !ok {
		return nil
	}
	// Group fiat currencies by jurisdiction.
	var jurisdictions []string
	byJurisdiction := map[string][]string{}
	for _, code := range out {
		cur, _ := money.Lookup(code)
		if cur.Crypto || cur.Jurisdiction == "" {
			continue
		}
		if _, seen := byJurisdiction[cur.Jurisdiction]; !seen {
			jurisdictions = append(jurisdictions, cur.Jurisdiction)
		}
		byJurisdiction[cur.Jurisdiction] = append(byJurisdiction[cur.Jurisdiction], code)
	}
	if len(jurisdictions) > 1 {
		parts := make([]string, len(jurisdictions))
		for i, j := range jurisdictions {
			parts[i] = strings.Join(byJurisdiction[j], ", ") + " (" + j + ")"
		}
		c.Add(field, "currencies of different jurisdictions need separate customers: "+strings.Join(parts, " vs "))
		return nil
	}
	return out
}

// quoteCode shows a client-supplied code safely in a message.
func quoteCode(s string) string {
	if utf8.RuneCountInString(s) > 16 {
		s = string([]rune(s)[:16]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
