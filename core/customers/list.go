package customers

import (
	"context"
	"fmt"
	"strings"

	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// Page size bounds of List.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// ListQuery is the reference's listCustomers query. Filter.PlatformID is
// ignored (List sets it); Limit 0 means DefaultLimit; After continues from a
// previous page's Next.
type ListQuery struct {
	Filter ports.CustomerFilter
	Limit  int
	After  *ports.Position
}

// ListResult is one page of customers, oldest first.
type ListResult struct {
	Customers []ports.Customer
	HasMore   bool
	// Next is the position to continue from (set when HasMore).
	Next *ports.Position
	// Total counts every customer matching the filter.
	Total int
}

// List returns one page of the platform's customers matching q; deleted
// customers only when q.Filter.IncludeDeleted. Time bounds are inclusive.
func (s *Service) List(ctx context.Context, platformID string, q ListQuery) (ListResult, error) {
	chk := &checker{now: s.now()}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 1 || q.Limit > MaxLimit:
		chk.Add("limit", fmt.Sprintf("must be between 1 and %d", MaxLimit))
	}
	f := q.Filter
	f.PlatformID = platformID
	chk.enum("customerType", f.CustomerType, CustomerTypes)
	chk.country("region", f.Region)
	if _, ok := money.Lookup(f.Currency); f.Currency != "" && !ok {
		chk.Add("currency", "unknown currency code; supported: "+strings.Join(money.Codes(), ", "))
	}
	if err := chk.Err(); err != nil {
		return ListResult{}, err
	}

	rows, total, err := s.store.Read().Customers().List(ctx, f, ports.Page{Limit: q.Limit, After: q.After})
	if err != nil {
		return ListResult{}, fmt.Errorf("list customers: %w", err)
	}
	res := ListResult{Total: total}
	res.Customers, res.Next = ports.TrimPage(rows, q.Limit, ports.Customer.Position)
	res.HasMore = res.Next != nil
	return res, nil
}
