package httpapi

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----

// TransactionSource is where a transaction's money comes from
// (discriminated by sourceType): an account, a UMA address, or a payment
// sent by the quote's payment instructions (REALTIME_FUNDING).
type TransactionSource struct {
	SourceType string `json:"sourceType" enum:"ACCOUNT,UMA_ADDRESS,REALTIME_FUNDING" doc:"Kind of source"`
	AccountID  string `json:"accountId,omitempty" doc:"The internal (InternalAccount:<uuid>) or external (ExternalAccount:<uuid>) account debited (ACCOUNT)"`
	UmaAddress string `json:"umaAddress,omitempty" doc:"The sender's UMA address (UMA_ADDRESS)"`
	CustomerID string `json:"customerId,omitempty" doc:"The paying customer (REALTIME_FUNDING)"`
	Currency   string `json:"currency,omitempty" doc:"Currency code of the source" example:"USD"`
}

// TransactionDestination is where a transaction's money goes
// (discriminated by destinationType).
type TransactionDestination struct {
	DestinationType string `json:"destinationType" enum:"ACCOUNT,UMA_ADDRESS" doc:"Kind of destination"`
	AccountID       string `json:"accountId,omitempty" doc:"The internal or external account credited (ACCOUNT)"`
	UmaAddress      string `json:"umaAddress,omitempty" doc:"The receiver's UMA address (UMA_ADDRESS)"`
	Currency        string `json:"currency,omitempty" doc:"Currency code of the destination" example:"USD"`
}

// ReconciliationInstructions help match a payment with its transaction.
type ReconciliationInstructions struct {
	Reference       string `json:"reference,omitempty" doc:"Reference carried with the payment on its rail"`
	TransactionHash string `json:"transactionHash,omitempty" doc:"On-chain transaction hash (deprecated; crypto payouts only)"`
}

// Refund is the return of a failed payment's funds to the sender.
type Refund struct {
	Reference   string     `json:"reference" doc:"Reference of the refund"`
	InitiatedAt time.Time  `json:"initiatedAt" doc:"When the refund started"`
	SettledAt   *time.Time `json:"settledAt,omitempty" doc:"When the refund reached the sender"`
	Status      string     `json:"status" enum:"PENDING,COMPLETED,FAILED" doc:"Where the refund stands"`
	Reason      string     `json:"reason,omitempty" enum:"TRANSACTION_FAILED,USER_CANCELLATION,TIMEOUT" doc:"Why the funds were returned"`
}

// Transaction is an incoming or an outgoing payment (discriminated by
// type). The outgoing-only fields (platformFees, paymentRail,
// railSelectionMode, expectedSettlementAt, settlementTimelineSeconds) are
// absent from incoming transactions.
type Transaction struct {
	ID        string `json:"id" doc:"Transaction:<uuid>" example:"Transaction:019542f5-b3e7-1d02-0000-000000000004"`
	Status    string `json:"status" enum:"CREATED,PENDING,PENDING_AUTHORIZATION,PROCESSING,COMPLETED,REJECTED,FAILED,REFUNDED,EXPIRED" doc:"Where the payment stands; FAILED carries failureReason"`
	Type      string `json:"type" enum:"INCOMING,OUTGOING" doc:"Incoming (into an internal account) or outgoing payment"`
	Direction string `json:"direction" enum:"CREDIT,DEBIT" doc:"Whether the payment credits or debits the customer's (or platform's) internal account"`

	Source      TransactionSource      `json:"source"`
	Destination TransactionDestination `json:"destination"`

	CustomerID         string `json:"customerId" doc:"The customer the transaction belongs to; the platform's id for platform-level transactions"`
	PlatformCustomerID string `json:"platformCustomerId" doc:"The platform's own id of that customer; empty for platform-level transactions"`

	SentAmount     CurrencyAmount `json:"sentAmount" doc:"Amount leaving the source, in its currency"`
	ReceivedAmount CurrencyAmount `json:"receivedAmount" doc:"Amount reaching the destination, in its currency"`
	Fees           int64          `json:"fees" minimum:"0" format:"int64" doc:"Fees, in the smallest unit of the sending currency"`

	ReconciliationInstructions *ReconciliationInstructions `json:"reconciliationInstructions,omitempty"`
	FailureReason              string                      `json:"failureReason,omitempty" doc:"Why the payment failed (only when FAILED or EXPIRED)"`
	QuoteID                    string                      `json:"quoteId,omitempty" doc:"The quote that created the payment, if any"`
	ExchangeRate               *DecimalNumber              `json:"exchangeRate,omitempty" doc:"Sending currency units per receiving currency unit (cross-currency payments)"`
	Refund                     *Refund                     `json:"refund,omitempty" doc:"The return of the funds of a payment that did not complete"`
	CounterpartyInformation    map[string]any              `json:"counterpartyInformation,omitempty" doc:"What is known about the counterparty (CustomerInfoFieldName keys)"`
	AgentID                    string                      `json:"agentId,omitempty" doc:"The agent that initiated the payment, if any"`
	Description                string                      `json:"description,omitempty" doc:"Memo of the payment"`

	SettledAt *time.Time `json:"settledAt,omitempty" doc:"When the payment settled"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`

	*OutgoingTransactionFields
}

