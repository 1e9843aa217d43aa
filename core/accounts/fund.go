package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/posting"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// MaxFundAmount is the most one sandbox funding may add, in minor units.
const MaxFundAmount int64 = 100_000_000_000

// CodeSandboxFunding is the ledger transfer code of a sandbox funding.
const CodeSandboxFunding = "sandbox_funding"

// FundEntryID is the ledger entry id of a funding made with an idempotency
// key: derived from the platform and the key, so a retried request (even
// after a crash between the commit and the response) finds the entry it
// already posted instead of posting another.
func FundEntryID(platformID, idempotencyKey string) string {
	h := sha256.Sum256([]byte(platformID + "|" + idempotencyKey))
	return "fund:" + hex.EncodeToString(h[:])
}

// Fund adds amount (minor units of the account's currency) to one of the
// platform's ACTIVE internal accounts, from the sandbox funding source. It
// is only available in the sandbox. With an idempotency key, retries post
// nothing new. It returns the account with its new balances.
func (s *Service) Fund(ctx context.Context, platformID, accountID string, amount int64, idempotencyKey string) (Account, error) {
	if !s.sandbox {
		return Account{}, fault.New(fault.KindForbidden, "FORBIDDEN", "sandbox funding is only available in the sandbox")
	}
	if amount <= 0 || amount > MaxFundAmount {
		return Account{}, fault.Invalid("amount", fmt.Sprintf("must be between 1 and %d", MaxFundAmount))
	}
	a, err := s.get(ctx, platformID, accountID)
	if err != nil {
		return Account{}, err
	}
	if a.Status != StatusActive {
		return Account{}, fault.Conflict("CONFLICT", "internal account is "+a.Status+"; only ACTIVE accounts can be funded")
	}

	entryID := "fund:" + s.ids.New("SandboxFunding")
	if idempotencyKey != "" {
		entryID = FundEntryID(platformID, idempotencyKey)
	}
	entry := ledger.Entry{
		ID:  entryID,
		Ref: a.ID,
		Transfers: []ledger.Transfer{{
			ID:              entryID + "/1",
			DebitAccountID:  ledger.SandboxFundingID(a.Currency),
			CreditAccountID: a.ID,
			Amount:          amount,
			Currency:        a.Currency,
			Kind:            ledger.Single,
			Code:            CodeSandboxFunding,
		}},
	}
	// The funding source is created with the platform; posting creates it
	// for a currency added since.
	_, err = posting.Post(ctx, s.ledger, entry, ports.Records{})
	switch {
	case err == nil, errors.Is(err, ledger.ErrExists):
		// Posted now, or by an earlier attempt with the same key.
	case errors.Is(err, ledger.ErrExistsDifferent):
		return Account{}, fault.KeyReused("funding")
	default:
		return Account{}, fmt.Errorf("post sandbox funding of %s: %w", a.ID, err)
	}
	return s.Get(ctx, platformID, a.ID)
}
