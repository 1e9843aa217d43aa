// Package quotes prices, executes and settles cross-currency payments: a
// quote locks the amounts on both sides, the fees and the exchange rate
// (core/fx) until its expiresAt, and is created together with its OUTGOING
// transaction (PENDING), or a deposit's INCOMING one (CREATED; see
// Deposits below).
//
// Lifecycle. Quote: PENDING → PROCESSING (executed, or funded by its
// payment instructions) → COMPLETED or FAILED; PENDING → EXPIRED when
// expiresAt passes unexecuted (a job at expiresAt, or the execute that
// comes too late). A completed payout the receiving bank returns moves the
// quote from COMPLETED to FAILED. The transaction follows: PENDING →
// PROCESSING → COMPLETED, FAILED (with failureReason and, when money was
// returned or could not be, refund), REFUNDED (the sender cancelled), or
// EXPIRED (failureReason QUOTE_EXPIRED).
//
// Money. Executing places ONE ledger entry of linked two-phase holds, so
// all legs stand or fall together:
//
//	source → sys:fx_position:<sending>        totalSending − fees
//	source → sys:fee_revenue:<sending>        fees (when > 0)
//	sys:fx_position:<receiving> → sys:rail_settlement:<rail>:<receiving>
//	                                          totalReceiving
//
// (a same-currency quote pays source → settlement directly). The source is
// the customer's internal account, or for a REALTIME_FUNDING quote the
// settlement account of the rail its funds arrived on. The rail's outcome
// arrives through durable jobs: success posts every hold, a failure or a
// cancellation voids them (the source gets back exactly what it paid), a
// return after success posts a reversing entry, and a payout whose refund
// also failed posts the holds, leaving the funds in the rail's settlement
// account (money in flight outside corridor) with refund FAILED until an
// operator resolves it.
//
// Writes. The business rows travel with the ledger's group commit
// (ports.LedgerStore.PostWith, ports.LedgerStore.WriteRecords) instead of units of
// work of their own: a quote is created with its transaction and expiry
// job in one write, and the hold entry is posted with the quote's PENDING →
// PROCESSING as its precondition (ports.QuoteStatusChange.Required: the
// quote still PENDING and unexpired at the Clock's now, checked under its
// row lock), the transaction's PROCESSING and the submission job. Holds
// therefore exist if and only if their quote was executed: no crash leaves
// orphan holds for the expiry job to release. A success settles with the
// COMPLETED statuses and its job's removal in the same way; the failure
// answers finish in a unit of work, since they record the transaction's
// refund with its status.
//
// Deposits. A REALTIME_FUNDING quote whose destination is one of the
// payer's internal accounts credits it instead of paying out: its
// transaction is INCOMING and CREATED until the funds arrive, and its legs
// end at the account. The arrival (SandboxSend) posts them at once (quote
// and transaction COMPLETED) or, when the platform decides incoming
// payments (core/approvals), places them as holds with the transaction
// PENDING and its approval, the quote PROCESSING; the decision's entry
// moves the quote too (FollowDecision) and, when the payment does not
// complete, records its refund (core/approvals).
//
// Entry ids derive from the quote id ("quote-hold:", "quote-settle:",
// "quote-void:", "quote-return:" + id) and the execution is conditional on
// the quote being PENDING, so concurrent or repeated executes and re-run
// jobs never move money twice.
package quotes

import (
	"crypto/sha256"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/corridorpay/corridor/core/approvals"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/ports"
)

// Source and destination types.
const (
	SourceAccount         = "ACCOUNT"
	SourceRealtimeFunding = "REALTIME_FUNDING"
	DestinationAccount    = "ACCOUNT"
	DestinationUMA        = "UMA_ADDRESS"
)

// UMARail is the rail of payouts to UMA addresses (core/rails' table has
// a row per currency).
const UMARail = rails.UMA

// Job kinds this package handles.
const (
	// KindSubmit submits an executed quote's payout to its rail.
	KindSubmit = "quote.submit"
	// KindCheck asks the rail where a submitted payout stands.
	KindCheck = "quote.check"
	// KindExpire expires a quote still unexecuted at its expiresAt.
	KindExpire = "quote.expire"
	// KindRefund completes the refund of a returned payout when its funds
	// are back.
	KindRefund = "quote.refund"
)

