package quotes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Source is where a quote's money comes from: an internal account
// (ACCOUNT) or a payment the payer sends by the quote's instructions
// (REALTIME_FUNDING).
type Source struct {
	Type string
	// AccountID is the internal account (ACCOUNT).
	AccountID string
	// CustomerID names the customer paying (optional; for ACCOUNT it must
	// be the account's owner unless the account is the platform's pooled
	// account).
	CustomerID string
	// Currency and CryptoNetwork (REALTIME_FUNDING).
	Currency      string
	CryptoNetwork string
}

// Destination is who a quote pays: an external account (ACCOUNT) or a UMA
// address (UMA_ADDRESS, which needs the request's LookupID).
type Destination struct {
	Type        string
	AccountID   string
	PaymentRail string
	UmaAddress  string
	Currency    string
}

// CreateRequest is POST /quotes.
type CreateRequest struct {
	Source      Source
	Destination Destination
	// LockedSide is SENDING or RECEIVING; LockedAmount is in that side's
	// minor units.
	LockedSide            string
	LockedAmount          int64
	LookupID              string
	ImmediatelyExecute    bool
	Description           string
	PurposeOfPayment      string
	RemittanceInformation string
	SenderCustomerInfo    map[string]any
	// IdempotencyKey, when set, derives the quote id (see QuoteID).
	IdempotencyKey string
	// AgentID names the agent that asked for the quote, if one did: its
	// transaction carries it (agentId).
	AgentID string
}

// resolved is what a request names, loaded and checked.
type resolved struct {
	// parties, for an account-to-account quote, are its source and
	// destination accounts and the source's customer, read together.
	parties    *ports.Parties
	customerID string
	// sending side
	source  *ports.InternalAccount
	funding fundingMethod
	// receiving side: an external account paid out to, or an internal
	// account credited (a deposit: a REALTIME_FUNDING source only)
	dest       *ports.ExternalAccount
	credit     *ports.InternalAccount
	lookup     *ports.Lookup
	receiving  string
	rail       string
	railManual bool
}

// Create prices a quote, records it PENDING with its PENDING OUTGOING
// transaction and the job that expires it, and, when asked
// (ImmediatelyExecute) for an internal-account source, executes it at once.
func (s *Service) Create(ctx context.Context, platformID string, r CreateRequest) (ports.Quote, error) {
	if err := checkRequest(r); err != nil {
		return ports.Quote{}, err
	}
	read := s.store.Read()
	res, sending, err := s.resolve(ctx, read, platformID, r)
	if err != nil {
		return ports.Quote{}, err
	}
	corridor, price, err := s.price(ctx, sending, res, r)
	if err != nil {
		return ports.Quote{}, err
	}
	q := s.newQuote(platformID, r, res, sending, corridor, price)
	if err := s.checkCurrencySetting(ctx, read, platformID, q, res); err != nil {
		return ports.Quote{}, err
	}
	t, err := s.newTransaction(ctx, read, q, res)
	if err != nil {
		return ports.Quote{}, err
	}
	t.AgentID = r.AgentID
	q.PaymentInstructions = instructions(q, t, res)
	t.Details.PaymentInstructions = q.PaymentInstructions

	// Everything above only read; a request that does not own its
	// Idempotency-Key stops here.
	if err := ports.AwaitClaim(ctx); err != nil {
		return ports.Quote{}, err
	}
	created := true
	if r.ImmediatelyExecute && q.SourceType == SourceAccount {
		out, xerr := s.createExecuted(ctx, q, t, res)
		if xerr == nil {
			s.log.InfoContext(ctx, "quote created and executed", "quote", out.ID, "transaction", out.TransactionID)
			return out, nil
		}
		if !errors.Is(xerr, errRecorded) {
			return ports.Quote{}, xerr
		}
		err = ports.ErrConflict // a retry: answered from the stored quote below
	} else {
		err = s.record(ctx, q, t)
	}
	if errors.Is(err, ports.ErrConflict) && r.IdempotencyKey != "" {
		// A retry of a keyed request whose first attempt committed.
		prev, gerr := read.Quotes().Get(ctx, platformID, q.ID)
		if gerr != nil {
			return ports.Quote{}, fmt.Errorf("quote %s: read after conflict: %w", q.ID, gerr)
		}
		if !sameRequest(prev, q, r) {
			return ports.Quote{}, fault.KeyReused("quote")
		}
		q, created = prev, false
	} else if err != nil {
		return ports.Quote{}, fmt.Errorf("quote %s: record: %w", q.ID, err)
	}
	if r.ImmediatelyExecute && q.SourceType == SourceAccount && q.Status == StatusPending {
		ex := execution{account: true, quote: &q}
		if created {
			// The accounts just read are the quote's (a retry's stored
			// quote may name others: execute reads those).
			ex.parties = res.parties
		}
		return s.execute(ctx, q.PlatformID, q.ID, ex)
	}
	if created {
		s.log.InfoContext(ctx, "quote created", "quote", q.ID, "sending", q.SendingCurrency,
			"receiving", q.ReceivingCurrency, "totalSending", q.TotalSendingAmount)
	}
	return q, nil
}

