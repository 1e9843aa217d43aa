package transfers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
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
}

// InRequest is a transfer-in: a pull from an external account into one of
// the platform's internal accounts in the same currency.
type InRequest struct {
	SourceAccountID      string
	DestinationAccountID string
	Amount               int64
	IdempotencyKey       string
}

// Operation names, part of a keyed transaction id.
const (
	opTransferOut = "transfer-out"
	opTransferIn  = "transfer-in"
)

// TransferOut creates an OUTGOING transaction: it holds the amount on the
// internal account (refused with 400 INVALID_AMOUNT when the available
// balance does not cover it), then records the transaction PENDING and
// schedules its submission to the rail, in one unit of work.
func (s *Service) TransferOut(ctx context.Context, platformID string, r OutRequest) (ports.Transaction, error) {
	var errs fault.Collector
	checkID(&errs, "source.accountId", r.SourceAccountID, "InternalAccount:")
	checkID(&errs, "destination.accountId", r.DestinationAccountID, "ExternalAccount:")
	checkAmount(&errs, r.Amount)
	if utf8.RuneCountInString(r.RemittanceInformation) > MaxRemittanceInformation {
		errs.Add("remittanceInformation", fmt.Sprintf("must be at most %d characters", MaxRemittanceInformation))
	}
	if r.PurposeOfPayment != "" && !slices.Contains(Purposes, r.PurposeOfPayment) {
		errs.Add("purposeOfPayment", fmt.Sprintf("must be one of %v", Purposes))
	}
	if err := errs.Err(); err != nil {
		return ports.Transaction{}, err
	}
	src, err := s.internalAccount(ctx, platformID, r.SourceAccountID, "source.accountId")
	if err != nil {
		return ports.Transaction{}, err
	}
	dst, err := s.externalAccount(ctx, platformID, r.DestinationAccountID, "destination.accountId")
	if err != nil {
		return ports.Transaction{}, err
	}
	if err := sameOwnerAndCurrency(src, dst, "destination.accountId"); err != nil {
		return ports.Transaction{}, err
	}
	rail, err := s.rails.ForPayout(r.PaymentRail, src.Currency, dst.Info)
	if err != nil {
		return ports.Transaction{}, err
	}
	pcid, err := s.platformCustomerID(ctx, platformID, src.CustomerID)
	if err != nil {
		return ports.Transaction{}, err
	}
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
		PaymentRail:           rail.Spec().Name,
		SenderIdentifiers:     []string{src.ID},
		ReceiverIdentifiers:   identifiers(dst),
		SentAmount:            r.Amount,
		ReceivedAmount:        r.Amount,
		RemittanceInformation: r.RemittanceInformation,
		PurposeOfPayment:      r.PurposeOfPayment,
		CreatedAt:             now,
		UpdatedAt:             now,
	}
	t.Reference = Reference(t.ID)
	if r.PaymentRail != "" {
		t.RailSelectionMode = RailManual
	} else {
		t.RailSelectionMode = RailAuto
	}

	// (1) The hold: the only gate on the balance.
	hold := ledger.Entry{ID: holdPrefix + t.ID, Ref: t.ID, Transfers: []ledger.Transfer{{
		ID:              holdPrefix + t.ID,
		DebitAccountID:  src.ID,
		CreditAccountID: ledger.RailSettlementID(t.PaymentRail, t.SourceCurrency),
		Amount:          t.SentAmount,
		Currency:        t.SourceCurrency,
		Kind:            ledger.Pending,
		Code:            CodeTransferOut,
	}}}
	_, err = s.post(ctx, hold)
	switch {
	case err == nil:
	case errors.Is(err, ledger.ErrExists):
		// A retry of a keyed request: the first attempt placed the hold.
		prev, found, err := s.existing(ctx, t)
		if err != nil || found {
			return prev, err
		}
		p, err := s.ledger.Pending(ctx, hold.ID)
		if err != nil {
			return ports.Transaction{}, fmt.Errorf("transfer-out %s: read hold: %w", t.ID, err)
		}
		if p.Status != ledger.PendingOpen {
			return ports.Transaction{}, errAbandoned
		}
	case errors.Is(err, ledger.ErrExistsDifferent):
		return ports.Transaction{}, errKeyReused
	case errors.Is(err, ledger.ErrExceedsCredits):
		return ports.Transaction{}, s.insufficient(ctx, src, r.Amount)
	case errors.Is(err, ledger.ErrAmountInvalid):
		return ports.Transaction{}, fault.New(fault.KindInvalid, "INVALID_AMOUNT", "the amount is too large")
	default:
		return ports.Transaction{}, fmt.Errorf("transfer-out %s: hold: %w", t.ID, err)
	}

	// (2) The transaction and its submission, together. A crash before
	// this commits leaves a hold without a transaction, which the reaper
	// voids (ReapOrphanHolds) unless a retry with the same key comes first.
	return s.create(ctx, t, src.ID, ports.RailRequest{
		Ref: t.ID, Rail: t.PaymentRail, Direction: ports.RailPayout,
		Currency: t.SourceCurrency, Amount: t.SentAmount, Account: dst,
	})
}

