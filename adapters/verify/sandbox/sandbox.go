// Package sandbox is the sandbox beneficiary verifier: the last three
// digits of an external account's primary identifier pick the outcome
// (external.SandboxSuffix), as the sandbox's 1xx table says.
package sandbox

import (
	"context"
	"strings"

	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// Verifier implements external.BeneficiaryVerifier by identifier suffix.
type Verifier struct{}

var _ external.BeneficiaryVerifier = Verifier{}

// outcomes maps a suffix to its verification status; "105" refuses the
// account and any other suffix matches.
var outcomes = map[string]string{
	"102": external.VerificationNotMatched,
	"103": external.VerificationPartialMatch,
	"104": external.VerificationPending,
	"106": external.VerificationUnsupported,
	"107": external.VerificationCheckedByFI,
}

// InvalidSuffix is the suffix of an account that does not exist.
const InvalidSuffix = "105"

// Verify answers by the account's identifier suffix. A match returns the
// beneficiary's name as the verified name, a partial match a slightly
// different spelling of it; other outcomes return no name.
func (Verifier) Verify(_ context.Context, _ string, info ports.AccountInfo) (external.Verification, error) {
	suffix := external.SandboxSuffix(info)
	if suffix == InvalidSuffix {
		field := "accountInfo." + external.PrimaryField(info)
		return external.Verification{}, &fault.Error{
			Kind: fault.KindInvalid, Code: external.CodeInvalidBankAccount,
			Message: "the receiving institution has no such account (" + field + ")",
			Fields:  []fault.FieldError{{Field: field, Message: "no such account at the receiving institution"}},
		}
	}
	name := external.BeneficiaryName(info)
	status, ok := outcomes[suffix]
	switch {
	case !ok:
		return external.Verification{Status: external.VerificationMatched, VerifiedName: name}, nil
	case status == external.VerificationPartialMatch:
		return external.Verification{Status: status, VerifiedName: respell(name)}, nil
	}
	return external.Verification{Status: status}, nil
}

// respell writes a name the way a bank's records often differ from it:
// the first given name reduced to its initial ("Ana Maria Silva" is
// "A. Maria Silva"); a one-word name loses its last letter.
func respell(name string) string {
	words := strings.Fields(name)
	switch {
	case len(words) == 0:
		return ""
	case len(words) == 1:
		r := []rune(words[0])
		if len(r) < 2 {
			return words[0] + "."
		}
		return string(r[:len(r)-1])
	}
	first := []rune(words[0])
	words[0] = string(first[0]) + "."
	return strings.Join(words, " ")
}