// checkCurrencySetting applies the platform's setting of the currency the
// quote moves: a payout's totalSendingAmount must be in the sending
// currency's range (platforms.CheckSend), a deposit's receiving currency
// open to INCOMING payments (platforms.CheckReceive). The setting comes
// with the parties of an account-to-account quote, and is read otherwise.
func (s *Service) checkCurrencySetting(ctx context.Context, read quoteTx, platformID string, q ports.Quote, res resolved) error {
	if res.parties != nil {
		return platforms.CheckSend(res.parties.Currency, "lockedCurrencyAmount", q.TotalSendingAmount)
	}
	code := q.SendingCurrency
	if res.credit != nil {
		code = q.ReceivingCurrency
	}
	setting, err := platforms.ReadSetting(ctx, read, platformID, code)
	if err != nil {
		return fmt.Errorf("quote: %w", err)
	}
	if res.credit != nil {
		return platforms.CheckReceive(setting, "destination.accountId")
	}
	return platforms.CheckSend(setting, "lockedCurrencyAmount", q.TotalSendingAmount)
}

// resolve loads and checks what the request names: its source (and the
// sending currency), its destination, and the payer data the receiver
// asks for.
func (s *Service) resolve(ctx context.Context, read quoteTx, platformID string, r CreateRequest) (resolved, string, error) {
	res := resolved{}
	if r.Source.Type == SourceAccount && r.Destination.Type == DestinationAccount {
		// One round trip for what resolveSource, resolveDestination and
		// newTransaction would read one by one.
		p, err := read.Parties().Get(ctx, platformID, r.Source.AccountID, r.Destination.AccountID, time.Time{})
		if err != nil {
			return res, "", fmt.Errorf("quote: %w", err)
		}
		res.parties = &p
	}
	sending, err := s.resolveSource(ctx, read, platformID, r, &res)
	if err != nil {
		return res, "", err
	}
	if err := s.resolveDestination(ctx, read, platformID, r, &res); err != nil {
		return res, "", err
	}
	if err := checkPayerData(r, res.lookup); err != nil {
		return res, "", err
	}
	return res, sending, nil
}

// price finds the corridor and prices the locked amount at the current
// rate.
func (s *Service) price(ctx context.Context, sending string, res resolved, r CreateRequest) (fx.Corridor, fx.Pricing, error) {
	corridor, err := fx.Find(sending, res.receiving, res.rail)
	if err != nil {
		return fx.Corridor{}, fx.Pricing{}, corridorError(err, sending, res.receiving)
	}
	rate, err := s.rates.Rate(ctx, sending, res.receiving)
	if errors.Is(err, ports.ErrNoRate) {
		return fx.Corridor{}, fx.Pricing{}, fault.New(fault.KindInvalid, "QUOTE_REQUEST_FAILED",
			fmt.Sprintf("no exchange rate from %s to %s is available", sending, res.receiving))
	}
	if err != nil {
		return fx.Corridor{}, fx.Pricing{}, fmt.Errorf("quote: rate %s→%s: %w", sending, res.receiving, err)
	}
	price, err := fx.Price(corridor, rate, r.LockedSide, r.LockedAmount)
	var amountErr *fx.AmountError
	if errors.As(err, &amountErr) {
		// Its own 400: AMOUNT_OUT_OF_RANGE below the corridor's minimum,
		// TRANSACTION_SIZE_LIMIT_EXCEEDED above its maximum (the
		// reference's codes), naming lockedCurrencyAmount.
		return fx.Corridor{}, fx.Pricing{}, amountErr.Unwrap()
	}
	if err != nil {
		return fx.Corridor{}, fx.Pricing{}, fmt.Errorf("quote: price %s→%s: %w", sending, res.receiving, err)
	}
	if sending == res.receiving && price.TotalSending-price.Fees != price.TotalReceiving {
		return fx.Corridor{}, fx.Pricing{}, fmt.Errorf("quote: same-currency price %+v does not balance", price)
	}
	return corridor, price, nil
}

