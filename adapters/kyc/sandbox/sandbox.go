// Package sandbox is the sandbox KYC/KYB provider (ports.KYCProvider): the
// spec's magic suffixes decide. A business by the last 3 digits of
// businessInfo.registrationNumber, a beneficial owner by the last 3
// characters of personalInfo.lastName, and an individual (the spec says
// nothing of them) the owners' way, by the last 3 characters of fullName:
// "001" is PENDING, "002" REJECTED, anything else APPROVED. It never asks
// for manual review, and keeps no state: the same data gets the same
// answer, so a resubmission after fixing the data moves on.
package sandbox

import (
	"context"
	"strings"
	"unicode"

	"github.com/corridorpay/corridor/ports"
)

// Provider implements ports.KYCProvider by suffix.
type Provider struct{}

var _ ports.KYCProvider = Provider{}

// The suffixes with an outcome other than APPROVED.
const (
	PendingSuffix  = "001"
	RejectedSuffix = "002"
)

// rejectedType is the reference's error type for a rejected applicant.
const rejectedType = "APPLICANT_REJECTED"

func decide(resourceID, suffix, what string) ports.KYCDecision {
	switch suffix {
	case PendingSuffix:
		return ports.KYCDecision{Status: ports.KYCPending}
	case RejectedSuffix:
		return ports.KYCDecision{Status: ports.KYCRejected, Errors: []ports.VerificationError{{
			ResourceID: resourceID, Type: rejectedType, Reason: "sandbox: " + what + " ends in " + RejectedSuffix,
		}}}
	}
	return ports.KYCDecision{Status: ports.KYCApproved}
}

// lastChars is the last 3 characters of s ("" when shorter).
func lastChars(s string) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) < 3 {
		return ""
	}
	return string(r[len(r)-3:])
}

// lastDigits is the last 3 digits of s, ignoring other characters
// ("HRB 12-001" → "001").
func lastDigits(s string) string {
	var digits []rune
	for _, r := range s {
		if unicode.IsDigit(r) {
			digits = append(digits, r)
		}
	}
	if len(digits) < 3 {
		return ""
	}
	return string(digits[len(digits)-3:])
}

// VerifyBusiness decides KYB by the registration number.
func (Provider) VerifyBusiness(_ context.Context, c ports.Customer, _ []ports.BeneficialOwner, _ []ports.Document) (ports.KYCDecision, error) {
	var reg string
	if c.Business != nil {
		reg = c.Business.RegistrationNumber
	}
	return decide(c.ID, lastDigits(reg), "businessInfo.registrationNumber"), nil
}

// VerifyOwner decides an owner's KYC by its last name.
func (Provider) VerifyOwner(_ context.Context, o ports.BeneficialOwner, _ []ports.Document) (ports.KYCDecision, error) {
	return decide(o.ID, lastChars(o.PersonalInfo.LastName), "personalInfo.lastName"), nil
}

// VerifyIndividual decides an individual's KYC by its full name.
func (Provider) VerifyIndividual(_ context.Context, c ports.Customer, _ []ports.Document) (ports.KYCDecision, error) {
	var name string
	if c.Individual != nil {
		name = c.Individual.FullName
	}
	return decide(c.ID, lastChars(name), "fullName"), nil
}
