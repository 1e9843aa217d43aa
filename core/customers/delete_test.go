package customers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/testkit"
)

func TestCustomerDeleteAndGet(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	c := e.create(t, individual())

	e.clock.Advance(time.Minute)
	got, err := e.svc.Delete(ctx, e.platform, c.ID)
	require.NoError(t, err)
	assert.True(t, got.IsDeleted)
	assert.Equal(t, t0.Add(time.Minute), got.UpdatedAt)

	stored, err := e.svc.Get(ctx, e.platform, c.ID)
	require.NoError(t, err, "a deleted customer can still be read")
	assert.True(t, stored.IsDeleted)

	_, err = e.svc.Delete(ctx, e.platform, c.ID)
	testkit.RequireFault(t, err, fault.KindGone, "CUSTOMER_DELETED")
	assert.Len(t, e.accounts(t, c.ID), 2, "accounts are kept")
}

func TestCustomerMissingAndForeignCustomers(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	c := e.create(t, individual())
	other := e.addPlatform(t, "")
	for _, tt := range []struct{ platform, id string }{
		{e.platform, "Customer:00000000-0000-0000-0000-000000000000"},
		{e.platform, "not-an-id"},
		{other, c.ID},
	} {
		_, err := e.svc.Get(ctx, tt.platform, tt.id)
		testkit.RequireFault(t, err, fault.KindNotFound, "USER_NOT_FOUND")
		_, err = e.svc.Delete(ctx, tt.platform, tt.id)
		testkit.RequireFault(t, err, fault.KindNotFound, "USER_NOT_FOUND")
	}
	stored, err := e.svc.Get(ctx, e.platform, c.ID)
	require.NoError(t, err)
	assert.False(t, stored.IsDeleted, "another platform cannot delete it")
}
