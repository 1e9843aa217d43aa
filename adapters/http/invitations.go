package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/invitations"
	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----

// UmaInvitation is an invitation as the API shows it.
type UmaInvitation struct {
	Code         string          `json:"code" doc:"The invitation's code: 12 characters from 23456789ABCDEFGHJKMNPQRSTUVWXYZ (case-insensitive when looked up)" example:"7KQ3MZ9XH2TB"`
	CreatedAt    time.Time       `json:"createdAt" doc:"When the invitation was created"`
	ClaimedAt    *time.Time      `json:"claimedAt,omitempty" doc:"When it was claimed; present once claimed"`
	URL          string          `json:"url" doc:"Where the invitation can be claimed" example:"https://sandbox.local/invitations/7KQ3MZ9XH2TB"`
	ExpiresAt    *time.Time      `json:"expiresAt,omitempty" doc:"When it expires; absent when it never does"`
	InviterUma   string          `json:"inviterUma" doc:"The UMA address of the inviting customer" example:"$ana@sandbox.local"`
	InviteeUma   string          `json:"inviteeUma,omitempty" doc:"The UMA address that claimed it; present once claimed" example:"$ben@example.com"`
	Status       string          `json:"status" enum:"PENDING,CLAIMED,EXPIRED,CANCELLED" doc:"PENDING until claimed, cancelled by its platform, or expired at expiresAt"`
	FirstName    string          `json:"firstName,omitempty" doc:"The inviter's first name, shown to the invitee" example:"Ana"`
	AmountToSend *CurrencyAmount `json:"amountToSend,omitempty" doc:"Shown to the invitee only: nothing moves; the inviter's platform sends it (sender-locked) after the INVITATION.CLAIMED event"`
}

// UmaInvitationCreateRequest creates an invitation.
type UmaInvitationCreateRequest struct {
	InviterUma   string     `json:"inviterUma" maxLength:"255" doc:"UMA address of the platform's customer who invites" example:"$ana@sandbox.local"`
	FirstName    *string    `json:"firstName,omitempty" maxLength:"255" doc:"First name shown with the invitation" example:"Ana"`
	AmountToSend *int64     `json:"amountToSend,omitempty" format:"int64" exclusiveMinimum:"0" maximum:"9000000000000000" doc:"Display-only amount, in the smallest unit of the inviter's currency" example:"12550"`
	ExpiresAt    *time.Time `json:"expiresAt,omitempty" doc:"When the invitation expires (in the future); never when omitted"`
}

// UmaInvitationClaimRequest claims an invitation.
type UmaInvitationClaimRequest struct {
	InviteeUma string `json:"inviteeUma" maxLength:"255" doc:"UMA address of the customer who claims" example:"$ben@example.com"`
}

func invitationOut(inv ports.Invitation) UmaInvitation {
	out := UmaInvitation{
		Code: inv.Code, CreatedAt: inv.CreatedAt, ClaimedAt: optTime(inv.ClaimedAt), URL: inv.URL,
		ExpiresAt: optTime(inv.ExpiresAt), InviterUma: inv.InviterUma, InviteeUma: inv.InviteeUma,
		Status: inv.Status, FirstName: inv.FirstName,
	}
	if inv.Currency != "" {
		a := amountOf(inv.AmountToSend, inv.Currency)
		out.AmountToSend = &a
	}
	return out
}

// ---- operations ----

const invitationsTag = "Invitations"

type invitationsAPI struct{ d Deps }

type createInvitationInput struct {
	Body UmaInvitationCreateRequest
}

type invitationCodeInput struct {
	Code string `path:"invitationCode" maxLength:"64" doc:"The invitation's code"`
}

type claimInvitationInput struct {
	Code string `path:"invitationCode" maxLength:"64" doc:"The invitation's code"`
	Body UmaInvitationClaimRequest
}

type invitationOutput struct{ Body UmaInvitation }

func registerInvitations(api huma.API, d Deps) {
	h := invitationsAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.createInvitationOp(), h.createInvitation) },
		func(api huma.API) { huma.Register(api, h.getInvitationOp(), h.getInvitation) },
		func(api huma.API) { huma.Register(api, h.claimInvitationOp(), h.claimInvitation) },
		func(api huma.API) { huma.Register(api, h.cancelInvitationOp(), h.cancelInvitation) },
	)
}

