package ports

import (
	"context"
	"time"
)

// Lookup is a receiver lookup's answer, kept so the quote that follows
// can use it (quote requests name it by id).
type Lookup struct {
	ID         string // "Lookup:<uuid>"
	PlatformID string
	// AccountID is the external account looked up; ReceiverUmaAddress the
	// UMA address (GET /receiver/uma/{receiverUmaAddress}). One of the two
	// is set.
	AccountID          string
	ReceiverUmaAddress string
	// The sender: a customer of the platform and/or a UMA address.
	CustomerID       string
	SenderUmaAddress string
	// SendingCurrency is the currency the estimated rates are from.
	SendingCurrency string
	Currencies      []LookupCurrency
	// RequiredPayerData are the payer fields the receiving side needs.
	RequiredPayerData []PayerDataField
	CreatedAt         time.Time
}

// LookupCurrency is one currency the receiver takes: the estimated rate
// from the sending currency (decimal string, major units) and the amounts
// it can receive, in its minor units.
type LookupCurrency struct {
	Currency      string
	EstimatedRate string
	Min, Max      int64
}

// PayerDataField names one piece of payer information (reference
// CustomerInfoFieldName) and whether it is mandatory.
type PayerDataField struct {
	Name      string
	Mandatory bool
}

type LookupRepo interface {
	Create(ctx context.Context, l Lookup) error
	// Get returns the platform's lookup or ErrNotFound.
	Get(ctx context.Context, platformID, id string) (Lookup, error)
}
