package operator_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/operator"
)

func unauthorized(t *testing.T, err error) {
	t.Helper()
	f, ok := fault.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, fault.KindUnauthorized, f.Kind)
}

func TestAuthenticate(t *testing.T) {
	const token = "operator-token-0123456789"
	a, err := operator.New(token, "")
	require.NoError(t, err)
	assert.True(t, a.Configured())
	require.NoError(t, a.Authenticate(token))
	unauthorized(t, a.Authenticate(token+"X"))
	unauthorized(t, a.Authenticate(""))

	// The digest alone configures the same operator.
	sum := sha256.Sum256([]byte(token))
	byHash, err := operator.New("", hex.EncodeToString(sum[:]))
	require.NoError(t, err)
	require.NoError(t, byHash.Authenticate(token))
	unauthorized(t, byHash.Authenticate("operator-token-012345678X"))

	// None configured: no token is the operator.
	none, err := operator.New("", "")
	require.NoError(t, err)
	assert.False(t, none.Configured())
	unauthorized(t, none.Authenticate(token))
	var nilAuth *operator.Authenticator
	unauthorized(t, nilAuth.Authenticate(token))
}

func TestNewRefusesBadConfiguration(t *testing.T) {
	for name, in := range map[string][2]string{
		"short token": {"short", ""},
		"bad digest":  {"", "nothex"},
		"short hash":  {"", "abcd"},
		"both":        {"operator-token-0123456789", "00"},
	} {
		_, err := operator.New(in[0], in[1])
		assert.Error(t, err, name)
	}
}
