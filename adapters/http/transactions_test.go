package httpapi_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

type txnList struct {
	Data       []map[string]any `json:"data"`
	HasMore    bool             `json:"hasMore"`
	NextCursor string           `json:"nextCursor"`
	TotalCount int              `json:"totalCount"`
}

// storeTransactions inserts n outgoing transactions of customerID (the
// platform's own when empty), one millisecond apart.
func (h *transferHarness) storeTransactions(tn tenant, customerID, status string, n int) []ports.Transaction {
	h.t.Helper()
	ctx := context.Background()
	var out []ports.Transaction
	require.NoError(h.t, h.store.InTx(ctx, func(tx ports.Tx) error {
		for i := range n {
			now := h.clock.Now()
			t := ports.Transaction{
				ID: h.ids.New("Transaction"), PlatformID: tn.platformID, CustomerID: customerID, Type: "OUTGOING", Status: status,
				SourceAccountID: "InternalAccount:src", SourceCurrency: "USD", DestinationAccountID: "ExternalAccount:dst",
				DestinationCurrency: "USD", PaymentRail: "WIRE", SenderIdentifiers: []string{"InternalAccount:src"},
				ReceiverIdentifiers: []string{"ExternalAccount:dst", "0011223344"}, SentAmount: int64(100 + i),
				ReceivedAmount: int64(100 + i), Reference: fmt.Sprintf("R-%s-%d", status, i), CreatedAt: now, UpdatedAt: now,
			}
			if customerID != "" {
				t.PlatformCustomerID = "pc-" + customerID
			}
			if err := tx.Transactions().Create(ctx, t); err != nil {
				return err
			}
			out = append(out, t)
			h.clock.Advance(time.Millisecond)
		}
		return nil
	}))
	return out
}

func TestListTransactionsOverHTTP(t *testing.T) {
	h := newTransferHarness(t)
	tn := h.tenant("USD")
	other := h.tenant("USD")
	alice := h.storeTransactions(tn, "Customer:alice", "COMPLETED", 25)
	own := h.storeTransactions(tn, "", "PENDING", 3)
	h.storeTransactions(other, "Customer:mallory", "COMPLETED", 4)

	first := decode[txnList](t, h.get(tn, "/transactions"))
	assert.Len(t, first.Data, 20, "limit defaults to 20")
	assert.True(t, first.HasMore)
	assert.NotEmpty(t, first.NextCursor)
	assert.Equal(t, 28, first.TotalCount)
	assert.Equal(t, own[2].ID, first.Data[0]["id"], "newest first by default")
	assert.Equal(t, tn.platformID, first.Data[0]["customerId"], "platform-level transactions carry the platform's id")
	assert.Equal(t, "WIRE", first.Data[0]["paymentRail"])

	second := decode[txnList](t, h.get(tn, "/transactions?cursor="+url.QueryEscape(first.NextCursor)))
	assert.Len(t, second.Data, 8)
	assert.False(t, second.HasMore)
	raw := h.get(tn, "/transactions?cursor="+url.QueryEscape(first.NextCursor)).object(t)
	assert.NotContains(t, raw, "nextCursor", "nextCursor only when hasMore")
	assert.Equal(t, alice[0].ID, second.Data[7]["id"])

	asc := decode[txnList](t, h.get(tn, "/transactions?sortOrder=asc&limit=5"))
	assert.Equal(t, alice[0].ID, asc.Data[0]["id"])
	next := decode[txnList](t, h.get(tn, "/transactions?sortOrder=asc&limit=5&cursor="+url.QueryEscape(asc.NextCursor)))
	assert.Equal(t, alice[5].ID, next.Data[0]["id"])

	for _, tc := range []struct {
		query string
		total int
	}{
		{"customerId=Customer:alice", 25},
		{"customerId=" + url.QueryEscape(tn.platformID), 3},
		{"platformCustomerId=pc-Customer:alice", 25},
		{"status=PENDING", 3},
		{"type=INCOMING", 0},
		{"type=OUTGOING", 28},
		{"reference=R-COMPLETED-7", 1},
		{"accountIdentifier=0011223344", 28},
		{"senderAccountIdentifier=InternalAccount:src", 28},
		{"receiverAccountIdentifier=InternalAccount:src", 0},
		{"startDate=" + url.QueryEscape(alice[24].CreatedAt.Format(time.RFC3339Nano)), 4},
		{"endDate=" + url.QueryEscape(alice[0].CreatedAt.Format(time.RFC3339Nano)), 1},
		{"startDate=" + url.QueryEscape(alice[3].CreatedAt.Format(time.RFC3339Nano)) + "&endDate=" + url.QueryEscape(alice[5].CreatedAt.Format(time.RFC3339Nano)), 3},
	} {
		t.Run(tc.query, func(t *testing.T) {
			list := decode[txnList](t, h.get(tn, "/transactions?limit=100&"+tc.query))
			assert.Equal(t, tc.total, list.TotalCount)
			assert.Len(t, list.Data, tc.total)
		})
	}

	for _, tc := range []struct{ query, field string }{
		{"limit=0", "limit"},
		{"limit=101", "limit"},
		{"status=DONE", "status"},
		{"type=SIDEWAYS", "type"},
		{"sortOrder=random", "sortOrder"},
		{"startDate=yesterday", "startDate"},
		{"cursor=forged", "cursor"},
		{"cursor=" + url.QueryEscape(tamperedCursor(t, first.NextCursor)), "cursor"},
		{"sortOrder=asc&cursor=" + url.QueryEscape(first.NextCursor), "cursor"},
		{"startDate=2025-10-14T00:00:00Z&endDate=2025-10-13T00:00:00Z", "startDate"},
	} {
		t.Run("400 "+tc.query, func(t *testing.T) {
			requireError(t, h.get(tn, "/transactions?"+tc.query), http.StatusBadRequest, "INVALID_INPUT", tc.field)
		})
	}

	got := decode[map[string]any](t, h.get(tn, "/transactions/"+alice[3].ID))
	assert.Equal(t, alice[3].ID, got["id"])
	assert.Equal(t, "pc-Customer:alice", got["platformCustomerId"])
	requireError(t, h.get(other, "/transactions/"+alice[3].ID), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
	requireError(t, h.get(tn, "/transactions/Transaction:nope"), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
}

// tamperedCursor is cursor with its tag's last byte changed. (Replacing its
// last two characters by "AA" left it as it was when it ended so, or when
// they differed only in the bits the encoding drops.)
func tamperedCursor(t *testing.T, cursor string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	require.NoError(t, err)
	raw[len(raw)-1] ^= 0xff
	return base64.RawURLEncoding.EncodeToString(raw)
}
