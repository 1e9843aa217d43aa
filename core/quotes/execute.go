package quotes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/approvals"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/core/posting"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Entry id prefixes; the rest is the quote id.
const (
	holdPrefix   = "quote-hold:"
	settlePrefix = "quote-settle:"
	voidPrefix   = "quote-void:"
	returnPrefix = "quote-return:"
)

// Ledger transfer codes (why money moved).
const (
	CodeQuoteSend   = "quote_send"
	CodeQuoteFee    = "quote_fee"
	CodeQuotePayout = "quote_payout"
	// CodeQuoteDeposit credits a deposit's internal account (where a
	// payout pays a rail's settlement account).
	CodeQuoteDeposit = "quote_deposit"
	// CodeQuoteRelease voids an agent action's hold as the quote's own
	// holds take its place.
	CodeQuoteRelease = "quote_release"
)

// leg is one hold of an executed quote.
type leg struct {
	name           string
	debit, credit  string
	amount         int64
	currency, code string
}

// legs are the holds executing q places, debiting source: see the package
// comment. A same-currency quote pays the rail's settlement account (a
// deposit's internal account) directly.
func legs(q ports.Quote, source string) []leg {
	settlement, payout := ledger.RailSettlementID(q.PaymentRail, q.ReceivingCurrency), CodeQuotePayout
	if credits(q) {
		settlement, payout = q.DestinationAccountID, CodeQuoteDeposit
	}
	net := q.TotalSendingAmount - q.FeesIncluded
	var out []leg
	if q.SendingCurrency == q.ReceivingCurrency {
		out = append(out, leg{"payout", source, settlement, net, q.SendingCurrency, payout})
	} else {
		out = append(out,
			leg{"send", source, ledger.FXPositionID(q.SendingCurrency), net, q.SendingCurrency, CodeQuoteSend},
			leg{"payout", ledger.FXPositionID(q.ReceivingCurrency), settlement, q.TotalReceivingAmount, q.ReceivingCurrency, payout})
	}
	if q.FeesIncluded > 0 {
		out = append(out, leg{"fee", source, ledger.FeeRevenueID(q.SendingCurrency), q.FeesIncluded, q.SendingCurrency, CodeQuoteFee})
	}
	return out
}

// internalPrefix starts the id of an internal account.
const internalPrefix = "InternalAccount:"

// credits reports whether q is a deposit: a REALTIME_FUNDING quote whose
// destination is an internal account, credited in the ledger when its
// funds arrive instead of paid out on a rail.
func credits(q ports.Quote) bool { return strings.HasPrefix(q.DestinationAccountID, internalPrefix) }

// ledgerSource is the account a quote's holds debit: the internal account,
// or the settlement account of the rail a REALTIME_FUNDING quote's funds
// arrived on.
func ledgerSource(q ports.Quote) string {
	if q.SourceType == SourceRealtimeFunding {
		return ledger.RailSettlementID(fundingRail(q), q.SendingCurrency)
	}
	return q.SourceAccountID
}

// holdEntry places q's holds; release, when set, is an open hold voided
// first in the same entry (the hold of an agent action the platform
// approved), so its funds pass to the quote's holds without ever being
// free to spend.
func holdEntry(q ports.Quote, release string) ledger.Entry {
	e := legsEntry(q, holdPrefix, ledger.Pending)
	if release != "" {
		e.Transfers = append([]ledger.Transfer{{ID: holdPrefix + q.ID + ":release", Kind: ledger.VoidPending,
			PendingID: release, Code: CodeQuoteRelease}}, e.Transfers...)
	}
	return e
}

// legsEntry moves q's legs in full, each a transfer of kind named prefix +
// quote id + ":" + leg: the holds (Pending), a deposit credited at once
// (Single), or the settled holds as a reversal reads them (PostPending).
func legsEntry(q ports.Quote, prefix string, kind ledger.TransferKind) ledger.Entry {
	e := ledger.Entry{ID: prefix + q.ID, Ref: q.TransactionID}
	for _, l := range legs(q, ledgerSource(q)) {
		e.Transfers = append(e.Transfers, ledger.Transfer{
			ID: prefix + q.ID + ":" + l.name, DebitAccountID: l.debit, CreditAccountID: l.credit,
			Amount: l.amount, Currency: l.currency, Kind: kind, Code: l.code,
		})
	}
	return e
}

