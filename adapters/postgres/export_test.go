package postgres

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// JournalLockKey lets tests hold the journal lock to line up races between
// writers.
const JournalLockKey = journalLock

// PartiesQueries are the parties statements (single call, group), for the
// plan test.
func PartiesQueries(db *bun.DB) (one, many string) { return storePartiesQueries(db.Dialect()) }

// QuotePartiesQueries are the quote-and-parties statements (single call,
// group), for the plan test.
func QuotePartiesQueries(db *bun.DB) (one, many string) {
	return storeQuotePartiesQueries(db.Dialect())
}

// TextArray is the text[] parameter literal of prepared statements.
var TextArray = textArray

// TxnGroupQuery is the grouped transaction read, for the plan test.
func TxnGroupQuery(db *bun.DB) string { return newTxnRead(newPreparedStmts(db)).query }

// ReportsDBForTest is the database a LedgerReports reads, for tests that
// tamper with it.
func ReportsDBForTest(r *LedgerReports) *bun.DB { return r.db }

// OnEnqueueForTest calls f each time a call joins l's queue (set it before
// posting).
func OnEnqueueForTest(l *Ledger, f func()) { l.enqueued = f }

// DeliveryStatements are the prepared statements of a delivery batch, for
// the plan test: reading events and the pending heads of their
// resources, ending jobs.
var DeliveryStatements = struct{ Events, PendingHeads, CompleteJobs, End string }{eventsByIDStatement, pendingHeadsStatement,
	completeJobsStatement, endDeliveriesStatement}

// ClaimStatement is the job claim of kinds, for the plan test.
func ClaimStatement(db *bun.DB, kinds ports.JobKinds) string { return claimStatement(db, kinds) }

// IdemGroupResult is what one call of IdemGroupForTest was answered.
type IdemGroupResult struct {
	Rec   ports.IdempotencyRecord // a claim's
	Owned bool                    // a claim's
	Err   error
}

// IdemGroupForTest runs claims (at now) and responses as ONE group of s's
// grouped writes, as concurrent calls queued together would, and returns
// each claim's answer and then each response's.
func IdemGroupForTest(ctx context.Context, s *IdempotencyStore, claims, responses []ports.IdempotencyRecord, now time.Time) []IdemGroupResult {
	var calls []idemCall
	for _, r := range claims {
		calls = append(calls, idemCall{begin: &idemBeginCall{ctx: ctx, row: idemToRow(r), now: ports.Stored(now), done: make(chan idemBeginResult, 1)}})
	}
	for _, r := range responses {
		calls = append(calls, idemCall{complete: &idemCompleteCall{ctx: ctx, rec: r, done: make(chan error, 1)}})
	}
	s.group(calls)
	out := make([]IdemGroupResult, 0, len(calls))
	for _, c := range calls {
		if c.begin != nil {
			r := <-c.begin.done
			out = append(out, IdemGroupResult{Rec: r.rec, Owned: r.owned, Err: r.err})
		} else {
			out = append(out, IdemGroupResult{Err: <-c.complete.done})
		}
	}
	return out
}
