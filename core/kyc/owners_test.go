package kyc_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/ports"
)

func TestCreateOwner(t *testing.T) {
	e := newEnv(t)
	c := e.addCustomer(t, usBusiness("1"))
	o := e.createOwner(t, ownerInput(c.ID, "Doe", 51, "UBO", "DIRECTOR"))
	assert.Equal(t, c.ID, o.CustomerID)
	assert.Equal(t, []string{"UBO", "DIRECTOR"}, o.Roles)
	assert.Equal(t, 51, o.OwnershipPercentage)
	assert.Equal(t, kyc.StatusUnverified, o.KYCStatus)
	assert.Equal(t, "Doe", o.PersonalInfo.LastName)
	assert.Equal(t, "Austin", o.PersonalInfo.Address.City)
	assert.Equal(t, o, e.owner(t, o.ID))

	page, err := e.svc.ListOwners(context.Background(), e.platform, c.ID, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, page.Total)
	owners, err := e.svc.OwnersOfCustomers(context.Background(), e.platform, []string{c.ID, "Customer:none"})
	require.NoError(t, err)
	assert.Equal(t, map[string][]ports.BeneficialOwner{c.ID: {o}}, owners)
}

func TestCreateOwnerBadInput(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.addCustomer(t, usBusiness("1"))
	for _, tc := range []struct {
		name   string
		edit   func(*kyc.OwnerInput)
		fields []string
	}{
		{"percentage 101", func(in *kyc.OwnerInput) { in.OwnershipPercentage = ptr(101) }, []string{"ownershipPercentage"}},
		{"percentage -1", func(in *kyc.OwnerInput) { in.OwnershipPercentage = ptr(-1) }, []string{"ownershipPercentage"}},
		{"no percentage", func(in *kyc.OwnerInput) { in.OwnershipPercentage = nil }, []string{"ownershipPercentage"}},
		{"unknown role", func(in *kyc.OwnerInput) { in.Roles = []string{"UBO", "BOSS"} }, []string{"roles[1]"}},
		{"role twice", func(in *kyc.OwnerInput) { in.Roles = []string{"UBO", "UBO"} }, []string{"roles[1]"}},
		{"no roles", func(in *kyc.OwnerInput) { in.Roles = []string{} }, []string{"roles"}},
		{"malformed birth date", func(in *kyc.OwnerInput) { in.PersonalInfo.BirthDate = ptr("15/06/1978") }, []string{"personalInfo.birthDate"}},
		{"impossible birth date", func(in *kyc.OwnerInput) { in.PersonalInfo.BirthDate = ptr("1978-02-30") }, []string{"personalInfo.birthDate"}},
		{"future birth date", func(in *kyc.OwnerInput) { in.PersonalInfo.BirthDate = ptr("2099-01-01") }, []string{"personalInfo.birthDate"}},
		{"bad id type", func(in *kyc.OwnerInput) { in.PersonalInfo.IDType = ptr("PASSPORT") }, []string{"personalInfo.idType"}},
		{"SSN shape", func(in *kyc.OwnerInput) { in.PersonalInfo.Identifier = ptr("12345") }, []string{"personalInfo.identifier"}},
		{"nationality", func(in *kyc.OwnerInput) { in.PersonalInfo.Nationality = ptr("USA") }, []string{"personalInfo.nationality"}},
		{"e-mail", func(in *kyc.OwnerInput) { in.PersonalInfo.Email = ptr("jane@") }, []string{"personalInfo.email"}},
		{"phone", func(in *kyc.OwnerInput) { in.PersonalInfo.PhoneNumber = ptr("555-1234") }, []string{"personalInfo.phoneNumber"}},
		{"address parts", func(in *kyc.OwnerInput) { in.PersonalInfo.Address = &ports.Address{City: "X", Country: "ZZ"} },
			[]string{"personalInfo.address.line1", "personalInfo.address.postalCode", "personalInfo.address.country"}},
		{"required personal info", func(in *kyc.OwnerInput) { in.PersonalInfo = &kyc.PersonalInfoInput{FirstName: ptr("J")} },
			[]string{"personalInfo.lastName", "personalInfo.birthDate", "personalInfo.nationality", "personalInfo.address",
				"personalInfo.idType", "personalInfo.identifier"}},
		{"no personal info", func(in *kyc.OwnerInput) { in.PersonalInfo = nil }, []string{"personalInfo"}},
		{"no customer", func(in *kyc.OwnerInput) { in.CustomerID = "" }, []string{"customerId"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := ownerInput(c.ID, "Doe", 10)
			tc.edit(&in)
			_, err := e.svc.CreateOwner(ctx, e.platform, in)
			requireFields(t, err, tc.fields...)
		})
	}

	ind := e.addCustomer(t, usIndividual("Ada"))
	_, err := e.svc.CreateOwner(ctx, e.platform, ownerInput(ind.ID, "Doe", 10))
	requireFields(t, err, "customerId")
	_, err = e.svc.CreateOwner(ctx, e.platform, ownerInput("Customer:nope", "Doe", 10))
	requireKind(t, err, fault.KindNotFound, "USER_NOT_FOUND")
	_, err = e.svc.CreateOwner(ctx, e.addPlatform(t), ownerInput(c.ID, "Doe", 10))
	requireKind(t, err, fault.KindNotFound, "USER_NOT_FOUND")

	// The owners of one business own at most 100% together.
	e.createOwner(t, ownerInput(c.ID, "Doe", 60))
	e.createOwner(t, ownerInput(c.ID, "Roe", 40))
	_, err = e.svc.CreateOwner(ctx, e.platform, ownerInput(c.ID, "Poe", 1))
	requireFields(t, err, "ownershipPercentage")
	e.createOwner(t, ownerInput(c.ID, "Director", 0, "DIRECTOR"))
}

