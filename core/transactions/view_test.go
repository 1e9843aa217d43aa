package transactions_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ports"
)

const viewPlatform = "Platform:1"

// viewAt is an instant outside UTC, so the view's UTC conversion shows.
var viewAt = time.Date(2025, 3, 4, 10, 30, 0, 0, time.FixedZone("CET", 3600))

func incoming() ports.Transaction {
	return ports.Transaction{
		ID: "Transaction:1", PlatformID: viewPlatform, CustomerID: "Customer:1", PlatformCustomerID: "user-1",
		Type: transactions.TypeIncoming, Status: "COMPLETED",
		SourceAccountID: "ExternalAccount:1", SourceCurrency: "USD",
		DestinationAccountID: "InternalAccount:1", DestinationCurrency: "USD",
		SentAmount: 1000, ReceivedAmount: 990, Fees: 10,
		CreatedAt: viewAt, UpdatedAt: viewAt.Add(time.Minute),
	}
}

func TestViewIncomingDefaults(t *testing.T) {
	v := transactions.NewView(incoming(), viewPlatform)
	assert.Equal(t, transactions.DirectionCredit, v.Direction)
	assert.Equal(t, "Customer:1", v.CustomerID)
	assert.Equal(t, transactions.Source{Type: transactions.EndpointAccount, AccountID: "ExternalAccount:1", Currency: "USD"}, v.Source)
	assert.Equal(t, transactions.Destination{Type: transactions.EndpointAccount, AccountID: "InternalAccount:1", Currency: "USD"}, v.Destination)
	assert.Equal(t, time.UTC, v.CreatedAt.Location())
	assert.True(t, v.CreatedAt.Equal(viewAt))
	assert.True(t, v.UpdatedAt.Equal(viewAt.Add(time.Minute)))
	assert.Equal(t, int64(1000), v.SentAmount)
	assert.Equal(t, int64(990), v.ReceivedAmount)
	assert.Equal(t, int64(10), v.Fees)
	// Nothing to show: every optional part is absent.
	assert.Nil(t, v.Reconciliation)
	assert.Nil(t, v.Refund)
	assert.Nil(t, v.SettledAt)
	assert.Nil(t, v.CounterpartyInfo)
	assert.Nil(t, v.Outgoing)
	assert.Empty(t, v.ExchangeRate)
}

func TestViewPlatformLevelBelongsToThePlatform(t *testing.T) {
	tx := incoming()
	tx.CustomerID, tx.PlatformCustomerID = "", ""
	v := transactions.NewView(tx, viewPlatform)
	assert.Equal(t, viewPlatform, v.CustomerID)
	assert.Empty(t, v.PlatformCustomerID)
}

func TestViewOutgoingIsADebit(t *testing.T) {
	tx := incoming()
	tx.Type = transactions.TypeOutgoing
	tx.PaymentRail, tx.RailSelectionMode = "ACH", "MANUAL"
	rd := &ports.RateDetails{ServiceMultiplier: "1.0"}
	pis := []ports.PaymentInstruction{{InstructionsNotes: "pay here"}}
	tx.Details.RateDetails, tx.Details.PaymentInstructions = rd, pis
	v := transactions.NewView(tx, viewPlatform)
	assert.Equal(t, transactions.DirectionDebit, v.Direction)
	require.NotNil(t, v.Outgoing)
	assert.Equal(t, transactions.OutgoingView{PaymentRail: "ACH", RailSelectionMode: "MANUAL", RateDetails: rd, PaymentInstructions: pis}, *v.Outgoing)
}

func TestViewReconciliation(t *testing.T) {
	for _, c := range []struct {
		name, reference, hash string
		want                  *transactions.Reconciliation
	}{
		{"none", "", "", nil},
		{"reference", "REF-1", "", &transactions.Reconciliation{Reference: "REF-1"}},
		{"hash", "", "0xabc", &transactions.Reconciliation{TransactionHash: "0xabc"}},
		{"both", "REF-1", "0xabc", &transactions.Reconciliation{Reference: "REF-1", TransactionHash: "0xabc"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx := incoming()
			tx.Reference, tx.Details.TransactionHash = c.reference, c.hash
			assert.Equal(t, c.want, transactions.NewView(tx, viewPlatform).Reconciliation)
			tx.Status = transactions.StatusCreated
			assert.Nil(t, transactions.NewView(tx, viewPlatform).Reconciliation, "none while CREATED")
		})
	}
}

