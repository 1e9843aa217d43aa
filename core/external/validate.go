package external

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// Beneficiary types.
const (
	BeneficiaryIndividual = "INDIVIDUAL"
	BeneficiaryBusiness   = "BUSINESS"
)

// infoPrefix is the dot path of accountInfo in a create request.
const infoPrefix = "accountInfo."

// Validate checks an account's currency and accountInfo against its
// variant's rules and reports every bad field (dot paths such as
// accountInfo.routingNumber) as one 400 INVALID_INPUT. today bounds
// beneficiary birth dates.
func Validate(currency string, info ports.AccountInfo, today time.Time) error {
	var errs fault.Collector
	validate(&errs, currency, &info, today)
	return errs.Err()
}

func validate(errs *fault.Collector, currency string, info *ports.AccountInfo, today time.Time) {
	v, ok := variantByType[info.AccountType]
	if !ok {
		errs.Add(infoPrefix+"accountType", "must be one of "+strings.Join(AccountTypes(), ", "))
		return
	}
	switch {
	case currency == "":
		errs.Add("currency", "is required")
	case !slices.Contains(v.Currencies, currency):
		if _, known := money.Lookup(currency); !known {
			errs.Add("currency", "is not a supported currency")
		} else {
			errs.Add("currency", fmt.Sprintf("must be %s for accountType %s", strings.Join(v.Currencies, " or "), v.AccountType))
		}
	}

	// Fields of other variants are not allowed.
	for _, name := range InfoFieldNames() {
		if *infoField(info, name) != "" && !hasField(v.Fields, name) {
			errs.Add(infoPrefix+name, "is not a field of accountType "+v.AccountType)
		}
	}
	for _, f := range v.Fields {
		p := infoField(info, f.Name)
		val := *p
		if f.by != "" {
			checkField(errs, infoPrefix, f, val, today, f.checksBy[*infoField(info, f.by)])
			continue
		}
		checkField(errs, infoPrefix, f, val, today, nil)
	}
	if len(v.AnyOf) > 0 {
		ok := false
		for _, g := range v.AnyOf {
			ok = ok || hasAll(info, g)
		}
		if !ok {
			var alts []string
			for _, g := range v.AnyOf {
				alts = append(alts, strings.Join(g, " and "))
			}
			errs.Add(infoPrefix+v.AnyOf[0][0], "is required: give "+strings.Join(alts, ", or "))
		}
	}
	if len(v.ExactlyOne) > 0 {
		var set []string
		for _, n := range v.ExactlyOne {
			if *infoField(info, n) != "" {
				set = append(set, n)
			}
		}
		switch {
		case len(set) == 0:
			errs.Add(infoPrefix+v.ExactlyOne[0], "is required: give exactly one of "+strings.Join(v.ExactlyOne, ", "))
		case len(set) > 1:
			for _, n := range set[1:] {
				errs.Add(infoPrefix+n, "give exactly one of "+strings.Join(v.ExactlyOne, ", "))
			}
		}
	}
	if v.RailField != "" {
		if pick := *infoField(info, v.RailField); pick != "" {
			for _, r := range v.Rails {
				if r.Name == pick && !hasAll(info, r.Needs) {
					errs.Add(infoPrefix+v.RailField, fmt.Sprintf("%s needs %s", pick, strings.Join(r.Needs, " and ")))
				}
			}
		}
	}
	validateBeneficiary(errs, v, info.Beneficiary, today)
}

func hasField(fs []Field, name string) bool {
	return slices.ContainsFunc(fs, func(f Field) bool { return f.Name == name })
}

// checkField applies one field's rules to val (empty: absent). by, when
// set, is the check picked by another field's value.
func checkField(errs *fault.Collector, prefix string, f Field, val string, today time.Time, by check) {
	name := prefix + f.Name
	if val == "" {
		if f.Required {
			errs.Add(name, "is required")
		}
		return
	}
	n := utf8.RuneCountInString(val)
	switch {
	case f.MinLen > 0 && n < f.MinLen:
		errs.Add(name, fmt.Sprintf("must be at least %d characters", f.MinLen))
		return
	case f.MaxLen > 0 && n > f.MaxLen:
		errs.Add(name, fmt.Sprintf("must be at most %d characters", f.MaxLen))
		return
	case f.re != nil && !f.re.MatchString(val):
		errs.Add(name, "must match "+f.Pattern)
		return
	case len(f.Enum) > 0 && !slices.Contains(f.Enum, val):
		errs.Add(name, "must be one of "+strings.Join(f.Enum, ", "))
		return
	}
	if f.Date {
		d, err := time.Parse(time.DateOnly, val)
		switch {
		case err != nil:
			errs.Add(name, "must be a date (YYYY-MM-DD)")
		case d.After(today):
			errs.Add(name, "must not be in the future")
		}
		return
	}
	for _, c := range []check{f.check, by} {
		if c == nil {
			continue
		}
		if msg := c(val); msg != "" {
			errs.Add(name, msg)
			return
		}
	}
}

func validateBeneficiary(errs *fault.Collector, v *Variant, b *ports.Beneficiary, today time.Time) {
	const prefix = infoPrefix + "beneficiary."
	rule := v.Beneficiary
	if b == nil {
		if rule.Presence == BeneficiaryRequired {
			errs.Add(infoPrefix+"beneficiary", "is required for accountType "+v.AccountType)
		}
		return
	}
	if rule.Presence == BeneficiaryForbidden {
		errs.Add(infoPrefix+"beneficiary", "is not a field of accountType "+v.AccountType)
		return
	}
	var fields []Field
	switch b.BeneficiaryType {
	case BeneficiaryIndividual:
		fields = rule.Individual
	case BeneficiaryBusiness:
		fields = rule.Business
	case "":
		errs.Add(prefix+"beneficiaryType", "is required")
		return
	default:
		errs.Add(prefix+"beneficiaryType", "must be INDIVIDUAL or BUSINESS")
		return
	}
	for _, name := range beneficiaryFieldNames {
		if *beneficiaryFields[name](b) != "" && !hasField(fields, name) {
			errs.Add(prefix+name, "is not a field of a "+b.BeneficiaryType+" beneficiary of "+v.AccountType)
		}
	}
	for _, f := range fields {
		if f.Address {
			validateAddress(errs, prefix+f.Name, f, b.Address)
			continue
		}
		checkField(errs, prefix, f, *beneficiaryFields[f.Name](b), today, nil)
	}
	if b.Address != nil && !hasField(fields, "address") {
		errs.Add(prefix+"address", "is not a field of a "+b.BeneficiaryType+" beneficiary of "+v.AccountType)
	}
}

func validateAddress(errs *fault.Collector, name string, f Field, a *ports.Address) {
	if a == nil {
		if f.Required {
			errs.Add(name, "is required")
		}
		return
	}
	for _, af := range addressFields {
		checkField(errs, name+".", af, *addressFieldsOf[af.Name](a), time.Time{}, nil)
	}
}
