package customers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/ports"
)

// Input is a customer's writable fields as a request supplies them, for
// Create and Update alike. A nil pointer or nil slice is a field the request
// did not send; a supplied empty string is rejected (nothing is cleared by
// sending "").
type Input struct {
	// CustomerType is required on create and update (INDIVIDUAL/BUSINESS);
	// on update it must match the stored type.
	CustomerType string
	// PlatformCustomerID and Region are set on create only; an update that
	// supplies either is rejected naming it.
	PlatformCustomerID *string
	Region             *string

	// Currencies replaces the enabled currencies; nil keeps them (create:
	// inferred from the region).
	Currencies  []string
	Email       *string
	PhoneNumber *string
	UmaAddress  *string
	// KYCStatus is an individual's kycStatus, KYBStatus a business's
	// kybStatus; supplying the other type's status is rejected.
	KYCStatus           *string
	KYBStatus           *string
	Address             *ports.Address
	EndUserTermsConsent *ports.EndUserTermsConsent

	// Individual holds an individual's profile fields; supplying any of
	// them for a business is rejected naming each.
	Individual IndividualFields
	// Business is a business's businessInfo; supplying it for an
	// individual is rejected.
	Business *BusinessFields
}

// IndividualFields are the reference's IndividualCustomerFields and
// CustomerEdd, all optional.
type IndividualFields struct {
	FullName          *string
	BirthDate         *string
	Nationality       *string
	IDType            *string
	Identifier        *string
	CountryOfIssuance *string

	SourceOfFundsCategories          []string
	SourceOfFundsOtherDescription    *string
	SourceOfWealthCategories         []string
	SourceOfWealthOtherDescription   *string
	PurposeOfAccount                 *string
	PurposeOfAccountOtherDescription *string
	ExpectedMonthlyTransactionCount  *string
	ExpectedMonthlyTransactionVolume *string
	AnnualIncomeRange                *string
	NetWorthRange                    *string
	PepStatus                        *string
}

// BusinessFields is the reference's BusinessInfo (create: legalName,
// country, taxId and incorporatedOn required) and BusinessInfoUpdate
// (update: all optional).
type BusinessFields struct {
	LegalName                        *string
	DoingBusinessAs                  *string
	Country                          *string
	RegistrationNumber               *string
	IncorporatedOn                   *string
	EntityType                       *string
	TaxID                            *string
	CountriesOfOperation             []string
	BusinessType                     *string
	PurposeOfAccount                 *string
	SourceOfFunds                    *string
	ExpectedMonthlyTransactionCount  *string
	ExpectedMonthlyTransactionVolume *string
	ExpectedRecipientJurisdictions   []string
	NaicsCode                        *string
	SourceOfFundsCategories          []string
	SourceOfFundsOtherDescription    *string
	PurposeOfAccountOtherDescription *string
	ExpectedCounterpartyCountries    []string
	PrimaryContactFirstName          *string
	PrimaryContactLastName           *string
}

// rule validates one supplied, non-empty string value.
type rule func(c *checker, field, v string)

func textRule(max int) rule {
	return func(c *checker, field, v string) { c.text(field, v, max) }
}

func enumRule(allowed []string) rule {
	return func(c *checker, field, v string) { c.enum(field, v, allowed) }
}

func lenRule(min, max int) rule {
	return func(c *checker, field, v string) {
		n := len([]rune(v))
		if n < min || n > max {
			c.Add(field, fmt.Sprintf("must be %d to %d characters", min, max))
			return
		}
		c.text(field, v, max)
	}
}

var (
	countryRule rule = (*checker).country
	dateRule    rule = (*checker).pastDate
	naicsRule   rule = func(c *checker, field, v string) {
		if !naicsRe.MatchString(v) {
			c.Add(field, "must be 2 to 6 digits")
		}
	}
)

// strField binds a supplied value to where it is stored and how it is
// checked.
type strField struct {
	name string
	in   *string
	dst  *string
	rule rule
}

