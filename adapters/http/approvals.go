package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// ApprovePaymentRequest approves a payment the platform deferred.
type ApprovePaymentRequest struct {
	ReceiverCustomerInfo map[string]any `json:"receiverCustomerInfo,omitempty" doc:"The receiver fields the webhook's requestedReceiverCustomerInfoFields asked for (CustomerInfoFieldName keys)"`
}

// RejectPaymentRequest rejects a payment the platform deferred.
type RejectPaymentRequest struct {
	Reason string `json:"reason,omitempty" maxLength:"255" doc:"Why (for the platform's own records; not stored)"`
}

type approveInput struct {
	TransactionID string `path:"transactionId" doc:"The incoming payment's id"`
	Body          *ApprovePaymentRequest
}

type rejectInput struct {
	TransactionID string `path:"transactionId" doc:"The incoming payment's id"`
	Body          *RejectPaymentRequest
}

// approvalsAPI handles the platform's decision on incoming payments.
type approvalsAPI struct{ d Deps }

func registerApprovals(api huma.API, d Deps) {
	h := approvalsAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.approveOp(), h.approve) },
		func(api huma.API) { huma.Register(api, h.rejectOp(), h.reject) },
	)
}

const approvalWindowDoc = " Only while the payment is PENDING platform approval: within 5 s of its arrival, after the INCOMING_PAYMENT.PENDING webhook was answered 202; otherwise 409 TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL, and nothing moves."

func (approvalsAPI) approveOp() huma.Operation {
	return huma.Operation{
		OperationID: "approvePendingPayment", Method: http.MethodPost, Path: "/transactions/{transactionId}/approve",
		Summary: "Approve a pending incoming payment",
		Description: "Credits the receiver with the held payment (COMPLETED). receiverCustomerInfo must hold every mandatory field the webhook asked for (400 otherwise)." +
			approvalWindowDoc,
		Tags:   []string{transactionsTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusConflict},
	}
}

func (h approvalsAPI) approve(ctx context.Context, in *approveInput) (*transactionOutput, error) {
	var info map[string]any
	if in.Body != nil {
		info = in.Body.ReceiverCustomerInfo
	}
	pid := principal(ctx).PlatformID
	t, err := h.d.Approvals.Approve(ctx, pid, in.TransactionID, info)
	if err != nil {
		return nil, apiError(err)
	}
	return &transactionOutput{Body: transactionOut(h.d, pid, t)}, nil
}

func (approvalsAPI) rejectOp() huma.Operation {
	return huma.Operation{
		OperationID: "rejectPendingPayment", Method: http.MethodPost, Path: "/transactions/{transactionId}/reject",
		Summary:     "Reject a pending incoming payment",
		Description: "Releases the held payment; the transaction is REJECTED and the receiver is never credited." + approvalWindowDoc,
		Tags:        []string{transactionsTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusConflict},
	}
}

func (h approvalsAPI) reject(ctx context.Context, in *rejectInput) (*transactionOutput, error) {
	pid := principal(ctx).PlatformID
	t, err := h.d.Approvals.Reject(ctx, pid, in.TransactionID)
	if err != nil {
		return nil, apiError(err)
	}
	return &transactionOutput{Body: transactionOut(h.d, pid, t)}, nil
}