// newQuote is the PENDING quote of the request at the price, expiring
// after the corridor's quote lifetime.
func (s *Service) newQuote(platformID string, r CreateRequest, res resolved, sending string, corridor fx.Corridor, price fx.Pricing) ports.Quote {
	now := s.clock.Now().UTC()
	q := ports.Quote{
		PlatformID:            platformID,
		CustomerID:            res.customerID,
		Status:                StatusPending,
		SourceType:            r.Source.Type,
		CryptoNetwork:         r.Source.CryptoNetwork,
		DestinationType:       r.Destination.Type,
		DestinationUmaAddress: r.Destination.UmaAddress,
		PaymentRail:           res.rail,
		RailSelectionMode:     transfers.RailAuto,
		SendingCurrency:       sending,
		ReceivingCurrency:     res.receiving,
		LockedSide:            r.LockedSide,
		LockedAmount:          r.LockedAmount,
		TotalSendingAmount:    price.TotalSending,
		TotalReceivingAmount:  price.TotalReceiving,
		FeesIncluded:          price.Fees,
		ExchangeRate:          price.ExchangeRate,
		RateDetails:           price.Details,
		LookupID:              r.LookupID,
		Description:           r.Description,
		PurposeOfPayment:      r.PurposeOfPayment,
		RemittanceInformation: r.RemittanceInformation,
		SenderCustomerInfo:    r.SenderCustomerInfo,
		ExpiresAt:             now.Add(corridor.QuoteLifetime),
		CreatedAt:             now,
		UpdatedAt:             now,
	}
	if res.railManual {
		q.RailSelectionMode = transfers.RailManual
	}
	if r.IdempotencyKey != "" {
		q.ID = QuoteID(platformID, r.IdempotencyKey)
	} else {
		q.ID = s.ids.New("Quote")
	}
	q.TransactionID = transactionIDFor(q.ID)
	if res.source != nil {
		q.SourceAccountID = res.source.ID
	}
	if res.dest != nil {
		q.DestinationAccountID = res.dest.ID
		q.CounterpartyInformation = counterparty(res.dest.Info.Beneficiary)
	}
	if res.credit != nil {
		q.DestinationAccountID = res.credit.ID
	}
	return q
}

// instructions are the quote's payment instructions: how to fund a
// REALTIME_FUNDING quote, or what to stamp to execute from an embedded
// wallet (none otherwise).
func instructions(q ports.Quote, t ports.Transaction, res resolved) []ports.PaymentInstruction {
	switch {
	case res.source == nil:
		return []ports.PaymentInstruction{{
			InstructionsNotes: "Send exactly the quote's totalSendingAmount before expiresAt; include reference " + t.Reference,
			Info:              res.funding.build(q, t.Reference),
		}}
	case res.source.Type == accounts.TypeEmbeddedWallet:
		return []ports.PaymentInstruction{{
			InstructionsNotes: "Stamp payloadToSign with the wallet's session key and send it as Service-Wallet-Signature to execute",
			Info:              map[string]any{"accountType": accounts.TypeEmbeddedWallet, "payloadToSign": payloadToSign(q)},
		}}
	}
	return q.PaymentInstructions
}

// sameRequest reports whether prev, the quote a keyed request's first
// attempt stored, was made from the request that priced q: the same source,
// destination, locked side and amount, currencies and description. Prices
// are not compared (the rate moves between attempts); an immediate
// execution asked for now, of a quote the first request did not execute,
// is another request.
func sameRequest(prev, q ports.Quote, r CreateRequest) bool {
	if r.ImmediatelyExecute && prev.SourceType == SourceAccount && prev.ExecutedAt == nil {
		return false
	}
	return prev.SourceType == q.SourceType && prev.SourceAccountID == q.SourceAccountID && prev.CustomerID == q.CustomerID &&
		prev.DestinationType == q.DestinationType && prev.DestinationAccountID == q.DestinationAccountID &&
		prev.DestinationUmaAddress == q.DestinationUmaAddress && prev.SendingCurrency == q.SendingCurrency &&
		prev.ReceivingCurrency == q.ReceivingCurrency && prev.LockedSide == q.LockedSide &&
		prev.LockedAmount == q.LockedAmount && prev.Description == q.Description
}