// listField is strField for string lists, checked as a whole.
type listField struct {
	name  string
	in    []string
	dst   *[]string
	check func(c *checker, field string, vs []string)
}

func enumListCheck(allowed []string) func(c *checker, field string, vs []string) {
	return func(c *checker, field string, vs []string) { c.enumList(field, vs, allowed) }
}

func (f *IndividualFields) fields(dst *ports.IndividualInfo) ([]strField, []listField) {
	return []strField{
			{"fullName", f.FullName, &dst.FullName, textRule(MaxShort)},
			{"birthDate", f.BirthDate, &dst.BirthDate, dateRule},
			{"nationality", f.Nationality, &dst.Nationality, countryRule},
			{"idType", f.IDType, &dst.IDType, enumRule(IDTypes)},
			{"identifier", f.Identifier, &dst.Identifier, textRule(MaxIdentifier)},
			{"countryOfIssuance", f.CountryOfIssuance, &dst.CountryOfIssuance, countryRule},
			{"sourceOfFundsOtherDescription", f.SourceOfFundsOtherDescription, &dst.SourceOfFundsOtherDescription, lenRule(1, MaxDescription)},
			{"sourceOfWealthOtherDescription", f.SourceOfWealthOtherDescription, &dst.SourceOfWealthOtherDescription, lenRule(1, MaxDescription)},
			{"purposeOfAccount", f.PurposeOfAccount, &dst.PurposeOfAccount, enumRule(PurposesOfAccount)},
			{"purposeOfAccountOtherDescription", f.PurposeOfAccountOtherDescription, &dst.PurposeOfAccountOtherDescription, lenRule(1, MaxDescription)},
			{"expectedMonthlyTransactionCount", f.ExpectedMonthlyTransactionCount, &dst.ExpectedMonthlyTransactionCount, enumRule(MonthlyTransactionCounts)},
			{"expectedMonthlyTransactionVolume", f.ExpectedMonthlyTransactionVolume, &dst.ExpectedMonthlyTransactionVolume, enumRule(MonthlyTransactionVolumes)},
			{"annualIncomeRange", f.AnnualIncomeRange, &dst.AnnualIncomeRange, enumRule(AnnualIncomeRanges)},
			{"netWorthRange", f.NetWorthRange, &dst.NetWorthRange, enumRule(NetWorthRanges)},
			{"pepStatus", f.PepStatus, &dst.PepStatus, enumRule(PepStatuses)},
		}, []listField{
			{"sourceOfFundsCategories", f.SourceOfFundsCategories, &dst.SourceOfFundsCategories, enumListCheck(IndividualSourceOfFundsCategories)},
			{"sourceOfWealthCategories", f.SourceOfWealthCategories, &dst.SourceOfWealthCategories, enumListCheck(SourceOfWealthCategories)},
		}
}

