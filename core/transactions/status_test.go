package transactions_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ports"
)

func TestTransactionStateMachine(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	tx := ports.Transaction{ID: "Transaction:1", Status: transactions.StatusPending, UpdatedAt: t0}
	require.NoError(t, transactions.Move(&tx, transactions.StatusProcessing, t0.Add(time.Second)))
	assert.Equal(t, transactions.StatusProcessing, tx.Status)
	assert.Equal(t, t0.Add(time.Second), tx.UpdatedAt)

	err := transactions.Move(&tx, transactions.StatusPending, t0.Add(2*time.Second))
	require.ErrorIs(t, err, status.ErrIllegal)
	assert.EqualError(t, err, "transaction: PROCESSING cannot become PENDING")
	assert.Equal(t, transactions.StatusProcessing, tx.Status, "a refused move changes nothing")
	assert.Equal(t, t0.Add(time.Second), tx.UpdatedAt)

	require.NoError(t, transactions.Move(&tx, transactions.StatusCompleted, t0))
	require.NoError(t, transactions.Move(&tx, transactions.StatusFailed, t0), "a returned payout")
	for _, to := range transactions.Statuses {
		assert.False(t, transactions.Status(transactions.StatusFailed).CanBecome(transactions.Status(to)), "FAILED is final (%s)", to)
	}

	// Changes recorded with a ledger entry move open transactions only:
	// they apply once and never reopen a settled payment.
	c := transactions.StatusChange("Platform:1", "Transaction:1", transactions.StatusCompleted, t0)
	assert.Equal(t, ports.TransactionStatusChange{PlatformID: "Platform:1", TransactionID: "Transaction:1",
		From:   []string{transactions.StatusCreated, transactions.StatusPending, transactions.StatusProcessing},
		Status: transactions.StatusCompleted, UpdatedAt: t0}, c, "a deposit credited on arrival completes from CREATED")
	assert.NotContains(t, transactions.StatusChange("", "", transactions.StatusFailed, t0).From, transactions.StatusCompleted)
	assert.Equal(t, []string{transactions.StatusCreated, transactions.StatusPending, transactions.StatusPendingAuthorization},
		transactions.StatusChange("", "", transactions.StatusExpired, t0).From)
}

// A cancel moves an unsettled transfer to FAILED, as a precondition of its
// write.
func TestCancelChange(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	assert.Equal(t, ports.TransactionStatusChange{PlatformID: "Platform:1", TransactionID: "Transaction:1",
		From: []string{transactions.StatusPending, transactions.StatusProcessing}, Status: transactions.StatusFailed,
		UpdatedAt: t0, Required: true}, transactions.CancelChange("Platform:1", "Transaction:1", t0))
	for _, s := range transactions.Statuses {
		want := s == transactions.StatusPending || s == transactions.StatusProcessing
		assert.Equal(t, want, transactions.Cancellable(s), s)
	}
}

// The endings that did not pay the receiver are the ones that give an
// agent's usage back; every other status, open or COMPLETED, did or may.
func TestNotPaid(t *testing.T) {
	for _, s := range transactions.Statuses {
		want := s == transactions.StatusFailed || s == transactions.StatusRejected || s == transactions.StatusRefunded
		assert.Equal(t, want, transactions.NotPaid(transactions.Status(s)), s)
	}
}
