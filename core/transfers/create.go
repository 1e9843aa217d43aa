package transfers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/posting"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// OutRequest is a transfer-out: from one of the platform's internal
// accounts to an external account in the same currency.
type OutRequest struct {
	SourceAccountID      string
	DestinationAccountID string
	// PaymentRail is the rail asked for; empty lets the service choose.
	PaymentRail string
	// Amount in minor units of the accounts' currency.
	Amount                int64
	RemittanceInformation string
	PurposeOfPayment      string
	// IdempotencyKey, when set, derives the transaction id (see
	// TransactionID).
	IdempotencyKey string
	// AgentID names the agent that initiated the transfer, if one did.
	AgentID string
	// ReleaseHold, when set, is an open hold voided in the same ledger
	// entry that places the transfer's hold (an approved agent action's),
	// so its funds pass from one hold to the other without being free.
	ReleaseHold string
}

// InRequest is a transfer-in: a pull from an external account into one of
// the platform's internal accounts in the same currency.
type InRequest struct {
	SourceAccountID      string
	DestinationAccountID string
	Amount               int64
	IdempotencyKey       string
	// AgentID names the agent that initiated the transfer, if one did.
	AgentID string
}

// Operation names, part of a keyed transaction id.
const (
	opTransferOut = "transfer-out"
	opTransferIn  = "transfer-in"
)

// TransferOut creates an OUTGOING transaction: it holds the amount on the
// internal account (refused with 400 INVALID_AMOUNT when the available
// balance does not cover it) and, atomically with the hold, records the
// transaction PENDING and schedules its submission to the rail
// (LedgerStore.PostWith).
func (s *Service) TransferOut(ctx context.Context, platformID string, r OutRequest) (ports.Transaction, error) {
	if err := checkOut(r); err != nil {
		return ports.Transaction{}, err
	}
	src, dst, pcid, err := s.parties(ctx, platformID, r.SourceAccountID, r.DestinationAccountID, ports.RailPayout, r.Amount)
	if err != nil {
		return ports.Transaction{}, err
	}
	rail, err := s.rails.ForPayout(r.PaymentRail, src.Currency, dst.Info)
	if err != nil {
		return ports.Transaction{}, err
	}
	t := s.newOutgoing(platformID, r, src, dst, pcid, rail.Spec().Name)

	// The hold is the only gate on the balance. The transaction (PENDING)
	// and its submission job are written with it, in the ledger's
	// transaction: a hold never exists without its transaction, and a
	// refused hold writes nothing.
	req := ports.RailRequest{
		Ref: t.ID, Rail: t.PaymentRail, Direction: ports.RailPayout,
		Currency: t.SourceCurrency, Amount: t.SentAmount, Account: dst,
	}
	job, err := submitJob(t, src.ID, req)
	if err != nil {
		return ports.Transaction{}, err
	}
	hold := ledger.Entry{ID: holdPrefix + t.ID, Ref: t.ID}
	if r.ReleaseHold != "" {
		hold.Transfers = append(hold.Transfers, ledger.Transfer{ID: holdPrefix + t.ID + ":release", Kind: ledger.VoidPending,
			PendingID: r.ReleaseHold, Code: CodeTransferRelease})
	}
	hold.Transfers = append(hold.Transfers, ledger.Transfer{
		ID:              holdPrefix + t.ID,
		DebitAccountID:  src.ID,
		CreditAccountID: ledger.RailSettlementID(t.PaymentRail, t.SourceCurrency),
		Amount:          t.SentAmount,
		Currency:        t.SourceCurrency,
		Kind:            ledger.Pending,
		Code:            CodeTransferOut,
	})
	_, err = s.post(ctx, hold, ports.Records{Transactions: []ports.Transaction{t}, Jobs: []ports.Job{job}})
	switch {
	case err == nil:
		return t, nil
	case errors.Is(err, ledger.ErrExists), errors.Is(err, ports.ErrConflict):
		// A retry of a keyed request: the first attempt placed the hold
		// and wrote the transaction with it.
		prev, found, err := s.existing(ctx, t)
		if err != nil || found {
			return prev, err
		}
		// A hold without its transaction cannot be written; one placed
		// by hand is the reaper's (ReapOrphanHolds), never paid out.
		return ports.Transaction{}, errAbandoned
	case errors.Is(err, ledger.ErrExistsDifferent):
		return ports.Transaction{}, errKeyReused
	case errors.Is(err, ledger.ErrExceedsCredits):
		return ports.Transaction{}, s.insufficient(ctx, src, r.Amount)
	case errors.Is(err, ledger.ErrOverflow):
		return ports.Transaction{}, fault.New(fault.KindInvalid, "INVALID_AMOUNT", "the amount is too large")
	}
	return ports.Transaction{}, fmt.Errorf("transfer-out %s: hold: %w", t.ID, err)
}

