package ports

import (
	"context"
	"time"
)

// Quote is a locked price for one payment (reference Quote): the amounts on
// both sides, the fees and the exchange rate hold until ExpiresAt. Amounts
// are minor units of their currency; rates are decimal strings (never
// floats).
type Quote struct {
	ID         string // "Quote:<uuid>"
	PlatformID string
	// CustomerID is the paying customer ("" for a platform-level quote).
	CustomerID string
	// Status: PENDING, PROCESSING, COMPLETED, FAILED, EXPIRED.
	Status string
	// TransactionID is the OUTGOING transaction created with the quote.
	TransactionID string

	// Source: SourceType ACCOUNT (SourceAccountID, an internal account) or
	// REALTIME_FUNDING (funded by following PaymentInstructions;
	// CryptoNetwork names the chain of a stablecoin source).
	SourceType      string
	SourceAccountID string
	CryptoNetwork   string
	// Destination: DestinationType ACCOUNT (DestinationAccountID, an
	// external account) or UMA_ADDRESS (DestinationUmaAddress).
	DestinationType       string
	DestinationAccountID  string
	DestinationUmaAddress string
	PaymentRail           string
	RailSelectionMode     string // AUTO or MANUAL

	SendingCurrency   string
	ReceivingCurrency string
	// LockedSide is SENDING or RECEIVING: the side whose amount the
	// caller fixed (LockedAmount); the other side is computed.
	LockedSide           string
	LockedAmount         int64
	TotalSendingAmount   int64
	TotalReceivingAmount int64
	FeesIncluded         int64 // sending currency minor units, >= 0
	// ExchangeRate as the API shows it (see core/fx for the reading).
	ExchangeRate string
	RateDetails  RateDetails

	LookupID              string
	Description           string
	PurposeOfPayment      string
	RemittanceInformation string
	// SenderCustomerInfo and CounterpartyInformation are free-form
	// key-value data (reference CustomerInfoFieldName keys).
	//
	// Free-form maps here, in PaymentInstruction.Info and in
	// TransactionDetails are stored as JSON: every store hands back what
	// encoding/json decodes with UseNumber (string, bool, nil, json.Number
	// for every number, so an int64 comes back exact, []any,
	// map[string]any), an empty map reads back as nil, and a value JSON
	// cannot encode is refused on write.
	SenderCustomerInfo      map[string]any
	CounterpartyInformation map[string]any
	PaymentInstructions     []PaymentInstruction

	ExecutedAt *time.Time
	ExpiresAt  time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// RateDetails breaks a quote's price down (reference OutgoingRateDetails).
// Multipliers and the variable rate are decimal strings. The counterparty
// fixed fee is in minor units of the receiving currency (as the reference
// defines it); the service fixed fee and the variable fee amount are minor
// units of the sending currency.
type RateDetails struct {
	CounterpartyMultiplier   string
	CounterpartyFixedFee     int64
	ServiceMultiplier        string
	ServiceFixedFee          int64
	ServiceVariableFeeRate   string
	ServiceVariableFeeAmount int64
}

// PaymentInstruction tells the payer how to fund a quote whose source is
// not prefunded (or, for an embedded wallet, what to sign). Info is the
// reference's accountOrWalletInfo object, keyed by its wire names
// ("accountType", "accountNumber", "payloadToSign", …).
type PaymentInstruction struct {
	InstructionsNotes string
	IsPlatformAccount bool
	Info              map[string]any
}

type QuoteRepo interface {
	Create(ctx context.Context, q Quote) error
	// Get returns the platform's quote or ErrNotFound.
	Get(ctx context.Context, platformID, id string) (Quote, error)
	// GetForUpdate is Get with the row locked until the unit of work ends.
	GetForUpdate(ctx context.Context, platformID, id string) (Quote, error)
	Update(ctx context.Context, q Quote) error
}

// TransactionDetails are a transaction's fields that no list filters on,
// kept together (one JSON document in PostgreSQL).
type TransactionDetails struct {
	// SourceType/DestinationType: ACCOUNT (default when empty),
	// REALTIME_FUNDING, UMA_ADDRESS.
	SourceType            string
	DestinationType       string
	SourceUmaAddress      string
	DestinationUmaAddress string
	RateDetails           *RateDetails
	CounterpartyInfo      map[string]any
	PaymentInstructions   []PaymentInstruction
	Refund                *Refund
	TransactionHash       string
	ExpectedSettlementAt  *time.Time
	// Approval is set on an incoming payment that waits for (or waited
	// for) the platform's decision (core/approvals).
	Approval *Approval
	// RequestKey is the Idempotency-Key of the platform request that
	// cancelled the transaction or executed its quote: a retry of that
	// request, after a crash lost its stored response, finds its own work
	// done and answers as the first attempt would have.
	RequestKey string
}

// Approval is an incoming payment's approval by the platform: the ledger
// holds that carry its money until the decision, and when it times out.
type Approval struct {
	// Deadline ends the approval window: no decision by then fails the
	// payment (PAYMENT_APPROVAL_TIMED_OUT).
	Deadline time.Time
	// HoldIDs are the pending ledger transfers posted on approval and
	// voided otherwise.
	HoldIDs []string
	// RequestedFields are the receiver fields the webhook asks for
	// (requestedReceiverCustomerInfoFields).
	RequestedFields []CounterpartyField
}

// Refund is the return of a failed payment's funds (reference refund).
type Refund struct {
	Reference   string
	InitiatedAt time.Time
	SettledAt   *time.Time
	Status      string // PENDING, COMPLETED, FAILED
	Reason      string // TRANSACTION_FAILED, USER_CANCELLATION, TIMEOUT
}
