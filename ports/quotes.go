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
// units of the sending currency. The JSON
// tags name its keys inside the stored JSON documents (TransactionDetails).
type RateDetails struct {
	CounterpartyMultiplier   string `json:"counterpartyMultiplier,omitempty"`
	CounterpartyFixedFee     int64  `json:"counterpartyFixedFee"`
	ServiceMultiplier        string `json:"serviceMultiplier,omitempty"`
	ServiceFixedFee          int64  `json:"serviceFixedFee"`
	ServiceVariableFeeRate   string `json:"serviceVariableFeeRate,omitempty"`
	ServiceVariableFeeAmount int64  `json:"serviceVariableFeeAmount"`
}

// PaymentInstruction tells the payer how to fund a quote whose source is
// not prefunded (or, for an embedded wallet, what to sign). Info is the
// reference's accountOrWalletInfo object, keyed by its wire names
// ("accountType", "accountNumber", "payloadToSign", …).
type PaymentInstruction struct {
	InstructionsNotes string         `json:"instructionsNotes,omitempty"`
	IsPlatformAccount bool           `json:"isPlatformAccount"`
	Info              map[string]any `json:"accountOrWalletInfo,omitempty"`
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
	SourceType            string               `json:"sourceType,omitempty"`
	DestinationType       string               `json:"destinationType,omitempty"`
	SourceUmaAddress      string               `json:"sourceUmaAddress,omitempty"`
	DestinationUmaAddress string               `json:"destinationUmaAddress,omitempty"`
	RateDetails           *RateDetails         `json:"rateDetails,omitempty"`
	CounterpartyInfo      map[string]any       `json:"counterpartyInformation,omitempty"`
	PaymentInstructions   []PaymentInstruction `json:"paymentInstructions,omitempty"`
	Refund                *Refund              `json:"refund,omitempty"`
	TransactionHash       string               `json:"transactionHash,omitempty"`
	ExpectedSettlementAt  *time.Time           `json:"expectedSettlementAt,omitempty"`
}

// Refund is the return of a failed payment's funds (reference refund).
type Refund struct {
	Reference   string     `json:"reference"`
	InitiatedAt time.Time  `json:"initiatedAt"`
	SettledAt   *time.Time `json:"settledAt,omitempty"`
	Status      string     `json:"status"`           // PENDING, COMPLETED, FAILED
	Reason      string     `json:"reason,omitempty"` // TRANSACTION_FAILED, USER_CANCELLATION, TIMEOUT
}