// checkOut validates a transfer-out request's own fields.
func checkOut(r OutRequest) error {
	var errs fault.Collector
	CheckID(&errs, "source.accountId", r.SourceAccountID, "InternalAccount:")
	CheckID(&errs, "destination.accountId", r.DestinationAccountID, "ExternalAccount:")
	CheckAmount(&errs, r.Amount)
	if utf8.RuneCountInString(r.RemittanceInformation) > MaxRemittanceInformation {
		errs.Add("remittanceInformation", fmt.Sprintf("must be at most %d characters", MaxRemittanceInformation))
	}
	if r.PurposeOfPayment != "" && !slices.Contains(Purposes, r.PurposeOfPayment) {
		errs.Add("purposeOfPayment", fmt.Sprintf("must be one of %v", Purposes))
	}
	return errs.Err()
}

// newOutgoing is the PENDING OUTGOING transaction of a transfer-out on
// rail.
func (s *Service) newOutgoing(platformID string, r OutRequest, src ports.InternalAccount, dst ports.ExternalAccount, pcid, rail string) ports.Transaction {
	now := s.clock.Now().UTC()
	t := ports.Transaction{
		ID:                    s.transactionID(platformID, opTransferOut, r.IdempotencyKey),
		PlatformID:            platformID,
		CustomerID:            src.CustomerID,
		PlatformCustomerID:    pcid,
		Type:                  transactions.TypeOutgoing,
		Status:                transactions.StatusPending,
		SourceAccountID:       src.ID,
		SourceCurrency:        src.Currency,
		DestinationAccountID:  dst.ID,
		DestinationCurrency:   dst.Currency,
		PaymentRail:           rail,
		SenderIdentifiers:     []string{src.ID},
		ReceiverIdentifiers:   transactions.AccountIdentifiers(dst),
		SentAmount:            r.Amount,
		ReceivedAmount:        r.Amount,
		RemittanceInformation: r.RemittanceInformation,
		PurposeOfPayment:      r.PurposeOfPayment,
		RailSelectionMode:     RailAuto,
		AgentID:               r.AgentID,
		CreatedAt:             now,
		UpdatedAt:             now,
	}
	t.Reference = Reference(t.ID)
	if r.PaymentRail != "" {
		t.RailSelectionMode = RailManual
	}
	return t
}

// TransferIn creates an INCOMING transaction pulling from a pull-capable
// external account; nothing moves in the ledger until the rail succeeds.
func (s *Service) TransferIn(ctx context.Context, platformID string, r InRequest) (ports.Transaction, error) {
	var errs fault.Collector
	CheckID(&errs, "source.accountId", r.SourceAccountID, "ExternalAccount:")
	CheckID(&errs, "destination.accountId", r.DestinationAccountID, "InternalAccount:")
	CheckAmount(&errs, r.Amount)
	if err := errs.Err(); err != nil {
		return ports.Transaction{}, err
	}
	dst, src, pcid, err := s.parties(ctx, platformID, r.DestinationAccountID, r.SourceAccountID, ports.RailPull, r.Amount)
	if err != nil {
		return ports.Transaction{}, err
	}
	rail, err := s.rails.ForPull(dst.Currency, src.Info.AccountType)
	if err != nil {
		return ports.Transaction{}, err
	}
	now := s.clock.Now().UTC()
	t := ports.Transaction{
		ID:                   s.transactionID(platformID, opTransferIn, r.IdempotencyKey),
		PlatformID:           platformID,
		CustomerID:           dst.CustomerID,
		PlatformCustomerID:   pcid,
		Type:                 transactions.TypeIncoming,
		Status:               transactions.StatusPending,
		SourceAccountID:      src.ID,
		SourceCurrency:       src.Currency,
		DestinationAccountID: dst.ID,
		DestinationCurrency:  dst.Currency,
		PaymentRail:          rail.Spec().Name,
		RailSelectionMode:    RailAuto,
		SenderIdentifiers:    transactions.AccountIdentifiers(src),
		ReceiverIdentifiers:  []string{dst.ID},
		SentAmount:           r.Amount,
		ReceivedAmount:       r.Amount,
		AgentID:              r.AgentID,
		CreatedAt:            now,
		UpdatedAt:            now,
	}
	t.Reference = Reference(t.ID)
	return s.create(ctx, t, dst.ID, ports.RailRequest{
		Ref: t.ID, Rail: t.PaymentRail, Direction: ports.RailPull,
		Currency: t.DestinationCurrency, Amount: t.ReceivedAmount, Account: src,
	})
}

