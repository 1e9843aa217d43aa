package kyc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/status"
	"github.com/corridorpay/corridor/ports"
)

func TestVerificationStateMachine(t *testing.T) {
	var v ports.Verification
	require.NoError(t, moveVerification(&v, VerificationResolveErrors))
	require.NoError(t, moveVerification(&v, VerificationResolveErrors), "staying is no change")
	require.NoError(t, moveVerification(&v, VerificationReady))
	require.NoError(t, moveVerification(&v, VerificationInProgress))
	require.ErrorIs(t, moveVerification(&v, VerificationReady), status.ErrIllegal, "submitted: data is no longer awaited")
	require.NoError(t, moveVerification(&v, VerificationApproved))
	for _, to := range VerificationStatuses {
		if to != VerificationApproved {
			require.ErrorIs(t, moveVerification(&v, VerificationStatus(to)), status.ErrIllegal, "APPROVED is final (%s)", to)
		}
	}
	assert.Equal(t, VerificationApproved, v.Status)
}
