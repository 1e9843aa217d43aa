package sandbox_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/corridorpay/corridor/adapters/walletsig/sandbox"
	"github.com/corridorpay/corridor/ports"
)

func TestVerifier(t *testing.T) {
	v := sandbox.Verifier{}
	ctx := context.Background()
	assert.NoError(t, v.Verify(ctx, "Platform:p", "InternalAccount:a", `{"quoteId":"Quote:q"}`, sandbox.ValidSignature))
	assert.ErrorIs(t, v.Verify(ctx, "Platform:p", "InternalAccount:a", "{}", "not-the-signature"), ports.ErrWalletSignatureInvalid)
	assert.ErrorIs(t, v.Verify(ctx, "Platform:p", "InternalAccount:a", "{}", " sandbox-valid-signature"), ports.ErrWalletSignatureMalformed)
	assert.ErrorIs(t, v.Verify(ctx, "Platform:p", "InternalAccount:a", "{}", "a\nb"), ports.ErrWalletSignatureMalformed)
}
