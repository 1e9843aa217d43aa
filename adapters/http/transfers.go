package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/transfers"
)

// ---- wire models ----

// InternalAccountReference names an internal account.
type InternalAccountReference struct {
	AccountID string `json:"accountId" doc:"InternalAccount:<uuid>" example:"InternalAccount:a12dcbd6-dced-4ec4-b756-3c3a9ea3d123"`
}

// ExternalAccountReference names an external account.
type ExternalAccountReference struct {
	AccountID string `json:"accountId" doc:"ExternalAccount:<uuid>" example:"ExternalAccount:e85dcbd6-dced-4ec4-b756-3c3a9ea3d965"`
}

// ExternalAccountDestinationReference names the external account paid, and
// optionally the rail to pay it on.
type ExternalAccountDestinationReference struct {
	AccountID   string `json:"accountId" doc:"ExternalAccount:<uuid>" example:"ExternalAccount:e85dcbd6-dced-4ec4-b756-3c3a9ea3d965"`
	PaymentRail string `json:"paymentRail,omitempty" enum:"ACH,ACH_COLOMBIA,BANK_TRANSFER,BRE_B,CIPS,FAST,FASTER_PAYMENTS,FEDNOW,INSTAPAY,MOBILE_MONEY,NEFT,PAYNOW,PESONET,PIX,RTGS,RTP,SEPA,SEPA_INSTANT,SPEI,SWIFT,UNIONPAY,UPI,WIRE" doc:"Rail to pay on; it must reach the destination account. Absent: the service chooses (railSelectionMode AUTO)"`
}

// TransferInRequest pulls money from an external account.
type TransferInRequest struct {
	Source      ExternalAccountReference `json:"source" doc:"The external account to pull from; its rail must support pulls (e.g. ACH debit)"`
	Destination InternalAccountReference `json:"destination" doc:"The internal account credited, in the same currency"`
	Amount      int64                    `json:"amount,omitempty" format:"int64" doc:"Amount in the smallest unit of the currency (cents, satoshis…); this service requires it" example:"12550"`
}

// TransferOutRequest pays money out to an external account.
type TransferOutRequest struct {
	Source                InternalAccountReference            `json:"source" doc:"The internal account debited"`
	Destination           ExternalAccountDestinationReference `json:"destination" doc:"The external account paid, in the same currency"`
	Amount                int64                               `json:"amount,omitempty" format:"int64" doc:"Amount in the smallest unit of the currency; this service requires it, and it must not exceed the source's available balance" example:"12550"`
	RemittanceInformation string                              `json:"remittanceInformation,omitempty" maxLength:"80" doc:"Free text that travels with the payment on its rail" example:"invoice 1234"`
	PurposeOfPayment      string                              `json:"purposeOfPayment,omitempty" enum:"GIFT,SELF,GOODS_OR_SERVICES,EDUCATION,HEALTH_OR_MEDICAL,REAL_ESTATE_PURCHASE,TAX_PAYMENT,LOAN_PAYMENT,UTILITY_BILL,DONATION,TRAVEL,FAMILY_SUPPORT,SALARY_PAYMENT,OTHER" doc:"Why the payment is made (required by some destinations)"`
}

// request is the transfer-in as core/transfers takes it.
func (b TransferInRequest) request(idempotencyKey string) transfers.InRequest {
	return transfers.InRequest{SourceAccountID: b.Source.AccountID, DestinationAccountID: b.Destination.AccountID,
		Amount: b.Amount, IdempotencyKey: idempotencyKey}
}

// request is the transfer-out as core/transfers takes it.
func (b TransferOutRequest) request(idempotencyKey string) transfers.OutRequest {
	return transfers.OutRequest{
		SourceAccountID: b.Source.AccountID, DestinationAccountID: b.Destination.AccountID,
		PaymentRail: b.Destination.PaymentRail, Amount: b.Amount, RemittanceInformation: b.RemittanceInformation,
		PurposeOfPayment: b.PurposeOfPayment, IdempotencyKey: idempotencyKey,
	}
}

// ---- operations ----

type transferInInput struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255"`
	Body           TransferInRequest
}

type transferOutInput struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255"`
	Body           TransferOutRequest
}

type transferOutput struct{ Body Transaction }

const transfersTag = "Same-Currency Transfers"

