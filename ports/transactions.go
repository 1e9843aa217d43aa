package ports

import (
	"context"
	"time"
)

// Transaction is a payment as the platform sees it (reference incoming and
// outgoing transactions). Amounts are minor units of their currency.
type Transaction struct {
	ID                 string // "Transaction:<uuid>"
	PlatformID         string
	CustomerID         string // empty for platform-level transactions
	PlatformCustomerID string
	Type               string // INCOMING or OUTGOING
	// Status: CREATED, PENDING, PROCESSING, COMPLETED, REJECTED, FAILED,
	// REFUNDED, EXPIRED.
	Status string

	SourceAccountID      string // InternalAccount:… or ExternalAccount:…
	SourceCurrency       string
	DestinationAccountID string
	DestinationCurrency  string
	PaymentRail          string
	// RailSelectionMode is MANUAL when the caller named the rail, AUTO
	// when the service chose it.
	RailSelectionMode string
	// Sender/ReceiverIdentifier are the account identifiers the list filters
	// match (the account id, and for external accounts also the primary
	// identifier such as an account number, IBAN or wallet address).
	SenderIdentifiers   []string
	ReceiverIdentifiers []string

	SentAmount     int64
	ReceivedAmount int64
	Fees           int64
	ExchangeRate   string // decimal string, empty when same-currency

	Reference             string // reconciliation reference
	Description           string
	RemittanceInformation string
	PurposeOfPayment      string
	FailureReason         string
	QuoteID               string
	AgentID               string
	// Details holds the fields no filter reads (rate details, refund,
	// counterparty information, UMA addresses, payment instructions).
	Details TransactionDetails

	SettledAt *time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

type TransactionFilter struct {
	PlatformID string // always set by core
	// CustomerID selects one customer's transactions; PlatformLevel selects
	// the platform's own (CustomerID empty).
	CustomerID                string
	PlatformLevel             bool
	PlatformCustomerID        string
	AccountIdentifier         string // sender or receiver
	SenderAccountIdentifier   string
	ReceiverAccountIdentifier string
	Status                    string
	Type                      string
	Reference                 string
	StartDate                 *time.Time // inclusive
	EndDate                   *time.Time // inclusive
	// Desc sorts newest first (the default of GET /transactions).
	Desc bool
}

type TransactionRepo interface {
	Create(ctx context.Context, t Transaction) error
	Get(ctx context.Context, platformID, id string) (Transaction, error)
	GetForUpdate(ctx context.Context, platformID, id string) (Transaction, error)
	Update(ctx context.Context, t Transaction) error
	// List pages by (CreatedAt, ID) in f.Desc order after page.After
	// (keyset: rows inserted during a walk never shift it), returning up to
	// page.Limit+1 rows and the count matching f.
	List(ctx context.Context, f TransactionFilter, page Page) (rows []Transaction, total int, err error)
}
