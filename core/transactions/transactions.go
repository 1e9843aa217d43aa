// Package transactions reads the platform's payments: one transaction by id,
// and the filtered, keyset-paginated list of GET /transactions.
package transactions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// Transaction types (reference TransactionType).
const (
	TypeIncoming = "INCOMING"
	TypeOutgoing = "OUTGOING"
)

// Types lists every transaction type.
var Types = []string{TypeIncoming, TypeOutgoing}

// Page size bounds of the list.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Query narrows the list. Zero values do not filter.
type Query struct {
	// CustomerID selects one customer's transactions; the platform's own id
	// selects the platform-level ones.
	CustomerID                string
	PlatformCustomerID        string
	AccountIdentifier         string
	SenderAccountIdentifier   string
	ReceiverAccountIdentifier string
	Status                    string
	Type                      string
	Reference                 string
	// StartDate and EndDate bound createdAt, both inclusive.
	StartDate *time.Time
	EndDate   *time.Time
	// Asc sorts oldest first; the default is newest first.
	Asc bool
}

// Page is one page of transactions.
type Page struct {
	Transactions []ports.Transaction
	HasMore      bool
	// Next is the position to continue after (set when HasMore).
	Next *ports.Position
	// Total counts every transaction matching the query.
	Total int
}

// Service reads transactions.
type Service struct {
	store ports.Store
}

// New returns a Service.
func New(store ports.Store) *Service { return &Service{store: store} }

// ErrNotFound is the 404 of a transaction that is not the platform's.
var ErrNotFound = fault.NotFound("TRANSACTION_NOT_FOUND", "transaction not found")

// Get returns one of the platform's transactions; another platform's is
// not found.
func (s *Service) Get(ctx context.Context, platformID, id string) (ports.Transaction, error) {
	t, err := s.store.Read().Transactions().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Transaction{}, ErrNotFound
	}
	if err != nil {
		return ports.Transaction{}, fmt.Errorf("get transaction %s: %w", id, err)
	}
	return t, nil
}

// List returns one page of the platform's transactions matching q, in
// createdAt order (newest first unless q.Asc), continuing after page.After.
// Pages are keyset-based: transactions created during a walk never make a
// row appear twice or be skipped.
func (s *Service) List(ctx context.Context, platformID string, q Query, page ports.Page) (Page, error) {
	var errs fault.Collector
	if q.Status != "" && !slices.Contains(Statuses, q.Status) {
		errs.Add("status", fmt.Sprintf("must be one of %v", Statuses))
	}
	if q.Type != "" && !slices.Contains(Types, q.Type) {
		errs.Add("type", fmt.Sprintf("must be one of %v", Types))
	}
	if q.StartDate != nil && q.EndDate != nil && q.StartDate.After(*q.EndDate) {
		errs.Add("startDate", "must not be after endDate")
	}
	switch {
	case page.Limit == 0:
		page.Limit = DefaultLimit
	case page.Limit < 1 || page.Limit > MaxLimit:
		errs.Add("limit", fmt.Sprintf("must be between 1 and %d", MaxLimit))
	}
	if err := errs.Err(); err != nil {
		return Page{}, err
	}
	f := ports.TransactionFilter{
		PlatformID:                platformID,
		CustomerID:                q.CustomerID,
		PlatformCustomerID:        q.PlatformCustomerID,
		AccountIdentifier:         q.AccountIdentifier,
		SenderAccountIdentifier:   q.SenderAccountIdentifier,
		ReceiverAccountIdentifier: q.ReceiverAccountIdentifier,
		Status:                    q.Status,
		Type:                      q.Type,
		Reference:                 q.Reference,
		StartDate:                 utc(q.StartDate),
		EndDate:                   utc(q.EndDate),
		Desc:                      !q.Asc,
	}
	if q.CustomerID == platformID {
		f.CustomerID, f.PlatformLevel = "", true
	}
	rows, total, err := s.store.Read().Transactions().List(ctx, f, page)
	if err != nil {
		return Page{}, fmt.Errorf("list transactions: %w", err)
	}
	out := Page{Total: total}
	out.Transactions, out.Next = ports.TrimPage(rows, page.Limit, ports.Transaction.Position)
	out.HasMore = out.Next != nil
	return out, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
