// Package transfers moves money between a platform's internal accounts and
// external accounts in the same currency: transfer-out (a payout over a
// rail) and transfer-in (a pull over a rail), with the rail's outcome
// arriving later through durable jobs.
//
// Money flow. A transfer-out first places a hold: a pending ledger transfer
// from the internal account to the rail's settlement account, refused when
// the available balance does not cover it (the ledger's overdraft bound is
// the only gate, so concurrent requests can never overdraw). The rail's
// success posts the hold; its failure voids it, restoring the balance
// exactly. A transfer-in moves nothing until the rail succeeds, then credits
// the internal account from the rail's settlement account.
//
// Every ledger entry id is derived from the transaction id ("hold:",
// "settle:", "release:", "credit:" + id), and the transaction id from the
// Idempotency-Key when there is one, so a retried request or a re-run job
// never moves money twice.
package transfers

import (
	"crypto/sha256"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ports"
)

// Job kinds this package handles.
const (
	// KindSubmit submits a new transaction to its rail.
	KindSubmit = "transfer.submit"
	// KindCheck asks the rail where a submitted transaction stands.
	KindCheck = "transfer.check"
	// KindReapOrphanHolds voids holds whose transaction never came to exist.
	KindReapOrphanHolds = "transfer.reap_orphan_holds"
)

// Ledger transfer codes (why money moved).
const (
	CodeTransferOut = "transfer_out"
	CodeTransferIn  = "transfer_in"
	// CodeTransferRelease voids an agent action's hold as the transfer's
	// own hold takes its place.
	CodeTransferRelease = "transfer_release"
)

// Entry id prefixes; the rest is the transaction id.
const (
	holdPrefix    = "hold:"
	settlePrefix  = "settle:"
	releasePrefix = "release:"
	creditPrefix  = "credit:"
)

// OrphanHoldAge is how old a hold must be before the reaper may void it for
// want of its transaction: far longer than a request takes between posting
// the hold and committing the transaction.
const OrphanHoldAge = 10 * time.Minute

// Options tune a Service; zero values take the defaults.
type Options struct {
	Logger *slog.Logger
	// CheckRetry is how long after a rail error (an unknown outcome) a job
	// asks again. Default 5 s.
	CheckRetry time.Duration
}

// Service creates transfers and drives them to their outcome.
type Service struct {
	store  ports.Store
	ledger ports.LedgerStore
	rails  *rails.Registry
	clock  ports.Clock
	ids    ports.IDs
	log    *slog.Logger
	retry  time.Duration
}

// New returns a Service.
func New(store ports.Store, ledger ports.LedgerStore, registry *rails.Registry, clock ports.Clock, ids ports.IDs, o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.CheckRetry <= 0 {
		o.CheckRetry = 5 * time.Second
	}
	return &Service{store: store, ledger: ledger, rails: registry, clock: clock, ids: ids, log: o.Logger, retry: o.CheckRetry}
}

// keyNamespace seeds the name-based transaction ids.
var keyNamespace = uuid.MustParse("6f1c2a8e-0d4b-4c55-9b0e-3a7d2f9c1e44")

// TransactionID is the id of the transaction a request with an
// Idempotency-Key creates: a UUID (version 8, from SHA-256) of the
// platform, the operation and the key, so a retry after a crash finds the
// ledger entries the first attempt posted instead of posting new ones.
func TransactionID(platformID, operation, idempotencyKey string) string {
	name := platformID + "|" + operation + "|" + idempotencyKey
	return "Transaction:" + uuid.NewHash(sha256.New(), keyNamespace, []byte(name), 8).String()
}

// Reference is a transaction's reconciliation reference: short, upper
// case, derived from its id.
func Reference(txID string) string {
	u := strings.TrimPrefix(txID, "Transaction:")
	u = strings.ReplaceAll(u, "-", "")
	if len(u) > 12 {
		u = u[:12]
	}
	return "CRD-" + strings.ToUpper(u)
}

// Purposes lists the reference PurposeOfPayment values.
var Purposes = []string{"GIFT", "SELF", "GOODS_OR_SERVICES", "EDUCATION", "HEALTH_OR_MEDICAL",
	"REAL_ESTATE_PURCHASE", "TAX_PAYMENT", "LOAN_PAYMENT", "UTILITY_BILL", "DONATION", "TRAVEL",
	"FAMILY_SUPPORT", "SALARY_PAYMENT", "OTHER"}

// MaxRemittanceInformation bounds remittanceInformation, in characters.
const MaxRemittanceInformation = 80

// incomingReasons are the reference's IncomingTransactionFailureReason
// values.
var incomingReasons = map[string]bool{"LNURLP_FAILED": true, "PAY_REQUEST_FAILED": true,
	"PAYMENT_APPROVAL_WEBHOOK_ERROR": true, "PAYMENT_APPROVAL_TIMED_OUT": true, "OFFRAMP_FAILED": true,
	"MISSING_MANDATORY_PAYEE_DATA": true, "QUOTE_EXPIRED": true, transactions.ReasonExecutionFailed: true,
	"COMPLIANCE_REJECTED": true, "COLLECTION_FAILED": true}

// failureReason keeps a rail's reason when the transaction's type allows
// it, and otherwise falls back to the type's generic reason.
func failureReason(txType, reason string) string {
	if txType == transactions.TypeIncoming {
		if incomingReasons[reason] {
			return reason
		}
		return "COLLECTION_FAILED"
	}
	return transactions.OutgoingFailureReason(reason)
}

var (
	errKeyReused = fault.KeyReused("transfer")
	errAbandoned = fault.Conflict(fault.CodeKeyReused,
		"an earlier attempt with this idempotency key left a hold without its transaction (it is released, never paid); retry with a new key")
)

// Settlement is when a transaction is expected to settle at the
// beneficiary and how many seconds its rail takes: (nil, 0) for an instant
// rail, (nil, nil) when the rail is unknown to this instance.
func (s *Service) Settlement(t ports.Transaction) (expectedAt *time.Time, timelineSeconds *int64) {
	r, ok := s.rails.Rail(t.PaymentRail, t.SourceCurrency)
	if !ok {
		return nil, nil
	}
	spec := r.Spec()
	secs := int64(spec.SettlementDelay / time.Second)
	if spec.Instant || spec.SettlementDelay == 0 {
		return nil, &secs
	}
	at := t.CreatedAt.Add(spec.SettlementDelay).UTC()
	return &at, &secs
}
