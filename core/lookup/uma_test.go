package lookup_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

func TestLookupUma(t *testing.T) {
	e := newEnv(t, "USD")
	ctx := context.Background()
	cust := e.addCustomer(t, "INDIVIDUAL", "$ana@example.test", "EUR")

	for addr, want := range map[string]ports.LookupCurrency{
		"$success.usd@sandbox.local":         {Currency: "USD", EstimatedRate: "1.24375", Min: 1_00, Max: 250_000_00}, // 1/0.8 × 0.995
		"$success.eur@sandbox.local":         {Currency: "EUR", EstimatedRate: "1", Min: 1_00, Max: 250_000_00},       // same currency
		"$success.mxn@sandbox.local":         {Currency: "MXN", EstimatedRate: "24.875", Min: 10_00, Max: 5_000_000_00},
		"$pending.long.usd@sandbox.local":    {Currency: "USD", EstimatedRate: "1.24375", Min: 1_00, Max: 250_000_00},
		"$fail.compliance.usd@sandbox.local": {Currency: "USD", EstimatedRate: "1.24375", Min: 1_00, Max: 250_000_00},
	} {
		l, err := e.svc.LookupUma(ctx, e.platform, lookup.UmaQuery{ReceiverUmaAddress: addr, CustomerID: cust})
		require.NoError(t, err, addr)
		assert.Equal(t, addr, l.ReceiverUmaAddress)
		assert.Empty(t, l.AccountID)
		assert.Equal(t, cust, l.CustomerID)
		assert.Equal(t, "EUR", l.SendingCurrency)
		assert.Equal(t, []ports.LookupCurrency{want}, l.Currencies, addr)
		assert.Equal(t, lookup.PayerData(want.Currency, false), l.RequiredPayerData, addr)
		stored, err := e.svc.Get(ctx, e.platform, l.ID)
		require.NoError(t, err)
		assert.Equal(t, l, stored, "the lookup is stored for the quote")
	}

	// By the sender's UMA address; a business payer's fields.
	biz := e.addCustomer(t, "BUSINESS", "$acme@example.test")
	l, err := e.svc.LookupUma(ctx, e.platform, lookup.UmaQuery{ReceiverUmaAddress: "$success.mxn@sandbox.local", SenderUmaAddress: "$acme@example.test"})
	require.NoError(t, err)
	assert.Equal(t, biz, l.CustomerID)
	assert.Equal(t, "USD", l.SendingCurrency, "the platform's currency")
	assert.Equal(t, "$acme@example.test", l.SenderUmaAddress)
	assert.Equal(t, lookup.PayerData("MXN", true), l.RequiredPayerData)
}

func TestLookupUmaErrors(t *testing.T) {
	e := newEnv(t, "USD")
	ctx := context.Background()
	cust := e.addCustomer(t, "INDIVIDUAL", "$ana@example.test", "USD")

	for _, bad := range []string{"", "success.usd@sandbox.local", "$Success@sandbox.local", "$a b@sandbox.local", "$x@", "$x@-", "$" + string(make([]byte, 300)) + "@x.y",
		"$x@" + strings.Repeat("a", 64) + ".example"} { // a DNS label is at most 63 characters {
		_, err := e.svc.LookupUma(ctx, e.platform, lookup.UmaQuery{ReceiverUmaAddress: bad, CustomerID: cust})
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_UMA_ADDRESS", "receiverUmaAddress")
	}
	_, err := e.svc.LookupUma(ctx, e.platform, lookup.UmaQuery{ReceiverUmaAddress: "$nobody@sandbox.local", CustomerID: cust})
	testkit.RequireFault(t, err, fault.KindNotFound, "UMA_NOT_FOUND")
	_, err = e.svc.LookupUma(ctx, e.platform, lookup.UmaQuery{ReceiverUmaAddress: "$success.usd@elsewhere.example", CustomerID: cust})
	testkit.RequireFault(t, err, fault.KindNotFound, "UMA_NOT_FOUND")
	_, err = e.svc.LookupUma(ctx, e.platform, lookup.UmaQuery{ReceiverUmaAddress: "$success.usd@sandbox.local"})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "senderUmaAddress", "customerId")
	_, err = e.svc.LookupUma(ctx, e.platform, lookup.UmaQuery{ReceiverUmaAddress: "$success.usd@sandbox.local", SenderUmaAddress: "nope"})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "senderUmaAddress")
	_, err = e.svc.LookupUma(ctx, e.platform, lookup.UmaQuery{ReceiverUmaAddress: "$success.usd@sandbox.local", CustomerID: "Customer:00000000-0000-0000-0000-000000000000"})
	testkit.RequireFault(t, err, fault.KindNotFound, "USER_NOT_FOUND")

	// A receiver taking only currencies corridor cannot pay.
	odd := lookup.New(e.store, noRates{}, e.clock, system.IDs{}, lookup.WithUmaDirectory(fixedDir{r: ports.UmaReceiver{Address: "$odd@x.test", Currencies: []string{"XYZ"}}}))
	_, err = odd.LookupUma(ctx, e.platform, lookup.UmaQuery{ReceiverUmaAddress: "$odd@x.test", CustomerID: cust})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_RECEIVER")
	// A directory that cannot answer is an internal error, not a 404.
	down := lookup.New(e.store, noRates{}, e.clock, system.IDs{}, lookup.WithUmaDirectory(fixedDir{err: errors.New("timeout")}))
	_, err = down.LookupUma(ctx, e.platform, lookup.UmaQuery{ReceiverUmaAddress: "$odd@x.test", CustomerID: cust})
	require.Error(t, err)
	_, isFault := fault.As(err)
	assert.False(t, isFault)
	// Without a directory (production without a UMA client) nobody is found.
	none := lookup.New(e.store, noRates{}, e.clock, system.IDs{})
	_, err = none.LookupUma(ctx, e.platform, lookup.UmaQuery{ReceiverUmaAddress: "$success.usd@sandbox.local", CustomerID: cust})
	testkit.RequireFault(t, err, fault.KindNotFound, "UMA_NOT_FOUND")
}

type fixedDir struct {
	r   ports.UmaReceiver
	err error
}

func (d fixedDir) Receiver(context.Context, string) (ports.UmaReceiver, error) { return d.r, d.err }
