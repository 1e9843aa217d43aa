package customers

import (
	"context"
	"errors"
	"fmt"

	"github.com/corridorpay/corridor/ports"
)

// Get returns the platform's customer, deleted ones included (with
// IsDeleted set). Another platform's or an unknown customer is 404
// USER_NOT_FOUND.
func (s *Service) Get(ctx context.Context, platformID, id string) (ports.Customer, error) {
	c, err := s.store.Read().Customers().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Customer{}, errNotFound(id)
	}
	if err != nil {
		return ports.Customer{}, fmt.Errorf("get customer %s: %w", id, err)
	}
	return c, nil
}
