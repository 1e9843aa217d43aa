package kyc_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/ports"
)

// brief is an error item as the tests compare it.
func brief(es []ports.VerificationError) []string {
	out := []string{}
	for _, e := range es {
		s := e.ResourceID + " " + e.Type
		if e.Field != "" {
			s += " " + e.Field
		}
		if e.AcceptedDocumentTypes != nil {
			s += fmt.Sprint(" ", e.AcceptedDocumentTypes)
		}
		out = append(out, s)
	}
	return out
}

func TestRegionFor(t *testing.T) {
	for region, want := range map[string]string{
		"US": "United States", "DE": "European Union", "FR": "European Union", "BR": "Brazil",
		"GB": "other regions", "CH": "other regions", "": "other regions",
	} {
		assert.Equal(t, want, kyc.RegionFor(region).Name, region)
	}
}

func TestRequirementsPerRegion(t *testing.T) {
	poa := fmt.Sprint(kyc.ProofOfAddress.Accepted)
	ident := fmt.Sprint(kyc.IdentityDocument.Accepted)
	legal := fmt.Sprint(kyc.LegalPresence.Accepted)
	ownership := fmt.Sprint(kyc.OwnershipStructure.Accepted)
	bare := func(typ, region string) ports.Customer {
		c := ports.Customer{ID: "Customer:c", CustomerType: typ, Region: region}
		if typ == "BUSINESS" {
			c.Business = &ports.BusinessInfo{LegalName: "Acme", TaxID: "1", IncorporatedOn: "2020-01-01", Country: region}
		}
		return c
	}
	// o is an owner as created: everything the reference requires, and
	// no city, state or country of issuance.
	o := ports.BeneficialOwner{ID: "BeneficialOwner:o", Roles: []string{"UBO"}, PersonalInfo: ports.PersonalInfo{
		FirstName: "Jane", LastName: "Doe", BirthDate: "1980-01-01", Nationality: "US", IDType: "SSN", Identifier: "1",
		Address: &ports.Address{Line1: "1 St", PostalCode: "1", Country: "US"}}}
	passport := ports.Document{HolderID: "BeneficialOwner:o", DocumentType: "PASSPORT"}
	bill := ports.Document{HolderID: "Customer:c", DocumentType: "UTILITY_BILL"}

	for _, tc := range []struct {
		name   string
		c      ports.Customer
		owners []ports.BeneficialOwner
		docs   []ports.Document
		want   []string
	}{
		{"US individual: fields, no document", bare("INDIVIDUAL", "US"), nil, nil, []string{
			"Customer:c MISSING_FIELD customer.fullName", "Customer:c MISSING_FIELD customer.birthDate",
			"Customer:c MISSING_FIELD customer.address.line1", "Customer:c MISSING_FIELD customer.address.city",
			"Customer:c MISSING_FIELD customer.address.state", "Customer:c MISSING_FIELD customer.address.postalCode",
			"Customer:c MISSING_FIELD customer.idType", "Customer:c MISSING_FIELD customer.identifier",
		}},
		{"US individual complete", func() ports.Customer { c := usIndividual("Ada"); c.ID = "Customer:c"; return c }(), nil, nil, []string{}},
		{"DE individual: no state, nationality, identity and proof of address", bare("INDIVIDUAL", "DE"), nil, nil, []string{
			"Customer:c MISSING_FIELD customer.fullName", "Customer:c MISSING_FIELD customer.birthDate",
			"Customer:c MISSING_FIELD customer.nationality", "Customer:c MISSING_FIELD customer.address.line1",
			"Customer:c MISSING_FIELD customer.address.city", "Customer:c MISSING_FIELD customer.address.postalCode",
			"Customer:c MISSING_IDENTITY_DOCUMENT " + ident, "Customer:c MISSING_PROOF_OF_ADDRESS_DOCUMENT " + poa,
		}},
		{"BR individual: tax id and identity document, no proof of address", bare("INDIVIDUAL", "BR"), nil, nil, []string{
			"Customer:c MISSING_FIELD customer.fullName", "Customer:c MISSING_FIELD customer.birthDate",
			"Customer:c MISSING_FIELD customer.nationality", "Customer:c MISSING_FIELD customer.idType",
			"Customer:c MISSING_FIELD customer.identifier", "Customer:c MISSING_FIELD customer.address.line1",
			"Customer:c MISSING_FIELD customer.address.city", "Customer:c MISSING_FIELD customer.address.state",
			"Customer:c MISSING_FIELD customer.address.postalCode", "Customer:c MISSING_IDENTITY_DOCUMENT " + ident,
		}},
		{"US business without owners", bare("BUSINESS", "US"), nil, nil, []string{
			"Customer:c MISSING_FIELD customer.businessInfo.registrationNumber",
			"Customer:c MISSING_FIELD customer.address.line1", "Customer:c MISSING_FIELD customer.address.city",
			"Customer:c MISSING_FIELD customer.address.state", "Customer:c MISSING_FIELD customer.address.postalCode",
			"Customer:c MISSING_PROOF_OF_ADDRESS_DOCUMENT " + poa,
			"Customer:c MISSING_BENEFICIAL_OWNER", "Customer:c MISSING_CONTROL_PERSON",
		}},
		{"US business: owner without control role or city", func() ports.Customer { c := usBusiness("1"); c.ID = "Customer:c"; return c }(),
			[]ports.BeneficialOwner{o}, []ports.Document{bill}, []string{
				"Customer:c MISSING_CONTROL_PERSON",
				"BeneficialOwner:o MISSING_FIELD personalInfo.address.city", "BeneficialOwner:o MISSING_FIELD personalInfo.address.state",
			}},
		{"DE business: documents for the business and each owner", bare("BUSINESS", "DE"), []ports.BeneficialOwner{o}, []ports.Document{passport}, []string{
			"Customer:c MISSING_FIELD customer.businessInfo.registrationNumber",
			"Customer:c MISSING_FIELD customer.businessInfo.entityType",
			"Customer:c MISSING_FIELD customer.address.line1", "Customer:c MISSING_FIELD customer.address.city",
			"Customer:c MISSING_FIELD customer.address.postalCode",
			"Customer:c MISSING_LEGAL_PRESENCE_DOCUMENT " + legal, "Customer:c MISSING_OWNERSHIP_STRUCTURE_DOCUMENT " + ownership,
			"Customer:c MISSING_PROOF_OF_ADDRESS_DOCUMENT " + poa, "Customer:c MISSING_CONTROL_PERSON",
			"BeneficialOwner:o MISSING_FIELD personalInfo.address.city", "BeneficialOwner:o MISSING_FIELD personalInfo.countryOfIssuance",
		}},
		{"DE business: an owner's passport does not count for another holder", bare("BUSINESS", "DE"),
			[]ports.BeneficialOwner{o}, []ports.Document{{HolderID: "Customer:c", DocumentType: "PASSPORT"}}, []string{
				"Customer:c MISSING_FIELD customer.businessInfo.registrationNumber",
				"Customer:c MISSING_FIELD customer.businessInfo.entityType",
				"Customer:c MISSING_FIELD customer.address.line1", "Customer:c MISSING_FIELD customer.address.city",
				"Customer:c MISSING_FIELD customer.address.postalCode",
				"Customer:c MISSING_LEGAL_PRESENCE_DOCUMENT " + legal, "Customer:c MISSING_OWNERSHIP_STRUCTURE_DOCUMENT " + ownership,
				"Customer:c MISSING_PROOF_OF_ADDRESS_DOCUMENT " + poa, "Customer:c MISSING_CONTROL_PERSON",
				"BeneficialOwner:o MISSING_FIELD personalInfo.address.city", "BeneficialOwner:o MISSING_FIELD personalInfo.countryOfIssuance",
				"BeneficialOwner:o MISSING_IDENTITY_DOCUMENT " + ident,
			}},
		{"no region: the default row", bare("INDIVIDUAL", ""), nil, []ports.Document{{HolderID: "Customer:c", DocumentType: "PROOF_OF_ADDRESS"}}, []string{
			"Customer:c MISSING_FIELD customer.fullName", "Customer:c MISSING_FIELD customer.birthDate",
			"Customer:c MISSING_FIELD customer.nationality", "Customer:c MISSING_FIELD customer.address.line1",
			"Customer:c MISSING_FIELD customer.address.city", "Customer:c MISSING_FIELD customer.address.postalCode",
			"Customer:c MISSING_IDENTITY_DOCUMENT " + ident,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := kyc.Requirements(tc.c, tc.owners, tc.docs)
			assert.Equal(t, tc.want, brief(got))
			for _, e := range got {
				assert.NotEmpty(t, e.Reason, "every error says why")
				if e.Type == kyc.ErrMissingField {
					assert.Nil(t, e.AcceptedDocumentTypes)
				}
			}
		})
	}
}