// OutgoingTransactionFields are the fields only outgoing transactions carry.
type OutgoingTransactionFields struct {
	PlatformFees              int64      `json:"platformFees" required:"false" minimum:"0" format:"int64" doc:"The platform's share of fees (outgoing only)"`
	PaymentRail               *string    `json:"paymentRail" required:"false" doc:"The rail that settles the payment (outgoing only); null when no bank rail is involved (crypto networks) or none is resolved yet"`
	RailSelectionMode         *string    `json:"railSelectionMode" required:"false" enum:"AUTO,MANUAL" doc:"MANUAL when the request named the paymentRail, AUTO when the service chose it (outgoing only)"`
	ExpectedSettlementAt      *time.Time `json:"expectedSettlementAt" required:"false" doc:"Expected settlement time; null for instant rails (outgoing only)"`
	SettlementTimelineSeconds *int64     `json:"settlementTimelineSeconds" required:"false" doc:"Expected seconds from creation to settlement; null when unknown (outgoing only)"`
	// Quote payments only.
	RateDetails         *QuoteRateDetails     `json:"rateDetails,omitempty" doc:"The rate and fees of the quote the payment was made from"`
	PaymentInstructions []PaymentInstructions `json:"paymentInstructions,omitempty" doc:"How the payment is funded (quotes not paid from an internal account)"`
}

// PaymentRails are the reference's PaymentRail values (what a request may
// name and an outgoing transaction shows).
var PaymentRails = []string{"ACH", "ACH_COLOMBIA", "BANK_TRANSFER", "BRE_B", "CIPS", "FAST", "FASTER_PAYMENTS",
	"FEDNOW", "INSTAPAY", "MOBILE_MONEY", "NEFT", "PAYNOW", "PESONET", "PIX", "RTGS", "RTP", "SEPA",
	"SEPA_INSTANT", "SPEI", "SWIFT", "UNIONPAY", "UPI", "WIRE"}

// transactionOut is the wire form of t: transactions.NewView applies the
// domain's rules, and this maps the view onto the wire, adding the expected
// settlement of an outgoing payment's rail when transfers are served.
func transactionOut(d Deps, platformID string, t ports.Transaction) Transaction {
	v := transactions.NewView(t, platformID)
	out := Transaction{
		ID:        v.ID,
		Status:    v.Status,
		Type:      v.Type,
		Direction: v.Direction,
		Source: TransactionSource{SourceType: v.Source.Type, AccountID: v.Source.AccountID,
			UmaAddress: v.Source.UmaAddress, CustomerID: v.Source.CustomerID, Currency: v.Source.Currency},
		Destination: TransactionDestination{DestinationType: v.Destination.Type, AccountID: v.Destination.AccountID,
			UmaAddress: v.Destination.UmaAddress, Currency: v.Destination.Currency},
		CustomerID:              v.CustomerID,
		PlatformCustomerID:      v.PlatformCustomerID,
		SentAmount:              amountOf(v.SentAmount, v.SourceCurrency),
		ReceivedAmount:          amountOf(v.ReceivedAmount, v.DestinationCurrency),
		Fees:                    v.Fees,
		FailureReason:           v.FailureReason,
		QuoteID:                 v.QuoteID,
		CounterpartyInformation: v.CounterpartyInfo,
		AgentID:                 v.AgentID,
		Description:             v.Description,
		SettledAt:               v.SettledAt,
		CreatedAt:               v.CreatedAt,
		UpdatedAt:               v.UpdatedAt,
	}
	if r := v.Reconciliation; r != nil {
		out.ReconciliationInstructions = &ReconciliationInstructions{Reference: r.Reference, TransactionHash: r.TransactionHash}
	}
	if v.ExchangeRate != "" {
		r := DecimalNumber(fx.SendingPerReceiving(v.ExchangeRate))
		out.ExchangeRate = &r
	}
	if r := v.Refund; r != nil {
		out.Refund = &Refund{Reference: r.Reference, InitiatedAt: r.InitiatedAt, SettledAt: r.SettledAt, Status: r.Status, Reason: r.Reason}
	}
	if og := v.Outgoing; og != nil {
		out.OutgoingTransactionFields = outgoingFieldsOut(d, t, og)
	}
	return out
}

