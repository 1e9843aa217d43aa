package storetest

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// ---- quotes and transaction details ----

// beyondFloat is an int64 a float64 cannot hold: a store that decodes JSON
// numbers into float64 gives back 9007199254740992.
const beyondFloat int64 = 1<<53 + 1

// freeForm is caller data for a free-form map (ports.Quote), and
// freeFormBack what every store gives back for it: JSON values, numbers as
// json.Number.
func freeForm() map[string]any {
	return map[string]any{
		"FULL_NAME": "Ada Lovelace",
		"amount":    beyondFloat,
		"max":       int64(math.MaxInt64),
		"ratio":     1.5,
		"verified":  true,
		"missing":   nil,
		"tags":      []string{"a", "b"},
		"address":   map[string]any{"city": "London", "lines": []any{"1 Main St", 2}},
	}
}

func freeFormBack() map[string]any {
	return map[string]any{
		"FULL_NAME": "Ada Lovelace",
		"amount":    json.Number(strconv.FormatInt(beyondFloat, 10)),
		"max":       json.Number(strconv.FormatInt(math.MaxInt64, 10)),
		"ratio":     json.Number("1.5"),
		"verified":  true,
		"missing":   nil,
		"tags":      []any{"a", "b"},
		"address":   map[string]any{"city": "London", "lines": []any{"1 Main St", json.Number("2")}},
	}
}

func instructions() []ports.PaymentInstruction {
	return []ports.PaymentInstruction{
		{InstructionsNotes: "Pay with reference REF-9", IsPlatformAccount: true, Info: map[string]any{
			"accountType": "US_ACCOUNT", "accountNumber": "123456789", "routingNumber": "021000021", "amount": beyondFloat,
		}},
		{Info: map[string]any{"accountType": "SPARK_WALLET", "payloadToSign": "0xabc"}},
		{InstructionsNotes: "no info"},
	}
}

func instructionsBack() []ports.PaymentInstruction {
	l := instructions()
	l[0].Info["amount"] = json.Number(strconv.FormatInt(beyondFloat, 10))
	return l
}

func rateDetails() ports.RateDetails {
	return ports.RateDetails{
		CounterpartyMultiplier: "1.0800", CounterpartyFixedFee: 15,
		ServiceMultiplier: "0.9150", ServiceFixedFee: 25,
		ServiceVariableFeeRate: "0.0030", ServiceVariableFeeAmount: math.MaxInt64,
	}
}

func fullQuote(platformID, customerID string, created time.Time) ports.Quote {
	executed := created.Add(30 * time.Second)
	return ports.Quote{
		ID: newID("Quote"), PlatformID: platformID, CustomerID: customerID, Status: "PROCESSING",
		TransactionID: newID("Transaction"),
		SourceType:    "REALTIME_FUNDING", SourceAccountID: newID("InternalAccount"), CryptoNetwork: "SPARK",
		DestinationType: "ACCOUNT", DestinationAccountID: newID("ExternalAccount"),
		DestinationUmaAddress: "$bob@other.example", PaymentRail: "SEPA_INSTANT", RailSelectionMode: "MANUAL",
		SendingCurrency: "USD", ReceivingCurrency: "EUR",
		LockedSide: "SENDING", LockedAmount: 9_000_000_000_000_000,
		TotalSendingAmount: 9_000_000_000_000_000, TotalReceivingAmount: 8_235_000_000_000_000, FeesIncluded: 25,
		ExchangeRate: "0.9150", RateDetails: rateDetails(),
		LookupID: newID("Lookup"), Description: "rent", PurposeOfPayment: "GOODS_OR_SERVICES",
		RemittanceInformation:   "invoice 7",
		SenderCustomerInfo:      freeForm(),
		CounterpartyInformation: map[string]any{"FULL_NAME": "Bob", "BIRTH_DATE": "1990-01-02"},
		PaymentInstructions:     instructions(),
		ExecutedAt:              &executed,
		ExpiresAt:               created.Add(5 * time.Minute),
		CreatedAt:               created,
		UpdatedAt:               executed,
	}
}

func bareQuote(platformID string, created time.Time) ports.Quote {
	return ports.Quote{
		ID: newID("Quote"), PlatformID: platformID, Status: "PENDING",
		SourceType: "ACCOUNT", DestinationType: "ACCOUNT",
		SendingCurrency: "USD", ReceivingCurrency: "USD", LockedSide: "RECEIVING",
		LockedAmount: 100, TotalSendingAmount: 100, TotalReceivingAmount: 100,
		ExpiresAt: created.Add(time.Minute), CreatedAt: created, UpdatedAt: created,
	}
}

