package quotes_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ports"
)

func TestQuoteStateMachine(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	q := ports.Quote{ID: "Quote:1", Status: quotes.StatusPending}
	require.NoError(t, quotes.Move(&q, quotes.StatusProcessing, t0))
	assert.Equal(t, t0, q.UpdatedAt)
	require.ErrorIs(t, quotes.Move(&q, quotes.StatusExpired, t0), status.ErrIllegal, "an executed quote does not expire")
	require.NoError(t, quotes.Move(&q, quotes.StatusCompleted, t0))
	require.NoError(t, quotes.Move(&q, quotes.StatusFailed, t0), "a returned payout")
	require.ErrorIs(t, quotes.Move(&q, quotes.StatusCompleted, t0), status.ErrIllegal)
	deposit := ports.Quote{ID: "Quote:2", Status: quotes.StatusPending}
	require.NoError(t, quotes.Move(&deposit, quotes.StatusCompleted, t0), "a deposit credited as its funds arrive")

	assert.Equal(t, []string{quotes.StatusPending}, quotes.StatusChange("", "", quotes.StatusProcessing, t0).From)
	assert.Equal(t, []string{quotes.StatusPending}, quotes.StatusChange("", "", quotes.StatusExpired, t0).From)
	assert.Equal(t, []string{quotes.StatusPending, quotes.StatusProcessing}, quotes.StatusChange("", "", quotes.StatusCompleted, t0).From,
		"a deposit credited on arrival completes from PENDING")
	assert.Equal(t, []string{quotes.StatusPending, quotes.StatusProcessing}, quotes.StatusChange("", "", quotes.StatusFailed, t0).From,
		"never from COMPLETED: a return is made on the locked row")
}
