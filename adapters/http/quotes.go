package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----

// QuoteSource is where a quote's money comes from (discriminated by
// sourceType): an internal account (ACCOUNT), or a payment the payer sends
// by the quote's paymentInstructions (REALTIME_FUNDING).
type QuoteSource struct {
	SourceType    string `json:"sourceType" enum:"ACCOUNT,REALTIME_FUNDING" doc:"Kind of source"`
	AccountID     string `json:"accountId,omitempty" doc:"The internal account paying (ACCOUNT)" example:"InternalAccount:e85dcbd6-dced-4ec4-b756-3c3a9ea3d965"`
	CustomerID    string `json:"customerId,omitempty" doc:"The customer paying: for ACCOUNT, required only when the account is the platform's pooled account (else its owner); for REALTIME_FUNDING, absent for a platform-level quote"`
	Currency      string `json:"currency,omitempty" doc:"Currency the payer sends (REALTIME_FUNDING): USD, BTC or USDC" example:"USD"`
	CryptoNetwork string `json:"cryptoNetwork,omitempty" doc:"Network the payer sends a crypto currency on (REALTIME_FUNDING; required for USDC: SOLANA, BASE, POLYGON, ETHEREUM; BTC: SPARK (default) or LIGHTNING)"`
}

// QuoteDestination is who a quote pays (discriminated by destinationType).
type QuoteDestination struct {
	DestinationType string `json:"destinationType" enum:"ACCOUNT,UMA_ADDRESS" doc:"Kind of destination"`
	AccountID       string `json:"accountId,omitempty" doc:"The external account paid out to (ACCOUNT); or, for a REALTIME_FUNDING source, the payer's internal account credited when the funds arrive (a deposit: its transaction is INCOMING)" example:"ExternalAccount:a12dcbd6-dced-4ec4-b756-3c3a9ea3d123"`
	PaymentRail     string `json:"paymentRail,omitempty" enum:"ACH,ACH_COLOMBIA,BANK_TRANSFER,BRE_B,CIPS,FAST,FASTER_PAYMENTS,FEDNOW,INSTAPAY,MOBILE_MONEY,NEFT,PAYNOW,PESONET,PIX,RTGS,RTP,SEPA,SEPA_INSTANT,SPEI,SWIFT,UNIONPAY,UPI,WIRE" doc:"Rail to pay on (ACCOUNT); it must reach the account. Absent: the service chooses"`
	UmaAddress      string `json:"umaAddress,omitempty" doc:"The receiver's UMA address (UMA_ADDRESS; the request's lookupId is required)" example:"$success.eur@sandbox.local"`
	Currency        string `json:"currency,omitempty" doc:"Currency the UMA receiver gets (UMA_ADDRESS; default: the lookup's first)" example:"EUR"`
}

// QuoteRequest asks for a quote.
type QuoteRequest struct {
	LookupID              string           `json:"lookupId,omitempty" doc:"A receiver lookup of the destination (required for UMA addresses); its mandatory requiredPayerDataFields must be in senderCustomerInfo" example:"Lookup:019542f5-b3e7-1d02-0000-000000000009"`
	Source                QuoteSource      `json:"source"`
	Destination           QuoteDestination `json:"destination"`
	LockedCurrencySide    string           `json:"lockedCurrencySide" enum:"SENDING,RECEIVING" doc:"The side whose amount is fixed; the other is computed"`
	LockedCurrencyAmount  int64            `json:"lockedCurrencyAmount" format:"int64" exclusiveMinimum:"0" maximum:"9000000000000000" doc:"Amount of the locked side, in its currency's smallest unit" example:"10000"`
	ImmediatelyExecute    bool             `json:"immediatelyExecute,omitempty" doc:"Execute on creation (internal-account sources; refused for EMBEDDED_WALLET sources, which execute with a signature, and for REALTIME_FUNDING ones, which execute when their funds arrive)"`
	Description           string           `json:"description,omitempty" maxLength:"1024" doc:"Memo of the payment"`
	RemittanceInformation string           `json:"remittanceInformation,omitempty" maxLength:"80" doc:"Free text that travels with the payment on its rail"`
	PurposeOfPayment      string           `json:"purposeOfPayment,omitempty" enum:"GIFT,SELF,GOODS_OR_SERVICES,EDUCATION,HEALTH_OR_MEDICAL,REAL_ESTATE_PURCHASE,TAX_PAYMENT,LOAN_PAYMENT,UTILITY_BILL,DONATION,TRAVEL,FAMILY_SUPPORT,SALARY_PAYMENT,OTHER" doc:"Why the payment is made"`
	SenderCustomerInfo    map[string]any   `json:"senderCustomerInfo,omitempty" doc:"Payer information the receiver asked for (CustomerInfoFieldName keys)"`
}

