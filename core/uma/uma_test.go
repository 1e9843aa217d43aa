package uma_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	railsandbox "github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/adapters/system"
	umasandbox "github.com/corridorpay/corridor/adapters/uma/sandbox"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/core/uma"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/externalfixture"
)

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

const sender = "$success.usd@sandbox.local"

type env struct {
	svc       *uma.Service
	store     *memory.Store
	ledger    *memory.Ledger
	clock     *testkit.FakeClock
	customers *customers.Service
	external  *external.Service
	platform  string
}

func newEnv(t *testing.T, sandbox bool) *env {
	t.Helper()
	ctx := context.Background()
	clock := testkit.NewFakeClock(t0)
	l := memory.NewLedger(clock)
	st := memory.NewStore(l)
	ids := system.IDs{}
	reg, err := rails.FromSpecs(rails.DefaultSpecs(), railsandbox.Factory(clock))
	require.NoError(t, err)
	// The rail table's accounts exist from start-up; UMA's do not.
	require.NoError(t, l.CreateAccounts(ctx, ledger.SystemAccounts(money.Codes(), reg.SettlementRails())...))
	p, err := platforms.New(st, l, clock, ids).Create(ctx, "p", "p.example", []string{"USD"})
	require.NoError(t, err)
	return &env{
		svc:   uma.New(st, l, umasandbox.New(""), reg, clock, ids, sandbox),
		store: st, ledger: l, clock: clock, platform: p.ID,
		customers: customers.New(st, l, clock, ids, customers.Options{UmaDomain: "corridor.test"}),
		external:  external.New(st, clock, ids),
	}
}

// customer creates a customer of region (its local currency and USDC
// accounts) with a UMA address.
func (e *env) customer(t *testing.T, region, umaAddress string) ports.Customer {
	t.Helper()
	c, err := e.customers.Create(context.Background(), e.platform, customers.Input{CustomerType: "INDIVIDUAL", Region: &region, UmaAddress: &umaAddress})
	require.NoError(t, err)
	return c
}

func (e *env) account(t *testing.T, customerID, currency string) ports.InternalAccount {
	t.Helper()
	rows, _, err := e.store.Read().InternalAccounts().List(context.Background(),
		ports.InternalAccountFilter{PlatformID: e.platform, CustomerID: customerID, Currency: currency}, ports.Page{Limit: 10})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	return rows[0]
}

func (e *env) balance(t *testing.T, id string) int64 {
	t.Helper()
	a, err := e.ledger.Account(context.Background(), id)
	if errors.Is(err, ports.ErrNotFound) {
		return 0
	}
	require.NoError(t, err)
	return a.Net()
}

// verify runs the ledger verifier over everything posted.
func (e *env) verify(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	accts, pend, err := e.ledger.Snapshot(ctx)
	require.NoError(t, err)
	journal, err := e.ledger.Journal(ctx, 0, 1_000_000)
	require.NoError(t, err)
	assert.Empty(t, ledger.Verify(accts, pend, journal))
}

