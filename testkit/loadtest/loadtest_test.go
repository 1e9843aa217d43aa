package loadtest

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMergeAddsCallsAndTime(t *testing.T) {
	a := result([]time.Duration{1 * time.Millisecond, 3 * time.Millisecond}, 0, time.Second)
	b := result([]time.Duration{2 * time.Millisecond, 4 * time.Millisecond}, 1, time.Second)
	m := Merge(a, b)
	require.Equal(t, 4, m.Ops)
	require.Equal(t, 1, m.Errors)
	require.Equal(t, 2*time.Second, m.Elapsed)
	require.InDelta(t, 2.0, m.TPS, 1e-9)
	require.Equal(t, 3*time.Millisecond, m.P50)
	require.Equal(t, 4*time.Millisecond, m.P99)
	require.Equal(t, []time.Duration{time.Millisecond, 3 * time.Millisecond}, a.lat, "Merge leaves its inputs as they were")
}

func TestRunCountsErrors(t *testing.T) {
	r := Run(10, 3, func(i int) error {
		if i%5 == 0 {
			return errors.New("boom")
		}
		return nil
	})
	require.Equal(t, 10, r.Ops)
	require.Equal(t, 2, r.Errors)
	require.Positive(t, r.TPS)
}
