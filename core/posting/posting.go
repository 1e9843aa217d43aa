// Package posting posts ledger entries for the use cases. System accounts
// (rail settlement, FX position, fee revenue, sandbox funding) are created
// at start-up for the rail table and currencies; one added since — a new
// rail or currency row — is created on first use instead of failing the
// payment. This is the one place that rule lives.
package posting

import (
	"context"
	"errors"
	"fmt"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Post posts e with recs (LedgerStore.PostWith), creating each missing
// system account the entry names and retrying.
func Post(ctx context.Context, led ports.LedgerStore, e ledger.Entry, recs ports.Records) (ledger.JournalEntry, error) {
	// An entry names at most two accounts per transfer; each retry creates
	// one, so this bounds the loop even if creation keeps failing silently.
	for tries := 2*len(e.Transfers) + 1; ; tries-- {
		je, err := led.PostWith(ctx, e, recs)
		var lerr *ledger.Error
		if tries == 0 || !errors.As(err, &lerr) || lerr.Code != ledger.CodeAccountNotFound {
			return je, err
		}
		acct, ok := ledger.SystemAccountByID(lerr.AccountID)
		if !ok {
			return je, err
		}
		if cerr := led.CreateAccounts(ctx, acct); cerr != nil {
			return je, fmt.Errorf("create system account %s: %w", acct.ID, cerr)
		}
	}
}

// Write writes recs without an entry in the ledger's group commit
// (ports.RecordsWriter). Every ledger store of this service writes records;
// one that does not is refused rather than given a unit of work of its own.
func Write(ctx context.Context, led ports.LedgerStore, recs ports.Records) error {
	w, ok := led.(ports.RecordsWriter)
	if !ok {
		return fmt.Errorf("ledger store %T does not write records", led)
	}
	return w.WriteRecords(ctx, recs)
}