// resolveEntry posts (PostPending) or voids (VoidPending) every hold.
func resolveEntry(q ports.Quote, prefix string, kind ledger.TransferKind) ledger.Entry {
	e := ledger.Entry{ID: prefix + q.ID, Ref: q.TransactionID}
	for _, l := range legs(q, ledgerSource(q)) {
		e.Transfers = append(e.Transfers, ledger.Transfer{
			ID: prefix + q.ID + ":" + l.name, Kind: kind, PendingID: holdPrefix + q.ID + ":" + l.name, Code: l.code,
		})
	}
	return e
}

// returnEntry reverses the settled holds: every leg flows back, the
// source gets its full payment (fees included) back.
func returnEntry(q ports.Quote) (ledger.Entry, error) {
	return ledger.Reversal(legsEntry(q, settlePrefix, ledger.PostPending), returnPrefix+q.ID, q.TransactionID)
}

// Execute executes a PENDING quote whose source is an internal account:
// its holds are placed (400 INVALID_AMOUNT when the available balance does
// not cover totalSendingAmount) and, atomically with them, the quote and
// its transaction become PROCESSING and the payout is scheduled. An
// EMBEDDED_WALLET source needs signature, the Service-Wallet-Signature
// over the quote's payloadToSign. At or after expiresAt it is refused (409
// QUOTE_EXPIRED) and the quote expires; a quote past PENDING is 409
// CONFLICT.
func (s *Service) Execute(ctx context.Context, platformID, quoteID, signature string) (ports.Quote, error) {
	return s.execute(ctx, platformID, quoteID, execution{account: true, signature: signature})
}

// ExecuteKeyed is Execute for a request with Idempotency-Key key: the key
// is recorded with the execution, and a quote this key executed already
// (the first attempt committed, then its stored response was lost to a
// crash) is answered as it is now, not refused as no longer PENDING.
func (s *Service) ExecuteKeyed(ctx context.Context, platformID, quoteID, signature, key string) (ports.Quote, error) {
	return s.execute(ctx, platformID, quoteID, execution{account: true, signature: signature, key: key})
}

// CheckExecutable checks what Execute checks before it moves money (the
// source account ACTIVE and allowed to send, an EMBEDDED_WALLET's
// signature, the quote PENDING and unexpired, with Execute's errors) and
// returns the quote, moving nothing: an agent's execution that waits for
// the platform's approval is authorised when it is submitted.
func (s *Service) CheckExecutable(ctx context.Context, platformID, quoteID, signature string) (ports.Quote, error) {
	ex := execution{account: true, signature: signature}
	q, err := s.readExecution(ctx, platformID, quoteID, &ex)
	if err != nil {
		return ports.Quote{}, err
	}
	if _, err := s.checkSource(ctx, q, ex); err != nil {
		return ports.Quote{}, err
	}
	switch {
	case q.Status == StatusExpired:
		return ports.Quote{}, errExpired
	case q.Status != StatusPending:
		return ports.Quote{}, errNotPending(q.Status)
	case !s.clock.Now().Before(q.ExpiresAt):
		return ports.Quote{}, errExpired
	}
	return q, nil
}

// ExecuteAuthorized executes a quote whose execution was authorised
// earlier (CheckExecutable, when an agent submitted it; the platform has
// approved it since), so no wallet signature is asked again. release is
// the open hold that reserved its funds meanwhile: it is voided in the
// same ledger entry that places the quote's holds. Errors as Execute.
func (s *Service) ExecuteAuthorized(ctx context.Context, platformID, quoteID, release string) (ports.Quote, error) {
	return s.execute(ctx, platformID, quoteID, execution{account: true, authorized: true, release: release})
}

// execution is how execute executes a quote.
type execution struct {
	// account marks the execution of an ACCOUNT-sourced quote (Execute,
	// or Create's immediate one): its source account must be ACTIVE, and
	// an embedded wallet's signature must verify (unless authorized).
	account   bool
	signature string
	// authorized: the signature was verified when the execution was
	// submitted (ExecuteAuthorized).
	authorized bool
	// release is an open hold voided in the holds' entry (ExecuteAuthorized).
	release string
	// key is the request's Idempotency-Key (ExecuteKeyed).
	key string
	// quote, when set, is the quote as the caller just read or created
	// it; otherwise execute reads it.
	quote *ports.Quote
	// parties, when set, are the quote's accounts as Create just read
	// them (an immediate execution); otherwise execute reads them.
	parties *ports.Parties
	// mismatch, when set, is the funding amount of a sandbox send that
	// does not match: the quote fails instead (FUNDING_AMOUNT_MISMATCH).
	mismatch string
}

