package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----

// VerificationError is one issue blocking a verification.
type VerificationError struct {
	ResourceID            string   `json:"resourceId" doc:"The Customer, BeneficialOwner or Document with the issue"`
	Type                  string   `json:"type" enum:"MISSING_FIELD,INVALID_FIELD,MISSING_LEGAL_PRESENCE_DOCUMENT,MISSING_CONTROL_STRUCTURE_DOCUMENT,MISSING_OWNERSHIP_STRUCTURE_DOCUMENT,MISSING_PROOF_OF_ADDRESS_DOCUMENT,MISSING_IDENTITY_DOCUMENT,INVALID_DOCUMENT,EXPIRED_DOCUMENT,POOR_QUALITY_DOCUMENT,SUSPECTED_FRAUD_DOCUMENT,WRONG_DOCUMENT_TYPE,INCOMPLETE_DOCUMENT,UNREADABLE_DOCUMENT,DOCUMENT_VERIFICATION_FAILED,APPLICANT_SANCTIONED,APPLICANT_FRAUD,APPLICANT_CRIMINAL_RECORD,APPLICANT_REJECTED,MISSING_BENEFICIAL_OWNER,MISSING_CONTROL_PERSON,MISSING_GOOD_STANDING_DOCUMENT"`
	Field                 string   `json:"field,omitempty" doc:"Dot path of the missing field (MISSING_FIELD)" example:"customer.address.line1"`
	AcceptedDocumentTypes []string `json:"acceptedDocumentTypes,omitempty" doc:"Any one of these documents resolves a missing-document error"`
	Reason                string   `json:"reason" doc:"What is wrong, for a person"`
}

// Verification is a customer's KYC (individual) or KYB (business)
// verification.
type Verification struct {
	ID                 string              `json:"id" doc:"Verification:<uuid>" example:"Verification:019542f5-b3e7-1d02-0000-000000000001"`
	CustomerID         string              `json:"customerId"`
	VerificationStatus string              `json:"verificationStatus" enum:"RESOLVE_ERRORS,PENDING_MANUAL_REVIEW,IN_PROGRESS,APPROVED,REJECTED,READY_FOR_VERIFICATION"`
	Errors             []VerificationError `json:"errors" doc:"What blocks the verification; empty when APPROVED or IN_PROGRESS"`
	CreatedAt          time.Time           `json:"createdAt"`
	UpdatedAt          time.Time           `json:"updatedAt"`
}

// VerificationRequest starts (or reads) a customer's verification.
type VerificationRequest struct {
	CustomerID string `json:"customerId" minLength:"1" maxLength:"255" doc:"The customer to verify" example:"Customer:019542f5-b3e7-1d02-0000-000000000001"`
}

// VerificationList is one page of verifications.
type VerificationList struct {
	Data       []Verification `json:"data"`
	HasMore    bool           `json:"hasMore" doc:"Whether more results follow this page"`
	NextCursor string         `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page (only when hasMore)"`
	TotalCount int            `json:"totalCount" doc:"Number of verifications matching the filters"`
}

func verificationOut(v ports.Verification) Verification {
	out := Verification{ID: v.ID, CustomerID: v.CustomerID, VerificationStatus: v.Status,
		Errors: make([]VerificationError, len(v.Errors)), CreatedAt: v.CreatedAt.UTC(), UpdatedAt: v.UpdatedAt.UTC()}
	for i, e := range v.Errors {
		out.Errors[i] = VerificationError(e)
	}
	return out
}

// ---- operations ----

type createVerificationInput struct {
	Body VerificationRequest
}

type verificationIDInput struct {
	VerificationID string `path:"verificationId" maxLength:"255" doc:"Verification:<uuid>"`
}