// normQuote is how a store gives q back (fullQuote's free-form data
// replaced by what it reads back as; empty maps and lists as nil).
func normQuote(q ports.Quote) ports.Quote {
	if q.ExecutedAt != nil {
		e := norm(*q.ExecutedAt)
		q.ExecutedAt = &e
	}
	q.ExpiresAt, q.CreatedAt, q.UpdatedAt = norm(q.ExpiresAt), norm(q.CreatedAt), norm(q.UpdatedAt)
	if len(q.SenderCustomerInfo) == 0 {
		q.SenderCustomerInfo = nil
	}
	if len(q.CounterpartyInformation) == 0 {
		q.CounterpartyInformation = nil
	}
	if len(q.PaymentInstructions) == 0 {
		q.PaymentInstructions = nil
	}
	return q
}

func fullQuoteBack(q ports.Quote) ports.Quote {
	q.SenderCustomerInfo = freeFormBack()
	q.PaymentInstructions = instructionsBack()
	return normQuote(q)
}

func testQuotes(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	c := customer(p.ID, at(0))
	createCustomers(t, s, c)
	full := fullQuote(p.ID, c.ID, at(1))
	bare := bareQuote(p.ID, at(2))
	bare.SenderCustomerInfo = map[string]any{} // empty reads back as nil
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.Quotes().Create(ctx, full))
		got, err := tx.Quotes().Get(ctx, p.ID, full.ID)
		require.NoError(t, err)
		assert.Equal(t, fullQuoteBack(full), got, "a unit of work reads its own writes")
		return tx.Quotes().Create(ctx, bare)
	})
	// The caller's values were copied in.
	full.SenderCustomerInfo["address"].(map[string]any)["city"] = "changed"
	full.PaymentInstructions[0].Info["accountNumber"] = "changed"
	full.SenderCustomerInfo, full.PaymentInstructions = freeForm(), instructions()

	for _, want := range []ports.Quote{fullQuoteBack(full), normQuote(bare)} {
		got, err := s.Read().Quotes().Get(ctx, p.ID, want.ID)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		_, err = s.Read().Quotes().Get(ctx, q.ID, want.ID)
		require.ErrorIs(t, err, ports.ErrNotFound, "another platform's quote")
		inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
			got, err := tx.Quotes().GetForUpdate(ctx, p.ID, want.ID)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			_, err = tx.Quotes().GetForUpdate(ctx, q.ID, want.ID)
			require.ErrorIs(t, err, ports.ErrNotFound)
			return nil
		})
	}
	assert.Nil(t, normQuote(bare).ExecutedAt)
	_, err := s.Read().Quotes().Get(ctx, p.ID, newID("Quote"))
	require.ErrorIs(t, err, ports.ErrNotFound)

	// Values are copied out, nested ones too.
	got, err := s.Read().Quotes().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	got.SenderCustomerInfo["address"].(map[string]any)["lines"].([]any)[0] = "changed"
	got.CounterpartyInformation["FULL_NAME"] = "changed"
	got.PaymentInstructions[0].Info["accountType"] = "changed"
	*got.ExecutedAt = at(100)
	again, err := s.Read().Quotes().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	assert.Equal(t, fullQuoteBack(full), again)

	// Update changes the mutable fields; customer and creation time stay.
	upd := bare
	upd.Status = "COMPLETED"
	upd.TransactionID = newID("Transaction")
	executed := at(3)
	upd.ExecutedAt = &executed
	upd.UpdatedAt = at(3)
	upd.RateDetails = rateDetails()
	upd.CounterpartyInformation = map[string]any{"n": int64(-7)}
	upd.PaymentInstructions = []ports.PaymentInstruction{{InstructionsNotes: "later"}}
	moved := upd
	moved.CustomerID, moved.CreatedAt = c.ID, at(50)
	wantUpd := normQuote(upd)
	wantUpd.CounterpartyInformation = map[string]any{"n": json.Number("-7")}
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.Quotes().Update(ctx, moved))
		got, err := tx.Quotes().Get(ctx, p.ID, bare.ID)
		require.NoError(t, err)
		assert.Equal(t, wantUpd, got, "a unit of work reads its own update")
		return nil
	})
	got, err = s.Read().Quotes().Get(ctx, p.ID, bare.ID)
	require.NoError(t, err)
	assert.Equal(t, wantUpd, got)

	// ExecutedAt goes back to nil.
	unexec := upd
	unexec.ExecutedAt = nil
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Quotes().Update(ctx, unexec) })
	got, err = s.Read().Quotes().Get(ctx, p.ID, bare.ID)
	require.NoError(t, err)
	assert.Nil(t, got.ExecutedAt)

	checkQuoteWritesRefused(t, s, p.ID, q.ID, upd)
}