// execute moves a PENDING quote's money. Nothing is locked while the
// quote and its accounts are read and checked: the one write is the hold
// entry posted with the quote's PENDING → PROCESSING change as its
// precondition (ports.QuoteStatusChange.Required, checked under the quote
// row's lock together with expiresAt), the transaction's PROCESSING and
// the submission job. So the holds exist if and only if the quote was
// executed, and of concurrent executions exactly one places them (the
// others meet the precondition or the hold's entry id).
func (s *Service) execute(ctx context.Context, platformID, quoteID string, ex execution) (ports.Quote, error) {
	q, err := s.readExecution(ctx, platformID, quoteID, &ex)
	if err != nil {
		return ports.Quote{}, err
	}
	if ex.key != "" && q.Status != StatusPending {
		done, err := s.executedWith(ctx, q, ex.key)
		if err != nil {
			return ports.Quote{}, err
		}
		if done {
			return q, ports.AwaitClaim(ctx)
		}
	}
	var dest *ports.ExternalAccount
	if ex.account {
		var err error
		if dest, err = s.checkSource(ctx, q, ex); err != nil {
			return ports.Quote{}, err
		}
	}
	switch q.Status {
	case StatusPending:
	case StatusExpired:
		return ports.Quote{}, errExpired
	default:
		return ports.Quote{}, errNotPending(q.Status)
	}
	// Everything above only read; a request that does not own its
	// Idempotency-Key stops here.
	if err := ports.AwaitClaim(ctx); err != nil {
		return ports.Quote{}, err
	}
	now := s.clock.Now().UTC()
	if !now.Before(q.ExpiresAt) {
		if _, err := s.expire(ctx, q, now, ""); err != nil {
			return ports.Quote{}, err
		}
		return ports.Quote{}, errExpired
	}
	if ex.mismatch != "" {
		return s.refuseFunding(ctx, q, now, ex.mismatch)
	}
	if credits(q) {
		return s.credit(ctx, q, now)
	}
	submit, err := s.submitJob(ctx, q, dest, now)
	if err != nil {
		return ports.Quote{}, err
	}
	change := StatusChange(q.PlatformID, q.ID, StatusProcessing, now)
	change.ExecutedAt, change.NotExpiredAt, change.Required = &now, &now, true
	recs := ports.Records{
		QuoteChanges:  []ports.QuoteStatusChange{change},
		StatusChanges: []ports.TransactionStatusChange{transactions.StatusChange(q.PlatformID, q.TransactionID, transactions.StatusProcessing, now)},
		Jobs:          []ports.Job{submit},
	}
	recs.StatusChanges[0].RequestKey = ex.key
	if err := s.executed(ctx, q, holdEntry(q, ex.release), recs, now); err != nil {
		return ports.Quote{}, err
	}
	if err := Move(&q, StatusProcessing, now); err != nil {
		return ports.Quote{}, err
	}
	q.ExecutedAt = &now
	s.log.InfoContext(ctx, "quote executed", "quote", q.ID, "transaction", q.TransactionID)
	return q, nil
}

// executedWith reports whether q's execution was the request with
// Idempotency-Key key (its transaction records the key).
func (s *Service) executedWith(ctx context.Context, q ports.Quote, key string) (bool, error) {
	t, err := s.store.Read().Transactions().Get(ctx, q.PlatformID, q.TransactionID)
	if errors.Is(err, ports.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("execute %s: read transaction: %w", q.ID, err)
	}
	return t.Details.RequestKey == key, nil
}

