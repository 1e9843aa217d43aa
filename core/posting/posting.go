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

	"github.com/corridorpay/corridor/core/jobs"
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

// Finish writes recs in the ledger's group commit together with the
// removal of job j (when it is a queued job) and tells the runner the job
// is gone: the one way a job handler records its work without an entry
// and completes its own job, so the job disappears if and only if that
// work is recorded.
func Finish(ctx context.Context, led ports.LedgerStore, j ports.Job, recs ports.Records) error {
	if err := led.WriteRecords(ctx, WithJob(recs, j)); err != nil {
		return err
	}
	if j.ID != "" {
		jobs.Completed(ctx)
	}
	return nil
}

// WithJob adds the removal of job j (when it is a queued job) to recs: a
// handler posting the entry that finishes its work removes its job with
// it, and calls jobs.Completed once the entry is recorded.
func WithJob(recs ports.Records, j ports.Job) ports.Records {
	if j.ID != "" {
		recs.CompletedJobs = append(recs.CompletedJobs, j.ID)
	}
	return recs
}