// create records t (PENDING) and its transfer.submit job in one unit of
// work. A transaction that already exists under t's id (a retried keyed
// request) is returned when it is the same transfer.
func (s *Service) create(ctx context.Context, t ports.Transaction, internalID string, req ports.RailRequest) (ports.Transaction, error) {
	job, err := submitJob(t, internalID, req)
	if err != nil {
		return ports.Transaction{}, err
	}
	err = s.store.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Transactions().Create(ctx, t); err != nil {
			return err
		}
		return tx.Jobs().Enqueue(ctx, job)
	})
	if errors.Is(err, ports.ErrConflict) {
		prev, found, perr := s.existing(ctx, t)
		if perr != nil || found {
			return prev, perr
		}
	}
	if err != nil {
		return ports.Transaction{}, fmt.Errorf("transfer %s: record: %w", t.ID, err)
	}
	return t, nil
}

// submitJob is the transfer.submit job of t, due at once.
func submitJob(t ports.Transaction, internalID string, req ports.RailRequest) (ports.Job, error) {
	payload, err := json.Marshal(jobPayload{PlatformID: t.PlatformID, TransactionID: t.ID, InternalAccountID: internalID, Request: req,
		AgentID: t.AgentID})
	if err != nil {
		return ports.Job{}, fmt.Errorf("transfer %s: job payload: %w", t.ID, err)
	}
	return ports.Job{Kind: KindSubmit, Key: KindSubmit + ":" + t.ID, Payload: payload, RunAt: t.CreatedAt}, nil
}

// existing returns the stored transaction with t's id, if any: the result
// of an earlier attempt of the same keyed request. One that moved other
// money is a reused key.
func (s *Service) existing(ctx context.Context, t ports.Transaction) (ports.Transaction, bool, error) {
	prev, err := s.store.Read().Transactions().Get(ctx, t.PlatformID, t.ID)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Transaction{}, false, nil
	}
	if err != nil {
		return ports.Transaction{}, false, fmt.Errorf("transfer %s: read: %w", t.ID, err)
	}
	if prev.Type != t.Type || prev.SourceAccountID != t.SourceAccountID ||
		prev.DestinationAccountID != t.DestinationAccountID || prev.SentAmount != t.SentAmount {
		return ports.Transaction{}, true, errKeyReused
	}
	return prev, true, nil
}

func (s *Service) transactionID(platformID, op, key string) string {
	if key == "" {
		return s.ids.New("Transaction")
	}
	return TransactionID(platformID, op, key)
}

// post posts e with recs, creating a missing system account on first use
// (core/posting).
func (s *Service) post(ctx context.Context, e ledger.Entry, recs ports.Records) (ledger.JournalEntry, error) {
	return posting.Post(ctx, s.ledger, e, recs)
}

// insufficient is the refusal of a transfer-out the available balance does
// not cover.
func (s *Service) insufficient(ctx context.Context, a ports.InternalAccount, requested int64) error {
	e := &fault.Error{Kind: fault.KindInvalid, Code: "INVALID_AMOUNT", Message: "insufficient available balance",
		Fields:  []fault.FieldError{{Field: "amount", Message: "exceeds the source account's available balance"}},
		Details: map[string]any{"requested": requested, "currency": a.Currency}}
	if la, err := s.ledger.Account(ctx, a.ID); err == nil {
		e.Details["available"] = la.Available()
	}
	return e
}

// parties reads a transfer's internal and external account and the
// customer owning them in one read, and checks them in the order the
// request names them (the source first): each account exists and is
// ACTIVE (errors name its field), both belong to the same owner in the
// same currency, and the customer exists; a payout's amount must be in
// the platform's configured range for its currency (platforms.CheckSend),
// and a pull's currency must take INCOMING payments (CheckReceive).
// It returns the customer's platformCustomerId ("" for the platform's own
// accounts).
func (s *Service) parties(ctx context.Context, platformID, internalID, externalID string, dir ports.RailDirection, amount int64) (
	ports.InternalAccount, ports.ExternalAccount, string, error) {
	p, err := s.store.Read().Parties().Get(ctx, platformID, internalID, externalID, time.Time{})
	if err != nil {
		return ports.InternalAccount{}, ports.ExternalAccount{}, "", fmt.Errorf("read %s and %s: %w", internalID, externalID, err)
	}
	in, ex, pcid, err := checkParties(p, internalID, externalID, dir)
	switch {
	case err != nil:
	case dir == ports.RailPayout:
		// The platform's configured range for the currency it sends.
		err = platforms.CheckSend(p.Currency, "amount", amount)
	default:
		err = platforms.CheckReceive(p.Currency, "destination.accountId")
	}
	return in, ex, pcid, err
}

