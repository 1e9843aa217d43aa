package transactions

import (
	"time"

	"github.com/corridorpay/corridor/ports"
)

// Directions of a transaction (reference TransactionDirection): whether it
// credits or debits the customer's (or the platform's) internal account.
const (
	DirectionCredit = "CREDIT"
	DirectionDebit  = "DEBIT"
)

// Kinds of a transaction's source and destination (Details.SourceType and
// Details.DestinationType name them; empty means an account).
const (
	EndpointAccount         = "ACCOUNT"
	EndpointUmaAddress      = "UMA_ADDRESS"
	EndpointRealtimeFunding = "REALTIME_FUNDING"
)

// View is a transaction as it is shown: the stored transaction with the
// domain's defaults and derived values applied, every instant in UTC. An
// adapter only maps it onto its own form.
type View struct {
	ID     string
	Status string
	Type   string
	// Direction is DirectionDebit for an outgoing payment, else
	// DirectionCredit.
	Direction string

	Source      Source
	Destination Destination

	// CustomerID is the owning customer, or the platform's id for a
	// platform-level transaction.
	CustomerID         string
	PlatformCustomerID string

	SentAmount          int64
	SourceCurrency      string
	ReceivedAmount      int64
	DestinationCurrency string
	Fees                int64
	// ExchangeRate is the decimal rate; empty for same-currency payments.
	ExchangeRate string

	// Reconciliation is set when the payment carries a reference or an
	// on-chain hash.
	Reconciliation *Reconciliation
	FailureReason  string
	QuoteID        string
	AgentID        string
	Description    string
	// Refund is the return of the funds of a payment that did not complete.
	Refund *ports.Refund
	// CounterpartyInfo is nil when nothing is known about the counterparty.
	CounterpartyInfo map[string]any

	SettledAt *time.Time
	CreatedAt time.Time
	UpdatedAt time.Time

	// Outgoing is set for outgoing payments only.
	Outgoing *OutgoingView
}

// Source is where a transaction's money comes from: an account
// (AccountID), a UMA address (UmaAddress), or a payment the customer sends
// by the quote's instructions (CustomerID, REALTIME_FUNDING).
type Source struct {
	Type       string // EndpointAccount, EndpointUmaAddress or EndpointRealtimeFunding
	AccountID  string
	UmaAddress string
	// CustomerID is the stored paying customer (REALTIME_FUNDING only):
	// empty for a platform-level quote, not defaulted to the platform.
	CustomerID string
	Currency   string
}

// Destination is where a transaction's money goes: an account or a UMA
// address.
type Destination struct {
	Type       string // EndpointAccount or EndpointUmaAddress
	AccountID  string
	UmaAddress string
	Currency   string
}

// Reconciliation is what matches a payment on its rail with its
// transaction.
type Reconciliation struct {
	Reference       string
	TransactionHash string
}

// OutgoingView holds what only outgoing payments carry.
type OutgoingView struct {
	// PaymentRail is the stored rail (empty when none is resolved);
	// RailSelectionMode is MANUAL, AUTO or empty.
	PaymentRail         string
	RailSelectionMode   string
	RateDetails         *ports.RateDetails
	PaymentInstructions []ports.PaymentInstruction
}

// NewView applies the domain's rules to t, a transaction of platformID.
func NewView(t ports.Transaction, platformID string) View {
	v := View{
		ID:                  t.ID,
		Status:              t.Status,
		Type:                t.Type,
		Direction:           DirectionCredit,
		Source:              sourceOf(t),
		Destination:         destinationOf(t),
		CustomerID:          t.CustomerID,
		PlatformCustomerID:  t.PlatformCustomerID,
		SentAmount:          t.SentAmount,
		SourceCurrency:      t.SourceCurrency,
		ReceivedAmount:      t.ReceivedAmount,
		DestinationCurrency: t.DestinationCurrency,
		Fees:                t.Fees,
		ExchangeRate:        t.ExchangeRate,
		FailureReason:       t.FailureReason,
		QuoteID:             t.QuoteID,
		AgentID:             t.AgentID,
		Description:         t.Description,
		SettledAt:           utcPtr(t.SettledAt),
		CreatedAt:           t.CreatedAt.UTC(),
		UpdatedAt:           t.UpdatedAt.UTC(),
	}
	if v.CustomerID == "" {
		v.CustomerID = platformID
	}
	// The reference includes them for every transaction but a CREATED one.
	if t.Status != StatusCreated && (t.Reference != "" || t.Details.TransactionHash != "") {
		v.Reconciliation = &Reconciliation{Reference: t.Reference, TransactionHash: t.Details.TransactionHash}
	}
	if r := t.Details.Refund; r != nil {
		v.Refund = &ports.Refund{Reference: r.Reference, InitiatedAt: r.InitiatedAt.UTC(), SettledAt: utcPtr(r.SettledAt),
			Status: r.Status, Reason: r.Reason}
	}
	if len(t.Details.CounterpartyInfo) > 0 {
		v.CounterpartyInfo = t.Details.CounterpartyInfo
	}
	if t.Type == TypeOutgoing {
		v.Direction = DirectionDebit
		v.Outgoing = &OutgoingView{PaymentRail: t.PaymentRail, RailSelectionMode: t.RailSelectionMode,
			RateDetails: t.Details.RateDetails, PaymentInstructions: t.Details.PaymentInstructions}
	}
	return v
}

// sourceOf is the source Details.SourceType names (an account by default).
func sourceOf(t ports.Transaction) Source {
	switch t.Details.SourceType {
	case EndpointUmaAddress:
		return Source{Type: EndpointUmaAddress, UmaAddress: t.Details.SourceUmaAddress, Currency: t.SourceCurrency}
	case EndpointRealtimeFunding:
		return Source{Type: EndpointRealtimeFunding, CustomerID: t.CustomerID, Currency: t.SourceCurrency}
	}
	return Source{Type: EndpointAccount, AccountID: t.SourceAccountID, Currency: t.SourceCurrency}
}

// destinationOf is the destination Details.DestinationType names (an
// account by default).
func destinationOf(t ports.Transaction) Destination {
	if t.Details.DestinationType == EndpointUmaAddress {
		return Destination{Type: EndpointUmaAddress, UmaAddress: t.Details.DestinationUmaAddress, Currency: t.DestinationCurrency}
	}
	return Destination{Type: EndpointAccount, AccountID: t.DestinationAccountID, Currency: t.DestinationCurrency}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
