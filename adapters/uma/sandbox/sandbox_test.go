package sandbox_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/uma/sandbox"
	"github.com/corridorpay/corridor/ports"
)

func TestReceivers(t *testing.T) {
	ctx := context.Background()
	d := sandbox.New("")
	for addr, want := range map[string]ports.UmaReceiver{
		"$success.usd@sandbox.local":         {Address: "$success.usd@sandbox.local", Currencies: []string{"USD"}, Outcome: ports.UmaOutcomeSuccess},
		"$success.eur@sandbox.local":         {Address: "$success.eur@sandbox.local", Currencies: []string{"EUR"}, Outcome: ports.UmaOutcomeSuccess},
		"$Success.MXN@Sandbox.Local":         {Address: "$success.mxn@sandbox.local", Currencies: []string{"MXN"}, Outcome: ports.UmaOutcomeSuccess},
		"$pending.long.usd@sandbox.local":    {Address: "$pending.long.usd@sandbox.local", Currencies: []string{"USD"}, Outcome: ports.UmaOutcomePendingLong},
		"$fail.compliance.usd@sandbox.local": {Address: "$fail.compliance.usd@sandbox.local", Currencies: []string{"USD"}, Outcome: ports.UmaOutcomeFailCompliance},
	} {
		got, err := d.Receiver(ctx, addr)
		require.NoError(t, err, addr)
		assert.Equal(t, want, got, addr)
	}
	for _, addr := range []string{"$nobody@sandbox.local", "$success.usd@other.example", "$success.gbp@sandbox.local", "success.usd", ""} {
		_, err := d.Receiver(ctx, addr)
		assert.ErrorIs(t, err, ports.ErrNotFound, addr)
	}

	// The domain is configurable.
	custom := sandbox.New("Pay.Example.com")
	got, err := custom.Receiver(ctx, "$success.eur@pay.example.com")
	require.NoError(t, err)
	assert.Equal(t, "$success.eur@pay.example.com", got.Address)
	_, err = custom.Receiver(ctx, "$success.eur@sandbox.local")
	assert.ErrorIs(t, err, ports.ErrNotFound)

	// Callers cannot change the table through a result.
	got.Currencies[0] = "XXX"
	again, _ := custom.Receiver(ctx, "$success.eur@pay.example.com")
	assert.Equal(t, []string{"EUR"}, again.Currencies)
}