// checkParties is the checks of parties, on what it read.
func checkParties(p ports.Parties, internalID, externalID string, dir ports.RailDirection) (
	ports.InternalAccount, ports.ExternalAccount, string, error) {
	in, ex := p.Internal, p.External
	internalField, externalField := "source.accountId", "destination.accountId"
	checks := []func() error{
		func() error { return checkInternal(in, internalID, internalField) },
		func() error { return checkExternal(ex, externalID, externalField) },
	}
	switch dir {
	case ports.RailPull:
		internalField, externalField = externalField, internalField
		checks[0], checks[1] = checks[1], checks[0]
	case ports.RailPayout:
		checks = append(checks, func() error { return CheckPayoutSource(in, internalField) })
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return in, ex, "", err
		}
	}
	if err := sameOwnerAndCurrency(in, ex, externalField); err != nil {
		return in, ex, "", err
	}
	if in.CustomerID == "" {
		return in, ex, "", nil
	}
	if p.Customer.ID == "" || p.Customer.IsDeleted {
		return in, ex, "", fault.NotFound("USER_NOT_FOUND", "customer "+in.CustomerID+" not found")
	}
	// A customer under review or rejected may not send (incoming money is
	// never blocked).
	if dir == ports.RailPayout {
		if err := kyc.OutgoingAllowed(p.Customer); err != nil {
			return in, ex, "", err
		}
	}
	return in, ex, p.Customer.PlatformCustomerID, nil
}

func checkInternal(a ports.InternalAccount, id, field string) error {
	if a.ID == "" {
		return NotFound(field, "internal account "+id+" not found")
	}
	if a.Status != accounts.StatusActive {
		return fault.Invalid(field, "the internal account is "+a.Status+"; only ACTIVE accounts can transfer")
	}
	return nil
}

func checkExternal(a ports.ExternalAccount, id, field string) error {
	if a.ID == "" {
		return NotFound(field, "external account "+id+" not found")
	}
	if a.Status != external.StatusActive {
		return fault.Invalid(field, "the external account is "+a.Status+"; only ACTIVE accounts can transfer")
	}
	return nil
}

// sameOwnerAndCurrency checks that the external account belongs to the
// internal account's owner (the same customer, or both the platform's) and
// holds the same currency; field names the external account.
func sameOwnerAndCurrency(in ports.InternalAccount, ex ports.ExternalAccount, field string) error {
	if in.CustomerID != ex.CustomerID {
		owner := "the platform"
		if in.CustomerID != "" {
			owner = "customer " + in.CustomerID
		}
		return fault.Invalid(field, "the external account does not belong to "+owner+", the internal account's owner")
	}
	if in.Currency != ex.Currency {
		return fault.Invalid(field, fmt.Sprintf("the external account holds %s and the internal account %s; transfers are same-currency",
			ex.Currency, in.Currency))
	}
	return nil
}

// CheckID adds to errs when id, of field, is missing or not an id of
// prefix's type ("InternalAccount:"). Quotes check their ids the same way.
func CheckID(errs *fault.Collector, field, id, prefix string) {
	switch {
	case id == "":
		errs.Add(field, "is required")
	case !strings.HasPrefix(id, prefix):
		errs.Add(field, "must be an "+strings.TrimSuffix(prefix, ":")+" id")
	}
}

// CheckAmount adds to errs when a transfer's amount is missing, not
// positive or above money.MaxAmount.
func CheckAmount(errs *fault.Collector, amount int64) {
	if amount <= 0 || amount > money.MaxAmount {
		errs.Add("amount", fmt.Sprintf("must be an integer from 1 to %d (smallest currency unit)", money.MaxAmount))
	}
}

// CheckPayoutSource refuses a transfer-out from an EMBEDDED_WALLET (400
// naming field): every send from a wallet is authorised by a session key,
// and a transfer-out carries no wallet signature; the wallet pays through a
// quote executed with Service-Wallet-Signature.
func CheckPayoutSource(a ports.InternalAccount, field string) error {
	if a.Type != accounts.TypeEmbeddedWallet {
		return nil
	}
	return fault.Invalid(field, "an EMBEDDED_WALLET sends only through a quote executed with Service-Wallet-Signature "+
		"(POST /quotes, then POST /quotes/{quoteId}/execute); a transfer-out carries no wallet signature")
}

// NotFound is the 404 of a referenced resource: message, with the field
// that named it in details.
func NotFound(field, message string) error {
	return &fault.Error{Kind: fault.KindNotFound, Code: "NOT_FOUND", Message: message, Details: map[string]any{"field": field}}
}
