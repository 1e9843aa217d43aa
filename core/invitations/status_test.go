package invitations

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ports"
)

// TestTransitions checks every status against every target: only PENDING
// moves, to each of the three final statuses.
func TestTransitions(t *testing.T) {
	allowed := map[[2]Status]bool{
		{StatusPending, StatusClaimed}:   true,
		{StatusPending, StatusCancelled}: true,
		{StatusPending, StatusExpired}:   true,
	}
	now := time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC)
	for _, from := range Statuses {
		for _, to := range Statuses {
			inv := ports.Invitation{Status: string(from)}
			err := Move(&inv, to, now)
			if allowed[[2]Status{from, to}] {
				assert.NoError(t, err, "%s → %s", from, to)
				assert.Equal(t, string(to), inv.Status)
				assert.Equal(t, now, inv.UpdatedAt)
				continue
			}
			assert.ErrorIs(t, err, status.ErrIllegal, "%s → %s", from, to)
			assert.Equal(t, string(from), inv.Status, "a refused move leaves the status")
			assert.True(t, inv.UpdatedAt.IsZero())
		}
	}
	for _, s := range []Status{StatusClaimed, StatusCancelled, StatusExpired} {
		assert.True(t, transitions.Final(s), s)
	}
}

// TestStatusErrors: each status answers claim and cancel with its own code.
func TestStatusErrors(t *testing.T) {
	assert.NoError(t, statusError(StatusPending))
	for st, code := range map[string]string{
		StatusClaimed: CodeAlreadyClaimed, StatusCancelled: CodeCancelled, StatusExpired: CodeExpired,
	} {
		assert.ErrorContains(t, statusError(st), code)
	}
}

func TestCodes(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		c, err := newCode()
		assert.NoError(t, err)
		assert.Len(t, c, CodeLength)
		n, ok := NormalizeCode(c)
		assert.True(t, ok)
		assert.Equal(t, c, n)
		assert.False(t, seen[c], "codes repeat")
		seen[c] = true
	}
	n, ok := NormalizeCode(" abcdefghjkmn ")
	assert.True(t, ok, "typed in lower case")
	assert.Equal(t, "ABCDEFGHJKMN", n)
	for _, bad := range []string{"", "ABCDEFGHJKM", "ABCDEFGHJKMNP", "ABCDEFGHJKM0", "ABCDEFGHJKMI", "ABCDEFGHJKM\x00", "ÄBCDEFGHJKM"} {
		_, ok := NormalizeCode(bad)
		assert.False(t, ok, "%q", bad)
	}
}
