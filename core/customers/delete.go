package customers

import (
	"context"
	"fmt"
	"strings"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// CodeHasFunds refuses deleting a customer whose accounts hold money or
// have a payment in flight.
const CodeHasFunds = "CUSTOMER_HAS_FUNDS"

// Ledger reads ledger accounts' counters (ports.LedgerStore).
type Ledger interface {
	Accounts(ctx context.Context, ids ...string) ([]ledger.Account, error)
}

// Delete marks the customer deleted and closes its internal accounts (a
// closed account refuses credits). A customer whose accounts hold money
// (posted or pending) or who has a payment in flight is not deleted: 409
// CUSTOMER_HAS_FUNDS naming the balances and the payments, since money
// could then come in and never leave.
func (s *Service) Delete(ctx context.Context, platformID, id string) (ports.Customer, error) {
	now := s.now()
	var out ports.Customer
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		c, err := load(ctx, tx, platformID, id)
		if err != nil {
			return err
		}
		accts, err := customerAccounts(ctx, tx, c)
		if err != nil {
			return err
		}
		if err := s.refuseWhileFunded(ctx, tx, c, accts); err != nil {
			return err
		}
		c.IsDeleted = true
		c.UpdatedAt = now
		if err := tx.Customers().Update(ctx, c); err != nil {
			return fmt.Errorf("delete customer %s: %w", id, err)
		}
		for _, a := range accts {
			if a.Status == accounts.StatusClosed {
				continue
			}
			if err := accounts.Move(&a, accounts.StatusClosed, now); err != nil {
				return fmt.Errorf("delete customer %s: close %s: %w", id, a.ID, err)
			}
			if err := tx.InternalAccounts().Update(ctx, a); err != nil {
				return fmt.Errorf("delete customer %s: close %s: %w", id, a.ID, err)
			}
			if err := s.closedEvent(ctx, tx, a); err != nil {
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

// fundedAccount is one account that holds money, as the refusal names it.
type fundedAccount struct {
	AccountID string `json:"accountId"`
	Currency  string `json:"currency"`
	// Balance is the posted balance; Pending the amounts on hold (in and
	// out), in minor units.
	Balance int64 `json:"balance"`
	Pending int64 `json:"pending"`
}

// maxInFlightNamed bounds the payments a refusal names.
const maxInFlightNamed = 10

func (s *Service) refuseWhileFunded(ctx context.Context, tx customerTx, c ports.Customer, accts []ports.InternalAccount) error {
	var funded []fundedAccount
	if len(accts) > 0 {
		ids := make([]string, len(accts))
		for i, a := range accts {
			ids[i] = a.ID
		}
		books, err := s.ledger.Accounts(ctx, ids...)
		if err != nil {
			return fmt.Errorf("delete customer %s: read balances: %w", c.ID, err)
		}
		for _, b := range books {
			posted, pending := b.CreditsPosted-b.DebitsPosted, b.CreditsPending+b.DebitsPending
			if posted != 0 || pending != 0 {
				funded = append(funded, fundedAccount{AccountID: b.ID, Currency: b.Currency, Balance: posted, Pending: pending})
			}
		}
	}
	inFlight, err := paymentsInFlight(ctx, tx, c)
	if err != nil {
		return err
	}
	if len(funded) == 0 && len(inFlight) == 0 {
		return nil
	}
	var why []string
	if len(funded) > 0 {
		why = append(why, fmt.Sprintf("%d account(s) hold money", len(funded)))
	}
	if len(inFlight) > 0 {
		why = append(why, fmt.Sprintf("%d payment(s) are in flight", len(inFlight)))
	}
	return &fault.Error{Kind: fault.KindConflict, Code: CodeHasFunds,
		Message: "customer " + c.ID + " cannot be deleted: " + strings.Join(why, " and ") +
			"; pay the balances out and let the payments finish first",
		Details: map[string]any{"balances": funded, "paymentsInFlight": inFlight}}
}

// paymentsInFlight returns the ids of up to maxInFlightNamed of c's
// transactions that are not final yet.
func paymentsInFlight(ctx context.Context, tx customerTx, c ports.Customer) ([]string, error) {
	ids := []string{}
	for _, status := range transactions.Statuses {
		if transactions.Terminal(status) || len(ids) >= maxInFlightNamed {
			continue
		}
		rows, _, err := tx.Transactions().List(ctx, ports.TransactionFilter{PlatformID: c.PlatformID, CustomerID: c.ID, Status: status},
			ports.Page{Limit: maxInFlightNamed})
		if err != nil {
			return nil, fmt.Errorf("delete customer %s: list payments in flight: %w", c.ID, err)
		}
		for _, t := range rows {
			if len(ids) < maxInFlightNamed {
				ids = append(ids, t.ID)
			}
		}
	}
	return ids, nil
}

// EventAccountStatus is the webhook type of an internal account's status
// change.
const EventAccountStatus = "INTERNAL_ACCOUNT.STATUS_UPDATED"

// closedEvent records the INTERNAL_ACCOUNT.STATUS_UPDATED of account a,
// just closed, with a as it now is: its balances are zero (a customer
// whose accounts hold anything is not deleted).
func (s *Service) closedEvent(ctx context.Context, tx ports.Tx, a ports.InternalAccount) error {
	e, err := ports.NewEvent(s.ids.New("Webhook"), a.PlatformID, EventAccountStatus, a.ID, accounts.Account{InternalAccount: a}, a.UpdatedAt)
	if err != nil {
		return err
	}
	if err := tx.Events().Append(ctx, e); err != nil {
		return fmt.Errorf("record %s of %s: %w", EventAccountStatus, a.ID, err)
	}
	return nil
}