// QuoteRateDetails breaks a quote's price down.
type QuoteRateDetails struct {
	CounterpartyMultiplier      DecimalNumber `json:"counterpartyMultiplier" doc:"The counterparty's multiplier on the market rate"`
	CounterpartyFixedFee        int64         `json:"counterpartyFixedFee" minimum:"0" format:"int64" doc:"The counterparty's fixed fee, in the smallest unit of the receiving currency"`
	ServiceAPIMultiplier        DecimalNumber `json:"serviceApiMultiplier" doc:"Market rate (receiving per sending unit) before the counterparty's multiplier"`
	ServiceAPIFixedFee          int64         `json:"serviceApiFixedFee" minimum:"0" format:"int64" doc:"The service's fixed fee, in the smallest unit of the sending currency"`
	ServiceAPIVariableFeeRate   DecimalNumber `json:"serviceApiVariableFeeRate" doc:"The service's variable fee, a fraction of the sending amount"`
	ServiceAPIVariableFeeAmount int64         `json:"serviceApiVariableFeeAmount" minimum:"0" format:"int64" doc:"The variable fee, in the smallest unit of the sending currency"`
}

// rateDetailsOut is the six-field rate breakdown of a quote and of the
// outgoing payment made from it (the spec's four serviceApi fields and the
// reference's two counterparty fields beside them).
func rateDetailsOut(rd *ports.RateDetails) *QuoteRateDetails {
	return &QuoteRateDetails{
		CounterpartyMultiplier: DecimalNumber(rd.CounterpartyMultiplier), CounterpartyFixedFee: rd.CounterpartyFixedFee,
		ServiceAPIMultiplier: DecimalNumber(rd.ServiceMultiplier), ServiceAPIFixedFee: rd.ServiceFixedFee,
		ServiceAPIVariableFeeRate: DecimalNumber(rd.ServiceVariableFeeRate), ServiceAPIVariableFeeAmount: rd.ServiceVariableFeeAmount,
	}
}

// Quote is a locked price for one payment.
type Quote struct {
	ID                      string                `json:"id" doc:"Quote:<uuid>" example:"Quote:019542f5-b3e7-1d02-0000-000000000006"`
	Status                  string                `json:"status" enum:"PENDING,PROCESSING,COMPLETED,FAILED,EXPIRED" doc:"Where the quote stands"`
	CreatedAt               time.Time             `json:"createdAt"`
	ExpiresAt               time.Time             `json:"expiresAt" doc:"After this instant the quote cannot be executed"`
	Source                  QuoteSource           `json:"source"`
	Destination             QuoteDestination      `json:"destination"`
	SendingCurrency         Currency              `json:"sendingCurrency"`
	ReceivingCurrency       Currency              `json:"receivingCurrency"`
	TotalSendingAmount      int64                 `json:"totalSendingAmount" format:"int64" doc:"What the sender pays, fees included, in the smallest unit of the sending currency"`
	TotalReceivingAmount    int64                 `json:"totalReceivingAmount" format:"int64" doc:"What the receiver gets, in the smallest unit of the receiving currency"`
	ExchangeRate            DecimalNumber         `json:"exchangeRate" doc:"Sending currency units per receiving currency unit (major units), the rate at which totalSendingAmount less feesIncluded buys totalReceivingAmount"`
	FeesIncluded            int64                 `json:"feesIncluded" minimum:"0" format:"int64" doc:"Fees within totalSendingAmount, in the smallest unit of the sending currency"`
	PlatformFeesIncluded    int64                 `json:"platformFeesIncluded" minimum:"0" format:"int64" doc:"The platform's share of feesIncluded"`
	PaymentInstructions     []PaymentInstructions `json:"paymentInstructions,omitempty" doc:"How to fund the quote (REALTIME_FUNDING sources), or what to sign (EMBEDDED_WALLET sources)"`
	TransactionID           string                `json:"transactionId" doc:"The transaction created with the quote"`
	CounterpartyInformation map[string]any        `json:"counterpartyInformation,omitempty" doc:"What is known about who is paid (CustomerInfoFieldName keys)"`
	RateDetails             *QuoteRateDetails     `json:"rateDetails,omitempty"`
}

