package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----

// PersonalInfo is a beneficial owner's personal information as returned.
// The identification number is returned masked (maskIdentifier).
type PersonalInfo struct {
	FirstName         string   `json:"firstName"`
	MiddleName        string   `json:"middleName,omitempty"`
	LastName          string   `json:"lastName"`
	BirthDate         string   `json:"birthDate,omitempty" format:"date"`
	Nationality       string   `json:"nationality,omitempty"`
	Email             string   `json:"email,omitempty"`
	PhoneNumber       string   `json:"phoneNumber,omitempty"`
	Address           *Address `json:"address,omitempty"`
	IDType            string   `json:"idType,omitempty" enum:"SSN,ITIN,EIN,NON_US_TAX_ID"`
	Identifier        string   `json:"identifier" doc:"The identification number, masked: only its last four characters are shown" example:"•••••6789"`
	CountryOfIssuance string   `json:"countryOfIssuance,omitempty"`
}

// PersonalInfoCreate is a new owner's personal information.
type PersonalInfoCreate struct {
	FirstName         *string  `json:"firstName" required:"true" minLength:"1" maxLength:"255" doc:"First name" example:"Jane"`
	MiddleName        *string  `json:"middleName,omitempty" minLength:"1" maxLength:"255" doc:"Middle name"`
	LastName          *string  `json:"lastName" required:"true" minLength:"1" maxLength:"255" doc:"Last name. In the sandbox its last 3 characters pick the KYC outcome: 001 PENDING, 002 REJECTED, other APPROVED." example:"Smith"`
	BirthDate         *string  `json:"birthDate" required:"true" format:"date" doc:"Date of birth (YYYY-MM-DD), not in the future" example:"1978-06-15"`
	Nationality       *string  `json:"nationality" required:"true" maxLength:"2" doc:"Country of nationality (ISO 3166-1 alpha-2)" example:"US"`
	Email             *string  `json:"email,omitempty" format:"email" maxLength:"254" doc:"E-mail address"`
	PhoneNumber       *string  `json:"phoneNumber,omitempty" pattern:"^\\+[1-9]\\d{1,14}$" patternDescription:"E.164 phone number" doc:"Phone number in E.164 format"`
	Address           *Address `json:"address" required:"true" doc:"Residential address"`
	IDType            *string  `json:"idType" required:"true" enum:"SSN,ITIN,EIN,NON_US_TAX_ID" doc:"Type of tax identification"`
	Identifier        *string  `json:"identifier" required:"true" minLength:"1" maxLength:"64" writeOnly:"true" doc:"Identification number (SSN and ITIN as ###-##-####). Returned masked (last four characters)." example:"123-45-6789"`
	CountryOfIssuance *string  `json:"countryOfIssuance,omitempty" maxLength:"2" doc:"Country that issued the identification (ISO 3166-1 alpha-2)"`
}

// PersonalInfoUpdate changes the fields it sends; the address is replaced
// as a whole.
type PersonalInfoUpdate struct {
	FirstName         *string  `json:"firstName,omitempty" minLength:"1" maxLength:"255"`
	MiddleName        *string  `json:"middleName,omitempty" minLength:"1" maxLength:"255"`
	LastName          *string  `json:"lastName,omitempty" minLength:"1" maxLength:"255"`
	BirthDate         *string  `json:"birthDate,omitempty" format:"date" doc:"YYYY-MM-DD, not in the future"`
	Nationality       *string  `json:"nationality,omitempty" maxLength:"2"`
	Email             *string  `json:"email,omitempty" format:"email" maxLength:"254"`
	PhoneNumber       *string  `json:"phoneNumber,omitempty" pattern:"^\\+[1-9]\\d{1,14}$" patternDescription:"E.164 phone number"`
	Address           *Address `json:"address,omitempty" doc:"Replaces the stored address"`
	IDType            *string  `json:"idType,omitempty" enum:"SSN,ITIN,EIN,NON_US_TAX_ID"`
	Identifier        *string  `json:"identifier,omitempty" minLength:"1" maxLength:"64" writeOnly:"true"`
	CountryOfIssuance *string  `json:"countryOfIssuance,omitempty" maxLength:"2"`
}

