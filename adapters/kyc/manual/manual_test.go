package manual_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/corridorpay/corridor/adapters/kyc/manual"
	"github.com/corridorpay/corridor/ports"
)

func TestEverythingGoesToReview(t *testing.T) {
	ctx := context.Background()
	p := manual.Provider{}
	// Even names that the sandbox would approve or reject.
	for _, name := range []string{"Ada", "Ada002", "Ada001"} {
		d, _ := p.VerifyIndividual(ctx, ports.Customer{Individual: &ports.IndividualInfo{FullName: name}}, nil)
		assert.Equal(t, ports.KYCReview, d.Status)
		d, _ = p.VerifyOwner(ctx, ports.BeneficialOwner{PersonalInfo: ports.PersonalInfo{LastName: name}}, nil)
		assert.Equal(t, ports.KYCReview, d.Status)
		d, _ = p.VerifyBusiness(ctx, ports.Customer{Business: &ports.BusinessInfo{RegistrationNumber: name}}, nil, nil)
		assert.Equal(t, ports.KYCReview, d.Status)
	}
}
