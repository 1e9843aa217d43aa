package customers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/ports"
)

func TestCustomerListFilters(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	mk := func(in customers.Input) ports.Customer {
		c := e.create(t, in)
		e.clock.Advance(time.Minute)
		return c
	}
	us := individual()
	us.Region, us.PlatformCustomerID = ptr("US"), ptr("u-us")
	cUS := mk(us) // t0
	mx := individual()
	mx.Region = ptr("MX")
	cMX := mk(mx) // t0+1m
	biz := business()
	biz.Currencies = []string{"EUR"}
	cBiz := mk(biz) // t0+2m
	gone := individual()
	gone.UmaAddress = ptr("$gone@sandbox.local")
	cGone := mk(gone) // t0+3m
	_, err := e.svc.Delete(ctx, e.platform, cGone.ID)
	require.NoError(t, err)
	e.clock.Advance(time.Minute)
	_, err = e.svc.Update(ctx, e.platform, cUS.ID, customers.Input{CustomerType: customers.TypeIndividual, KYCStatus: ptr("PENDING")})
	require.NoError(t, err) // cUS updated at t0+5m

	// Another platform's customers never show.
	other := e.addPlatform(t, "")
	_, err = e.svc.Create(ctx, other, individual())
	require.NoError(t, err)

	at := func(m int) *time.Time { v := t0.Add(time.Duration(m) * time.Minute); return &v }
	tests := []struct {
		name   string
		filter ports.CustomerFilter
		want   []ports.Customer
	}{
		{"no filter hides deleted", ports.CustomerFilter{}, []ports.Customer{cUS, cMX, cBiz}},
		{"including deleted", ports.CustomerFilter{IncludeDeleted: true}, []ports.Customer{cUS, cMX, cBiz, cGone}},
		{"platformCustomerId", ports.CustomerFilter{PlatformCustomerID: "u-us"}, []ports.Customer{cUS}},
		{"customerType", ports.CustomerFilter{CustomerType: "BUSINESS"}, []ports.Customer{cBiz}},
		{"region", ports.CustomerFilter{Region: "MX"}, []ports.Customer{cMX}},
		{"currency", ports.CustomerFilter{Currency: "USDC"}, []ports.Customer{cUS, cMX}},
		{"umaAddress of a deleted one", ports.CustomerFilter{UmaAddress: "$gone@sandbox.local", IncludeDeleted: true}, []ports.Customer{cGone}},
		{"createdAfter inclusive", ports.CustomerFilter{CreatedAfter: at(1)}, []ports.Customer{cMX, cBiz}},
		{"createdBefore inclusive", ports.CustomerFilter{CreatedBefore: at(1)}, []ports.Customer{cUS, cMX}},
		{"created window", ports.CustomerFilter{CreatedAfter: at(1), CreatedBefore: at(1)}, []ports.Customer{cMX}},
		{"updatedAfter", ports.CustomerFilter{UpdatedAfter: at(5)}, []ports.Customer{cUS}},
		{"updatedBefore", ports.CustomerFilter{UpdatedBefore: at(2)}, []ports.Customer{cMX, cBiz}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.svc.List(ctx, e.platform, customers.ListQuery{Filter: tt.filter})
			require.NoError(t, err)
			var got, want []string
			for _, c := range res.Customers {
				got = append(got, c.ID)
			}
			for _, c := range tt.want {
				want = append(want, c.ID)
			}
			assert.Equal(t, want, got)
			assert.Equal(t, len(tt.want), res.Total)
			assert.False(t, res.HasMore)
			assert.Nil(t, res.Next)
		})
	}
}

func TestCustomerListPagination(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "", customers.Options{})
	var want []string
	for i := range 7 {
		c := e.create(t, individual())
		want = append(want, c.ID)
		if i%2 == 0 {
			e.clock.Advance(time.Second) // some share a creation time
		}
	}
	var got []string
	q := customers.ListQuery{Limit: 3}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5, "pagination must end")
		res, err := e.svc.List(ctx, e.platform, q)
		require.NoError(t, err)
		assert.Equal(t, 7, res.Total)
		for _, c := range res.Customers {
			got = append(got, c.ID)
		}
		if !res.HasMore {
			assert.Nil(t, res.Next)
			break
		}
		require.Len(t, res.Customers, 3)
		require.NotNil(t, res.Next)
		q.After = res.Next
	}
	assert.ElementsMatch(t, want, got, "every customer exactly once")
	assert.Len(t, got, 7)

	res, err := e.svc.List(ctx, e.platform, customers.ListQuery{})
	require.NoError(t, err)
	assert.Len(t, res.Customers, 7, "default limit 20")
}

func TestCustomerListValidation(t *testing.T) {
	e := newEnv(t, "", customers.Options{})
	tests := []struct {
		name   string
		q      customers.ListQuery
		fields []string
	}{
		{"limit too big", customers.ListQuery{Limit: 101}, []string{"limit"}},
		{"negative limit", customers.ListQuery{Limit: -1}, []string{"limit"}},
		{"customerType", customers.ListQuery{Filter: ports.CustomerFilter{CustomerType: "ROBOT"}}, []string{"customerType"}},
		{"region", customers.ListQuery{Filter: ports.CustomerFilter{Region: "USA"}}, []string{"region"}},
		{"currency", customers.ListQuery{Filter: ports.CustomerFilter{Currency: "DOGE"}}, []string{"currency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.svc.List(context.Background(), e.platform, tt.q)
			requireInvalid(t, err, tt.fields...)
		})
	}
}
