// Package manual is the KYC provider of a deployment without an automated
// one (CORRIDOR_SANDBOX=false and no provider adapter configured): every
// complete application waits for a person (PENDING_MANUAL_REVIEW), who
// records the outcome on the customer (PATCH kycStatus / kybStatus). It
// never approves anything by itself.
package manual

import (
	"context"

	"github.com/corridorpay/corridor/ports"
)

// Provider implements ports.KYCProvider: always manual review.
type Provider struct{}

var _ ports.KYCProvider = Provider{}

var review = ports.KYCDecision{Status: ports.KYCReview}

// VerifyIndividual sends the individual to manual review.
func (Provider) VerifyIndividual(context.Context, ports.Customer, []ports.Document) (ports.KYCDecision, error) {
	return review, nil
}

// VerifyBusiness sends the business to manual review.
func (Provider) VerifyBusiness(context.Context, ports.Customer, []ports.BeneficialOwner, []ports.Document) (ports.KYCDecision, error) {
	return review, nil
}

// VerifyOwner sends the owner to manual review.
func (Provider) VerifyOwner(context.Context, ports.BeneficialOwner, []ports.Document) (ports.KYCDecision, error) {
	return review, nil
}