// checkQuoteWritesRefused requires the quotes of s to refuse the writes
// they must: an update of another platform's quote or of an unknown one, a
// duplicate id, even from another platform (the unit of work stays
// usable), writes through Read() and data JSON cannot encode; and to keep
// nothing of a unit of work that rolls back. platformID holds stored;
// otherID is another platform.
func checkQuoteWritesRefused(t *testing.T, s ports.Store, platformID, otherID string, stored ports.Quote) {
	ctx := context.Background()
	stolen := stored
	stolen.PlatformID = otherID
	err := s.InTx(ctx, func(tx ports.Tx) error { return tx.Quotes().Update(ctx, stolen) })
	require.ErrorIs(t, err, ports.ErrNotFound)
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Quotes().Update(ctx, bareQuote(platformID, at(3))) })
	require.ErrorIs(t, err, ports.ErrNotFound)

	// A duplicate id (even on another platform) is refused, and the unit
	// of work stays usable.
	dup := bareQuote(otherID, at(4))
	dup.ID = stored.ID
	other := bareQuote(platformID, at(4))
	err = s.InTx(ctx, func(tx ports.Tx) error {
		requireConflict(t, tx.Quotes().Create(ctx, dup), "quotes_pkey")
		return tx.Quotes().Create(ctx, other)
	})
	require.NoError(t, err)
	_, err = s.Read().Quotes().Get(ctx, platformID, other.ID)
	require.NoError(t, err)

	assert.Error(t, s.Read().Quotes().Create(ctx, bareQuote(platformID, at(5))))
	assert.Error(t, s.Read().Quotes().Update(ctx, stored))

	// Data JSON cannot encode is refused.
	bad := bareQuote(platformID, at(6))
	bad.CounterpartyInformation = map[string]any{"nan": math.NaN()}
	assert.Error(t, s.InTx(ctx, func(tx ports.Tx) error { return tx.Quotes().Create(ctx, bad) }))
	_, err = s.Read().Quotes().Get(ctx, platformID, bad.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)

	gone := bareQuote(platformID, at(7))
	err = s.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Quotes().Create(ctx, gone); err != nil {
			return err
		}
		return errBoom
	})
	require.ErrorIs(t, err, errBoom)
	_, err = s.Read().Quotes().Get(ctx, platformID, gone.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
}

// testQuoteGetForUpdateSerialises has concurrent units of work read a quote
// with GetForUpdate and write it back changed: the row lock must make every
// change count (how concurrent executions of one quote are serialised).
func testQuoteGetForUpdateSerialises(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	qt := bareQuote(p.ID, at(1))
	qt.LockedAmount = 0
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Quotes().Create(ctx, qt) })
	const workers, rounds = 6, 5
	concurrentUnits(t, s, workers, rounds, func(ctx context.Context, tx ports.Tx, _, _ int) error {
		got, err := tx.Quotes().GetForUpdate(ctx, p.ID, qt.ID)
		if err != nil {
			return err
		}
		got.LockedAmount++
		return tx.Quotes().Update(ctx, got)
	})
	got, err := s.Read().Quotes().Get(ctx, p.ID, qt.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(workers*rounds), got.LockedAmount)
}

// fullDetails sets every TransactionDetails field; refund's SettledAt is
// set when settled.
func fullDetails(created time.Time, settled bool) ports.TransactionDetails {
	rd := rateDetails()
	expected := created.Add(6 * time.Minute)
	d := ports.TransactionDetails{
		SourceType: "REALTIME_FUNDING", DestinationType: "UMA_ADDRESS",
		SourceUmaAddress: "$ada@acme.example", DestinationUmaAddress: "$bob@other.example",
		RateDetails:          &rd,
		CounterpartyInfo:     freeForm(),
		PaymentInstructions:  instructions(),
		Refund:               &ports.Refund{Reference: "RF-1", InitiatedAt: created.Add(time.Minute), Status: "PENDING", Reason: "TRANSACTION_FAILED"},
		TransactionHash:      "0xdeadbeef",
		ExpectedSettlementAt: &expected,
	}
	if settled {
		s := created.Add(2 * time.Minute)
		d.Refund.SettledAt, d.Refund.Status = &s, "COMPLETED"
	}
	return d
}