func (invitationsAPI) createInvitationOp() huma.Operation {
	return huma.Operation{
		OperationID:   "createInvitation",
		Method:        http.MethodPost,
		Path:          "/invitations",
		Summary:       "Create a UMA invitation",
		Description:   "Creates a PENDING invitation from one of the platform's customers (inviterUma). 400 INVALID_UMA_ADDRESS for a malformed address; 400 INVALID_INPUT when it is not a live customer's of the platform, or expiresAt is not in the future; 400 INVITATIONS_NOT_CONFIGURED when the platform has no UMA domain.",
		Tags:          []string{invitationsTag},
		DefaultStatus: http.StatusCreated,
		Errors:        []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h invitationsAPI) createInvitation(ctx context.Context, in *createInvitationInput) (*invitationOutput, error) {
	b := in.Body
	ci := invitations.CreateInput{InviterUma: b.InviterUma, AmountToSend: b.AmountToSend, ExpiresAt: b.ExpiresAt}
	if b.FirstName != nil {
		ci.FirstName = *b.FirstName
	}
	inv, err := h.d.Invitations.Create(ctx, principal(ctx).PlatformID, ci)
	if err != nil {
		return nil, apiError(err)
	}
	return &invitationOutput{Body: invitationOut(inv)}, nil
}

func (invitationsAPI) getInvitationOp() huma.Operation {
	return huma.Operation{
		OperationID: "getInvitation",
		Method:      http.MethodGet,
		Path:        "/invitations/{invitationCode}",
		Summary:     "Get a UMA invitation",
		Description: "Returns the invitation with the code, whichever platform created it (the invitee's platform shows it before claiming). 404 INVITATION_NOT_FOUND otherwise.",
		Tags:        []string{invitationsTag},
		Errors:      []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h invitationsAPI) getInvitation(ctx context.Context, in *invitationCodeInput) (*invitationOutput, error) {
	inv, err := h.d.Invitations.Get(ctx, in.Code)
	if err != nil {
		return nil, apiError(err)
	}
	return &invitationOutput{Body: invitationOut(inv)}, nil
}

func (invitationsAPI) claimInvitationOp() huma.Operation {
	return huma.Operation{
		OperationID: "claimInvitation",
		Method:      http.MethodPost,
		Path:        "/invitations/{invitationCode}/claim",
		Summary:     "Claim a UMA invitation",
		Description: "Claims a PENDING invitation for inviteeUma (any platform may claim) and records an INVITATION.CLAIMED event for the inviter's platform. Of concurrent claims one wins. 400 INVITATION_ALREADY_CLAIMED, INVITATION_CANCELLED or EXPIRED when it is no longer PENDING; 400 INVALID_UMA_ADDRESS for a malformed address.",
		Tags:        []string{invitationsTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h invitationsAPI) claimInvitation(ctx context.Context, in *claimInvitationInput) (*invitationOutput, error) {
	inv, err := h.d.Invitations.Claim(ctx, in.Code, in.Body.InviteeUma)
	if err != nil {
		return nil, apiError(err)
	}
	return &invitationOutput{Body: invitationOut(inv)}, nil
}

func (invitationsAPI) cancelInvitationOp() huma.Operation {
	return huma.Operation{
		OperationID: "cancelInvitation",
		Method:      http.MethodPost,
		Path:        "/invitations/{invitationCode}/cancel",
		Summary:     "Cancel a UMA invitation",
		Description: "Cancels a PENDING invitation. 403 FORBIDDEN unless the platform created it; 400 INVITATION_ALREADY_CLAIMED, INVITATION_CANCELLED or EXPIRED when it is no longer PENDING.",
		Tags:        []string{invitationsTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
	}
}

func (h invitationsAPI) cancelInvitation(ctx context.Context, in *invitationCodeInput) (*invitationOutput, error) {
	inv, err := h.d.Invitations.Cancel(ctx, principal(ctx).PlatformID, in.Code)
	if err != nil {
		return nil, apiError(err)
	}
	return &invitationOutput{Body: invitationOut(inv)}, nil
}