// executed posts e, the entry that executes q, with recs (whose quote
// change is Required) and turns a refusal into the caller's answer: the
// quote was executed or expired meanwhile (409), the source lacks the
// funds (400), the amount overflows.
func (s *Service) executed(ctx context.Context, q ports.Quote, e ledger.Entry, recs ports.Records, now time.Time) error {
	_, err := s.post(ctx, e, recs)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ports.ErrPrecondition), errors.Is(err, ledger.ErrExists), errors.Is(err, ledger.ErrExistsDifferent):
		if lerr := s.lost(ctx, q, now); lerr != nil {
			return lerr
		}
		// Still PENDING as read: the winner's commit is not visible yet.
		return errNotPending(StatusProcessing)
	case errors.Is(err, ledger.ErrExceedsCredits):
		if lerr := s.lost(ctx, q, now); lerr != nil {
			// Executed meanwhile (its holds are what the balance lacks
			// now) or expired: that is the answer, not the balance.
			return lerr
		}
		return transactions.Insufficient(ctx, s.ledger, "totalSendingAmount", q.SourceAccountID,
			q.SendingCurrency, q.TotalSendingAmount)
	case errors.Is(err, ledger.ErrOverflow):
		return fault.New(fault.KindInvalid, transactions.CodeInvalidAmount, "the amount is too large")
	}
	return fmt.Errorf("execute %s: hold: %w", q.ID, err)
}

// credit books the arrival of a deposit's funds (q PENDING and unexpired
// at now, as execute checked). When the platform decides incoming
// payments (it has a webhook endpoint: core/approvals) the legs are holds
// ending at the internal account, the transaction PENDING with its
// approval and the quote PROCESSING until the decision (FollowDecision);
// otherwise the account is credited at once and both are COMPLETED. In
// both cases one ledger write, conditional on the quote still PENDING.
func (s *Service) credit(ctx context.Context, q ports.Quote, now time.Time) (ports.Quote, error) {
	asks, err := s.approvals.Asks(ctx, q.PlatformID)
	if err != nil {
		return ports.Quote{}, fmt.Errorf("fund %s: %w", q.ID, err)
	}
	to, txTo := Status(StatusCompleted), transactions.Status(transactions.StatusCompleted)
	if asks {
		to, txTo = StatusProcessing, transactions.StatusPending
	}
	change := StatusChange(q.PlatformID, q.ID, to, now)
	change.ExecutedAt, change.NotExpiredAt, change.Required = &now, &now, true
	txn := transactions.StatusChange(q.PlatformID, q.TransactionID, txTo, now)
	recs := ports.Records{QuoteChanges: []ports.QuoteStatusChange{change}}
	var e ledger.Entry
	if asks {
		e = holdEntry(q, "")
		holds := make([]string, len(e.Transfers))
		for i, t := range e.Transfers {
			holds[i] = t.ID
		}
		a, timeout := approvals.Await(q.PlatformID, q.TransactionID, holds, nil, now)
		txn.Approval = a
		recs.Jobs = []ports.Job{timeout}
	} else {
		e = legsEntry(q, settlePrefix, ledger.Single)
		txn.SettledAt = &now
	}
	recs.StatusChanges = []ports.TransactionStatusChange{txn}
	if err := s.executed(ctx, q, e, recs, now); err != nil {
		return ports.Quote{}, err
	}
	if err := Move(&q, to, now); err != nil {
		return ports.Quote{}, err
	}
	q.ExecutedAt = &now
	s.log.InfoContext(ctx, "deposit funded", "quote", q.ID, "transaction", q.TransactionID, "awaitsApproval", asks)
	return q, nil
}

// FollowDecision (approvals.Follower) moves the quote of a deposit the
// platform decided with its transaction: COMPLETED when approved, FAILED
// otherwise (the payer's funds going back: the decision records the
// refund).
func (s *Service) FollowDecision(t ports.Transaction, approved bool, c *ports.TransactionStatusChange, recs *ports.Records) {
	if t.QuoteID == "" {
		return
	}
	to := Status(StatusFailed)
	if approved {
		to = StatusCompleted
	}
	recs.QuoteChanges = append(recs.QuoteChanges, StatusChange(t.PlatformID, t.QuoteID, to, c.UpdatedAt))
}

// lost explains an execution whose holds were not placed because the
// quote was not executable when they would have been recorded: it was
// executed by another request (409 CONFLICT) or it expired (409
// QUOTE_EXPIRED, expiring it). It returns nil for a quote still PENDING
// and unexpired.
func (s *Service) lost(ctx context.Context, q ports.Quote, now time.Time) error {
	cur, err := s.store.Read().Quotes().Get(ctx, q.PlatformID, q.ID)
	if err != nil {
		return fmt.Errorf("execute %s: read: %w", q.ID, err)
	}
	switch cur.Status {
	case StatusPending:
		if !now.Before(cur.ExpiresAt) {
			if _, err := s.expire(ctx, cur, now, ""); err != nil {
				return err
			}
			return errExpired
		}
		return nil
	case StatusExpired:
		return errExpired
	}
	return errNotPending(cur.Status)
}

