package customers

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// walletCurrency is the currency of a customer's embedded wallet: its first
// fiat currency, else its first currency.
func walletCurrency(currencies []string) string {
	for _, code := range currencies {
		if cur, ok := money.Lookup(code); ok && !cur.Crypto {
			return code
		}
	}
	if len(currencies) > 0 {
		return currencies[0]
	}
	return ""
}

// customerAccounts reads every internal account of a customer.
func customerAccounts(ctx context.Context, tx customerTx, c ports.Customer) ([]ports.InternalAccount, error) {
	var out []ports.InternalAccount
	err := ports.Scan(100, func(page ports.Page) ([]ports.InternalAccount, error) {
		rows, _, err := tx.InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: c.PlatformID, CustomerID: c.ID}, page)
		return rows, err
	}, ports.InternalAccount.Position, func(a ports.InternalAccount) bool { out = append(out, a); return true })
	if err != nil {
		return nil, fmt.Errorf("list internal accounts of %s: %w", c.ID, err)
	}
	return out, nil
}

// provision opens what the customer c is owed and lacks among existing: an
// ACTIVE internal account per enabled currency and, when c has an e-mail,
// an embedded wallet with an EMAIL_OTP credential named by the e-mail; plus
// the ledger account of every account it opens. Accounts are never closed
// here: a currency dropped from the list keeps its account.
func (s *Service) provision(ctx context.Context, tx customerTx, c ports.Customer, existing []ports.InternalAccount, now time.Time) error {
	has := func(typ, currency string) bool {
		return slices.ContainsFunc(existing, func(a ports.InternalAccount) bool {
			return a.Type == typ && (currency == "" || a.Currency == currency)
		})
	}
	var opened []ports.InternalAccount
	open := func(typ, currency string) ports.InternalAccount {
		a := ports.InternalAccount{
			ID:         s.ids.New("InternalAccount"),
			PlatformID: c.PlatformID,
			CustomerID: c.ID,
			Type:       typ,
			Status:     accounts.StatusActive,
			Currency:   currency,
			CreatedAt:  now,
			UpdatedAt:  now,
		}
		opened = append(opened, a)
		existing = append(existing, a)
		return a
	}
	for _, code := range c.Currencies {
		cur, ok := money.Lookup(code)
		if !ok {
			return fmt.Errorf("provision %s: unknown currency %s", c.ID, code)
		}
		if typ := accounts.HoldingType(cur); !has(typ, code) {
			open(typ, code)
		}
	}
	var credential *ports.AuthMethod
	if c.Email != "" && !has(accounts.TypeEmbeddedWallet, "") {
		w := open(accounts.TypeEmbeddedWallet, walletCurrency(c.Currencies))
		credential = &ports.AuthMethod{
			ID:         s.ids.New("AuthMethod"),
			PlatformID: c.PlatformID,
			AccountID:  w.ID,
			Type:       AuthEmailOTP,
			Nickname:   c.Email,
			CreatedAt:  now,
			UpdatedAt:  now,
		}
	}
	if len(opened) == 0 {
		return nil
	}
	books := make([]ledger.Account, 0, len(opened))
	for _, a := range opened {
		if err := tx.InternalAccounts().Create(ctx, a); err != nil {
			return fmt.Errorf("create %s account %s for %s: %w", a.Type, a.Currency, c.ID, err)
		}
		book := accounts.LedgerAccount(a)
		book.CreatedAt = now
		books = append(books, book)
	}
	if err := tx.LedgerAccounts().Create(ctx, books...); err != nil {
		return fmt.Errorf("create ledger accounts for %s: %w", c.ID, err)
	}
	if credential != nil {
		if err := tx.AuthMethods().Create(ctx, *credential); err != nil {
			return fmt.Errorf("create EMAIL_OTP credential for %s: %w", credential.AccountID, err)
		}
	}
	return nil
}

// syncWalletEmail renames the EMAIL_OTP credentials tied to the customer's
// embedded wallets to the new e-mail.
func syncWalletEmail(ctx context.Context, tx customerTx, c ports.Customer, owned []ports.InternalAccount, now time.Time) error {
	for _, a := range owned {
		if a.Type != accounts.TypeEmbeddedWallet {
			continue
		}
		methods, err := tx.AuthMethods().ListByAccount(ctx, c.PlatformID, a.ID)
		if err != nil {
			return fmt.Errorf("list credentials of %s: %w", a.ID, err)
		}
		for _, m := range methods {
			if m.Type != AuthEmailOTP || m.Nickname == c.Email {
				continue
			}
			m.Nickname = c.Email
			m.UpdatedAt = now
			if err := tx.AuthMethods().Update(ctx, m); err != nil {
				return fmt.Errorf("update EMAIL_OTP credential %s: %w", m.ID, err)
			}
		}
	}
	return nil
}