// BeneficialOwnerCreateRequest adds an owner, director or officer to a
// business customer.
type BeneficialOwnerCreateRequest struct {
	CustomerID          string             `json:"customerId" minLength:"1" maxLength:"255" doc:"The BUSINESS customer" example:"Customer:019542f5-b3e7-1d02-0000-000000000001"`
	Roles               []string           `json:"roles" minItems:"1" maxItems:"6" enum:"UBO,DIRECTOR,COMPANY_OFFICER,CONTROL_PERSON,TRUSTEE,GENERAL_PARTNER" doc:"Roles of the person in the business, each listed once"`
	OwnershipPercentage *int               `json:"ownershipPercentage" required:"true" minimum:"0" maximum:"100" doc:"Share of the business the person owns (0-100); a business's owners own at most 100% together" example:"51"`
	PersonalInfo        PersonalInfoCreate `json:"personalInfo"`
}

// BeneficialOwnerUpdateRequest changes the fields it sends (PATCH).
type BeneficialOwnerUpdateRequest struct {
	Roles               []string            `json:"roles,omitempty" minItems:"1" maxItems:"6" enum:"UBO,DIRECTOR,COMPANY_OFFICER,CONTROL_PERSON,TRUSTEE,GENERAL_PARTNER" doc:"Replaces the roles (each listed once)"`
	OwnershipPercentage *int                `json:"ownershipPercentage,omitempty" minimum:"0" maximum:"100" doc:"Replaces the percentage (0-100)"`
	PersonalInfo        *PersonalInfoUpdate `json:"personalInfo,omitempty" doc:"Only the fields sent change"`
}

// BeneficialOwner is a person who owns or controls a business customer.
type BeneficialOwner struct {
	ID                  string       `json:"id" doc:"BeneficialOwner:<uuid>" example:"BeneficialOwner:019542f5-b3e7-1d02-0000-000000000002"`
	CustomerID          string       `json:"customerId" doc:"The business customer"`
	Roles               []string     `json:"roles" enum:"UBO,DIRECTOR,COMPANY_OFFICER,CONTROL_PERSON,TRUSTEE,GENERAL_PARTNER"`
	OwnershipPercentage int          `json:"ownershipPercentage" minimum:"0" maximum:"100"`
	PersonalInfo        PersonalInfo `json:"personalInfo"`
	KycStatus           string       `json:"kycStatus" enum:"UNVERIFIED,PENDING,APPROVED,REJECTED,HOLD" doc:"Follows the business's verification"`
	CreatedAt           time.Time    `json:"createdAt"`
	UpdatedAt           time.Time    `json:"updatedAt"`
}

// BeneficialOwnerList is one page of a business's owners.
type BeneficialOwnerList struct {
	Data       []BeneficialOwner `json:"data"`
	HasMore    bool              `json:"hasMore" doc:"Whether more results follow this page"`
	NextCursor string            `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page (only when hasMore)"`
	TotalCount int               `json:"totalCount" doc:"Number of owners of the customer"`
}

// ---- wire ↔ core ----

func addressIn(a *Address) *ports.Address {
	if a == nil {
		return nil
	}
	return &ports.Address{Line1: a.Line1, Line2: a.Line2, City: a.City, State: a.State, PostalCode: a.PostalCode, Country: a.Country}
}

func addressOut(a *ports.Address) *Address {
	if a == nil {
		return nil
	}
	return &Address{Line1: a.Line1, Line2: a.Line2, City: a.City, State: a.State, PostalCode: a.PostalCode, Country: a.Country}
}

func (p PersonalInfoCreate) input() *kyc.PersonalInfoInput {
	return &kyc.PersonalInfoInput{
		FirstName: p.FirstName, MiddleName: p.MiddleName, LastName: p.LastName, BirthDate: p.BirthDate,
		Nationality: p.Nationality, Email: p.Email, PhoneNumber: p.PhoneNumber, Address: addressIn(p.Address),
		IDType: p.IDType, Identifier: p.Identifier, CountryOfIssuance: p.CountryOfIssuance,
	}
}