// readExecution is the quote an execution executes: ex.quote when the
// caller has it, else read; with its parties (set in ex) in the same read
// when the execution checks its source account and the caller has not
// read them (Execute: one round trip for both).
func (s *Service) readExecution(ctx context.Context, platformID, quoteID string, ex *execution) (ports.Quote, error) {
	if ex.quote != nil {
		return *ex.quote, nil
	}
	var (
		q   ports.Quote
		err error
	)
	if ex.account && ex.parties == nil {
		var p ports.Parties
		q, p, err = s.store.Read().Parties().OfQuote(ctx, platformID, quoteID, s.clock.Now())
		ex.parties = &p
	} else {
		q, err = s.store.Read().Quotes().Get(ctx, platformID, quoteID)
	}
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Quote{}, errNotFound
	}
	if err != nil {
		return ports.Quote{}, fmt.Errorf("execute %s: read: %w", quoteID, err)
	}
	return q, nil
}

// checkSource checks, for ex.account, that q is an ACCOUNT-sourced quote
// whose source account is ACTIVE (and, for an embedded wallet, signed) and
// returns its destination external account (nil for a UMA address), read
// with the source in one round trip.
func (s *Service) checkSource(ctx context.Context, q ports.Quote, ex execution) (*ports.ExternalAccount, error) {
	if q.SourceType != SourceAccount {
		return nil, fault.Invalid("quoteId",
			"the quote's source is REALTIME_FUNDING: it executes when its funds arrive by its paymentInstructions (POST /sandbox/send in the sandbox)")
	}
	p := ex.parties
	if p == nil {
		read, err := s.store.Read().Parties().Get(ctx, q.PlatformID, q.SourceAccountID, q.DestinationAccountID, s.clock.Now())
		if err != nil {
			return nil, fmt.Errorf("execute %s: %w", q.ID, err)
		}
		p = &read
	}
	src := p.Internal
	if src.ID == "" {
		return nil, fmt.Errorf("execute %s: source %s: %w", q.ID, q.SourceAccountID, ports.ErrNotFound)
	}
	if src.Status != accounts.StatusActive {
		return nil, fault.Invalid("quoteId", "the quote's source account is "+src.Status+"; only ACTIVE accounts can pay")
	}
	// A customer under review or rejected may not send.
	if src.CustomerID != "" {
		if err := kyc.OutgoingAllowed(p.Customer); err != nil {
			return nil, err
		}
	}
	if src.Type == accounts.TypeEmbeddedWallet && !ex.authorized {
		if err := s.verifySignature(ctx, q, p.Sessions, ex.signature); err != nil {
			return nil, err
		}
	}
	if q.DestinationAccountID == "" {
		return nil, nil
	}
	if p.External.ID == "" {
		return nil, errDestinationGone(q)
	}
	return &p.External, nil
}

// errDestinationGone refuses to execute a quote whose external account was
// deleted after the quote was made (400 naming quoteId; nothing moves and
// the quote stays PENDING until it expires).
func errDestinationGone(q ports.Quote) error {
	return fault.Invalid("quoteId", "the quote's destination external account "+q.DestinationAccountID+
		" was deleted; create a new quote to another account")
}

// verifySignature checks an embedded wallet's Service-Wallet-Signature
// over the quote's payloadToSign against the wallet's active sessions.
func (s *Service) verifySignature(ctx context.Context, q ports.Quote, sessions []ports.WalletSession, signature string) error {
	if signature == "" {
		return walletError(CodeWalletSignatureMissing, "the Service-Wallet-Signature header is required to execute a quote from an EMBEDDED_WALLET")
	}
	if s.wallet == nil {
		// A service built without a verifier (some tests): refuse the
		// signature (401) rather than fail the request (500).
		return walletError(CodeWalletSignatureInvalid, "no wallet signature verifier is configured on this service, so the signature cannot be verified")
	}
	err := s.wallet.VerifyStamp(sessions, storedPayload(q), signature)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ports.ErrWalletSignatureMalformed):
		return walletError(CodeWalletSignatureMalformed, "the Service-Wallet-Signature header could not be parsed")
	case errors.Is(err, ports.ErrWalletSignatureInvalid):
		return walletError(CodeWalletSignatureInvalid, "the Service-Wallet-Signature does not verify over the quote's payloadToSign")
	}
	return fmt.Errorf("execute %s: verify wallet signature: %w", q.ID, err)
}

