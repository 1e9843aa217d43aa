package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/externalfixture"
)

// The sandbox rails settle after CORRIDOR_SANDBOX_SETTLEMENT_DELAY (2 s by
// default) instead of the rail's own delay (10 s for ACH); the spec's timed
// outcome (…005 fails after 30 s) keeps its time.
func TestSandboxSettlementDelaySetting(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want time.Duration
	}{{"", 2 * time.Second}, {"750ms", 750 * time.Millisecond}} {
		cfg, err := LoadConfig(func(k string) string {
			if k == "CORRIDOR_SANDBOX_SETTLEMENT_DELAY" {
				return tc.env
			}
			return ""
		})
		require.NoError(t, err)
		require.Equal(t, tc.want, cfg.SettlementDelay)
		clock := testkit.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		be, err := openBackend(context.Background(), cfg, clock, slog.New(slog.NewTextHandler(io.Discard, nil)))
		require.NoError(t, err)
		t.Cleanup(be.close)
		ach, ok := be.rails.Rail("ACH", "USD")
		require.True(t, ok)
		require.Equal(t, tc.want, ach.Spec().SettlementDelay)

		submit := func(suffix string) (ports.RailRequest, string) {
			req := ports.RailRequest{Ref: "Transaction:" + suffix, Rail: "ACH", Direction: ports.RailPayout, Currency: "USD", Amount: 100,
				Account: ports.ExternalAccount{Currency: "USD", Info: externalfixture.Info("USD_ACCOUNT", suffix)}}
			res, err := ach.Submit(context.Background(), req)
			require.NoError(t, err)
			require.Equal(t, ports.RailPending, res.State)
			return req, res.ExternalRef
		}
		status := func(req ports.RailRequest, ref string) ports.RailState {
			res, err := ach.Status(context.Background(), req, ref)
			require.NoError(t, err)
			return res.State
		}
		ok1, ref1 := submit(externalfixture.DefaultSuffix)
		slow, ref5 := submit("005")
		clock.Advance(tc.want - time.Millisecond)
		require.Equal(t, ports.RailPending, status(ok1, ref1), "not settled before the delay")
		clock.Advance(time.Millisecond)
		require.Equal(t, ports.RailSucceeded, status(ok1, ref1), "settled at the delay")
		require.Equal(t, ports.RailPending, status(slow, ref5), "…005 stays pending")
		clock.Advance(30*time.Second - tc.want)
		require.Equal(t, ports.RailFailed, status(slow, ref5), "…005 fails 30 s after submission")
	}
}
