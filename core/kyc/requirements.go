package kyc

import (
	"slices"
	"strings"

	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// Verification error types this package reports (reference
// VerificationErrorType).
const (
	ErrMissingField              = "MISSING_FIELD"
	ErrMissingProofOfAddress     = "MISSING_PROOF_OF_ADDRESS_DOCUMENT"
	ErrMissingIdentityDocument   = "MISSING_IDENTITY_DOCUMENT"
	ErrMissingLegalPresence      = "MISSING_LEGAL_PRESENCE_DOCUMENT"
	ErrMissingOwnershipStructure = "MISSING_OWNERSHIP_STRUCTURE_DOCUMENT"
	ErrMissingBeneficialOwner    = "MISSING_BENEFICIAL_OWNER"
	ErrMissingControlPerson      = "MISSING_CONTROL_PERSON"
	ErrApplicantRejected         = "APPLICANT_REJECTED"
)

// DocumentRequirement is a kind of document a verification needs: the
// error reported while none is on file, and the document types that
// satisfy it (any one of them).
type DocumentRequirement struct {
	ErrorType string
	Accepted  []string
	Reason    string
}

// Document requirements, by the reference's document categories. A
// generic PROOF_OF_ADDRESS document counts as proof of address too.
var (
	ProofOfAddress = DocumentRequirement{ErrMissingProofOfAddress,
		[]string{"PROOF_OF_ADDRESS", "UTILITY_BILL", "RENT_OR_LEASE_AGREEMENT", "ELECTRICITY_BILL", "BANK_STATEMENT", "TAX_RETURN"},
		"a proof of address document is needed"}
	IdentityDocument = DocumentRequirement{ErrMissingIdentityDocument,
		[]string{"PASSPORT", "DRIVERS_LICENSE", "NATIONAL_ID"},
		"an identity document is needed"}
	LegalPresence = DocumentRequirement{ErrMissingLegalPresence,
		[]string{"CERTIFICATE_OF_INCORPORATION", "ARTICLES_OF_INCORPORATION", "ARTICLES_OF_ASSOCIATION", "STATE_REGISTRY_EXCERPT"},
		"a document showing the business legally exists is needed"}
	OwnershipStructure = DocumentRequirement{ErrMissingOwnershipStructure,
		[]string{"SHAREHOLDER_REGISTER", "TRUST_AGREEMENT", "PARTNERSHIP_AGREEMENT"},
		"a document showing who owns the business is needed"}
)

// Subject lists what one applicant must have on file: fields by their
// error path (keys of customerFields / ownerFields) and documents.
type Subject struct {
	Fields    []string
	Documents []DocumentRequirement
}

// Region is one row of the requirements table.
type Region struct {
	Name string
	// Jurisdictions are core/money jurisdictions (a customer's region maps
	// to one through its local currency: DE → EUR → EU); empty is the
	// default row, for every other region and for customers without one.
	Jurisdictions []string
	Individual    Subject
	Business      Subject
	Owner         Subject
	// Owners: a business needs at least one beneficial owner;
	// ControlPerson: at least one of them in a control role.
	Owners        bool
	ControlPerson bool
}

// Regions is the requirements table: what a verification needs, per
// jurisdiction. Owners' create-time fields (names, birth date,
// nationality, address, id) are always present, so owner rows list what
// a region adds.
var Regions = []Region{
	{
		Name: "United States", Jurisdictions: []string{"US"},
		Individual: Subject{Fields: []string{"customer.fullName", "customer.birthDate", "customer.address.line1",
			"customer.address.city", "customer.address.state", "customer.address.postalCode", "customer.idType", "customer.identifier"}},
		Business: Subject{Fields: []string{"customer.businessInfo.legalName", "customer.businessInfo.registrationNumber",
			"customer.businessInfo.taxId", "customer.businessInfo.incorporatedOn", "customer.address.line1",
			"customer.address.city", "customer.address.state", "customer.address.postalCode"},
			Documents: []DocumentRequirement{ProofOfAddress}},
		Owner:  Subject{Fields: []string{"personalInfo.address.city", "personalInfo.address.state"}},
		Owners: true, ControlPerson: true,
	},
	{
		Name: "European Union", Jurisdictions: []string{"EU"},
		Individual: Subject{Fields: []string{"customer.fullName", "customer.birthDate", "customer.nationality",
			"customer.address.line1", "customer.address.city", "customer.address.postalCode"},
			Documents: []DocumentRequirement{IdentityDocument, ProofOfAddress}},
		Business: Subject{Fields: []string{"customer.businessInfo.legalName", "customer.businessInfo.registrationNumber",
			"customer.businessInfo.incorporatedOn", "customer.businessInfo.entityType", "customer.address.line1",
			"customer.address.city", "customer.address.postalCode"},
			Documents: []DocumentRequirement{LegalPresence, OwnershipStructure, ProofOfAddress}},
		Owner: Subject{Fields: []string{"personalInfo.address.city", "personalInfo.countryOfIssuance"},
			Documents: []DocumentRequirement{IdentityDocument}},
		Owners: true, ControlPerson: true,
	},
	{
		Name: "Brazil", Jurisdictions: []string{"BR"},
		Individual: Subject{Fields: []string{"customer.fullName", "customer.birthDate", "customer.nationality",
			"customer.idType", "customer.identifier", "customer.address.line1", "customer.address.city",
			"customer.address.state", "customer.address.postalCode"},
			Documents: []DocumentRequirement{IdentityDocument}},
		Business: Subject{Fields: []string{"customer.businessInfo.legalName", "customer.businessInfo.registrationNumber",
			"customer.businessInfo.taxId", "customer.address.line1", "customer.address.city", "customer.address.state",
			"customer.address.postalCode"},
			Documents: []DocumentRequirement{LegalPresence}},
		Owner: Subject{Fields: []string{"personalInfo.address.city", "personalInfo.countryOfIssuance"},
			Documents: []DocumentRequirement{IdentityDocument}},
		Owners: true,
	},
	{
		Name: "other regions",
		Individual: Subject{Fields: []string{"customer.fullName", "customer.birthDate", "customer.nationality",
			"customer.address.line1", "customer.address.city", "customer.address.postalCode"},
			Documents: []DocumentRequirement{IdentityDocument, ProofOfAddress}},
		Business: Subject{Fields: []string{"customer.businessInfo.legalName", "customer.businessInfo.registrationNumber",
			"customer.businessInfo.incorporatedOn", "customer.address.line1", "customer.address.city",
			"customer.address.postalCode"},
			Documents: []DocumentRequirement{LegalPresence, ProofOfAddress}},
		Owner: Subject{Fields: []string{"personalInfo.address.city", "personalInfo.countryOfIssuance"},
			Documents: []DocumentRequirement{IdentityDocument}},
		Owners: true, ControlPerson: true,
	},
}

// ControlRoles are the owner roles that control a business.
var ControlRoles = []string{"CONTROL_PERSON", "DIRECTOR", "COMPANY_OFFICER", "GENERAL_PARTNER"}

// field reads one value for a requirement, with the words its error
// reason uses.
type field[T any] struct {
	label string
	get   func(T) string
}

func addr(a *ports.Address, get func(ports.Address) string) string {
	if a == nil {
		return ""
	}
	return get(*a)
}

func indiv(c ports.Customer, get func(ports.IndividualInfo) string) string {
	if c.Individual == nil {
		return ""
	}
	return get(*c.Individual)
}

func biz(c ports.Customer, get func(ports.BusinessInfo) string) string {
	if c.Business == nil {
		return ""
	}
	return get(*c.Business)
}

// customerFields are the customer values a region can require, by error
// path.
var customerFields = map[string]field[ports.Customer]{
	"customer.fullName": {"full name", func(c ports.Customer) string {
		return indiv(c, func(i ports.IndividualInfo) string { return i.FullName })
	}},
	"customer.birthDate": {"date of birth", func(c ports.Customer) string {
		return indiv(c, func(i ports.IndividualInfo) string { return i.BirthDate })
	}},
	"customer.nationality": {"nationality", func(c ports.Customer) string {
		return indiv(c, func(i ports.IndividualInfo) string { return i.Nationality })
	}},
	"customer.idType": {"identification type", func(c ports.Customer) string {
		return indiv(c, func(i ports.IndividualInfo) string { return i.IDType })
	}},
	"customer.identifier": {"identification number", func(c ports.Customer) string {
		return indiv(c, func(i ports.IndividualInfo) string { return i.Identifier })
	}},
	"customer.countryOfIssuance": {"country of issuance of the identification", func(c ports.Customer) string {
		return indiv(c, func(i ports.IndividualInfo) string { return i.CountryOfIssuance })
	}},
	"customer.email":         {"e-mail address", func(c ports.Customer) string { return c.Email }},
	"customer.phoneNumber":   {"phone number", func(c ports.Customer) string { return c.PhoneNumber }},
	"customer.address.line1": {"address line 1", func(c ports.Customer) string { return addr(c.Address, func(a ports.Address) string { return a.Line1 }) }},
	"customer.address.city":  {"address city", func(c ports.Customer) string { return addr(c.Address, func(a ports.Address) string { return a.City }) }},
	"customer.address.state": {"address state", func(c ports.Customer) string { return addr(c.Address, func(a ports.Address) string { return a.State }) }},
	"customer.address.postalCode": {"address postal code", func(c ports.Customer) string {
		return addr(c.Address, func(a ports.Address) string { return a.PostalCode })
	}},
	"customer.businessInfo.legalName": {"legal name", func(c ports.Customer) string { return biz(c, func(b ports.BusinessInfo) string { return b.LegalName }) }},
	"customer.businessInfo.registrationNumber": {"registration number", func(c ports.Customer) string {
		return biz(c, func(b ports.BusinessInfo) string { return b.RegistrationNumber })
	}},
	"customer.businessInfo.taxId": {"tax identification number", func(c ports.Customer) string { return biz(c, func(b ports.BusinessInfo) string { return b.TaxID }) }},
	"customer.businessInfo.incorporatedOn": {"date of incorporation", func(c ports.Customer) string {
		return biz(c, func(b ports.BusinessInfo) string { return b.IncorporatedOn })
	}},
	"customer.businessInfo.entityType": {"entity type", func(c ports.Customer) string {
		return biz(c, func(b ports.BusinessInfo) string { return b.EntityType })
	}},
}

// ownerFields are the beneficial owner values a region can require.
var ownerFields = map[string]field[ports.BeneficialOwner]{
	"personalInfo.firstName":         {"first name", func(o ports.BeneficialOwner) string { return o.PersonalInfo.FirstName }},
	"personalInfo.lastName":          {"last name", func(o ports.BeneficialOwner) string { return o.PersonalInfo.LastName }},
	"personalInfo.birthDate":         {"date of birth", func(o ports.BeneficialOwner) string { return o.PersonalInfo.BirthDate }},
	"personalInfo.nationality":       {"nationality", func(o ports.BeneficialOwner) string { return o.PersonalInfo.Nationality }},
	"personalInfo.email":             {"e-mail address", func(o ports.BeneficialOwner) string { return o.PersonalInfo.Email }},
	"personalInfo.phoneNumber":       {"phone number", func(o ports.BeneficialOwner) string { return o.PersonalInfo.PhoneNumber }},
	"personalInfo.idType":            {"identification type", func(o ports.BeneficialOwner) string { return o.PersonalInfo.IDType }},
	"personalInfo.identifier":        {"identification number", func(o ports.BeneficialOwner) string { return o.PersonalInfo.Identifier }},
	"personalInfo.countryOfIssuance": {"country of issuance of the identification", func(o ports.BeneficialOwner) string { return o.PersonalInfo.CountryOfIssuance }},
	"personalInfo.address.line1": {"address line 1", func(o ports.BeneficialOwner) string {
		return addr(o.PersonalInfo.Address, func(a ports.Address) string { return a.Line1 })
	}},
	"personalInfo.address.city": {"address city", func(o ports.BeneficialOwner) string {
		return addr(o.PersonalInfo.Address, func(a ports.Address) string { return a.City })
	}},
	"personalInfo.address.state": {"address state", func(o ports.BeneficialOwner) string {
		return addr(o.PersonalInfo.Address, func(a ports.Address) string { return a.State })
	}},
	"personalInfo.address.postalCode": {"address postal code", func(o ports.BeneficialOwner) string {
		return addr(o.PersonalInfo.Address, func(a ports.Address) string { return a.PostalCode })
	}},
}

// RegionFor returns the requirements row for a customer's region.
func RegionFor(region string) Region {
	j := jurisdiction(region)
	for _, r := range Regions {
		if j != "" && slices.Contains(r.Jurisdictions, j) {
			return r
		}
	}
	return Regions[len(Regions)-1]
}

// jurisdiction maps a country to the jurisdiction of its local fiat
// currency (DE → EU), or "" when corridor knows no local currency for it.
func jurisdiction(region string) string {
	if region == "" {
		return ""
	}
	for _, code := range money.CurrenciesForRegion(region) {
		c, ok := money.Lookup(code)
		if !ok || c.Crypto {
			continue
		}
		// Regions without a local currency get the USD default; they are
		// not the US jurisdiction.
		if c.Jurisdiction == "US" && region != "US" {
			return ""
		}
		return c.Jurisdiction
	}
	return ""
}

// Requirements checks what a verification of c needs and is missing: one
// MISSING_FIELD per missing value, one MISSING_*_DOCUMENT per document
// kind with none on file, and, for a business, missing owners or control
// person. docs are the documents of the customer and its owners. The
// result is in table order (customer first, then each owner), so a client
// sees a stable list.
func Requirements(c ports.Customer, owners []ports.BeneficialOwner, docs []ports.Document) []ports.VerificationError {
	r := RegionFor(c.Region)
	kind, what := r.Individual, "KYC"
	if c.CustomerType == customerTypeBusiness {
		kind, what = r.Business, "KYB"
	}
	where := r.Name
	if c.Region != "" {
		where = c.Region + " (" + r.Name + ")"
	}
	var out []ports.VerificationError
	for _, path := range kind.Fields {
		f := customerFields[path]
		if strings.TrimSpace(f.get(c)) == "" {
			out = append(out, ports.VerificationError{ResourceID: c.ID, Type: ErrMissingField, Field: path,
				Reason: capitalize(f.label) + " is required for " + what + " in " + where})
		}
	}
	out = append(out, missingDocuments(c.ID, kind.Documents, docs, what, where)...)
	if c.CustomerType != customerTypeBusiness {
		return out
	}
	if r.Owners && len(owners) == 0 {
		out = append(out, ports.VerificationError{ResourceID: c.ID, Type: ErrMissingBeneficialOwner,
			Reason: "a business needs its beneficial owners on file for KYB in " + where})
	}
	if r.ControlPerson && !slices.ContainsFunc(owners, func(o ports.BeneficialOwner) bool {
		return slices.ContainsFunc(o.Roles, func(role string) bool { return slices.Contains(ControlRoles, role) })
	}) {
		out = append(out, ports.VerificationError{ResourceID: c.ID, Type: ErrMissingControlPerson,
			Reason: "one owner must control the business (role " + strings.Join(ControlRoles, ", ") + ") for KYB in " + where})
	}
	for _, o := range owners {
		for _, path := range r.Owner.Fields {
			f := ownerFields[path]
			if strings.TrimSpace(f.get(o)) == "" {
				out = append(out, ports.VerificationError{ResourceID: o.ID, Type: ErrMissingField, Field: path,
					Reason: "The beneficial owner's " + f.label + " is required for KYB in " + where})
			}
		}
		out = append(out, missingDocuments(o.ID, r.Owner.Documents, docs, "the beneficial owner's KYC", where)...)
	}
	return out
}

func missingDocuments(holderID string, reqs []DocumentRequirement, docs []ports.Document, what, where string) []ports.VerificationError {
	var out []ports.VerificationError
	for _, req := range reqs {
		if !slices.ContainsFunc(docs, func(d ports.Document) bool {
			return d.HolderID == holderID && slices.Contains(req.Accepted, d.DocumentType)
		}) {
			out = append(out, ports.VerificationError{ResourceID: holderID, Type: req.ErrorType,
				AcceptedDocumentTypes: slices.Clone(req.Accepted), Reason: capitalize(req.Reason) + " for " + what + " in " + where})
		}
	}
	return out
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