func walletError(code, message string) error {
	return &fault.Error{Kind: fault.KindUnauthorized, Code: code, Message: message, Reason: message}
}

// expire moves a PENDING quote and its transaction to EXPIRED
// (failureReason QUOTE_EXPIRED), once, in the ledger store's group commit
// (removing job jobID too, when set; recorded reports that it did). A
// quote no longer PENDING is left as it is.
func (s *Service) expire(ctx context.Context, q ports.Quote, now time.Time, jobID string) (recorded bool, err error) {
	change := StatusChange(q.PlatformID, q.ID, StatusExpired, now)
	change.Required = true // the transaction expires only with its quote
	txn := transactions.StatusChange(q.PlatformID, q.TransactionID, transactions.StatusExpired, now)
	txn.FailureReason = ReasonQuoteExpired
	recs := ports.Records{QuoteChanges: []ports.QuoteStatusChange{change}, StatusChanges: []ports.TransactionStatusChange{txn}}
	if jobID != "" {
		recs.CompletedJobs = []string{jobID}
	}
	err = s.ledger.WriteRecords(ctx, recs)
	switch {
	case err == nil:
		return jobID != "", nil
	case errors.Is(err, ports.ErrPrecondition):
		return false, nil // executed or expired meanwhile
	}
	return false, fmt.Errorf("expire %s: %w", q.ID, err)
}

// refuseFunding fails a PENDING REALTIME_FUNDING quote whose sandbox send
// did not match its amount (FUNDING_AMOUNT_MISMATCH): nothing was booked,
// the funds go back to the payer. A unit of work, since the transaction's
// refund is written with the status.
func (s *Service) refuseFunding(ctx context.Context, q ports.Quote, now time.Time, mismatch string) (ports.Quote, error) {
	var out ports.Quote
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		cur, err := tx.Quotes().GetForUpdate(ctx, q.PlatformID, q.ID)
		if err != nil {
			return fmt.Errorf("fund %s: %w", q.ID, err)
		}
		if cur.Status != StatusPending {
			return errNotPending(cur.Status)
		}
		t, err := tx.Transactions().GetForUpdate(ctx, q.PlatformID, q.TransactionID)
		if err != nil {
			return fmt.Errorf("fund %s: transaction %s: %w", q.ID, q.TransactionID, err)
		}
		if err := Move(&cur, StatusFailed, now); err != nil {
			return err
		}
		if err := transactions.Move(&t, transactions.StatusFailed, now); err != nil {
			return err
		}
		t.FailureReason = ReasonFundingAmountMismatch
		if credits(cur) {
			// The incoming payments' reasons have no mismatch: the
			// collection of the deposit's funds failed.
			t.FailureReason = ReasonCollectionFailed
		}
		t.Details.Refund = &ports.Refund{Reference: transactions.RefundReference(t), InitiatedAt: now, SettledAt: &now,
			Status: transactions.RefundCompleted, Reason: transactions.RefundTransactionFailed}
		out = cur
		return s.save(ctx, tx, cur, t)
	})
	if err != nil {
		return ports.Quote{}, err
	}
	s.log.InfoContext(ctx, "quote funding refused", "quote", q.ID, "detail", mismatch)
	return out, nil
}

func (s *Service) save(ctx context.Context, tx quoteTx, q ports.Quote, t ports.Transaction) error {
	if err := tx.Quotes().Update(ctx, q); err != nil {
		return fmt.Errorf("quote %s: update: %w", q.ID, err)
	}
	if err := tx.Transactions().Update(ctx, t); err != nil {
		return fmt.Errorf("quote %s: update transaction %s: %w", q.ID, t.ID, err)
	}
	return nil
}

// submitJob is the quote.submit job of executed quote q, due at now: its
// payout's rail request (railRequest) as the payload.
func (s *Service) submitJob(ctx context.Context, q ports.Quote, dest *ports.ExternalAccount, now time.Time) (ports.Job, error) {
	req, err := s.railRequest(ctx, q, dest)
	if err != nil {
		return ports.Job{}, err
	}
	payload, err := json.Marshal(jobPayload{PlatformID: q.PlatformID, QuoteID: q.ID, Request: req})
	if err != nil {
		return ports.Job{}, fmt.Errorf("execute %s: job payload: %w", q.ID, err)
	}
	return ports.Job{Kind: KindSubmit, Key: KindSubmit + ":" + q.ID, Payload: payload, RunAt: now}, nil
}

