package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/corridorpay/corridor/ports"
)

// ---- quotes ----

// Quotes is ports.Tx.Quotes.
func (tx *storeTx) Quotes() ports.QuoteRepo { return storeQuotes{tx} }

func pickQuotes(s *storeState) map[string]ports.Quote { return s.quotes }

type storeQuotes struct{ tx *storeTx }

func (r storeQuotes) Create(_ context.Context, q ports.Quote) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickQuotes, q.ID); ok {
		return storeConflict("quotes_pkey")
	}
	if q, err = storeCopyQuote(q, storeJSONMap); err != nil {
		return fmt.Errorf("create quote %s: %w", q.ID, err)
	}
	r.tx.w.state.quotes[q.ID] = q
	return nil
}

func (r storeQuotes) get(platformID, id string) (ports.Quote, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Quote{}, err
	}
	defer done()
	q, ok := storeLookup(r.tx, pickQuotes, id)
	if !ok || q.PlatformID != platformID {
		return ports.Quote{}, fmt.Errorf("quote %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyQuote(q, storeCloneJSON)
}

func (r storeQuotes) Get(_ context.Context, platformID, id string) (ports.Quote, error) {
	return r.get(platformID, id)
}

// GetForUpdate is Get: a unit of work already excludes every other writer.
func (r storeQuotes) GetForUpdate(_ context.Context, platformID, id string) (ports.Quote, error) {
	return r.get(platformID, id)
}

// Update stores q's mutable fields; the id, platform, customer and creation
// time are fixed at Create (as in the PostgreSQL store).
func (r storeQuotes) Update(_ context.Context, q ports.Quote) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	old, ok := storeLookup(r.tx, pickQuotes, q.ID)
	if !ok || old.PlatformID != q.PlatformID {
		return fmt.Errorf("quote %s: %w", q.ID, ports.ErrNotFound)
	}
	q.CustomerID, q.CreatedAt = old.CustomerID, old.CreatedAt
	if q, err = storeCopyQuote(q, storeJSONMap); err != nil {
		return fmt.Errorf("update quote %s: %w", q.ID, err)
	}
	r.tx.w.state.quotes[q.ID] = q
	return nil
}

// storeJSONConv copies a free-form map: storeJSONMap on the way in (it
// normalises caller data), storeCloneJSON on the way out (stored data is
// already normalised, so it cannot fail).
type storeJSONConv func(map[string]any) (map[string]any, error)

// storeCopyQuote copies q deeply, its free-form maps through conv.
func storeCopyQuote(q ports.Quote, conv storeJSONConv) (ports.Quote, error) {
	var err error
	if q.SenderCustomerInfo, err = conv(q.SenderCustomerInfo); err != nil {
		return q, fmt.Errorf("senderCustomerInfo: %w", err)
	}
	if q.CounterpartyInformation, err = conv(q.CounterpartyInformation); err != nil {
		return q, fmt.Errorf("counterpartyInformation: %w", err)
	}
	if q.PaymentInstructions, err = storeCopyInstructions(q.PaymentInstructions, conv); err != nil {
		return q, err
	}
	q.ExecutedAt = ports.StoredPtr(q.ExecutedAt)
	q.ExpiresAt = ports.Stored(q.ExpiresAt)
	q.CreatedAt = ports.Stored(q.CreatedAt)
	q.UpdatedAt = ports.Stored(q.UpdatedAt)
	return q, nil
}

func storeCopyInstructions(l []ports.PaymentInstruction, conv storeJSONConv) ([]ports.PaymentInstruction, error) {
	if len(l) == 0 {
		return nil, nil
	}
	out := make([]ports.PaymentInstruction, len(l))
	for i, p := range l {
		info, err := conv(p.Info)
		if err != nil {
			return nil, fmt.Errorf("paymentInstructions[%d]: %w", i, err)
		}
		p.Info = info
		out[i] = p
	}
	return out, nil
}

// storeJSONMap returns a fresh copy of m as it reads back from a jsonb
// column (ports.Quote): a JSON round trip decoded with UseNumber, so
// numbers are json.Number (an int64 exact), nested values fresh []any and
// map[string]any, an empty map nil, and a value JSON cannot encode an
// error. The round trip is also the deep copy.
func storeJSONMap(m map[string]any) (map[string]any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	out := make(map[string]any, len(m))
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// storeCopyDetails copies a transaction's details deeply, its free-form maps
// through conv.
func storeCopyDetails(d ports.TransactionDetails, conv storeJSONConv) (ports.TransactionDetails, error) {
	var err error
	if d.RateDetails != nil {
		rd := *d.RateDetails
		d.RateDetails = &rd
	}
	if d.CounterpartyInfo, err = conv(d.CounterpartyInfo); err != nil {
		return d, fmt.Errorf("counterpartyInformation: %w", err)
	}
	if d.PaymentInstructions, err = storeCopyInstructions(d.PaymentInstructions, conv); err != nil {
		return d, err
	}
	if d.Refund != nil {
		rf := *d.Refund
		rf.InitiatedAt = ports.Stored(rf.InitiatedAt)
		rf.SettledAt = ports.StoredPtr(rf.SettledAt)
		d.Refund = &rf
	}
	d.ExpectedSettlementAt = ports.StoredPtr(d.ExpectedSettlementAt)
	if d.Approval != nil {
		a := *d.Approval
		a.Deadline = ports.Stored(a.Deadline)
		a.HoldIDs = slices.Clone(a.HoldIDs)
		a.RequestedFields = slices.Clone(a.RequestedFields)
		d.Approval = &a
	}
	return d, nil
}

// storeCloneJSON deep-copies a map storeJSONMap produced (its values are
// strings, bools, nil, json.Number, []any and map[string]any).
func storeCloneJSON(m map[string]any) (map[string]any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = storeCloneJSONValue(v)
	}
	return out, nil
}

func storeCloneJSONValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = storeCloneJSONValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = storeCloneJSONValue(e)
		}
		return out
	}
	return v
}