// Error codes.
const (
	CodeQuoteNotFound  = "QUOTE_NOT_FOUND"
	CodeQuoteExpired   = "QUOTE_EXPIRED"
	CodeLookupNotFound = "LOOKUP_REQUEST_NOT_FOUND"
	// Wallet signature refusals (reference Error401 codes).
	CodeWalletSignatureMissing   = "WALLET_SIGNATURE_MISSING"
	CodeWalletSignatureMalformed = "WALLET_SIGNATURE_MALFORMED"
	CodeWalletSignatureInvalid   = "WALLET_SIGNATURE_INVALID"
)

// Failure reasons the quotes set (reference enums; refund statuses and
// reasons are core/transactions').
const (
	ReasonQuoteExpired          = "QUOTE_EXPIRED"
	ReasonFundingAmountMismatch = "FUNDING_AMOUNT_MISMATCH"
	ReasonCollectionFailed      = "COLLECTION_FAILED"
)

var (
	errNotFound = fault.NotFound(CodeQuoteNotFound, "quote not found")
	errExpired  = fault.Conflict(CodeQuoteExpired, "the quote expired before it was executed; create a new quote")
)

// errNotPending is the 409 for executing (or funding) a quote past PENDING.
func errNotPending(status string) error {
	e := fault.Conflict("CONFLICT", "the quote is "+status+"; only a PENDING quote can be executed")
	e.Details = map[string]any{"status": status}
	return e
}

// Options tune a Service; zero values take the defaults.
type Options struct {
	Logger *slog.Logger
	// Sandbox enables POST /sandbox/send (403 FORBIDDEN otherwise).
	Sandbox bool
	// CheckRetry is how long after a rail answered "pending, ask now" a
	// job asks again. Default 5 s.
	CheckRetry time.Duration
}

// Service creates, executes and settles quotes.
type Service struct {
	store   ports.Store
	ledger  ports.LedgerStore
	rails   *rails.Registry
	rates   ports.FXRates
	wallet  ports.WalletSignatureVerifier
	clock   ports.Clock
	ids     ports.IDs
	log     *slog.Logger
	sandbox bool
	retry   time.Duration
	// approvals, when set, holds a deposit's credit for the platform's
	// decision when the platform has a webhook endpoint (core/approvals).
	approvals *approvals.Service
}

// SetApprovals makes deposits to a platform with a webhook endpoint wait
// for its decision (their quotes then follow it: FollowDecision).
func (s *Service) SetApprovals(a *approvals.Service) { s.approvals = a }

// New returns a Service. wallet verifies Service-Wallet-Signature headers
// of embedded-wallet executions.
func New(store ports.Store, ledger ports.LedgerStore, registry *rails.Registry, rates ports.FXRates,
	wallet ports.WalletSignatureVerifier, clock ports.Clock, ids ports.IDs, o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.CheckRetry <= 0 {
		o.CheckRetry = 5 * time.Second
	}
	return &Service{store: store, ledger: ledger, rails: registry, rates: rates, wallet: wallet,
		clock: clock, ids: ids, log: o.Logger, sandbox: o.Sandbox, retry: o.CheckRetry}
}

// keyNamespace seeds the name-based quote and transaction ids.
var keyNamespace = uuid.MustParse("0b6f3d52-8c1e-4a7f-9d2b-5e4c1a8f7b30")

// QuoteID is the id of the quote a POST /quotes with an Idempotency-Key
// creates: a UUID (version 8, from SHA-256) of the platform and the key, so
// a retry after a crash finds the quote (and the money its immediate
// execution moved) instead of making another.
func QuoteID(platformID, idempotencyKey string) string {
	return "Quote:" + uuid.NewHash(sha256.New(), keyNamespace, []byte(platformID+"|quote|"+idempotencyKey), 8).String()
}

// transactionIDFor is the transaction of a keyed quote.
func transactionIDFor(quoteID string) string {
	return "Transaction:" + uuid.NewHash(sha256.New(), keyNamespace, []byte(quoteID+"|transaction"), 8).String()
}

// quoteTx is what this package's helpers use of a unit of work (ports.Tx
// and Store.Read both provide it).
type quoteTx interface {
	Platforms() ports.PlatformRepo
	Customers() ports.CustomerRepo
	InternalAccounts() ports.InternalAccountRepo
	ExternalAccounts() ports.ExternalAccountRepo
	Transactions() ports.TransactionRepo
	Lookups() ports.LookupRepo
	Parties() ports.PartyReader
	Quotes() ports.QuoteRepo
}
