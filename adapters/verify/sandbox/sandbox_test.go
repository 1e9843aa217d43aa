package sandbox_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/verify/sandbox"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/externalfixture"
)

func TestSuffixTable(t *testing.T) {
	cases := []struct {
		suffix, status, name string
	}{
		{"102", "NOT_MATCHED", ""},
		{"103", "PARTIAL_MATCH", "A. Maria Silva"},
		{"104", "PENDING", ""},
		{"106", "UNSUPPORTED", ""},
		{"107", "CHECKED_BY_RECEIVING_FI", ""},
		{"101", "MATCHED", "Ana Maria Silva"},
		{"108", "MATCHED", "Ana Maria Silva"},
		{"002", "MATCHED", "Ana Maria Silva"},
	}
	for _, typ := range []string{"USD_ACCOUNT", "EUR_ACCOUNT", "MXN_ACCOUNT", "BRL_ACCOUNT", "LIGHTNING"} {
		for _, c := range cases {
			info := externalfixture.Info(typ, c.suffix)
			v, err := sandbox.Verifier{}.Verify(context.Background(), externalfixture.Currency[typ], info)
			require.NoError(t, err, "%s %s", typ, c.suffix)
			assert.Equal(t, c.status, v.Status, "%s %s", typ, c.suffix)
			if info.Beneficiary == nil {
				assert.Empty(t, v.VerifiedName, "nothing to compare without a beneficiary")
				continue
			}
			assert.Equal(t, c.name, v.VerifiedName, "%s %s", typ, c.suffix)
		}
	}
}

func TestInvalidAccount(t *testing.T) {
	for typ, field := range map[string]string{
		"USD_ACCOUNT": "accountInfo.accountNumber", "EUR_ACCOUNT": "accountInfo.iban",
		"MXN_ACCOUNT": "accountInfo.clabeNumber", "BRL_ACCOUNT": "accountInfo.pixKey",
		"LIGHTNING": "accountInfo.lightningAddress", "BASE_WALLET": "accountInfo.address",
	} {
		_, err := sandbox.Verifier{}.Verify(context.Background(), externalfixture.Currency[typ], externalfixture.Info(typ, "105"))
		f, ok := fault.As(err)
		require.True(t, ok, typ)
		assert.Equal(t, fault.KindInvalid, f.Kind)
		assert.Equal(t, "INVALID_BANK_ACCOUNT", f.Code)
		require.Len(t, f.Fields, 1)
		assert.Equal(t, field, f.Fields[0].Field, typ)
	}
}

func TestBusinessAndRespelling(t *testing.T) {
	info := externalfixture.Info("USD_ACCOUNT", "103")
	info.Beneficiary = &ports.Beneficiary{BeneficiaryType: "BUSINESS", LegalName: "Acme Trading Ltd"}
	v, err := sandbox.Verifier{}.Verify(context.Background(), "USD", info)
	require.NoError(t, err)
	assert.Equal(t, "A. Trading Ltd", v.VerifiedName)
	info.Beneficiary.LegalName = "Acme"
	v, err = sandbox.Verifier{}.Verify(context.Background(), "USD", info)
	require.NoError(t, err)
	assert.Equal(t, "Acm", v.VerifiedName)
}
