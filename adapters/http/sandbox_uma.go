package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/uma"
	"github.com/corridorpay/corridor/ports"
)

// SandboxUmaReceiveRequest simulates a payment arriving at a customer's UMA
// address.
type SandboxUmaReceiveRequest struct {
	SenderUmaAddress        string `json:"senderUmaAddress" maxLength:"255" doc:"The paying sandbox UMA address (e.g. $success.usd@sandbox.local)" example:"$success.usd@sandbox.local"`
	ReceiverUmaAddress      string `json:"receiverUmaAddress,omitempty" maxLength:"255" doc:"UMA address of the receiving customer (optional if customerId is given)" example:"$ana@sandbox.local"`
	CustomerID              string `json:"customerId,omitempty" maxLength:"255" doc:"The receiving customer (optional if receiverUmaAddress is given)"`
	ReceivingCurrencyCode   string `json:"receivingCurrencyCode" maxLength:"8" doc:"Currency the customer receives" example:"USD"`
	ReceivingCurrencyAmount int64  `json:"receivingCurrencyAmount" format:"int64" doc:"Amount received, in the smallest unit of receivingCurrencyCode (> 0)" example:"10000"`
	// An extension (the reference's sandbox request has no such field):
	// what the simulated sender's VASP asks of the receiver.
	RequestedReceiverCustomerInfoFields []CounterpartyFieldDefinition `json:"requestedReceiverCustomerInfoFields,omitempty" maxItems:"20" doc:"Extension: the receiver fields the simulated sender asks for. They travel in the INCOMING_PAYMENT.PENDING webhook's requestedReceiverCustomerInfoFields, and a 200 answer (or POST /transactions/{id}/approve) must carry every mandatory one in receiverCustomerInfo."`
	// An extension too: what the simulated sender shares.
	SenderCustomerInfo map[string]string `json:"senderCustomerInfo,omitempty" maxProperties:"20" doc:"Extension: what the simulated sender shares about its customer (CustomerInfoFieldName keys, e.g. FULL_NAME). The transaction's counterpartyInformation holds the fields the platform's requiredCounterpartyFields for the currency ask for (and IDENTIFIER, the sender's address); a mandatory one the sender does not share refuses the payment (400 naming senderCustomerInfo.<name>)."`
}

type sandboxUmaReceiveInput struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255"`
	Body           SandboxUmaReceiveRequest
}

// sandboxUmaAPI handles the simulated incoming UMA payment.
type sandboxUmaAPI struct{ d Deps }

func registerSandboxUma(api huma.API, d Deps) {
	h := sandboxUmaAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.receiveOp(), h.receive) },
	)
}

func (sandboxUmaAPI) receiveOp() huma.Operation {
	return huma.Operation{
		OperationID: "sandboxReceive",
		Method:      http.MethodPost,
		Path:        "/sandbox/uma/receive",
		Summary:     "Simulate an incoming UMA payment (sandbox)",
		Description: "Credits a customer, named by its UMA address or id, with a payment from a sandbox UMA " +
			"address: into its default UMA deposit external account when one is set (paid straight out over " +
			"that account's rail), else into its internal account in the currency. Returns the INCOMING " +
			"transaction: COMPLETED, or PENDING with the money held when the platform has a webhook endpoint " +
			"(its answer to INCOMING_PAYMENT.PENDING decides). Sandbox only: 403 elsewhere.",
		Tags:   []string{sandboxTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
	}
}

func (h sandboxUmaAPI) receive(ctx context.Context, in *sandboxUmaReceiveInput) (*transactionOutput, error) {
	pid := principal(ctx).PlatformID
	t, err := h.d.Uma.SimulateReceive(ctx, pid, uma.Receive{
		SenderUmaAddress:        in.Body.SenderUmaAddress,
		ReceiverUmaAddress:      in.Body.ReceiverUmaAddress,
		CustomerID:              in.Body.CustomerID,
		Currency:                in.Body.ReceivingCurrencyCode,
		Amount:                  in.Body.ReceivingCurrencyAmount,
		IdempotencyKey:          in.IdempotencyKey,
		RequestedReceiverFields: counterpartyFields(in.Body.RequestedReceiverCustomerInfoFields),
		SenderInfo:              senderInfo(in.Body.SenderCustomerInfo),
	})
	if err != nil {
		return nil, apiError(err)
	}
	return &transactionOutput{Body: transactionOut(h.d, pid, t)}, nil
}

// senderInfo is the core's form of a request's senderCustomerInfo.
func senderInfo(m map[string]string) map[string]any {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// counterpartyFields are the port's fields of a request's definitions.
func counterpartyFields(defs []CounterpartyFieldDefinition) []ports.CounterpartyField {
	var out []ports.CounterpartyField
	for _, d := range defs {
		out = append(out, ports.CounterpartyField{Name: d.Name, Mandatory: d.Mandatory})
	}
	return out
}