func TestReceiveIntoInternalAccount(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	c := e.customer(t, "US", "$ana@corridor.test")
	acct := e.account(t, c.ID, "USD")

	tx, err := e.svc.SimulateReceive(ctx, e.platform, uma.Receive{
		SenderUmaAddress: sender, ReceiverUmaAddress: "$ana@corridor.test", Currency: "USD", Amount: 12_345})
	require.NoError(t, err)
	assert.Regexp(t, `^Transaction:[0-9a-f-]{36}$`, tx.ID)
	assert.Equal(t, "INCOMING", tx.Type)
	assert.Equal(t, "COMPLETED", tx.Status)
	assert.Equal(t, c.ID, tx.CustomerID)
	assert.Equal(t, c.PlatformCustomerID, tx.PlatformCustomerID)
	assert.Equal(t, acct.ID, tx.DestinationAccountID)
	assert.Equal(t, "USD", tx.DestinationCurrency)
	assert.Equal(t, int64(12_345), tx.ReceivedAmount)
	assert.Equal(t, int64(12_345), tx.SentAmount)
	assert.Regexp(t, `^CRD-[0-9A-F]{12}$`, tx.Reference)
	assert.Equal(t, "UMA_ADDRESS", tx.Details.SourceType)
	assert.Equal(t, sender, tx.Details.SourceUmaAddress)
	assert.Equal(t, "$ana@corridor.test", tx.Details.DestinationUmaAddress)
	assert.Equal(t, map[string]any{"IDENTIFIER": sender}, tx.Details.CounterpartyInfo)
	assert.Equal(t, []string{sender}, tx.SenderIdentifiers)
	require.NotNil(t, tx.SettledAt)
	assert.Equal(t, t0, *tx.SettledAt)

	// Recorded with the credit: the transaction, the balance and the entry.
	stored, err := e.store.Read().Transactions().Get(ctx, e.platform, tx.ID)
	require.NoError(t, err)
	assert.Equal(t, tx.ID, stored.ID)
	assert.Equal(t, "UMA_ADDRESS", stored.Details.SourceType)
	assert.Equal(t, int64(12_345), e.balance(t, acct.ID))
	assert.Equal(t, int64(-12_345), e.balance(t, ledger.RailSettlementID("UMA", "USD")), "the UMA settlement account, created on first use")

	// By customer id, in the customer's other currency.
	tx2, err := e.svc.SimulateReceive(ctx, e.platform, uma.Receive{SenderUmaAddress: "$success.eur@sandbox.local", CustomerID: c.ID, Currency: "USDC", Amount: 5_000_000})
	require.NoError(t, err)
	assert.Equal(t, e.account(t, c.ID, "USDC").ID, tx2.DestinationAccountID)
	assert.Equal(t, int64(5_000_000), e.balance(t, tx2.DestinationAccountID))
	assert.Equal(t, c.UmaAddress, tx2.Details.DestinationUmaAddress)
	e.verify(t)
}

func TestReceiveIdempotent(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	c := e.customer(t, "US", "$bo@corridor.test")
	acct := e.account(t, c.ID, "USD")
	req := uma.Receive{SenderUmaAddress: sender, CustomerID: c.ID, Currency: "USD", Amount: 700, IdempotencyKey: "k-1"}

	// Concurrent retries of one keyed request credit once.
	var wg sync.WaitGroup
	ids := make([]string, 10)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tx, err := e.svc.SimulateReceive(ctx, e.platform, req)
			if assert.NoError(t, err) {
				ids[i] = tx.ID
			}
		}(i)
	}
	wg.Wait()
	for _, id := range ids {
		assert.Equal(t, ids[0], id)
	}
	assert.Equal(t, int64(700), e.balance(t, acct.ID))
	journal, err := e.ledger.Journal(ctx, 0, 1000)
	require.NoError(t, err)
	var credits int
	for _, je := range journal {
		if je.ID == uma.EntryID(ids[0]) {
			credits++
		}
	}
	assert.Equal(t, 1, credits)

	// The same key for another payment is refused; a new key credits.
	other := req
	other.Amount = 800
	_, err = e.svc.SimulateReceive(ctx, e.platform, other)
	testkit.RequireFault(t, err, fault.KindUnprocessable, "IDEMPOTENCY_KEY_REUSED")
	other.IdempotencyKey = "k-2"
	_, err = e.svc.SimulateReceive(ctx, e.platform, other)
	require.NoError(t, err)
	assert.Equal(t, int64(1500), e.balance(t, acct.ID))
	e.verify(t)
}