type listVerificationsInput struct {
	CustomerID         string `query:"customerId" maxLength:"255" pattern:"^Customer:" doc:"Only this customer's verifications (a Customer id)"`
	VerificationStatus string `query:"verificationStatus" enum:"RESOLVE_ERRORS,PENDING_MANUAL_REVIEW,IN_PROGRESS,APPROVED,REJECTED,READY_FOR_VERIFICATION" doc:"Only verifications in this status"`
	Limit              int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor             string `query:"cursor" maxLength:"1024" doc:"nextCursor of the previous page"`
}

type verificationOutput struct{ Body Verification }

type verificationListOutput struct{ Body VerificationList }

// verificationsAPI handles the verification operations.
type verificationsAPI struct{ d Deps }

func registerVerifications(api huma.API, d Deps) {
	h := verificationsAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.createVerificationOp(), h.createVerification) },
		func(api huma.API) { huma.Register(api, h.listVerificationsOp(), h.listVerifications) },
		func(api huma.API) { huma.Register(api, h.getVerificationOp(), h.getVerification) },
	)
}

func (verificationsAPI) createVerificationOp() huma.Operation {
	return huma.Operation{
		OperationID: "createVerification",
		Method:      http.MethodPost,
		Path:        "/verifications",
		Summary:     "Submit a customer for verification",
		Description: "Starts the customer's KYC (individual) or KYB (business, with its beneficial owners) verification, " +
			"resubmits an open one, or returns a final one (APPROVED, REJECTED). What the customer's region requires " +
			"and is missing comes back as RESOLVE_ERRORS with one error per missing field or document; uploading " +
			"documents and adding owners checks the verification again (READY_FOR_VERIFICATION when nothing is " +
			"missing); call this again to submit. The customer's kycStatus (kybStatus) and the owners' kycStatus " +
			"follow the outcome. Sandbox: the last 3 digits of businessInfo.registrationNumber, and the last 3 " +
			"characters of an owner's personalInfo.lastName (an individual's fullName): 001 PENDING, 002 REJECTED, " +
			"other APPROVED.",
		Tags:   []string{kycTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusGone},
	}
}

func (h verificationsAPI) createVerification(ctx context.Context, in *createVerificationInput) (*verificationOutput, error) {
	v, err := h.d.KYC.Submit(ctx, principal(ctx).PlatformID, in.Body.CustomerID)
	if err != nil {
		return nil, apiError(err)
	}
	return &verificationOutput{Body: verificationOut(v)}, nil
}

func (verificationsAPI) listVerificationsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listVerifications",
		Method:      http.MethodGet,
		Path:        "/verifications",
		Summary:     "List verifications",
		Description: "Lists the platform's verifications, oldest first, filtered and paginated.",
		Tags:        []string{kycTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h verificationsAPI) listVerifications(ctx context.Context, in *listVerificationsInput) (*verificationListOutput, error) {
	cursors := cursorsOf(h.d, "verifications")
	page, err := cursors.page(in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	res, err := h.d.KYC.ListVerifications(ctx, principal(ctx).PlatformID,
		ports.VerificationFilter{CustomerID: in.CustomerID, Status: in.VerificationStatus}, page)
	if err != nil {
		return nil, apiError(err)
	}
	out := VerificationList{Data: make([]Verification, len(res.Rows)), HasMore: res.HasMore,
		TotalCount: res.Total, NextCursor: cursors.next(res.HasMore, res.Next)}
	for i, v := range res.Rows {
		out.Data[i] = verificationOut(v)
	}
	return &verificationListOutput{Body: out}, nil
}

func (verificationsAPI) getVerificationOp() huma.Operation {
	return huma.Operation{
		OperationID: "getVerification",
		Method:      http.MethodGet,
		Path:        "/verifications/{verificationId}",
		Summary:     "Get a verification",
		Tags:        []string{kycTag},
		Errors:      []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h verificationsAPI) getVerification(ctx context.Context, in *verificationIDInput) (*verificationOutput, error) {
	v, err := h.d.KYC.GetVerification(ctx, principal(ctx).PlatformID, in.VerificationID)
	if err != nil {
		return nil, apiError(err)
	}
	return &verificationOutput{Body: verificationOut(v)}, nil
}