// transfersAPI handles the same-currency transfers.
type transfersAPI struct{ d Deps }

func registerTransfers(api huma.API, d Deps) {
	h := transfersAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.transferInOp(), h.transferIn) },
		func(api huma.API) { huma.Register(api, h.transferOutOp(), h.transferOut) },
		func(api huma.API) { huma.Register(api, h.cancelOp(), h.cancel) },
	)
}

func (transfersAPI) transferInOp() huma.Operation {
	return huma.Operation{
		OperationID:   "createTransferIn",
		Method:        http.MethodPost,
		Path:          "/transfer-in",
		Summary:       "Create a transfer-in",
		DefaultStatus: http.StatusCreated,
		Description: "Pulls money from an external account into an internal account of the same owner and " +
			"currency, over a rail that can debit the external account (e.g. ACH). Nothing is credited until " +
			"the rail succeeds; the transaction starts PENDING and moves to PROCESSING, then COMPLETED or FAILED. " +
			"For accounts no rail can pull from, deposit to the internal account's payment instructions instead.",
		Tags:   []string{transfersTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h transfersAPI) transferIn(ctx context.Context, in *transferInInput) (*transferOutput, error) {
	pid := principal(ctx).PlatformID
	t, err := h.d.Transfers.TransferIn(ctx, pid, in.Body.request(in.IdempotencyKey))
	if err != nil {
		return nil, apiError(err)
	}
	return &transferOutput{Body: transactionOut(h.d, pid, t)}, nil
}

func (transfersAPI) transferOutOp() huma.Operation {
	return huma.Operation{
		OperationID:   "createTransferOut",
		Method:        http.MethodPost,
		Path:          "/transfer-out",
		Summary:       "Create a transfer-out",
		DefaultStatus: http.StatusCreated,
		Description: "Pays money from an internal account to an external account of the same owner and currency. " +
			"The amount is held on the internal account at once (400 INVALID_AMOUNT when the available balance " +
			"does not cover it); the rail's success settles the hold, its failure releases it. The transaction " +
			"starts PENDING and moves to PROCESSING, then COMPLETED or FAILED (with failureReason).",
		Tags:   []string{transfersTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h transfersAPI) transferOut(ctx context.Context, in *transferOutInput) (*transferOutput, error) {
	pid := principal(ctx).PlatformID
	t, err := h.d.Transfers.TransferOut(ctx, pid, in.Body.request(in.IdempotencyKey))
	if err != nil {
		return nil, apiError(err)
	}
	return &transferOutput{Body: transactionOut(h.d, pid, t)}, nil
}

// CancelTransactionRequest asks for a transfer's cancellation.
type CancelTransactionRequest struct {
	Reason string `json:"reason,omitempty" maxLength:"255" doc:"Why (logged for debugging; not stored)"`
}

type cancelTransactionInput struct {
	TransactionID  string `path:"transactionId" maxLength:"255" doc:"The transfer to cancel"`
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255"`
	Body           *CancelTransactionRequest
}

func (transfersAPI) cancelOp() huma.Operation {
	return huma.Operation{
		OperationID: "cancelTransaction", Method: http.MethodPost, Path: "/transactions/{transactionId}/cancel",
		Summary: "Cancel a bank transfer that has not settled",
		Description: "Cancels a transfer-out or transfer-in on a rail that is not instant (ACH, wire, SEPA, …) while it is " +
			"PENDING or PROCESSING: it becomes FAILED and a transfer-out's held amount is released exactly; a " +
			"transfer-in is never credited. A settled or failed transaction, one on an instant rail, a quote's payment " +
			"or an incoming UMA payment is 409 TRANSACTION_NOT_CANCELLABLE; should the rail settle the transfer at the " +
			"same moment, exactly one of the two wins.",
		Tags:   []string{transactionsTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusConflict},
	}
}

func (h transfersAPI) cancel(ctx context.Context, in *cancelTransactionInput) (*transactionOutput, error) {
	reason := ""
	if in.Body != nil {
		reason = in.Body.Reason
	}
	pid := principal(ctx).PlatformID
	t, err := h.d.Transfers.Cancel(ctx, pid, in.TransactionID, reason, in.IdempotencyKey)
	if err != nil {
		return nil, apiError(err)
	}
	return &transactionOutput{Body: transactionOut(h.d, pid, t)}, nil
}
