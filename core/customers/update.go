package customers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/corridorpay/corridor/ports"
)

// Update applies a partial update (PATCH) to the platform's customer.
//
// in.CustomerType is required and must equal the stored type; region and
// platformCustomerId cannot change. Supplied fields replace stored ones
// (currencies replace the list; address and endUserTermsConsent replace
// the whole object; businessInfo fields are merged one by one).
//
// In the same transaction it opens an internal account for every newly
// enabled currency (accounts of dropped currencies stay), opens the
// embedded wallet and its EMAIL_OTP credential when the customer gains an
// e-mail, and, when the e-mail changes, renames every EMAIL_OTP credential
// tied to the customer's wallets so the e-mail and its credentials never
// disagree. A verification waiting on the customer's data is checked
// again (Watcher). The reference puts a signed-retry step (202 challenge, retried
// with a wallet signature) in front of an e-mail change of a customer with
// tied credentials; that step is the wallet-auth layer's, which calls this
// use case once the signature is verified.
//
// Unknown or another platform's customer: 404 USER_NOT_FOUND; a deleted
// one: 410 CUSTOMER_DELETED.
func (s *Service) Update(ctx context.Context, platformID, id string, in Input) (ports.Customer, error) {
	now := s.now()
	var out ports.Customer
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		c, err := load(ctx, tx, platformID, id)
		if err != nil {
			return err
		}
		oldEmail, oldCurrencies, oldUma := c.Email, slices.Clone(c.Currencies), c.UmaAddress

		chk := &checker{now: now}
		if in.PlatformCustomerID != nil {
			chk.Add("platformCustomerId", "cannot be changed after creation")
		}
		if in.Region != nil {
			chk.Add("region", "cannot be changed after creation")
		}
		switch {
		case in.CustomerType == "":
			chk.Add("customerType", "is required")
		case !slices.Contains(CustomerTypes, in.CustomerType):
			chk.Add("customerType", "must be one of "+strings.Join(CustomerTypes, ", "))
		case in.CustomerType != c.CustomerType:
			chk.Add("customerType", "must be the customer's type "+c.CustomerType+" (the type cannot change)")
		default:
			apply(chk, &c, in)
		}
		if err := chk.Err(); err != nil {
			return err
		}
		if c.UmaAddress != oldUma {
			if err := s.checkDirectory(ctx, c.UmaAddress); err != nil {
				return err
			}
		}

		c.UpdatedAt = now
		if err := tx.Customers().Update(ctx, c); err != nil {
			return fmt.Errorf("update customer %s: %w", id, storeConflict(err, c))
		}
		emailChanged := c.Email != oldEmail
		if emailChanged || !slices.Equal(c.Currencies, oldCurrencies) {
			owned, err := customerAccounts(ctx, tx, c)
			if err != nil {
				return err
			}
			if emailChanged && oldEmail != "" {
				if err := syncWalletEmail(ctx, tx, c, owned, now); err != nil {
					return err
				}
			}
			if err := s.provision(ctx, tx, c, owned, now); err != nil {
				return err
			}
		}
		if s.watcher != nil {
			if err := s.watcher.CustomerUpdated(ctx, tx, c, now); err != nil {
				return err
			}
		}
		out = c
		return nil
	})
	if err != nil {
		return ports.Customer{}, err
	}
	return out, nil
}
