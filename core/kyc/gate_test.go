package kyc_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/ports"
)

func TestOutgoingAllowed(t *testing.T) {
	for _, tc := range []struct {
		typ, status string
		allowed     bool
		field       string
	}{
		{"INDIVIDUAL", kyc.StatusUnverified, true, ""},
		{"INDIVIDUAL", kyc.StatusApproved, true, ""},
		{"INDIVIDUAL", kyc.StatusPending, false, "kycStatus"},
		{"INDIVIDUAL", kyc.StatusRejected, false, "kycStatus"},
		{"INDIVIDUAL", kyc.StatusHold, false, "kycStatus"},
		{"BUSINESS", kyc.StatusApproved, true, ""},
		{"BUSINESS", kyc.StatusUnverified, true, ""},
		{"BUSINESS", kyc.StatusPending, false, "kybStatus"},
		{"BUSINESS", kyc.StatusRejected, false, "kybStatus"},
		{"BUSINESS", kyc.StatusHold, false, "kybStatus"},
	} {
		err := kyc.OutgoingAllowed(ports.Customer{ID: "Customer:1", CustomerType: tc.typ, KYCStatus: tc.status})
		if tc.allowed {
			assert.NoError(t, err, tc.typ+" "+tc.status)
			continue
		}
		f, ok := fault.As(err)
		require.True(t, ok, tc.typ+" "+tc.status)
		assert.Equal(t, fault.KindForbidden, f.Kind)
		assert.Equal(t, kyc.CodeUserNotReady, f.Code)
		assert.Equal(t, map[string]any{"customerId": "Customer:1", tc.field: tc.status}, f.Details)
	}
}

func TestCanSendOutgoing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	assert.NoError(t, kyc.CanSendOutgoing(ctx, e.store.Read(), e.platform, ""), "platform accounts")
	requireKind(t, kyc.CanSendOutgoing(ctx, e.store.Read(), e.platform, "Customer:nope"), fault.KindNotFound, "USER_NOT_FOUND")
	c := e.addCustomer(t, usBusiness("HRB-002"))
	e.createOwner(t, ownerInput(c.ID, "Doe", 100))
	e.upload(t, c.ID, "UTILITY_BILL", pdf)
	assert.NoError(t, kyc.CanSendOutgoing(ctx, e.store.Read(), e.platform, c.ID), "UNVERIFIED may send")
	e.provider.set(c.ID, "REJECTED")
	e.submit(t, c.ID)
	requireKind(t, kyc.CanSendOutgoing(ctx, e.store.Read(), e.platform, c.ID), fault.KindForbidden, kyc.CodeUserNotReady)
	other := e.addPlatform(t)
	requireKind(t, kyc.CanSendOutgoing(ctx, e.store.Read(), other, c.ID), fault.KindNotFound, "USER_NOT_FOUND")
}
