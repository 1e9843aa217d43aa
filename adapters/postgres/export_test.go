package postgres

import (
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