// outgoingFieldsOut is the wire form of an outgoing payment's own fields:
// a rail outside the wire's PaymentRail values (a crypto network) and an
// empty selection mode are null.
func outgoingFieldsOut(d Deps, t ports.Transaction, og *transactions.OutgoingView) *OutgoingTransactionFields {
	out := &OutgoingTransactionFields{PaymentInstructions: paymentInstructionsOut(og.PaymentInstructions)}
	if slices.Contains(PaymentRails, og.PaymentRail) {
		rail := og.PaymentRail
		out.PaymentRail = &rail
	}
	if og.RailSelectionMode != "" {
		mode := og.RailSelectionMode
		out.RailSelectionMode = &mode
	}
	if d.Transfers != nil && og.PaymentRail != "" {
		out.ExpectedSettlementAt, out.SettlementTimelineSeconds = d.Transfers.Settlement(t)
	}
	if og.RateDetails != nil {
		out.RateDetails = rateDetailsOut(og.RateDetails)
	}
	return out
}

func paymentInstructionsOut(pis []ports.PaymentInstruction) []PaymentInstructions {
	if len(pis) == 0 {
		return nil
	}
	out := make([]PaymentInstructions, len(pis))
	for i, pi := range pis {
		out[i] = PaymentInstructions{InstructionsNotes: pi.InstructionsNotes, IsPlatformAccount: pi.IsPlatformAccount, AccountOrWalletInfo: pi.Info}
	}
	return out
}

// TransactionList is one page of transactions.
type TransactionList struct {
	Data       []Transaction `json:"data"`
	HasMore    bool          `json:"hasMore" doc:"Whether more results follow this page"`
	NextCursor string        `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page (only when hasMore)"`
	TotalCount int           `json:"totalCount" doc:"Number of transactions matching the filters, ignoring pagination"`
}

// ---- operations ----