// record writes a new quote, its transaction and the job that expires it
// together, in the ledger store's group commit. A quote id already stored
// fails with ports.ErrConflict.
func (s *Service) record(ctx context.Context, q ports.Quote, t ports.Transaction) error {
	return s.ledger.WriteRecords(ctx, ports.Records{Quotes: []ports.Quote{q}, Transactions: []ports.Transaction{t}, Jobs: []ports.Job{expiryJob(q)}})
}

// checkRequest checks the request's own fields (no reads).
func checkRequest(r CreateRequest) error {
	var errs fault.Collector
	switch r.Source.Type {
	case SourceAccount:
		transfers.CheckID(&errs, "source.accountId", r.Source.AccountID, "InternalAccount:")
		if r.Source.Currency != "" {
			errs.Add("source.currency", "applies to REALTIME_FUNDING sources only")
		}
		if r.Source.CryptoNetwork != "" {
			errs.Add("source.cryptoNetwork", "applies to REALTIME_FUNDING sources only")
		}
	case SourceRealtimeFunding:
		if r.Source.AccountID != "" {
			errs.Add("source.accountId", "applies to ACCOUNT sources only")
		}
		if r.ImmediatelyExecute {
			errs.Add("immediatelyExecute", "applies to ACCOUNT sources only: a REALTIME_FUNDING quote executes when "+
				"its funds arrive by its paymentInstructions")
		}
		if r.Source.Currency == "" {
			errs.Add("source.currency", "is required")
		} else if _, ok := money.Lookup(r.Source.Currency); !ok {
			errs.Add("source.currency", "unknown currency "+r.Source.Currency)
		}
	default:
		errs.Add("source.sourceType", "must be ACCOUNT or REALTIME_FUNDING")
	}
	if r.Source.CustomerID != "" && !strings.HasPrefix(r.Source.CustomerID, "Customer:") {
		errs.Add("source.customerId", "must be a Customer id")
	}
	switch r.Destination.Type {
	case DestinationAccount:
		switch id := r.Destination.AccountID; {
		case strings.HasPrefix(id, internalPrefix):
			if r.Source.Type != SourceRealtimeFunding {
				errs.Add("destination.accountId", "an internal account receives through a quote from a REALTIME_FUNDING source only: "+
					"no operation moves money between two internal accounts")
			}
			if r.Destination.PaymentRail != "" {
				errs.Add("destination.paymentRail", "applies to external account destinations only")
			}
		case id == "" || strings.HasPrefix(id, "ExternalAccount:"):
			transfers.CheckID(&errs, "destination.accountId", id, "ExternalAccount:")
		default:
			errs.Add("destination.accountId", "must be an ExternalAccount id (or, for a REALTIME_FUNDING source, an InternalAccount id)")
		}
		if r.Destination.UmaAddress != "" {
			errs.Add("destination.umaAddress", "applies to UMA_ADDRESS destinations only")
		}
		if r.Destination.Currency != "" {
			errs.Add("destination.currency", "applies to UMA_ADDRESS destinations only (an account's currency is its own)")
		}
	case DestinationUMA:
		if r.Destination.UmaAddress == "" {
			errs.Add("destination.umaAddress", "is required")
		}
		if r.Destination.AccountID != "" {
			errs.Add("destination.accountId", "applies to ACCOUNT destinations only")
		}
		if r.Destination.PaymentRail != "" {
			errs.Add("destination.paymentRail", "applies to ACCOUNT destinations only")
		}
		if r.Destination.Currency != "" {
			if _, ok := money.Lookup(r.Destination.Currency); !ok {
				errs.Add("destination.currency", "unknown currency "+r.Destination.Currency)
			}
		}
		if r.LookupID == "" {
			errs.Add("lookupId", "is required for UMA_ADDRESS destinations (from GET /receiver/uma/{receiverUmaAddress})")
		}
	default:
		errs.Add("destination.destinationType", "must be ACCOUNT or UMA_ADDRESS")
	}
	if r.LockedSide != fx.SideSending && r.LockedSide != fx.SideReceiving {
		errs.Add("lockedCurrencySide", "must be SENDING or RECEIVING")
	}
	if r.LockedAmount <= 0 || r.LockedAmount > money.MaxAmount {
		errs.Add("lockedCurrencyAmount", fmt.Sprintf("must be between 1 and %d (smallest unit of the locked currency)", money.MaxAmount))
	}
	if utf8.RuneCountInString(r.RemittanceInformation) > transfers.MaxRemittanceInformation {
		errs.Add("remittanceInformation", fmt.Sprintf("must be at most %d characters", transfers.MaxRemittanceInformation))
	}
	if r.PurposeOfPayment != "" && !slices.Contains(transfers.Purposes, r.PurposeOfPayment) {
		errs.Add("purposeOfPayment", fmt.Sprintf("must be one of %v", transfers.Purposes))
	}
	if r.LookupID != "" && !strings.HasPrefix(r.LookupID, "Lookup:") {
		errs.Add("lookupId", "must be a Lookup id")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if r.Destination.Type == DestinationUMA && !lookup.ValidUmaAddress(r.Destination.UmaAddress) {
		e := fault.New(fault.KindInvalid, lookup.CodeInvalidUma, "destination.umaAddress: "+r.Destination.UmaAddress+" is not a UMA address ($user@domain)")
		e.Fields = []fault.FieldError{{Field: "destination.umaAddress", Message: "must be a UMA address ($user@domain)"}}
		return e
	}
	return nil
}

// resolveSource loads the paying side and returns the sending currency.
func (s *Service) resolveSource(ctx context.Context, read quoteTx, platformID string, r CreateRequest, res *resolved) (string, error) {
	if r.Source.Type == SourceRealtimeFunding {
		m, field, msg := fundingFor(r.Source.Currency, r.Source.CryptoNetwork)
		if field != "" {
			return "", fault.Invalid(field, msg)
		}
		res.funding = m
		if r.Source.CustomerID != "" {
			if err := s.liveCustomer(ctx, read, platformID, r.Source.CustomerID); err != nil {
				return "", err
			}
		}
		res.customerID = r.Source.CustomerID
		return r.Source.Currency, nil
	}
	a, err := internalAccount(ctx, read, res.parties, platformID, r.Source.AccountID)
	if errors.Is(err, ports.ErrNotFound) {
		return "", transfers.NotFound("source.accountId", "internal account "+r.Source.AccountID+" not found")
	}
	if err != nil {
		return "", fmt.Errorf("quote: read internal account %s: %w", r.Source.AccountID, err)
	}
	if a.Status != accounts.StatusActive {
		return "", fault.Invalid("source.accountId", "the internal account is "+a.Status+"; only ACTIVE accounts can pay")
	}
	if r.ImmediatelyExecute && a.Type == accounts.TypeEmbeddedWallet {
		return "", fault.Invalid("immediatelyExecute",
			"is not supported for an EMBEDDED_WALLET source: create the quote, then execute it with the Service-Wallet-Signature header")
	}
	res.customerID = a.CustomerID
	switch {
	case r.Source.CustomerID == "":
	case a.CustomerID == "":
		// The platform's pooled account paying on a customer's behalf.
		if err := s.liveCustomer(ctx, read, platformID, r.Source.CustomerID); err != nil {
			return "", err
		}
		res.customerID = r.Source.CustomerID
	case a.CustomerID != r.Source.CustomerID:
		return "", fault.Invalid("source.customerId", "is not the owner of the source account")
	}
	res.source = &a
	return a.Currency, nil
}

// resolveDestination loads the receiving side: its currency and rail, and
// the lookup (required for UMA addresses, checked against the destination
// when given).
func (s *Service) resolveDestination(ctx context.Context, read quoteTx, platformID string, r CreateRequest, res *resolved) error {
	if r.LookupID != "" {
		l, err := read.Lookups().Get(ctx, platformID, r.LookupID)
		if errors.Is(err, ports.ErrNotFound) {
			return fault.NotFound(CodeLookupNotFound, "lookup "+r.LookupID+" not found")
		}
		if err != nil {
			return fmt.Errorf("quote: read lookup %s: %w", r.LookupID, err)
		}
		if l.CustomerID != "" && res.customerID != "" && l.CustomerID != res.customerID {
			return fault.Invalid("lookupId", "was made for another sender")
		}
		res.lookup = &l
	}
	if r.Destination.Type == DestinationUMA {
		l := res.lookup
		if l.ReceiverUmaAddress == "" || !strings.EqualFold(l.ReceiverUmaAddress, r.Destination.UmaAddress) {
			return fault.Invalid("lookupId", "is not a lookup of "+r.Destination.UmaAddress)
		}
		res.receiving = r.Destination.Currency
		if res.receiving == "" && len(l.Currencies) > 0 {
			res.receiving = l.Currencies[0].Currency
		}
		if !slices.ContainsFunc(l.Currencies, func(c ports.LookupCurrency) bool { return c.Currency == res.receiving }) {
			return fault.Invalid("destination.currency", "the receiver does not take "+res.receiving)
		}
		if _, ok := s.rails.Rail(UMARail, res.receiving); !ok {
			return fault.Invalid("destination.currency", "UMA payments in "+res.receiving+" are not available")
		}
		res.rail = UMARail
		return nil
	}
	if strings.HasPrefix(r.Destination.AccountID, internalPrefix) {
		return s.resolveCredit(ctx, read, platformID, r, res)
	}
	a, err := externalAccount(ctx, read, res.parties, platformID, r.Destination.AccountID)
	if errors.Is(err, ports.ErrNotFound) {
		return transfers.NotFound("destination.accountId", "external account "+r.Destination.AccountID+" not found")
	}
	if err != nil {
		return fmt.Errorf("quote: read external account %s: %w", r.Destination.AccountID, err)
	}
	if a.Status != external.StatusActive {
		return fault.Invalid("destination.accountId", "the external account is "+a.Status+"; only ACTIVE accounts can be paid")
	}
	if a.CustomerID != res.customerID {
		owner := "the platform"
		if res.customerID != "" {
			owner = "customer " + res.customerID
		}
		return fault.Invalid("destination.accountId", "the external account does not belong to "+owner+", the paying side")
	}
	if res.lookup != nil && res.lookup.AccountID != a.ID {
		return fault.Invalid("lookupId", "is not a lookup of "+a.ID)
	}
	rail, err := s.rails.ForPayout(r.Destination.PaymentRail, a.Currency, a.Info)
	if err != nil {
		return err
	}
	res.dest = &a
	res.receiving = a.Currency
	res.rail = rail.Spec().Name
	res.railManual = r.Destination.PaymentRail != ""
	return nil
}

// resolveCredit loads the internal account a deposit quote credits: an
// ACTIVE account of the paying customer (the platform's own when the quote
// names no customer). No rail pays it out: the ledger credits it.
func (s *Service) resolveCredit(ctx context.Context, read quoteTx, platformID string, r CreateRequest, res *resolved) error {
	a, err := read.InternalAccounts().Get(ctx, platformID, r.Destination.AccountID)
	if errors.Is(err, ports.ErrNotFound) {
		return transfers.NotFound("destination.accountId", "internal account "+r.Destination.AccountID+" not found")
	}
	if err != nil {
		return fmt.Errorf("quote: read internal account %s: %w", r.Destination.AccountID, err)
	}
	if a.Status != accounts.StatusActive {
		return fault.Invalid("destination.accountId", "the internal account is "+a.Status+"; only ACTIVE accounts can receive")
	}
	if r.Source.CustomerID == "" {
		res.customerID = a.CustomerID
	}
	if a.CustomerID != res.customerID {
		return fault.Invalid("destination.accountId", "the internal account does not belong to customer "+res.customerID+", the paying side")
	}
	if res.lookup != nil {
		return fault.Invalid("lookupId", "applies to UMA address and external account destinations only")
	}
	res.credit = &a
	res.receiving = a.Currency
	return nil
}

// checkPayerData: every mandatory payer field the lookup names must be in
// senderCustomerInfo as text that is not blank, and an optional one given
// must be text (a 400 naming each bad one). Other keys are the caller's
// (the reference allows any).
func checkPayerData(r CreateRequest, l *ports.Lookup) error {
	if l == nil {
		return nil
	}
	var errs fault.Collector
	for _, f := range l.RequiredPayerData {
		v, given := r.SenderCustomerInfo[f.Name]
		text, isText := v.(string)
		switch {
		case f.Mandatory && (!isText || strings.TrimSpace(text) == ""):
			errs.Add("senderCustomerInfo."+f.Name, "is required by the receiver (see the lookup's requiredPayerDataFields), as text that is not blank")
		case given && v != nil && !isText:
			errs.Add("senderCustomerInfo."+f.Name, "must be text")
		}
	}
	return errs.Err()
}

// corridorError is the refusal of a currency pair or rail no corridor row
// serves.
func corridorError(err error, sending, receiving string) error {
	if errors.Is(err, fx.ErrNoCorridor) {
		return fault.Invalid("destination", fmt.Sprintf("corridor does not pay %s from %s", receiving, sending))
	}
	return fmt.Errorf("quote: corridor %s→%s: %w", sending, receiving, err)
}

// newTransaction is the quote's transaction: OUTGOING and PENDING, or for
// a deposit INCOMING and CREATED.
func (s *Service) newTransaction(ctx context.Context, read quoteTx, q ports.Quote, res resolved) (ports.Transaction, error) {
	t := ports.Transaction{
		ID:                    q.TransactionID,
		PlatformID:            q.PlatformID,
		CustomerID:            q.CustomerID,
		Type:                  transactions.TypeOutgoing,
		Status:                transactions.StatusPending,
		SourceAccountID:       q.SourceAccountID,
		SourceCurrency:        q.SendingCurrency,
		DestinationAccountID:  q.DestinationAccountID,
		DestinationCurrency:   q.ReceivingCurrency,
		PaymentRail:           q.PaymentRail,
		RailSelectionMode:     q.RailSelectionMode,
		SentAmount:            q.TotalSendingAmount,
		ReceivedAmount:        q.TotalReceivingAmount,
		Fees:                  q.FeesIncluded,
		ExchangeRate:          q.ExchangeRate,
		Description:           q.Description,
		RemittanceInformation: q.RemittanceInformation,
		PurposeOfPayment:      q.PurposeOfPayment,
		QuoteID:               q.ID,
		CreatedAt:             q.CreatedAt,
		UpdatedAt:             q.CreatedAt,
	}
	t.Reference = transfers.Reference(t.ID)
	rd := q.RateDetails
	t.Details = ports.TransactionDetails{
		SourceType:            q.SourceType,
		DestinationType:       q.DestinationType,
		DestinationUmaAddress: q.DestinationUmaAddress,
		RateDetails:           &rd,
		CounterpartyInfo:      q.CounterpartyInformation,
	}
	if q.CustomerID != "" {
		var (
			c   ports.Customer
			err error
		)
		if p := res.parties; p != nil && p.Customer.ID == q.CustomerID {
			c = p.Customer
		} else if c, err = read.Customers().Get(ctx, q.PlatformID, q.CustomerID); err != nil {
			return t, fmt.Errorf("quote: read customer %s: %w", q.CustomerID, err)
		}
		t.PlatformCustomerID = c.PlatformCustomerID
		if q.DestinationType == DestinationUMA {
			t.Details.SourceUmaAddress = c.UmaAddress
		}
	}
	if q.SourceAccountID != "" {
		t.SenderIdentifiers = []string{q.SourceAccountID}
	}
	switch {
	case res.credit != nil:
		// A deposit: INCOMING to the internal account, CREATED until its
		// funds arrive.
		t.Type, t.Status = transactions.TypeIncoming, transactions.StatusCreated
		t.ReceiverIdentifiers = []string{res.credit.ID}
	case res.dest != nil:
		t.ReceiverIdentifiers = transactions.AccountIdentifiers(*res.dest)
	default:
		t.ReceiverIdentifiers = []string{q.DestinationUmaAddress}
	}
	return t, nil
}

// counterparty is what the quote shows about who is paid (reference
// CustomerInfoFieldName keys), from the external account's beneficiary.
func counterparty(b *ports.Beneficiary) map[string]any {
	if b == nil {
		return nil
	}
	out := map[string]any{}
	set := func(k, v string) {
		if v != "" {
			out[k] = v
		}
	}
	if b.BeneficiaryType == "BUSINESS" {
		set("COMPANY_LEGAL_NAME", b.LegalName)
		set("REGISTRATION_NUMBER", b.RegistrationNumber)
	} else {
		set("FULL_NAME", b.FullName)
		set("BIRTH_DATE", b.BirthDate)
		set("NATIONALITY", b.Nationality)
	}
	set("COUNTRY_OF_RESIDENCE", b.CountryOfResidence)
	if len(out) == 0 {
		return nil
	}
	return out
}

// internalAccount is the internal account id, from p when it was read
// with the parties (ports.ErrNotFound when absent, as the repository
// answers).
func internalAccount(ctx context.Context, read quoteTx, p *ports.Parties, platformID, id string) (ports.InternalAccount, error) {
	if p == nil {
		return read.InternalAccounts().Get(ctx, platformID, id)
	}
	if p.Internal.ID == "" {
		return ports.InternalAccount{}, ports.ErrNotFound
	}
	return p.Internal, nil
}

// externalAccount is internalAccount for the external account id.
func externalAccount(ctx context.Context, read quoteTx, p *ports.Parties, platformID, id string) (ports.ExternalAccount, error) {
	if p == nil {
		return read.ExternalAccounts().Get(ctx, platformID, id)
	}
	if p.External.ID == "" {
		return ports.ExternalAccount{}, ports.ErrNotFound
	}
	return p.External, nil
}

// liveCustomer checks that a customer of the platform exists and is not
// deleted.
func (s *Service) liveCustomer(ctx context.Context, read quoteTx, platformID, id string) error {
	c, err := read.Customers().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) || (err == nil && c.IsDeleted) {
		return fault.NotFound("USER_NOT_FOUND", "customer "+id+" not found")
	}
	if err != nil {
		return fmt.Errorf("quote: read customer %s: %w", id, err)
	}
	return nil
}