func TestReceiveToDefaultDepositAccount(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	c := e.customer(t, "US", "$cy@corridor.test")
	acct := e.account(t, c.ID, "USD")
	ext, err := e.external.Create(ctx, e.platform, external.Input{CustomerID: c.ID, Currency: "USD",
		DefaultUmaDepositAccount: true, Info: externalfixture.Info("USD_ACCOUNT", "")})
	require.NoError(t, err)

	tx, err := e.svc.SimulateReceive(ctx, e.platform, uma.Receive{SenderUmaAddress: sender, ReceiverUmaAddress: "$cy@corridor.test", Currency: "USD", Amount: 9_900})
	require.NoError(t, err)
	assert.Equal(t, ext.ID, tx.DestinationAccountID, "the default UMA deposit account")
	assert.Equal(t, "ACH", tx.PaymentRail, "paid out over the account's default rail")
	assert.Contains(t, tx.ReceiverIdentifiers, ext.ID)
	assert.Zero(t, e.balance(t, acct.ID), "the internal account is not credited")
	assert.Equal(t, int64(-9_900), e.balance(t, ledger.RailSettlementID("UMA", "USD")))
	assert.Equal(t, int64(9_900), e.balance(t, ledger.RailSettlementID("ACH", "USD")), "the money left over ACH")

	// The default account takes one currency.
	_, err = e.svc.SimulateReceive(ctx, e.platform, uma.Receive{SenderUmaAddress: sender, CustomerID: c.ID, Currency: "USDC", Amount: 1})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "receivingCurrencyCode")
	e.verify(t)
}

func TestReceiveErrors(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	c := e.customer(t, "US", "$di@corridor.test")
	ok := uma.Receive{SenderUmaAddress: sender, CustomerID: c.ID, Currency: "USD", Amount: 100}
	with := func(f func(r *uma.Receive)) uma.Receive {
		r := ok
		f(&r)
		return r
	}
	for name, tc := range map[string]struct {
		r      uma.Receive
		kind   fault.Kind
		code   string
		fields []string
	}{
		"no sender":          {with(func(r *uma.Receive) { r.SenderUmaAddress = "" }), fault.KindInvalid, "INVALID_INPUT", []string{"senderUmaAddress"}},
		"malformed sender":   {with(func(r *uma.Receive) { r.SenderUmaAddress = "bob@x" }), fault.KindInvalid, "INVALID_UMA_ADDRESS", []string{"senderUmaAddress"}},
		"unknown sender":     {with(func(r *uma.Receive) { r.SenderUmaAddress = "$nobody@sandbox.local" }), fault.KindNotFound, "UMA_NOT_FOUND", nil},
		"no receiver":        {with(func(r *uma.Receive) { r.CustomerID = "" }), fault.KindInvalid, "INVALID_INPUT", []string{"receiverUmaAddress", "customerId"}},
		"malformed receiver": {with(func(r *uma.Receive) { r.CustomerID, r.ReceiverUmaAddress = "", "$" }), fault.KindInvalid, "INVALID_UMA_ADDRESS", []string{"receiverUmaAddress"}},
		"unknown receiver":   {with(func(r *uma.Receive) { r.CustomerID, r.ReceiverUmaAddress = "", "$zz@corridor.test" }), fault.KindNotFound, "UMA_NOT_FOUND", nil},
		"unknown customer":   {with(func(r *uma.Receive) { r.CustomerID = "Customer:00000000-0000-0000-0000-000000000000" }), fault.KindNotFound, "USER_NOT_FOUND", nil},
		"disagreeing":        {with(func(r *uma.Receive) { r.ReceiverUmaAddress = "$other@corridor.test" }), fault.KindInvalid, "INVALID_INPUT", []string{"receiverUmaAddress"}},
		"unknown currency":   {with(func(r *uma.Receive) { r.Currency = "XYZ" }), fault.KindInvalid, "INVALID_INPUT", []string{"receivingCurrencyCode"}},
		"no account in it":   {with(func(r *uma.Receive) { r.Currency = "EUR" }), fault.KindInvalid, "INVALID_INPUT", []string{"receivingCurrencyCode"}},
		"zero amount":        {with(func(r *uma.Receive) { r.Amount = 0 }), fault.KindInvalid, "INVALID_INPUT", []string{"receivingCurrencyAmount"}},
		"huge amount":        {with(func(r *uma.Receive) { r.Amount = 9_000_000_000_000_001 }), fault.KindInvalid, "INVALID_INPUT", []string{"receivingCurrencyAmount"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.svc.SimulateReceive(ctx, e.platform, tc.r)
			testkit.RequireFault(t, err, tc.kind, tc.code, tc.fields...)
		})
	}
	// Another platform's customer is unknown.
	p2, err := platforms.New(e.store, e.ledger, e.clock, system.IDs{}).Create(ctx, "q", "q.example", nil)
	require.NoError(t, err)
	_, err = e.svc.SimulateReceive(ctx, p2.ID, ok)
	testkit.RequireFault(t, err, fault.KindNotFound, "USER_NOT_FOUND")

	// Nothing moved.
	assert.Zero(t, e.balance(t, e.account(t, c.ID, "USD").ID))

	// Outside the sandbox the simulation is forbidden.
	prod := newEnv(t, false)
	_, err = prod.svc.SimulateReceive(ctx, prod.platform, ok)
	testkit.RequireFault(t, err, fault.KindForbidden, "FORBIDDEN")
}