func (f *BusinessFields) fields(dst *ports.BusinessInfo) ([]strField, []listField) {
	const p = "businessInfo."
	return []strField{
			{p + "legalName", f.LegalName, &dst.LegalName, textRule(MaxShort)},
			{p + "doingBusinessAs", f.DoingBusinessAs, &dst.DoingBusinessAs, textRule(MaxShort)},
			{p + "country", f.Country, &dst.Country, countryRule},
			{p + "registrationNumber", f.RegistrationNumber, &dst.RegistrationNumber, textRule(MaxShort)},
			{p + "incorporatedOn", f.IncorporatedOn, &dst.IncorporatedOn, dateRule},
			{p + "entityType", f.EntityType, &dst.EntityType, enumRule(EntityTypes)},
			{p + "taxId", f.TaxID, &dst.TaxID, textRule(MaxShort)},
			{p + "businessType", f.BusinessType, &dst.BusinessType, enumRule(BusinessTypes)},
			{p + "purposeOfAccount", f.PurposeOfAccount, &dst.PurposeOfAccount, enumRule(PurposesOfAccount)},
			{p + "sourceOfFunds", f.SourceOfFunds, &dst.SourceOfFunds, textRule(MaxLong)},
			{p + "expectedMonthlyTransactionCount", f.ExpectedMonthlyTransactionCount, &dst.ExpectedMonthlyTransactionCount, enumRule(MonthlyTransactionCounts)},
			{p + "expectedMonthlyTransactionVolume", f.ExpectedMonthlyTransactionVolume, &dst.ExpectedMonthlyTransactionVolume, enumRule(MonthlyTransactionVolumes)},
			{p + "naicsCode", f.NaicsCode, &dst.NaicsCode, naicsRule},
			{p + "sourceOfFundsOtherDescription", f.SourceOfFundsOtherDescription, &dst.SourceOfFundsOtherDescription, lenRule(1, MaxDescription)},
			{p + "purposeOfAccountOtherDescription", f.PurposeOfAccountOtherDescription, &dst.PurposeOfAccountOtherDescription, lenRule(1, MaxDescription)},
			{p + "primaryContactFirstName", f.PrimaryContactFirstName, &dst.PrimaryContactFirstName, textRule(MaxContactName)},
			{p + "primaryContactLastName", f.PrimaryContactLastName, &dst.PrimaryContactLastName, textRule(MaxContactName)},
		}, []listField{
			{p + "countriesOfOperation", f.CountriesOfOperation, &dst.CountriesOfOperation, (*checker).countries},
			{p + "expectedRecipientJurisdictions", f.ExpectedRecipientJurisdictions, &dst.ExpectedRecipientJurisdictions, (*checker).countries},
			{p + "sourceOfFundsCategories", f.SourceOfFundsCategories, &dst.SourceOfFundsCategories, enumListCheck(BusinessSourceOfFundsCategories)},
			{p + "expectedCounterpartyCountries", f.ExpectedCounterpartyCountries, &dst.ExpectedCounterpartyCountries, (*checker).countries},
		}
}

// applyFields checks each supplied field and, when valid, stores it.
func applyFields(c *checker, strs []strField, lists []listField) {
	for _, f := range strs {
		if f.in == nil {
			continue
		}
		if *f.in == "" {
			c.Add(f.name, "must not be empty")
			continue
		}
		before := len(c.fieldNames())
		f.rule(c, f.name, *f.in)
		if len(c.fieldNames()) == before {
			*f.dst = *f.in
		}
	}
	for _, f := range lists {
		if f.in == nil {
			continue
		}
		before := len(c.fieldNames())
		f.check(c, f.name, f.in)
		if len(c.fieldNames()) == before {
			*f.dst = dedupe(f.in)
		}
	}
}

// supplied names the fields of strs and lists a request sent.
func supplied(strs []strField, lists []listField) []string {
	var out []string
	for _, f := range strs {
		if f.in != nil {
			out = append(out, f.name)
		}
	}
	for _, f := range lists {
		if f.in != nil {
			out = append(out, f.name)
		}
	}
	return out
}

