package sandbox_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/kyc/sandbox"
	"github.com/corridorpay/corridor/ports"
)

func TestBusinessByRegistrationNumber(t *testing.T) {
	for _, tc := range []struct {
		reg, want string
	}{
		{"HRB-2024-001", ports.KYCPending},
		{"12345001", ports.KYCPending},
		{"HRB 12-002", ports.KYCRejected},
		{"0002", ports.KYCRejected},
		{"12345003", ports.KYCApproved},
		{"ABC-999", ports.KYCApproved},
		{"001X", ports.KYCPending}, // digits only: the last three are 001
		{"", ports.KYCApproved},
		{"7", ports.KYCApproved},
	} {
		c := ports.Customer{ID: "Customer:1", CustomerType: "BUSINESS", Business: &ports.BusinessInfo{RegistrationNumber: tc.reg}}
		d, err := sandbox.Provider{}.VerifyBusiness(context.Background(), c, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, tc.want, d.Status, tc.reg)
		if tc.want == ports.KYCRejected {
			require.Len(t, d.Errors, 1)
			assert.Equal(t, "Customer:1", d.Errors[0].ResourceID)
			assert.Equal(t, "APPLICANT_REJECTED", d.Errors[0].Type)
		} else {
			assert.Empty(t, d.Errors, tc.reg)
		}
	}
}

func TestOwnerByLastName(t *testing.T) {
	for _, tc := range []struct {
		last, want string
	}{
		{"Smith001", ports.KYCPending},
		{"Smith002", ports.KYCRejected},
		{"Smith003", ports.KYCApproved},
		{"Smith", ports.KYCApproved},
		{"001", ports.KYCPending},
		{"Smith 002 ", ports.KYCRejected},
		{"S0012", ports.KYCApproved}, // characters, not digits: "012"
		{"Wu", ports.KYCApproved},
	} {
		o := ports.BeneficialOwner{ID: "BeneficialOwner:1", PersonalInfo: ports.PersonalInfo{LastName: tc.last}}
		d, err := sandbox.Provider{}.VerifyOwner(context.Background(), o, nil)
		require.NoError(t, err)
		assert.Equal(t, tc.want, d.Status, tc.last)
		if tc.want == ports.KYCRejected {
			require.Len(t, d.Errors, 1)
			assert.Equal(t, "BeneficialOwner:1", d.Errors[0].ResourceID)
		}
	}
}

func TestIndividualByFullName(t *testing.T) {
	for name, want := range map[string]string{
		"Ada Lovelace001": ports.KYCPending, "Ada Lovelace002": ports.KYCRejected, "Ada Lovelace": ports.KYCApproved,
	} {
		c := ports.Customer{ID: "Customer:2", CustomerType: "INDIVIDUAL", Individual: &ports.IndividualInfo{FullName: name}}
		d, err := sandbox.Provider{}.VerifyIndividual(context.Background(), c, nil)
		require.NoError(t, err)
		assert.Equal(t, want, d.Status, name)
	}
	d, err := sandbox.Provider{}.VerifyIndividual(context.Background(), ports.Customer{ID: "Customer:3"}, nil)
	require.NoError(t, err)
	assert.Equal(t, ports.KYCApproved, d.Status, "no profile")
}