func TestViewSourceAndDestinationKinds(t *testing.T) {
	tx := incoming()
	tx.Details.SourceType, tx.Details.SourceUmaAddress = transactions.EndpointUmaAddress, "$alice@example.com"
	tx.Details.DestinationType, tx.Details.DestinationUmaAddress = transactions.EndpointUmaAddress, "$bob@example.com"
	v := transactions.NewView(tx, viewPlatform)
	assert.Equal(t, transactions.Source{Type: transactions.EndpointUmaAddress, UmaAddress: "$alice@example.com", Currency: "USD"}, v.Source)
	assert.Equal(t, transactions.Destination{Type: transactions.EndpointUmaAddress, UmaAddress: "$bob@example.com", Currency: "USD"}, v.Destination)

	// A realtime-funded payment names its paying customer as stored: a
	// platform-level one names none, though the transaction's customerId
	// falls back to the platform.
	tx = incoming()
	tx.Details.SourceType = transactions.EndpointRealtimeFunding
	v = transactions.NewView(tx, viewPlatform)
	assert.Equal(t, transactions.Source{Type: transactions.EndpointRealtimeFunding, CustomerID: "Customer:1", Currency: "USD"}, v.Source)
	tx.CustomerID = ""
	v = transactions.NewView(tx, viewPlatform)
	assert.Empty(t, v.Source.CustomerID)
	assert.Equal(t, viewPlatform, v.CustomerID)
}

func TestViewRefundAndSettlementInUTC(t *testing.T) {
	tx := incoming()
	settled := viewAt.Add(time.Hour)
	tx.SettledAt = &settled
	tx.Details.Refund = &ports.Refund{Reference: "RF-1", InitiatedAt: viewAt, SettledAt: &settled, Status: "COMPLETED", Reason: "TIMEOUT"}
	v := transactions.NewView(tx, viewPlatform)
	require.NotNil(t, v.SettledAt)
	assert.Equal(t, settled.UTC(), *v.SettledAt)
	assert.Equal(t, time.UTC, v.SettledAt.Location())
	require.NotNil(t, v.Refund)
	assert.Equal(t, "RF-1", v.Refund.Reference)
	assert.Equal(t, "COMPLETED", v.Refund.Status)
	assert.Equal(t, "TIMEOUT", v.Refund.Reason)
	assert.Equal(t, time.UTC, v.Refund.InitiatedAt.Location())
	require.NotNil(t, v.Refund.SettledAt)
	assert.Equal(t, time.UTC, v.Refund.SettledAt.Location())
	// The view copies: the stored refund keeps its own zone.
	assert.Equal(t, "CET", tx.Details.Refund.InitiatedAt.Location().String())

	// A refund that has not reached the sender has no settledAt.
	tx.Details.Refund.SettledAt = nil
	assert.Nil(t, transactions.NewView(tx, viewPlatform).Refund.SettledAt)
}

func TestViewExchangeRateAndCounterparty(t *testing.T) {
	tx := incoming()
	tx.ExchangeRate = "18.25"
	tx.Details.CounterpartyInfo = map[string]any{}
	v := transactions.NewView(tx, viewPlatform)
	assert.Equal(t, "18.25", v.ExchangeRate)
	assert.Nil(t, v.CounterpartyInfo, "an empty counterparty map is nothing known")

	tx.Details.CounterpartyInfo = map[string]any{"FULL_NAME": "Ana Silva"}
	assert.Equal(t, map[string]any{"FULL_NAME": "Ana Silva"}, transactions.NewView(tx, viewPlatform).CounterpartyInfo)
}