// TransferIn creates an INCOMING transaction pulling from a pull-capable
// external account; nothing moves in the ledger until the rail succeeds.
func (s *Service) TransferIn(ctx context.Context, platformID string, r InRequest) (ports.Transaction, error) {
	var errs fault.Collector
	checkID(&errs, "source.accountId", r.SourceAccountID, "ExternalAccount:")
	checkID(&errs, "destination.accountId", r.DestinationAccountID, "InternalAccount:")
	checkAmount(&errs, r.Amount)
	if err := errs.Err(); err != nil {
		return ports.Transaction{}, err
	}
	src, err := s.externalAccount(ctx, platformID, r.SourceAccountID, "source.accountId")
	if err != nil {
		return ports.Transaction{}, err
	}
	dst, err := s.internalAccount(ctx, platformID, r.DestinationAccountID, "destination.accountId")
	if err != nil {
		return ports.Transaction{}, err
	}
	if err := sameOwnerAndCurrency(dst, src, "source.accountId"); err != nil {
		return ports.Transaction{}, err
	}
	rail, err := s.rails.ForPull(dst.Currency, src.Info.AccountType)
	if err != nil {
		return ports.Transaction{}, err
	}
	pcid, err := s.platformCustomerID(ctx, platformID, dst.CustomerID)
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
		SenderIdentifiers:    identifiers(src),
		ReceiverIdentifiers:  []string{dst.ID},
		SentAmount:           r.Amount,
		ReceivedAmount:       r.Amount,
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
	payload, err := json.Marshal(jobPayload{PlatformID: t.PlatformID, TransactionID: t.ID, InternalAccountID: internalID, Request: req})
	if err != nil {
		return ports.Transaction{}, fmt.Errorf("transfer %s: job payload: %w", t.ID, err)
	}
	err = s.store.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Transactions().Create(ctx, t); err != nil {
			return err
		}
		return tx.Jobs().Enqueue(ctx, ports.Job{Kind: KindSubmit, Key: KindSubmit + ":" + t.ID, Payload: payload, RunAt: t.CreatedAt})
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

// post posts e, creating a missing rail settlement account first (the
// system accounts are created at start-up for the rail table; a rail added
// since gets its account on first use).
func (s *Service) post(ctx context.Context, e ledger.Entry) (ledger.JournalEntry, error) {
	je, err := s.ledger.Post(ctx, e)
	var lerr *ledger.Error
	if errors.As(err, &lerr) && lerr.Code == ledger.CodeAccountNotFound && ledger.IsSystemAccount(lerr.AccountID) {
		t := e.Transfers[0]
		acct := ledger.Account{ID: lerr.AccountID, Currency: t.Currency, Kind: ledger.KindRailSettlement}
		if cerr := s.ledger.CreateAccounts(ctx, acct); cerr != nil {
			return je, fmt.Errorf("create settlement account %s: %w", acct.ID, cerr)
		}
		je, err = s.ledger.Post(ctx, e)
	}
	return je, err
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

func (s *Service) internalAccount(ctx context.Context, platformID, id, field string) (ports.InternalAccount, error) {
	a, err := s.store.Read().InternalAccounts().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return a, notFound(field, "internal account "+id+" not found")
	}
	if err != nil {
		return a, fmt.Errorf("read internal account %s: %w", id, err)
	}
	if a.Status != accounts.StatusActive {
		return a, fault.Invalid(field, "the internal account is "+a.Status+"; only ACTIVE accounts can transfer")
	}
	return a, nil
}

func (s *Service) externalAccount(ctx context.Context, platformID, id, field string) (ports.ExternalAccount, error) {
	a, err := s.store.Read().ExternalAccounts().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return a, notFound(field, "external account "+id+" not found")
	}
	if err != nil {
		return a, fmt.Errorf("read external account %s: %w", id, err)
	}
	if a.Status != external.StatusActive {
		return a, fault.Invalid(field, "the external account is "+a.Status+"; only ACTIVE accounts can transfer")
	}
	return a, nil
}

// platformCustomerID is the customer's platformCustomerId ("" for the
// platform's own accounts).
func (s *Service) platformCustomerID(ctx context.Context, platformID, customerID string) (string, error) {
	if customerID == "" {
		return "", nil
	}
	c, err := s.store.Read().Customers().Get(ctx, platformID, customerID)
	if errors.Is(err, ports.ErrNotFound) || (err == nil && c.IsDeleted) {
		return "", fault.NotFound("USER_NOT_FOUND", "customer "+customerID+" not found")
	}
	if err != nil {
		return "", fmt.Errorf("read customer %s: %w", customerID, err)
	}
	return c.PlatformCustomerID, nil
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

// identifiers are the values the transaction list's account-identifier
// filters match for an external account: its id and primary identifier.
func identifiers(a ports.ExternalAccount) []string {
	out := []string{a.ID}
	if p := external.PrimaryIdentifier(a.Info); p != "" && p != a.ID {
		out = append(out, p)
	}
	return out
}

func checkID(errs *fault.Collector, field, id, prefix string) {
	switch {
	case id == "":
		errs.Add(field, "is required")
	case !strings.HasPrefix(id, prefix):
		errs.Add(field, "must be an "+strings.TrimSuffix(prefix, ":")+" id")
	}
}

func checkAmount(errs *fault.Collector, amount int64) {
	if amount <= 0 {
		errs.Add("amount", "is required and must be a positive integer (smallest currency unit)")
	}
}

func notFound(field, message string) error {
	return &fault.Error{Kind: fault.KindNotFound, Code: "NOT_FOUND", Message: message, Details: map[string]any{"field": field}}
}