// railRequest is the payout of q: to its external account (a snapshot, so
// an account deleted meanwhile does not strand the payout; dest when the
// caller read it already) or UMA address.
func (s *Service) railRequest(ctx context.Context, q ports.Quote, dest *ports.ExternalAccount) (ports.RailRequest, error) {
	req := ports.RailRequest{Ref: q.TransactionID, Rail: q.PaymentRail, Direction: ports.RailPayout,
		Currency: q.ReceivingCurrency, Amount: q.TotalReceivingAmount, Purpose: ports.RailPurposeQuote,
		UmaAddress: q.DestinationUmaAddress}
	switch {
	case dest != nil:
		req.Account = *dest
	case q.DestinationAccountID != "":
		a, err := s.store.Read().ExternalAccounts().Get(ctx, q.PlatformID, q.DestinationAccountID)
		if errors.Is(err, ports.ErrNotFound) {
			return req, errDestinationGone(q)
		}
		if err != nil {
			return req, fmt.Errorf("execute %s: destination %s: %w", q.ID, q.DestinationAccountID, err)
		}
		req.Account = a
	}
	return req, nil
}

// post posts e with recs, creating a missing system account on first use
// (core/posting).
func (s *Service) post(ctx context.Context, e ledger.Entry, recs ports.Records) (ledger.JournalEntry, error) {
	return posting.Post(ctx, s.ledger, e, recs)
}

// SendRequest is POST /sandbox/send: the payer of a REALTIME_FUNDING quote
// sends its funds.
type SendRequest struct {
	QuoteID      string
	CurrencyCode string
	// CurrencyAmount is the amount sent (0: the quote's totalSendingAmount).
	CurrencyAmount int64
}

// SandboxSend simulates the payment that funds a REALTIME_FUNDING quote
// (sandbox only: 403 elsewhere). The matching amount executes the quote as
// Execute does, with the funds held from the funding rail's settlement
// account; another amount fails the quote and its transaction
// (FUNDING_AMOUNT_MISMATCH, the funds returned to the payer, nothing
// booked). It returns the quote's transaction.
func (s *Service) SandboxSend(ctx context.Context, platformID string, r SendRequest) (ports.Transaction, error) {
	if !s.sandbox {
		return ports.Transaction{}, fault.New(fault.KindForbidden, "FORBIDDEN", "sandbox send is only available in the sandbox")
	}
	var errs fault.Collector
	if r.QuoteID == "" {
		errs.Add("quoteId", "is required")
	}
	if r.CurrencyCode == "" {
		errs.Add("currencyCode", "is required")
	}
	if r.CurrencyAmount < 0 {
		errs.Add("currencyAmount", "must be a positive integer (smallest currency unit)")
	}
	if err := errs.Err(); err != nil {
		return ports.Transaction{}, err
	}
	q, err := s.Get(ctx, platformID, r.QuoteID)
	if err != nil {
		return ports.Transaction{}, err
	}
	if q.SourceType != SourceRealtimeFunding {
		return ports.Transaction{}, fault.Invalid("quoteId",
			"the quote's source is an internal account: execute it with POST /quotes/{quoteId}/execute")
	}
	if r.CurrencyCode != q.SendingCurrency {
		return ports.Transaction{}, fault.Invalid("currencyCode", "the quote is funded in "+q.SendingCurrency)
	}
	mismatch := ""
	if r.CurrencyAmount != 0 && r.CurrencyAmount != q.TotalSendingAmount {
		mismatch = fmt.Sprintf("received %d %s, expected %d", r.CurrencyAmount, r.CurrencyCode, q.TotalSendingAmount)
	}
	if _, err := s.execute(ctx, platformID, q.ID, execution{quote: &q, mismatch: mismatch}); err != nil {
		return ports.Transaction{}, err
	}
	t, err := s.store.Read().Transactions().Get(ctx, platformID, q.TransactionID)
	if err != nil {
		return ports.Transaction{}, fmt.Errorf("sandbox send %s: read transaction: %w", q.ID, err)
	}
	return t, nil
}