func TestUpdateOwner(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.addCustomer(t, usBusiness("1"))
	o := e.createOwner(t, ownerInput(c.ID, "Doe", 50))
	other := e.createOwner(t, ownerInput(c.ID, "Roe", 30))

	// personalInfo merges field by field; roles and percentage replace.
	u, err := e.svc.UpdateOwner(ctx, e.platform, o.ID, kyc.OwnerUpdate{
		OwnershipPercentage: ptr(70),
		PersonalInfo:        &kyc.PersonalInfoInput{MiddleName: ptr("Q"), Email: ptr("jane@example.com")},
	})
	require.NoError(t, err)
	want := o
	want.OwnershipPercentage = 70
	want.PersonalInfo.MiddleName, want.PersonalInfo.Email = "Q", "jane@example.com"
	want.UpdatedAt = u.UpdatedAt
	assert.Equal(t, want, u)
	assert.True(t, u.UpdatedAt.After(o.UpdatedAt))
	assert.Equal(t, u, e.owner(t, o.ID))

	u, err = e.svc.UpdateOwner(ctx, e.platform, o.ID, kyc.OwnerUpdate{Roles: []string{"DIRECTOR"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"DIRECTOR"}, u.Roles)
	assert.Equal(t, 70, u.OwnershipPercentage, "unsent fields stay")

	for _, tc := range []struct {
		name   string
		u      kyc.OwnerUpdate
		fields []string
	}{
		{"101", kyc.OwnerUpdate{OwnershipPercentage: ptr(101)}, []string{"ownershipPercentage"}},
		{"over 100 together", kyc.OwnerUpdate{OwnershipPercentage: ptr(71)}, []string{"ownershipPercentage"}},
		{"role", kyc.OwnerUpdate{Roles: []string{"KING"}}, []string{"roles[0]"}},
		{"empty roles", kyc.OwnerUpdate{Roles: []string{}}, []string{"roles"}},
		{"date", kyc.OwnerUpdate{PersonalInfo: &kyc.PersonalInfoInput{BirthDate: ptr("1978-13-01")}}, []string{"personalInfo.birthDate"}},
		{"blank name", kyc.OwnerUpdate{PersonalInfo: &kyc.PersonalInfoInput{LastName: ptr(" ")}}, []string{"personalInfo.lastName"}},
		{"SSN against the stored idType", kyc.OwnerUpdate{PersonalInfo: &kyc.PersonalInfoInput{Identifier: ptr("abc")}}, []string{"personalInfo.identifier"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.UpdateOwner(ctx, e.platform, other.ID, tc.u)
			requireFields(t, err, tc.fields...)
			assert.Equal(t, other, e.owner(t, other.ID), "nothing changed")
		})
	}
	_, err = e.svc.UpdateOwner(ctx, e.platform, "BeneficialOwner:nope", kyc.OwnerUpdate{})
	requireKind(t, err, fault.KindNotFound, "NOT_FOUND")
	_, err = e.svc.UpdateOwner(ctx, e.addPlatform(t), o.ID, kyc.OwnerUpdate{})
	requireKind(t, err, fault.KindNotFound, "NOT_FOUND")
	_, err = e.svc.GetOwner(ctx, e.addPlatform(t), o.ID)
	requireKind(t, err, fault.KindNotFound, "NOT_FOUND")
}

func TestListOwners(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.addCustomer(t, usBusiness("1"))
	var ids []string
	for i := range 5 {
		ids = append(ids, e.createOwner(t, ownerInput(c.ID, "Doe", i)).ID)
	}
	var seen []string
	page := ports.Page{Limit: 2}
	for {
		p, err := e.svc.ListOwners(ctx, e.platform, c.ID, page)
		require.NoError(t, err)
		assert.Equal(t, 5, p.Total)
		for _, o := range p.Rows {
			seen = append(seen, o.ID)
		}
		if !p.HasMore {
			break
		}
		page.After = p.Next
	}
	assert.Equal(t, ids, seen)
	_, err := e.svc.ListOwners(ctx, e.platform, "", ports.Page{})
	requireFields(t, err, "customerId")
	_, err = e.svc.ListOwners(ctx, e.addPlatform(t), c.ID, ports.Page{})
	requireKind(t, err, fault.KindNotFound, "USER_NOT_FOUND")
}