func quoteOut(q ports.Quote) Quote {
	out := Quote{
		ID:                      q.ID,
		Status:                  q.Status,
		CreatedAt:               q.CreatedAt.UTC(),
		ExpiresAt:               q.ExpiresAt.UTC(),
		Source:                  QuoteSource{SourceType: q.SourceType},
		Destination:             QuoteDestination{DestinationType: q.DestinationType},
		SendingCurrency:         currencyOf(q.SendingCurrency),
		ReceivingCurrency:       currencyOf(q.ReceivingCurrency),
		TotalSendingAmount:      q.TotalSendingAmount,
		TotalReceivingAmount:    q.TotalReceivingAmount,
		ExchangeRate:            DecimalNumber(fx.SendingPerReceiving(q.ExchangeRate)),
		FeesIncluded:            q.FeesIncluded,
		PaymentInstructions:     paymentInstructionsOut(q.PaymentInstructions),
		TransactionID:           q.TransactionID,
		CounterpartyInformation: q.CounterpartyInformation,
	}
	switch q.SourceType {
	case quotes.SourceRealtimeFunding:
		out.Source.Currency, out.Source.CryptoNetwork, out.Source.CustomerID = q.SendingCurrency, q.CryptoNetwork, q.CustomerID
	default:
		out.Source.AccountID, out.Source.CustomerID = q.SourceAccountID, q.CustomerID
	}
	switch q.DestinationType {
	case quotes.DestinationUMA:
		out.Destination.UmaAddress, out.Destination.Currency = q.DestinationUmaAddress, q.ReceivingCurrency
	default:
		out.Destination.AccountID = q.DestinationAccountID
		if q.RailSelectionMode == "MANUAL" {
			out.Destination.PaymentRail = q.PaymentRail
		}
	}
	if rd := q.RateDetails; rd.ServiceMultiplier != "" {
		out.RateDetails = rateDetailsOut(&rd)
	}
	return out
}

// ExecuteQuoteRequest is the (optional, empty) body of an execution.
type ExecuteQuoteRequest struct{}

// SandboxSendRequest simulates the payment that funds a quote.
type SandboxSendRequest struct {
	QuoteID        string `json:"quoteId" doc:"The REALTIME_FUNDING quote being paid" example:"Quote:019542f5-b3e7-1d02-0000-000000000006"`
	CurrencyCode   string `json:"currencyCode" doc:"Currency sent (the quote's sending currency)" example:"USD"`
	CurrencyAmount int64  `json:"currencyAmount,omitempty" format:"int64" exclusiveMinimum:"0" doc:"Amount sent, in the currency's smallest unit (default: the quote's totalSendingAmount); another amount fails the quote with FUNDING_AMOUNT_MISMATCH" example:"10000"`
}

// ---- operations ----

type createQuoteInput struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255"`
	Body           QuoteRequest
}

type getQuoteInput struct {
	QuoteID string `path:"quoteId" doc:"The quote's id"`
}

type executeQuoteInput struct {
	QuoteID         string `path:"quoteId" doc:"The quote's id"`
	IdempotencyKey  string `header:"Idempotency-Key" maxLength:"255"`
	WalletSignature string `header:"Service-Wallet-Signature" doc:"Stamp over the quote's payloadToSign by a verified credential of the source EMBEDDED_WALLET (required for such sources, ignored otherwise)"`
	Body            *ExecuteQuoteRequest
}

type sandboxSendInput struct {
	Body SandboxSendRequest
}

type quoteOutput struct{ Body Quote }

// crossCurrencyTag groups the quote and receiver-lookup operations.
const crossCurrencyTag = "Cross-Currency Transfers"

// quotesAPI handles the quote operations.
type quotesAPI struct{ d Deps }

func registerQuotes(api huma.API, d Deps) {
	h := quotesAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.createQuoteOp(), h.createQuote) },
		func(api huma.API) { huma.Register(api, h.getQuoteOp(), h.getQuote) },
		func(api huma.API) { huma.Register(api, h.executeQuoteOp(), h.executeQuote) },
		func(api huma.API) { huma.Register(api, h.sandboxSendOp(), h.sandboxSend) },
	)
}

func (quotesAPI) createQuoteOp() huma.Operation {
	return huma.Operation{
		OperationID:   "createQuote",
		Method:        http.MethodPost,
		Path:          "/quotes",
		Summary:       "Create a transfer quote",
		DefaultStatus: http.StatusCreated,
		Description: "Locks the amounts on both sides, the fees and the exchange rate of a payment until expiresAt, " +
			"and creates its OUTGOING transaction (PENDING). A quote from an internal account is executed with " +
			"POST /quotes/{quoteId}/execute (or at once with immediatelyExecute); a REALTIME_FUNDING quote executes " +
			"when the payer sends totalSendingAmount by its paymentInstructions.",
		Tags:   []string{crossCurrencyTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound},
	}
}