// normDetails is how a store gives d (made by fullDetails) back.
func normDetails(d ports.TransactionDetails) ports.TransactionDetails {
	d.CounterpartyInfo = freeFormBack()
	d.PaymentInstructions = instructionsBack()
	rf := *d.Refund
	rf.InitiatedAt = norm(rf.InitiatedAt)
	if rf.SettledAt != nil {
		s := norm(*rf.SettledAt)
		rf.SettledAt = &s
	}
	d.Refund = &rf
	e := norm(*d.ExpectedSettlementAt)
	d.ExpectedSettlementAt = &e
	return d
}

func testTransactionDetails(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	pending := transaction(p.ID, "", "OUTGOING", at(1))
	pending.Details = fullDetails(at(1), false)
	settled := transaction(p.ID, "", "OUTGOING", at(2))
	settled.Details = fullDetails(at(2), true)
	plain := transaction(p.ID, "", "INCOMING", at(3))
	createTxns(t, s, pending, settled, plain)
	// The caller's values were copied in.
	pending.Details.CounterpartyInfo["FULL_NAME"] = "changed"
	pending.Details.RateDetails.ServiceFixedFee = -1
	pending.Details.Refund.Status = "changed"
	pending.Details = fullDetails(at(1), false)

	for _, tc := range []struct {
		tr   ports.Transaction
		want ports.TransactionDetails
	}{
		{pending, normDetails(pending.Details)},
		{settled, normDetails(settled.Details)},
		{plain, ports.TransactionDetails{}},
	} {
		got, err := s.Read().Transactions().Get(ctx, p.ID, tc.tr.ID)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got.Details)
		rows, _, err := s.Read().Transactions().List(ctx, ports.TransactionFilter{PlatformID: p.ID, Reference: ""}, ports.Page{})
		require.NoError(t, err)
		for _, row := range rows {
			if row.ID == tc.tr.ID {
				assert.Equal(t, tc.want, row.Details, "List gives the details too")
			}
		}
	}
	got, err := s.Read().Transactions().Get(ctx, p.ID, pending.ID)
	require.NoError(t, err)
	assert.Nil(t, got.Details.Refund.SettledAt)

	// Values are copied out.
	got.Details.CounterpartyInfo["address"].(map[string]any)["city"] = "changed"
	got.Details.PaymentInstructions[0].Info["accountNumber"] = "changed"
	got.Details.RateDetails.CounterpartyFixedFee = -1
	got.Details.Refund.Reason = "changed"
	*got.Details.ExpectedSettlementAt = at(100)
	again, err := s.Read().Transactions().Get(ctx, p.ID, pending.ID)
	require.NoError(t, err)
	assert.Equal(t, normDetails(pending.Details), again.Details)

	// Update replaces the details: the refund settles, the rest clears.
	settledAt := at(4)
	upd := again
	upd.Details = ports.TransactionDetails{Refund: again.Details.Refund}
	upd.Details.Refund.SettledAt = &settledAt
	upd.Details.Refund.Status = "COMPLETED"
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Transactions().Update(ctx, upd) })
	got, err = s.Read().Transactions().Get(ctx, p.ID, pending.ID)
	require.NoError(t, err)
	want := ports.TransactionDetails{Refund: &ports.Refund{
		Reference: "RF-1", InitiatedAt: norm(at(1).Add(time.Minute)), SettledAt: new(norm(settledAt)),
		Status: "COMPLETED", Reason: "TRANSACTION_FAILED",
	}}
	assert.Equal(t, want, got.Details)

	// Details JSON cannot encode are refused.
	bad := transaction(p.ID, "", "OUTGOING", at(5))
	bad.Details.CounterpartyInfo = map[string]any{"inf": math.Inf(1)}
	assert.Error(t, s.InTx(ctx, func(tx ports.Tx) error { return tx.Transactions().Create(ctx, bad) }))
}