func dedupe(vs []string) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// apply checks in against the customer c (a new one on create, the stored
// one on update) and writes every valid supplied field into c. Errors are
// gathered in chk; c is only meaningful when chk holds none.
func apply(chk *checker, c *ports.Customer, in Input) {
	if in.Currencies != nil {
		if cur := chk.currencies("currencies", in.Currencies); cur != nil {
			c.Currencies = cur
		}
	}
	simple := []strField{
		{"email", in.Email, &c.Email, (*checker).email},
		{"phoneNumber", in.PhoneNumber, &c.PhoneNumber, (*checker).phone},
		{"umaAddress", in.UmaAddress, &c.UmaAddress, (*checker).umaAddress},
	}
	applyFields(chk, simple, nil)
	c.UmaAddress = lookup.CanonicalUmaAddress(c.UmaAddress)
	if in.Address != nil {
		before := len(chk.fieldNames())
		chk.address("address", in.Address)
		if len(chk.fieldNames()) == before {
			a := *in.Address
			c.Address = &a
		}
	}
	if in.EndUserTermsConsent != nil {
		before := len(chk.fieldNames())
		chk.consent("endUserTermsConsent", in.EndUserTermsConsent)
		if len(chk.fieldNames()) == before {
			e := *in.EndUserTermsConsent
			e.AcceptedAt = ports.Stored(e.AcceptedAt)
			c.EndUserTermsConsent = &e
		}
	}

	switch c.CustomerType {
	case TypeIndividual:
		if in.KYBStatus != nil {
			chk.Add("kybStatus", "applies to BUSINESS customers; use kycStatus")
		}
		applyFields(chk, []strField{{"kycStatus", in.KYCStatus, &c.KYCStatus, enumRule(VerificationStatuses)}}, nil)
		if in.Business != nil {
			chk.Add("businessInfo", "applies to BUSINESS customers only")
		}
		if c.Individual == nil {
			c.Individual = &ports.IndividualInfo{}
		}
		strs, lists := in.Individual.fields(c.Individual)
		applyFields(chk, strs, lists)
		checkIndividual(chk, c.Individual, in.Individual)
	case TypeBusiness:
		if in.KYCStatus != nil {
			chk.Add("kycStatus", "applies to INDIVIDUAL customers; use kybStatus")
		}
		applyFields(chk, []strField{{"kybStatus", in.KYBStatus, &c.KYCStatus, enumRule(VerificationStatuses)}}, nil)
		strs, lists := in.Individual.fields(&ports.IndividualInfo{})
		for _, name := range supplied(strs, lists) {
			chk.Add(name, "applies to INDIVIDUAL customers only")
		}
		if c.Business == nil {
			c.Business = &ports.BusinessInfo{}
		}
		if in.Business != nil {
			strs, lists := in.Business.fields(c.Business)
			applyFields(chk, strs, lists)
		}
	}
}

// checkIndividual applies the individual rules that span fields, on the
// merged profile, naming only fields this request touched or needs.
func checkIndividual(chk *checker, p *ports.IndividualInfo, in IndividualFields) {
	if (p.IDType == "SSN" || p.IDType == "ITIN") && p.Identifier != "" &&
		(in.Identifier != nil || in.IDType != nil) && !usTaxIDRe.MatchString(p.Identifier) {
		chk.Add("identifier", "must be a 9-digit "+p.IDType+" formatted ###-##-####")
	}
	other := []struct {
		list  []string
		value string
		field string
		via   string
	}{
		{p.SourceOfFundsCategories, p.SourceOfFundsOtherDescription, "sourceOfFundsOtherDescription", "sourceOfFundsCategories"},
		{p.SourceOfWealthCategories, p.SourceOfWealthOtherDescription, "sourceOfWealthOtherDescription", "sourceOfWealthCategories"},
	}
	for _, o := range other {
		if slices.Contains(o.list, "OTHER") && o.value == "" && !chk.has(o.via) {
			chk.Add(o.field, "is required when "+o.via+" includes OTHER")
		}
	}
	if p.PurposeOfAccount == "OTHER" && p.PurposeOfAccountOtherDescription == "" && !chk.has("purposeOfAccount") {
		chk.Add("purposeOfAccountOtherDescription", "is required when purposeOfAccount is OTHER")
	}
}

// fieldNames lists the fields gathered so far.
func (c *checker) fieldNames() []string {
	e, ok := fault.As(c.Err())
	if !ok {
		return nil
	}
	out := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		out[i] = f.Field
	}
	return out
}

func (c *checker) has(prefix string) bool {
	for _, f := range c.fieldNames() {
		if f == prefix || strings.HasPrefix(f, prefix+".") || strings.HasPrefix(f, prefix+"[") {
			return true
		}
	}
	return false
}
