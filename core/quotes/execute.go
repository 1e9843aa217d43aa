package quotes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/fault"
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
)

// leg is one hold of an executed quote.
type leg struct {
	name           string
	debit, credit  string
	amount         int64
	currency, code string
}

// legs are the holds executing q places, debiting source: see the package
// comment. A same-currency quote pays the rail's settlement account
// directly.
func legs(q ports.Quote, source string) []leg {
	settlement := ledger.RailSettlementID(q.PaymentRail, q.ReceivingCurrency)
	net := q.TotalSendingAmount - q.FeesIncluded
	var out []leg
	if q.SendingCurrency == q.ReceivingCurrency {
		out = append(out, leg{"payout", source, settlement, net, q.SendingCurrency, CodeQuotePayout})
	} else {
		out = append(out,
			leg{"send", source, ledger.FXPositionID(q.SendingCurrency), net, q.SendingCurrency, CodeQuoteSend},
			leg{"payout", ledger.FXPositionID(q.ReceivingCurrency), settlement, q.TotalReceivingAmount, q.ReceivingCurrency, CodeQuotePayout})
	}
	if q.FeesIncluded > 0 {
		out = append(out, leg{"fee", source, ledger.FeeRevenueID(q.SendingCurrency), q.FeesIncluded, q.SendingCurrency, CodeQuoteFee})
	}
	return out
}

// ledgerSource is the account a quote's holds debit: the internal account,
// or the settlement account of the rail a REALTIME_FUNDING quote's funds
// arrived on.
func ledgerSource(q ports.Quote) string {
	if q.SourceType == SourceRealtimeFunding {
		return ledger.RailSettlementID(fundingRail(q), q.SendingCurrency)
	}
	return q.SourceAccountID
}

