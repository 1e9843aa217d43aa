package external

import (
	"context"

	"github.com/corridorpay/corridor/ports"
)

// Beneficiary verification statuses (reference
// BeneficiaryVerificationStatus).
const (
	VerificationMatched      = "MATCHED"
	VerificationPartialMatch = "PARTIAL_MATCH"
	VerificationNotMatched   = "NOT_MATCHED"
	VerificationUnsupported  = "UNSUPPORTED"
	VerificationCheckedByFI  = "CHECKED_BY_RECEIVING_FI"
	VerificationPending      = "PENDING"
)

// Verification is what the receiving side said about the beneficiary's
// name: a status and, when it returned one, the holder's name it has.
type Verification struct {
	Status       string
	VerifiedName string
}

// BeneficiaryVerifier checks a new account's beneficiary name against the
// holder of the account (a confirmation-of-payee service). It returns a
// *fault.Error to refuse the account outright (an account that does not
// exist is 400 INVALID_BANK_ACCOUNT); any other error is a failure to ask.
type BeneficiaryVerifier interface {
	Verify(ctx context.Context, currency string, info ports.AccountInfo) (Verification, error)
}

// noVerifier is the verifier when none is configured: nothing is checked.
type noVerifier struct{}

func (noVerifier) Verify(context.Context, string, ports.AccountInfo) (Verification, error) {
	return Verification{Status: VerificationUnsupported}, nil
}

// BeneficiaryName is the name an account's beneficiary goes by: an
// individual's full name or a business's legal name ("" without one).
func BeneficiaryName(info ports.AccountInfo) string {
	b := info.Beneficiary
	if b == nil {
		return ""
	}
	if b.BeneficiaryType == BeneficiaryBusiness {
		return b.LegalName
	}
	return b.FullName
}
