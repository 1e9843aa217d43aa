package httpapi

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// A transaction or balance event renders the same whether the store gave its
// snapshot decoded (Decoded) or as JSON (Resource); a resource recorded
// in its wire form comes out compact, however the store spaced it (the
// envelope takes the rendered data as it is).
func TestRenderedDataIsCompactWhateverTheSnapshotsForm(t *testing.T) {
	at := time.Date(2026, 11, 27, 6, 45, 0, 0, time.UTC)
	txn := ports.Transaction{ID: "Transaction:1", PlatformID: "Platform:1", CustomerID: "Customer:1", Type: "OUTGOING",
		Status: "PENDING", SourceAccountID: "InternalAccount:1", SourceCurrency: "USD", DestinationAccountID: "ExternalAccount:1",
		DestinationCurrency: "USD", SentAmount: 1000, ReceivedAmount: 1000, Description: "rent <May> & more", CreatedAt: at, UpdatedAt: at}
	raw, err := json.Marshal(txn)
	require.NoError(t, err)
	r := EventRenderer{}
	ctx := context.Background()
	base := ports.Event{ID: "Webhook:1", PlatformID: "Platform:1", Type: "OUTGOING_PAYMENT.PENDING", ResourceID: txn.ID}
	fromJSON, fromValue := base, base
	fromJSON.Resource, fromValue.Decoded = raw, txn
	a, err := r.Render(ctx, fromJSON)
	require.NoError(t, err)
	b, err := r.Render(ctx, fromValue)
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
	assert.Contains(t, string(a), `"id":"Transaction:1"`)

	bal := ports.InternalAccountBalance{InternalAccount: ports.InternalAccount{ID: "InternalAccount:1", PlatformID: "Platform:1",
		CustomerID: "Customer:1", Type: "INTERNAL_FIAT", Status: "ACTIVE", Currency: "USD", CreatedAt: at, UpdatedAt: at},
		Balance: 900, TotalBalance: 1000}
	raw, err = json.Marshal(bal)
	require.NoError(t, err)
	balJSON, balValue := base, base
	balJSON.Type, balJSON.ResourceID, balJSON.Resource = ports.BalanceUpdated, bal.ID, raw
	balValue.Type, balValue.ResourceID, balValue.Decoded = ports.BalanceUpdated, bal.ID, bal
	a, err = r.Render(ctx, balJSON)
	require.NoError(t, err)
	b, err = r.Render(ctx, balValue)
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
	assert.Contains(t, string(a), `"id":"InternalAccount:1"`)

	wire := base
	wire.Type, wire.Resource = "SOMETHING.RECORDED", json.RawMessage(`{"a": 1, "b": [1, 2], "c": {"d": "x y"}}`)
	c, err := r.Render(ctx, wire)
	require.NoError(t, err)
	assert.Equal(t, `{"a":1,"b":[1,2],"c":{"d":"x y"}}`, string(c))

	wire.Resource = json.RawMessage(`{"a": `)
	_, err = r.Render(ctx, wire)
	assert.Error(t, err, "data that is not JSON is refused, not sent")
}