func holdEntry(q ports.Quote) ledger.Entry {
	e := ledger.Entry{ID: holdPrefix + q.ID, Ref: q.TransactionID}
	for _, l := range legs(q, ledgerSource(q)) {
		e.Transfers = append(e.Transfers, ledger.Transfer{
			ID: holdPrefix + q.ID + ":" + l.name, DebitAccountID: l.debit, CreditAccountID: l.credit,
			Amount: l.amount, Currency: l.currency, Kind: ledger.Pending, Code: l.code,
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
	settled := ledger.Entry{ID: settlePrefix + q.ID, Ref: q.TransactionID}
	for _, l := range legs(q, ledgerSource(q)) {
		settled.Transfers = append(settled.Transfers, ledger.Transfer{
			ID: settlePrefix + q.ID + ":" + l.name, DebitAccountID: l.debit, CreditAccountID: l.credit,
			Amount: l.amount, Currency: l.currency, Kind: ledger.PostPending, Code: l.code,
		})
	}
	return ledger.Reversal(settled, returnPrefix+q.ID, q.TransactionID)
}

// Execute executes a PENDING quote whose source is an internal account:
// its holds are placed (400 INVALID_AMOUNT when the available balance does
// not cover totalSendingAmount), then the quote and its transaction become
// PROCESSING and the payout is scheduled. An EMBEDDED_WALLET source needs
// signature, the Service-Wallet-Signature over the quote's payloadToSign.
// At or after expiresAt it is refused (409 QUOTE_EXPIRED) and the quote
// expires; a quote past PENDING is 409 CONFLICT.
func (s *Service) Execute(ctx context.Context, platformID, quoteID, signature string) (ports.Quote, error) {
	return s.execute(ctx, platformID, quoteID, execution{account: true, signature: signature})
}

// execution is how begin executes a quote.
type execution struct {
	// account marks the execution of an ACCOUNT-sourced quote (Execute,
	// or Create's immediate one): its source account must be ACTIVE, and
	// an embedded wallet's signature must verify.
	account   bool
	signature string
	// verified: signature was verified over the quote, outside its lock.
	verified bool
	// parties, when set, are the quote's accounts as Create just read
	// them (an immediate execution); otherwise begin reads them.
	parties *ports.Parties
	// mismatch, when set, is the funding amount of a sandbox send that
	// does not match: the quote fails instead (FUNDING_AMOUNT_MISMATCH).
	mismatch string
}

// needsSignature stops, before any money moves, the execution of an
// embedded wallet's quote whose signature is not verified yet.
type needsSignature struct{ quote ports.Quote }

func (*needsSignature) Error() string { return "quotes: the wallet signature is not verified yet" }

// execute runs begin; an embedded wallet's signature is verified between
// two attempts, so the verifier (which may read credentials) never runs
// under the quote's lock while an internal account's quote is read,
// checked and executed in one unit of work.
func (s *Service) execute(ctx context.Context, platformID, quoteID string, ex execution) (ports.Quote, error) {
	q, err := s.begin(ctx, platformID, quoteID, ex)
	var ns *needsSignature
	if !errors.As(err, &ns) {
		return q, err
	}
	if err := s.verifySignature(ctx, ns.quote, ex.signature); err != nil {
		return ports.Quote{}, err
	}
	ex.verified = true
	return s.begin(ctx, platformID, quoteID, ex)
}

// checkSource checks, for ex.account, that q is an ACCOUNT-sourced quote
// whose source account is ACTIVE (and, for an embedded wallet, signed) and
// returns its destination external account (nil for a UMA address), read
// with the source in one round trip.
func (s *Service) checkSource(ctx context.Context, tx ports.Tx, q ports.Quote, ex execution) (*ports.ExternalAccount, error) {
	if q.SourceType != SourceAccount {
		return nil, fault.Invalid("quoteId",
			"the quote's source is REALTIME_FUNDING: it executes when its funds arrive by its paymentInstructions (POST /sandbox/send in the sandbox)")
	}
	p := ex.parties
	if p == nil {
		read, err := tx.Parties().Get(ctx, q.PlatformID, q.SourceAccountID, q.DestinationAccountID)
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
	if src.Type == accounts.TypeEmbeddedWallet && !ex.verified {
		return nil, &needsSignature{quote: q}
	}
	if q.DestinationAccountID == "" {
		return nil, nil
	}
	if p.External.ID == "" {
		return nil, fmt.Errorf("execute %s: destination %s: %w", q.ID, q.DestinationAccountID, ports.ErrNotFound)
	}
	return &p.External, nil
}

// verifySignature checks an embedded wallet's Service-Wallet-Signature
// over the quote's payloadToSign.
func (s *Service) verifySignature(ctx context.Context, q ports.Quote, signature string) error {
	if signature == "" {
		return walletError(CodeWalletSignatureMissing, "the Service-Wallet-Signature header is required to execute a quote from an EMBEDDED_WALLET")
	}
	if s.wallet == nil {
		// Outside the sandbox until wallet authentication lands: refuse
		// the signature (401) rather than fail the request (500).
		return walletError(CodeWalletSignatureInvalid, "no wallet signature verifier is configured on this service, so the signature cannot be verified")
	}
	err := s.wallet.Verify(ctx, q.PlatformID, q.SourceAccountID, storedPayload(q), signature)
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

// begin moves a PENDING quote's money: under the quote's row lock it
// checks the quote's source (ex.account), places the holds and marks the
// quote and its transaction PROCESSING with the payout's submission job,
// or expires the quote when expiresAt has passed, or fails it on a
// mismatched sandbox send (ex.mismatch).
//
// The holds are posted inside the unit of work, so a failed commit leaves
// them open on a PENDING quote: the retry (same entry id, ErrExists)
// carries on with them, and the expiry job voids them when no retry comes.
func (s *Service) begin(ctx context.Context, platformID, quoteID string, ex execution) (ports.Quote, error) {
	var (
		out     ports.Quote
		expired bool
	)
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		expired = false
		q, err := tx.Quotes().GetForUpdate(ctx, platformID, quoteID)
		if errors.Is(err, ports.ErrNotFound) {
			return errNotFound
		}
		if err != nil {
			return fmt.Errorf("execute %s: lock: %w", quoteID, err)
		}
		var dest *ports.ExternalAccount
		if ex.account {
			if dest, err = s.checkSource(ctx, tx, q, ex); err != nil {
				return err
			}
		}
		switch q.Status {
		case StatusPending:
		case StatusExpired:
			return errExpired
		default:
			return errNotPending(q.Status)
		}
		now := s.clock.Now().UTC()
		if !now.Before(q.ExpiresAt) {
			expired = true
			out, err = s.expireLocked(ctx, tx, q, now)
			return err
		}
		t, err := tx.Transactions().GetForUpdate(ctx, platformID, q.TransactionID)
		if err != nil {
			return fmt.Errorf("execute %s: transaction %s: %w", q.ID, q.TransactionID, err)
		}
		if ex.mismatch != "" {
			q.Status, q.UpdatedAt = StatusFailed, now
			t.Status, t.FailureReason, t.UpdatedAt = transactions.StatusFailed, ReasonFundingAmountMismatch, now
			// Nothing was booked: the mismatched funds go back to the payer.
			t.Details.Refund = &ports.Refund{Reference: refundReference(t), InitiatedAt: now, SettledAt: &now,
				Status: RefundCompleted, Reason: RefundTransactionFailed}
			s.log.InfoContext(ctx, "quote funding refused", "quote", q.ID, "detail", ex.mismatch)
			out = q
			return s.save(ctx, tx, q, t)
		}
		if err := s.post(ctx, holdEntry(q)); err != nil {
			switch {
			case errors.Is(err, ledger.ErrExists):
				// An earlier attempt placed the holds and did not commit.
			case errors.Is(err, ledger.ErrExceedsCredits):
				return transactions.Insufficient(ctx, s.ledger, "totalSendingAmount", q.SourceAccountID,
					q.SendingCurrency, q.TotalSendingAmount)
			case errors.Is(err, ledger.ErrAmountInvalid):
				return fault.New(fault.KindInvalid, transactions.CodeInvalidAmount, "the amount is too large")
			default:
				return fmt.Errorf("execute %s: hold: %w", q.ID, err)
			}
		}
		q.Status, q.ExecutedAt, q.UpdatedAt = StatusProcessing, &now, now
		t.Status, t.UpdatedAt = transactions.StatusProcessing, now
		if err := s.save(ctx, tx, q, t); err != nil {
			return err
		}
		req, err := s.railRequest(ctx, tx, q, dest)
		if err != nil {
			return err
		}
		payload, err := json.Marshal(jobPayload{PlatformID: q.PlatformID, QuoteID: q.ID, Request: req})
		if err != nil {
			return fmt.Errorf("execute %s: job payload: %w", q.ID, err)
		}
		out = q
		return tx.Jobs().Enqueue(ctx, ports.Job{Kind: KindSubmit, Key: KindSubmit + ":" + q.ID, Payload: payload, RunAt: now})
	})
	if err != nil {
		return ports.Quote{}, err
	}
	if expired {
		return ports.Quote{}, errExpired
	}
	if out.Status == StatusProcessing {
		s.log.InfoContext(ctx, "quote executed", "quote", out.ID, "transaction", out.TransactionID)
	}
	return out, nil
}

// expireLocked expires a PENDING quote (locked by tx) and its transaction,
// voiding any holds a crashed execution left behind.
func (s *Service) expireLocked(ctx context.Context, tx ports.Tx, q ports.Quote, now time.Time) (ports.Quote, error) {
	_, err := s.ledger.Post(ctx, resolveEntry(q, voidPrefix, ledger.VoidPending))
	switch ledger.CodeOf(err) {
	case ledger.CodeOK:
		if err != nil {
			return q, fmt.Errorf("expire %s: void holds: %w", q.ID, err)
		}
		s.log.WarnContext(ctx, "expired quote's orphan holds released", "quote", q.ID)
	case ledger.CodePendingNotFound, ledger.CodeExists, ledger.CodePendingAlreadyVoided, ledger.CodePendingExpired:
		// No holds were placed, or they are released already.
	default:
		return q, fmt.Errorf("expire %s: void holds: %w", q.ID, err)
	}
	t, err := tx.Transactions().GetForUpdate(ctx, q.PlatformID, q.TransactionID)
	if err != nil {
		return q, fmt.Errorf("expire %s: transaction %s: %w", q.ID, q.TransactionID, err)
	}
	q.Status, q.UpdatedAt = StatusExpired, now
	if !transactions.Terminal(t.Status) {
		t.Status, t.FailureReason, t.UpdatedAt = transactions.StatusExpired, ReasonQuoteExpired, now
	}
	return q, s.save(ctx, tx, q, t)
}

func (s *Service) save(ctx context.Context, tx ports.Tx, q ports.Quote, t ports.Transaction) error {
	if err := tx.Quotes().Update(ctx, q); err != nil {
		return fmt.Errorf("quote %s: update: %w", q.ID, err)
	}
	if err := tx.Transactions().Update(ctx, t); err != nil {
		return fmt.Errorf("quote %s: update transaction %s: %w", q.ID, t.ID, err)
	}
	return nil
}

// railRequest is the payout of q: to its external account (a snapshot, so
// an account deleted meanwhile does not strand the payout; dest when the
// caller read it already) or UMA address.
func (s *Service) railRequest(ctx context.Context, tx ports.Tx, q ports.Quote, dest *ports.ExternalAccount) (ports.RailRequest, error) {
	req := ports.RailRequest{Ref: q.TransactionID, Rail: q.PaymentRail, Direction: ports.RailPayout,
		Currency: q.ReceivingCurrency, Amount: q.TotalReceivingAmount, Purpose: ports.RailPurposeQuote,
		UmaAddress: q.DestinationUmaAddress}
	switch {
	case dest != nil:
		req.Account = *dest
	case q.DestinationAccountID != "":
		a, err := tx.ExternalAccounts().Get(ctx, q.PlatformID, q.DestinationAccountID)
		if err != nil {
			return req, fmt.Errorf("execute %s: destination %s: %w", q.ID, q.DestinationAccountID, err)
		}
		req.Account = a
	}
	return req, nil
}

// post posts e, creating a missing system account it names first (system
// accounts are created at start-up for the currencies and rail table; a
// rail added since gets its account on first use).
func (s *Service) post(ctx context.Context, e ledger.Entry) error {
	_, err := s.ledger.Post(ctx, e)
	var lerr *ledger.Error
	for range len(e.Transfers) {
		if !errors.As(err, &lerr) || lerr.Code != ledger.CodeAccountNotFound || !ledger.IsSystemAccount(lerr.AccountID) {
			return err
		}
		acct, ok := systemAccount(e, lerr.AccountID)
		if !ok {
			return err
		}
		if cerr := s.ledger.CreateAccounts(ctx, acct); cerr != nil {
			return fmt.Errorf("create system account %s: %w", acct.ID, cerr)
		}
		_, err = s.ledger.Post(ctx, e)
	}
	return err
}

// systemAccount is the system account id an entry names, with its kind
// (from the id) and currency (from the transfer).
func systemAccount(e ledger.Entry, id string) (ledger.Account, bool) {
	for _, t := range e.Transfers {
		if t.DebitAccountID != id && t.CreditAccountID != id {
			continue
		}
		for _, kind := range []string{ledger.KindRailSettlement, ledger.KindFXPosition, ledger.KindFeeRevenue} {
			if strings.HasPrefix(id, "sys:"+kind+":") {
				return ledger.Account{ID: id, Currency: t.Currency, Kind: kind}, true
			}
		}
	}
	return ledger.Account{}, false
}

func refundReference(t ports.Transaction) string { return t.Reference + "-R" }

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
	if _, err := s.begin(ctx, platformID, q.ID, execution{mismatch: mismatch}); err != nil {
		return ports.Transaction{}, err
	}
	t, err := s.store.Read().Transactions().Get(ctx, platformID, q.TransactionID)
	if err != nil {
		return ports.Transaction{}, fmt.Errorf("sandbox send %s: read transaction: %w", q.ID, err)
	}
	return t, nil
}
