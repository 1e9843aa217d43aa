package system_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/corridorpay/corridor/adapters/system"
)

func TestClockIsUTCToTheMicrosecond(t *testing.T) {
	for range 100 {
		now := system.Clock{}.Now()
		assert.Equal(t, time.UTC, now.Location())
		assert.Zero(t, now.Nanosecond()%1000, "no sub-microsecond part: %v", now)
		assert.WithinDuration(t, time.Now(), now, time.Second)
	}
}

func TestIDsAreTypedUUIDs(t *testing.T) {
	a, b := system.IDs{}.New("Quote"), system.IDs{}.New("Quote")
	assert.True(t, strings.HasPrefix(a, "Quote:"), a)
	assert.Len(t, a, len("Quote:")+36)
	assert.NotEqual(t, a, b)
}