// request is the quote request as core/quotes takes it.
func (b QuoteRequest) request(idempotencyKey string) quotes.CreateRequest {
	return quotes.CreateRequest{
		Source: quotes.Source{Type: b.Source.SourceType, AccountID: b.Source.AccountID, CustomerID: b.Source.CustomerID,
			Currency: b.Source.Currency, CryptoNetwork: b.Source.CryptoNetwork},
		Destination: quotes.Destination{Type: b.Destination.DestinationType, AccountID: b.Destination.AccountID,
			PaymentRail: b.Destination.PaymentRail, UmaAddress: b.Destination.UmaAddress, Currency: b.Destination.Currency},
		LockedSide:            b.LockedCurrencySide,
		LockedAmount:          b.LockedCurrencyAmount,
		LookupID:              b.LookupID,
		ImmediatelyExecute:    b.ImmediatelyExecute,
		Description:           b.Description,
		PurposeOfPayment:      b.PurposeOfPayment,
		RemittanceInformation: b.RemittanceInformation,
		SenderCustomerInfo:    b.SenderCustomerInfo,
		IdempotencyKey:        idempotencyKey,
	}
}

func (h quotesAPI) createQuote(ctx context.Context, in *createQuoteInput) (*quoteOutput, error) {
	q, err := h.d.Quotes.Create(ctx, principal(ctx).PlatformID, in.Body.request(in.IdempotencyKey))
	if err != nil {
		return nil, apiError(err)
	}
	return &quoteOutput{Body: quoteOut(q)}, nil
}

func (quotesAPI) getQuoteOp() huma.Operation {
	return huma.Operation{
		OperationID: "getQuoteById",
		Method:      http.MethodGet,
		Path:        "/quotes/{quoteId}",
		Summary:     "Get a quote",
		Description: "Returns one of the platform's quotes.",
		Tags:        []string{crossCurrencyTag},
		Errors:      []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h quotesAPI) getQuote(ctx context.Context, in *getQuoteInput) (*quoteOutput, error) {
	q, err := h.d.Quotes.Get(ctx, principal(ctx).PlatformID, in.QuoteID)
	if err != nil {
		return nil, apiError(err)
	}
	return &quoteOutput{Body: quoteOut(q)}, nil
}

func (quotesAPI) executeQuoteOp() huma.Operation {
	return huma.Operation{
		OperationID: "executeQuote",
		Method:      http.MethodPost,
		Path:        "/quotes/{quoteId}/execute",
		Summary:     "Execute a quote",
		Description: "Executes a PENDING quote whose source is an internal account: its money is held at once " +
			"(400 INVALID_AMOUNT when the available balance does not cover totalSendingAmount) and paid out; the " +
			"quote and its transaction move to PROCESSING, then COMPLETED or FAILED. An EMBEDDED_WALLET source needs " +
			"the Service-Wallet-Signature header (401 WALLET_SIGNATURE_MISSING / _MALFORMED / _INVALID). At or after " +
			"expiresAt the quote expires (409 QUOTE_EXPIRED); a quote already executed is 409 CONFLICT.",
		Tags:   []string{crossCurrencyTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusConflict},
	}
}

func (h quotesAPI) executeQuote(ctx context.Context, in *executeQuoteInput) (*quoteOutput, error) {
	q, err := h.d.Quotes.ExecuteKeyed(ctx, principal(ctx).PlatformID, in.QuoteID, in.WalletSignature, in.IdempotencyKey)
	if err != nil {
		return nil, apiError(err)
	}
	return &quoteOutput{Body: quoteOut(q)}, nil
}

func (quotesAPI) sandboxSendOp() huma.Operation {
	return huma.Operation{
		OperationID: "sandboxSend",
		Method:      http.MethodPost,
		Path:        "/sandbox/send",
		Summary:     "Simulate the payment that funds a quote (sandbox)",
		Description: "Simulates the payer sending the funds of a REALTIME_FUNDING quote by its paymentInstructions: " +
			"the quote executes (PROCESSING, then COMPLETED or FAILED by the destination's sandbox outcome). An " +
			"amount other than totalSendingAmount fails the quote and its transaction with FUNDING_AMOUNT_MISMATCH " +
			"and the funds go back to the payer (a deposit's: COLLECTION_FAILED). A deposit (a quote whose destination is " +
			"the payer's internal account) is an incoming payment: credited at once (COMPLETED), or, when the platform " +
			"has a webhook endpoint, held PENDING until its answer to INCOMING_PAYMENT.PENDING (or POST " +
			"/transactions/{id}/approve or /reject) decides. Returns the quote's transaction. Sandbox only: 403 elsewhere.",
		Tags:   []string{sandboxTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict},
	}
}

func (h quotesAPI) sandboxSend(ctx context.Context, in *sandboxSendInput) (*transactionOutput, error) {
	pid := principal(ctx).PlatformID
	t, err := h.d.Quotes.SandboxSend(ctx, pid, quotes.SendRequest{
		QuoteID: in.Body.QuoteID, CurrencyCode: in.Body.CurrencyCode, CurrencyAmount: in.Body.CurrencyAmount,
	})
	if err != nil {
		return nil, apiError(err)
	}
	return &transactionOutput{Body: transactionOut(h.d, pid, t)}, nil
}