func (p *PersonalInfoUpdate) input() *kyc.PersonalInfoInput {
	if p == nil {
		return nil
	}
	return &kyc.PersonalInfoInput{
		FirstName: p.FirstName, MiddleName: p.MiddleName, LastName: p.LastName, BirthDate: p.BirthDate,
		Nationality: p.Nationality, Email: p.Email, PhoneNumber: p.PhoneNumber, Address: addressIn(p.Address),
		IDType: p.IDType, Identifier: p.Identifier, CountryOfIssuance: p.CountryOfIssuance,
	}
}

func ownerOut(o ports.BeneficialOwner) BeneficialOwner {
	p := o.PersonalInfo
	roles := o.Roles
	if roles == nil {
		roles = []string{}
	}
	return BeneficialOwner{
		ID: o.ID, CustomerID: o.CustomerID, Roles: roles, OwnershipPercentage: o.OwnershipPercentage,
		PersonalInfo: PersonalInfo{
			FirstName: p.FirstName, MiddleName: p.MiddleName, LastName: p.LastName, BirthDate: p.BirthDate,
			Nationality: p.Nationality, Email: p.Email, PhoneNumber: p.PhoneNumber, Address: addressOut(p.Address),
			IDType: p.IDType, Identifier: maskIdentifier(p.Identifier), CountryOfIssuance: p.CountryOfIssuance,
		},
		KycStatus: o.KYCStatus, CreatedAt: o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC(),
	}
}

// customerBody is a customer response; a business customer carries its
// beneficial owners.
func customerBody(ctx context.Context, d Deps, c ports.Customer) (*customerOutput, error) {
	out := []Customer{customerOut(c)}
	if err := attachOwners(ctx, d, principal(ctx).PlatformID, out); err != nil {
		return nil, err
	}
	return &customerOutput{Body: out[0]}, nil
}

// attachOwners fills beneficialOwners of the business customers in cs.
func attachOwners(ctx context.Context, d Deps, platformID string, cs []Customer) error {
	if d.KYC == nil {
		return nil
	}
	var ids []string
	for _, c := range cs {
		if c.CustomerType == "BUSINESS" {
			ids = append(ids, c.ID)
		}
	}
	owners, err := d.KYC.OwnersOfCustomers(ctx, platformID, ids)
	if err != nil {
		return apiError(err)
	}
	for i := range cs {
		for _, o := range owners[cs[i].ID] {
			cs[i].BeneficialOwners = append(cs[i].BeneficialOwners, ownerOut(o))
		}
	}
	return nil
}

// ---- operations ----

type createOwnerInput struct {
	Body BeneficialOwnerCreateRequest
}

type updateOwnerInput struct {
	BeneficialOwnerID string `path:"beneficialOwnerId" maxLength:"255" doc:"BeneficialOwner:<uuid>"`
	Body              BeneficialOwnerUpdateRequest
}

type ownerIDInput struct {
	BeneficialOwnerID string `path:"beneficialOwnerId" maxLength:"255" doc:"BeneficialOwner:<uuid>"`
}

type listOwnersInput struct {
	CustomerID string `query:"customerId" required:"true" minLength:"1" maxLength:"255" doc:"The business customer"`
	Limit      int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor     string `query:"cursor" maxLength:"1024" doc:"nextCursor of the previous page"`
}

type ownerOutput struct{ Body BeneficialOwner }

type ownerListOutput struct{ Body BeneficialOwnerList }

// kycTag groups the beneficial-owner and verification operations.
const kycTag = "KYC/KYB Verifications"

// ownersAPI handles the beneficial-owner operations.
type ownersAPI struct{ d Deps }

func registerBeneficialOwners(api huma.API, d Deps) {
	h := ownersAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.createOwnerOp(), h.createOwner) },
		func(api huma.API) { huma.Register(api, h.listOwnersOp(), h.listOwners) },
		func(api huma.API) { huma.Register(api, h.getOwnerOp(), h.getOwner) },
		func(api huma.API) { huma.Register(api, h.updateOwnerOp(), h.updateOwner) },
	)
}