type listTransactionsInput struct {
	CustomerID                string    `query:"customerId" maxLength:"255" pattern:"^(Customer|Platform):" doc:"Only this customer's transactions (a Customer id); the platform's own id selects platform-level transactions"`
	PlatformCustomerID        string    `query:"platformCustomerId" doc:"Only transactions of the customer with this platform customer id"`
	AccountIdentifier         string    `query:"accountIdentifier" doc:"Only transactions whose sender or receiver account matches (an account id, account number, IBAN, wallet address…)"`
	SenderAccountIdentifier   string    `query:"senderAccountIdentifier" doc:"Only transactions whose sender account matches"`
	ReceiverAccountIdentifier string    `query:"receiverAccountIdentifier" doc:"Only transactions whose receiver account matches"`
	Status                    string    `query:"status" enum:"CREATED,PENDING,PENDING_AUTHORIZATION,PROCESSING,COMPLETED,REJECTED,FAILED,REFUNDED,EXPIRED" doc:"Only transactions in this status"`
	Type                      string    `query:"type" enum:"INCOMING,OUTGOING" doc:"Only incoming or only outgoing transactions"`
	Reference                 string    `query:"reference" doc:"Only the transaction with this reconciliation reference"`
	StartDate                 time.Time `query:"startDate" doc:"Only transactions created at or after this time (RFC 3339, inclusive)"`
	EndDate                   time.Time `query:"endDate" doc:"Only transactions created at or before this time (RFC 3339, inclusive)"`
	Limit                     int       `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor                    string    `query:"cursor" doc:"nextCursor of the previous page (with the same sortOrder)"`
	SortOrder                 string    `query:"sortOrder" enum:"asc,desc" default:"desc" doc:"By creation time: newest first (desc) or oldest first (asc)"`
}

type getTransactionInput struct {
	TransactionID string `path:"transactionId" doc:"The transaction's id"`
}

type transactionListOutput struct{ Body TransactionList }

type transactionOutput struct{ Body Transaction }

const transactionsTag = "Transactions"

// transactionsAPI handles the transaction reads.
type transactionsAPI struct{ d Deps }

func registerTransactions(api huma.API, d Deps) {
	h := transactionsAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.listTransactionsOp(), h.listTransactions) },
		func(api huma.API) { huma.Register(api, h.getTransactionOp(), h.getTransaction) },
	)
}

func (transactionsAPI) listTransactionsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listTransactions",
		Method:      http.MethodGet,
		Path:        "/transactions",
		Summary:     "List transactions",
		Description: "Lists the platform's incoming and outgoing transactions, filtered and paginated by creation " +
			"time. Pages are stable while new transactions arrive: following nextCursor never returns a " +
			"transaction twice or skips one.",
		Tags:   []string{transactionsTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h transactionsAPI) listTransactions(ctx context.Context, in *listTransactionsInput) (*transactionListOutput, error) {
	return h.list(ctx, principal(ctx).PlatformID, "transactions", transactions.Query{
		CustomerID:                in.CustomerID,
		PlatformCustomerID:        in.PlatformCustomerID,
		AccountIdentifier:         in.AccountIdentifier,
		SenderAccountIdentifier:   in.SenderAccountIdentifier,
		ReceiverAccountIdentifier: in.ReceiverAccountIdentifier,
		Status:                    in.Status,
		Type:                      in.Type,
		Reference:                 in.Reference,
		StartDate:                 optTime(in.StartDate),
		EndDate:                   optTime(in.EndDate),
	}, in.SortOrder, in.Limit, in.Cursor)
}

// list is one page of platform pid's transactions matching q, by creation
// time in sortOrder (desc when empty), for GET /transactions and the
// agent's own list (scope names the list). A cursor made walking one way
// is refused (400 cursor) when sent with the other sortOrder, instead of
// silently restarting or skipping.
func (h transactionsAPI) list(ctx context.Context, pid, scope string, q transactions.Query, sortOrder string, limit int, cursor string) (*transactionListOutput, error) {
	order := cmp.Or(sortOrder, "desc")
	cursors := cursorsOf(h.d, scope, order)
	page, err := cursors.page(limit, cursor)
	if err != nil {
		return nil, err
	}
	q.Asc = order == "asc"
	res, err := h.d.Transactions.List(ctx, pid, q, page)
	if err != nil {
		return nil, apiError(err)
	}
	out := TransactionList{Data: make([]Transaction, len(res.Transactions)), HasMore: res.HasMore, TotalCount: res.Total}
	for i, t := range res.Transactions {
		out.Data[i] = transactionOut(h.d, pid, t)
	}
	out.NextCursor = cursors.next(res.HasMore, res.Next)
	return &transactionListOutput{Body: out}, nil
}

func (transactionsAPI) getTransactionOp() huma.Operation {
	return huma.Operation{
		OperationID: "getTransactionById",
		Method:      http.MethodGet,
		Path:        "/transactions/{transactionId}",
		Summary:     "Get a transaction",
		Description: "Returns one of the platform's transactions.",
		Tags:        []string{transactionsTag},
		Errors:      []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h transactionsAPI) getTransaction(ctx context.Context, in *getTransactionInput) (*transactionOutput, error) {
	pid := principal(ctx).PlatformID
	t, err := h.d.Transactions.Get(ctx, pid, in.TransactionID)
	if err != nil {
		return nil, apiError(err)
	}
	return &transactionOutput{Body: transactionOut(h.d, pid, t)}, nil
}