// The platform's requiredCounterpartyFields for the currency decide what
// it learns of the sender: the requested fields the sender shares (and its
// address), nothing more; a mandatory one the sender keeps back refuses the
// payment, crediting nothing.
func TestReceiveTakesTheSenderDataThePlatformRequires(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	c := e.customer(t, "US", "$ana@corridor.test")
	acct := e.account(t, c.ID, "USD")
	setting := platforms.DefaultCurrencySetting("USD")
	setting.RequiredCounterpartyFields = []ports.CounterpartyField{
		{Name: "FULL_NAME", Mandatory: true}, {Name: "NATIONALITY", Mandatory: false}, {Name: "IDENTIFIER", Mandatory: true}}
	_, err := platforms.New(e.store, e.ledger, e.clock, system.IDs{}).UpdateConfig(ctx, e.platform,
		platforms.ConfigUpdate{SupportedCurrencies: []ports.CurrencySetting{setting}})
	require.NoError(t, err)
	receive := func(info map[string]any) (ports.Transaction, error) {
		return e.svc.SimulateReceive(ctx, e.platform, uma.Receive{SenderUmaAddress: sender, CustomerID: c.ID,
			Currency: "USD", Amount: 1_000, SenderInfo: info})
	}

	tx, err := receive(map[string]any{"FULL_NAME": "Bea Sender", "BIRTH_DATE": "1990-01-01"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"IDENTIFIER": sender, "FULL_NAME": "Bea Sender"}, tx.Details.CounterpartyInfo,
		"the optional NATIONALITY was not shared; BIRTH_DATE was not asked for")
	tx, err = receive(map[string]any{"FULL_NAME": "Bea Sender", "NATIONALITY": "FR"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"IDENTIFIER": sender, "FULL_NAME": "Bea Sender", "NATIONALITY": "FR"}, tx.Details.CounterpartyInfo)
	assert.Equal(t, int64(2_000), e.balance(t, acct.ID))

	for _, info := range []map[string]any{nil, {"NATIONALITY": "FR"}, {"FULL_NAME": ""}} {
		_, err = receive(info)
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "senderCustomerInfo.FULL_NAME")
	}
	_, err = receive(map[string]any{"FULL_NAME": "Bea", "SHOE_SIZE": "42"})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "senderCustomerInfo.SHOE_SIZE")
	_, err = receive(map[string]any{"FULL_NAME": 42})
	testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "senderCustomerInfo.FULL_NAME")
	assert.Equal(t, int64(2_000), e.balance(t, acct.ID), "a refused payment credits nothing")
	e.verify(t)
}
