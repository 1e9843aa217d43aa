package customers

import (
	"context"
	"fmt"

	"github.com/corridorpay/corridor/ports"
)

// Delete marks the platform's customer deleted and returns it. Its
// platformCustomerId becomes free for a new customer; its UMA address stays
// reserved. Deleting it again is 410 CUSTOMER_DELETED.
func (s *Service) Delete(ctx context.Context, platformID, id string) (ports.Customer, error) {
	now := s.now()
	var out ports.Customer
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		c, err := load(ctx, tx, platformID, id)
		if err != nil {
			return err
		}
		c.IsDeleted = true
		c.UpdatedAt = now
		if err := tx.Customers().Update(ctx, c); err != nil {
			return fmt.Errorf("delete customer %s: %w", id, err)
		}
		out = c
		return nil
	})
	if err != nil {
		return ports.Customer{}, err
	}
	return out, nil
}