// Get returns one of the platform's quotes.
func (s *Service) Get(ctx context.Context, platformID, id string) (ports.Quote, error) {
	q, err := s.store.Read().Quotes().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Quote{}, errNotFound
	}
	if err != nil {
		return ports.Quote{}, fmt.Errorf("get quote %s: %w", id, err)
	}
	return q, nil
}

// expiryJob expires q if it is still unexecuted at its expiresAt.
func expiryJob(q ports.Quote) ports.Job {
	return ports.Job{Kind: KindExpire, Key: KindExpire + ":" + q.ID, Payload: jobPayloadOf(q), RunAt: q.ExpiresAt}
}

// errRecorded says an immediate execution found its quote (or its holds)
// already recorded: a retry of a keyed request whose first attempt
// committed.
var errRecorded = errors.New("quote already recorded")

// createExecuted records a new ACCOUNT-sourced quote already executed
// (immediatelyExecute): the quote and its transaction PROCESSING, the
// holds, and the expiry and submission jobs, in ONE write of the ledger's
// group commit. A refused hold (not enough available balance) leaves
// nothing behind: no quote is stored, and the caller gets the refusal. A
// new quote needs no precondition: nothing else can have executed it.
func (s *Service) createExecuted(ctx context.Context, q ports.Quote, t ports.Transaction, res resolved) (ports.Quote, error) {
	dest, err := s.checkSource(ctx, q, execution{account: true, parties: res.parties})
	if err != nil {
		return ports.Quote{}, err
	}
	now := s.clock.Now().UTC()
	submit, err := s.submitJob(ctx, q, dest, now)
	if err != nil {
		return ports.Quote{}, err
	}
	if err := Move(&q, StatusProcessing, now); err != nil {
		return ports.Quote{}, err
	}
	if err := transactions.Move(&t, transactions.StatusProcessing, now); err != nil {
		return ports.Quote{}, err
	}
	q.ExecutedAt = &now
	recs := ports.Records{
		Quotes:       []ports.Quote{q},
		Transactions: []ports.Transaction{t},
		Jobs:         []ports.Job{expiryJob(q), submit},
	}
	_, err = s.post(ctx, holdEntry(q, ""), recs)
	switch {
	case err == nil:
		return q, nil
	case errors.Is(err, ports.ErrConflict), errors.Is(err, ledger.ErrExists), errors.Is(err, ledger.ErrExistsDifferent):
		return ports.Quote{}, errRecorded
	case errors.Is(err, ledger.ErrExceedsCredits):
		return ports.Quote{}, transactions.Insufficient(ctx, s.ledger, "totalSendingAmount", q.SourceAccountID,
			q.SendingCurrency, q.TotalSendingAmount)
	case errors.Is(err, ledger.ErrOverflow):
		return ports.Quote{}, fault.New(fault.KindInvalid, transactions.CodeInvalidAmount, "the amount is too large")
	}
	return ports.Quote{}, fmt.Errorf("execute %s: hold: %w", q.ID, err)
}