func (ownersAPI) createOwnerOp() huma.Operation {
	return huma.Operation{
		OperationID:   "createBeneficialOwner",
		Method:        http.MethodPost,
		Path:          "/beneficial-owners",
		Summary:       "Create a beneficial owner",
		DefaultStatus: http.StatusCreated,
		Description: "Adds an owner, director or officer to a BUSINESS customer (400 for an individual). The owner starts " +
			"UNVERIFIED and is verified with the business (POST /verifications). ownershipPercentage is 0-100, and the " +
			"owners of one business own at most 100% together.",
		Tags:   []string{kycTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusGone},
	}
}

func (h ownersAPI) createOwner(ctx context.Context, in *createOwnerInput) (*ownerOutput, error) {
	b := in.Body
	o, err := h.d.KYC.CreateOwner(ctx, principal(ctx).PlatformID, kyc.OwnerInput{
		CustomerID: b.CustomerID, Roles: b.Roles, OwnershipPercentage: b.OwnershipPercentage, PersonalInfo: b.PersonalInfo.input(),
	})
	if err != nil {
		return nil, apiError(err)
	}
	return &ownerOutput{Body: ownerOut(o)}, nil
}

func (ownersAPI) listOwnersOp() huma.Operation {
	return huma.Operation{
		OperationID: "listBeneficialOwners",
		Method:      http.MethodGet,
		Path:        "/beneficial-owners",
		Summary:     "List beneficial owners",
		Description: "Lists a business customer's owners, oldest first, paginated.",
		Tags:        []string{kycTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h ownersAPI) listOwners(ctx context.Context, in *listOwnersInput) (*ownerListOutput, error) {
	cursors := cursorsOf(h.d, "beneficial-owners")
	page, err := cursors.page(in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	res, err := h.d.KYC.ListOwners(ctx, principal(ctx).PlatformID, in.CustomerID, page)
	if err != nil {
		return nil, apiError(err)
	}
	out := BeneficialOwnerList{Data: make([]BeneficialOwner, len(res.Rows)), HasMore: res.HasMore,
		TotalCount: res.Total, NextCursor: cursors.next(res.HasMore, res.Next)}
	for i, o := range res.Rows {
		out.Data[i] = ownerOut(o)
	}
	return &ownerListOutput{Body: out}, nil
}

func (ownersAPI) getOwnerOp() huma.Operation {
	return huma.Operation{
		OperationID: "getBeneficialOwner",
		Method:      http.MethodGet,
		Path:        "/beneficial-owners/{beneficialOwnerId}",
		Summary:     "Get a beneficial owner",
		Tags:        []string{kycTag},
		Errors:      []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h ownersAPI) getOwner(ctx context.Context, in *ownerIDInput) (*ownerOutput, error) {
	o, err := h.d.KYC.GetOwner(ctx, principal(ctx).PlatformID, in.BeneficialOwnerID)
	if err != nil {
		return nil, apiError(err)
	}
	return &ownerOutput{Body: ownerOut(o)}, nil
}

func (ownersAPI) updateOwnerOp() huma.Operation {
	return huma.Operation{
		OperationID: "updateBeneficialOwner",
		Method:      http.MethodPatch,
		Path:        "/beneficial-owners/{beneficialOwnerId}",
		Summary:     "Update a beneficial owner",
		Description: "Changes only the fields sent: roles and ownershipPercentage replace the stored ones; personalInfo " +
			"is merged field by field (an address sent replaces the whole address).",
		Tags:   []string{kycTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusGone},
	}
}

func (h ownersAPI) updateOwner(ctx context.Context, in *updateOwnerInput) (*ownerOutput, error) {
	b := in.Body
	o, err := h.d.KYC.UpdateOwner(ctx, principal(ctx).PlatformID, in.BeneficialOwnerID, kyc.OwnerUpdate{
		Roles: b.Roles, OwnershipPercentage: b.OwnershipPercentage, PersonalInfo: b.PersonalInfo.input(),
	})
	if err != nil {
		return nil, apiError(err)
	}
	return &ownerOutput{Body: ownerOut(o)}, nil
}
