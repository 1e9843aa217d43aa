package cachetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// RunFailureCounter runs the ports.FailureCounter contract; newCounter
// returns a fresh counter and the hook that moves its time forward.
func RunFailureCounter(t *testing.T, newCounter func(t *testing.T) (ports.FailureCounter, Advance)) {
	runParallel(t, newCounter, []subtest[ports.FailureCounter]{
		{"CountsPerKey", fcCountsPerKey},
		{"WindowEnds", fcWindowEnds},
		{"BadWindow", fcBadWindow},
		{"Concurrent", fcConcurrent},
	})
}

func fcCountsPerKey(t *testing.T, c ports.FailureCounter, _ Advance) {
	ctx := context.Background()
	a, b := "tok:"+uuid.NewString(), "ip:"+uuid.NewString()
	got, err := c.Failures(ctx, a, b)
	require.NoError(t, err)
	assert.Equal(t, []ports.FailureCount{{}, {}}, got, "no failures yet")
	for i := 1; i <= 3; i++ {
		got, err = c.AddFailure(ctx, time.Minute, a)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.EqualValues(t, i, got[0].N)
	}
	got, err = c.AddFailure(ctx, time.Minute, a, b)
	require.NoError(t, err)
	assert.EqualValues(t, 4, got[0].N)
	assert.EqualValues(t, 1, got[1].N)
	for _, g := range got {
		assert.True(t, g.ResetIn > 0 && g.ResetIn <= time.Minute, "reset in %s", g.ResetIn)
	}
	got, err = c.Failures(ctx, b, a)
	require.NoError(t, err)
	assert.EqualValues(t, 1, got[0].N)
	assert.EqualValues(t, 4, got[1].N)
}

func fcWindowEnds(t *testing.T, c ports.FailureCounter, advance Advance) {
	ctx := context.Background()
	k := "tok:" + uuid.NewString()
	_, err := c.AddFailure(ctx, time.Minute, k)
	require.NoError(t, err)
	advance(40 * time.Second)
	// A later failure does not extend the window.
	got, err := c.AddFailure(ctx, time.Minute, k)
	require.NoError(t, err)
	assert.EqualValues(t, 2, got[0].N)
	assert.LessOrEqual(t, got[0].ResetIn, 20*time.Second)
	advance(21 * time.Second)
	got, err = c.Failures(ctx, k)
	require.NoError(t, err)
	assert.Zero(t, got[0].N, "the window ended")
	got, err = c.AddFailure(ctx, time.Minute, k)
	require.NoError(t, err)
	assert.EqualValues(t, 1, got[0].N, "a new window")
}

func fcBadWindow(t *testing.T, c ports.FailureCounter, _ Advance) {
	_, err := c.AddFailure(context.Background(), 0, "tok:"+uuid.NewString())
	require.Error(t, err)
}

func fcConcurrent(t *testing.T, c ports.FailureCounter, _ Advance) {
	k := "tok:" + uuid.NewString()
	concurrently(t, 50, func(int) (bool, error) {
		_, err := c.AddFailure(context.Background(), time.Minute, k)
		return true, err
	})
	got, err := c.Failures(context.Background(), k)
	require.NoError(t, err)
	assert.EqualValues(t, 50, got[0].N, "no failure is lost")
}
