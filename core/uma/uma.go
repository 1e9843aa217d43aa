// Package uma holds the UMA use cases that are not quotes: the sandbox
// simulation of a payment arriving at a customer's UMA address (POST
// /sandbox/uma/receive). The money arrives over the UMA rail and lands where
// the customer wants UMA deposits: its default UMA deposit external account
// when one is set (the money goes straight out over that account's payout
// rail), else its internal account in the currency. Every credit is one
// balanced ledger entry recorded with its INCOMING transaction.
package uma

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/approvals"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/posting"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Rail is the rail name of UMA payments (their ledger settlement account is
// ledger.RailSettlementID(Rail, currency)).
const Rail = rails.UMA

// CodeReceive is the ledger transfer code of a payment received over UMA.
const CodeReceive = "uma_receive"

// Error codes.
const (
	CodeForbidden        = "FORBIDDEN"
	CodeUmaNotFound      = "UMA_NOT_FOUND"
	CodeInvalidUma       = "INVALID_UMA_ADDRESS"
	CodeCustomerNotFound = "USER_NOT_FOUND"
	CodeCustomerDeleted  = "CUSTOMER_DELETED"
	CodeKeyReused        = "IDEMPOTENCY_KEY_REUSED"
)

// opReceive names the operation in idempotent transaction ids.
const opReceive = "sandbox-uma-receive"

// Rails picks the payout rail of an external account (core/rails.Registry).
type Rails interface {
	ForPayout(requested, currency string, info ports.AccountInfo) (ports.Rail, error)
}

// Service runs the UMA use cases.
type Service struct {
	store   ports.Store
	ledger  ports.LedgerStore
	dir     ports.UmaDirectory
	rails   Rails
	clock   ports.Clock
	ids     ports.IDs
	sandbox bool
	// approvals, when set, holds a payment for the platform's decision
	// when the platform has a webhook endpoint (core/approvals).
	approvals *approvals.Service
}

// SetApprovals makes payments to a platform with a webhook endpoint wait
// for its approval (held, PENDING) instead of crediting them at once.
func (s *Service) SetApprovals(a *approvals.Service) { s.approvals = a }

// New builds a Service; the simulation answers 403 unless sandbox is set.
func New(store ports.Store, led ports.LedgerStore, dir ports.UmaDirectory, rails Rails, clock ports.Clock, ids ports.IDs, sandbox bool) *Service {
	return &Service{store: store, ledger: led, dir: dir, rails: rails, clock: clock, ids: ids, sandbox: sandbox}
}

// Receive is a simulated incoming UMA payment: from a sandbox UMA address
// to a customer named by its UMA address or id (at least one), of Amount
// minor units of Currency.
type Receive struct {
	SenderUmaAddress   string
	ReceiverUmaAddress string
	CustomerID         string
	Currency           string
	Amount             int64
	// IdempotencyKey, when set, fixes the transaction id, so a retried
	// request finds the credit it already made.
	IdempotencyKey string
	// RequestedReceiverFields are the receiver fields the sender asks
	// for: the webhook's requestedReceiverCustomerInfoFields.
	RequestedReceiverFields []ports.CounterpartyField
	// SenderInfo is what the sender shares about its customer
	// (CustomerInfoFieldName keys): the fields the receiving platform
	// asks for in its currency's requiredCounterpartyFields.
	SenderInfo map[string]any
}

// SimulateReceive credits a customer with a payment from a sandbox UMA
// sender and returns its INCOMING transaction, COMPLETED; when the
// platform has a webhook endpoint the credit is a hold and the
// transaction PENDING until the platform decides (core/approvals). The ledger entry
// (UMA settlement → the customer's internal account, or → the default
// deposit account's payout rail) and the transaction are written together,
// and the entry id is derived from the transaction id, so a retry never
// credits twice.
func (s *Service) SimulateReceive(ctx context.Context, platformID string, r Receive) (ports.Transaction, error) {
	if !s.sandbox {
		return ports.Transaction{}, fault.New(fault.KindForbidden, CodeForbidden, "the UMA receive simulation is only available in the sandbox")
	}
	if err := check(r); err != nil {
		return ports.Transaction{}, err
	}
	if _, err := s.dir.Receiver(ctx, r.SenderUmaAddress); errors.Is(err, ports.ErrNotFound) {
		return ports.Transaction{}, fault.NotFound(CodeUmaNotFound, "no sandbox UMA sender at "+r.SenderUmaAddress)
	} else if err != nil {
		return ports.Transaction{}, fmt.Errorf("uma: resolve sender %s: %w", r.SenderUmaAddress, err)
	}
	read := s.store.Read()
	c, err := s.customer(ctx, read, platformID, r)
	if err != nil {
		return ports.Transaction{}, err
	}
	setting, err := platforms.ReadSetting(ctx, read, platformID, r.Currency)
	if err != nil {
		return ports.Transaction{}, fmt.Errorf("uma: %w", err)
	}
	if err := platforms.CheckReceive(setting, "receivingCurrencyCode"); err != nil {
		return ports.Transaction{}, err
	}
	counterparty, err := counterpartyInfo(r, setting)
	if err != nil {
		return ports.Transaction{}, err
	}
	dest, err := s.destination(ctx, read, platformID, c, r.Currency)
	if err != nil {
		return ports.Transaction{}, err
	}

	now := ports.Stored(s.clock.Now())
	id := s.ids.New("Transaction")
	if r.IdempotencyKey != "" {
		id = transfers.TransactionID(platformID, opReceive, r.IdempotencyKey)
	}
	receiverUma := c.UmaAddress
	if r.ReceiverUmaAddress != "" {
		receiverUma = r.ReceiverUmaAddress
	}
	t := ports.Transaction{
		ID:                   id,
		PlatformID:           platformID,
		CustomerID:           c.ID,
		PlatformCustomerID:   c.PlatformCustomerID,
		Type:                 transactions.TypeIncoming,
		Status:               transactions.StatusCompleted,
		SourceCurrency:       r.Currency,
		DestinationAccountID: dest.accountID,
		DestinationCurrency:  r.Currency,
		PaymentRail:          dest.rail,
		SenderIdentifiers:    []string{r.SenderUmaAddress},
		ReceiverIdentifiers:  append(dest.identifiers, receiverUma),
		SentAmount:           r.Amount,
		ReceivedAmount:       r.Amount,
		Reference:            transfers.Reference(id),
		Details: ports.TransactionDetails{
			SourceType:            "UMA_ADDRESS",
			SourceUmaAddress:      r.SenderUmaAddress,
			DestinationUmaAddress: receiverUma,
			CounterpartyInfo:      counterparty,
		},
		SettledAt: &now,
		CreatedAt: now,
		UpdatedAt: now,
	}
	entry := ledger.Entry{ID: EntryID(id), Ref: id, Transfers: []ledger.Transfer{{
		ID:              EntryID(id) + "/1",
		DebitAccountID:  ledger.RailSettlementID(Rail, r.Currency),
		CreditAccountID: dest.ledgerAccount,
		Amount:          r.Amount,
		Currency:        r.Currency,
		Kind:            ledger.Single,
		Code:            CodeReceive,
	}}}
	recs := ports.Records{}
	asks, err := s.approvals.Asks(ctx, platformID)
	if err != nil {
		return ports.Transaction{}, err
	}
	if asks {
		// The platform decides (core/approvals): the credit is held.
		recs.Jobs = []ports.Job{approvals.Hold(&t, &entry, r.RequestedReceiverFields, now)}
	}
	recs.Transactions = []ports.Transaction{t}
	_, err = s.post(ctx, entry, recs)
	switch {
	case err == nil:
		return t, nil
	case errors.Is(err, ledger.ErrExists), errors.Is(err, ports.ErrConflict):
		// An earlier attempt with the same key credited the customer (the
		// entry, or the transaction recorded with it, exists).
		return s.earlier(ctx, t)
	case errors.Is(err, ledger.ErrExistsDifferent):
		return ports.Transaction{}, errKeyReused
	default:
		return ports.Transaction{}, fmt.Errorf("uma: credit %s: %w", id, err)
	}
}

var errKeyReused = fault.New(fault.KindUnprocessable, CodeKeyReused,
	"the idempotency key was already used for a different UMA payment")

// earlier returns the stored transaction with t's id when it is the same
// payment (a retried keyed request); another payment under the key is
// errKeyReused.
func (s *Service) earlier(ctx context.Context, t ports.Transaction) (ports.Transaction, error) {
	prev, err := s.store.Read().Transactions().Get(ctx, t.PlatformID, t.ID)
	if err != nil {
		return ports.Transaction{}, fmt.Errorf("uma: read %s: %w", t.ID, err)
	}
	if prev.DestinationAccountID != t.DestinationAccountID || prev.ReceivedAmount != t.ReceivedAmount ||
		prev.DestinationCurrency != t.DestinationCurrency || prev.Details.SourceUmaAddress != t.Details.SourceUmaAddress {
		return ports.Transaction{}, errKeyReused
	}
	return prev, nil
}

// EntryID is the ledger entry of the credit of transaction txID.
func EntryID(txID string) string { return "uma-receive:" + txID }

// maxSenderInfo bounds one shared sender field, in bytes.
const maxSenderInfo = 1024

func check(r Receive) error {
	var errs fault.Collector
	switch {
	case r.SenderUmaAddress == "":
		errs.Add("senderUmaAddress", "is required")
	case !lookup.ValidUmaAddress(r.SenderUmaAddress):
		return invalidUma("senderUmaAddress", r.SenderUmaAddress)
	}
	if r.ReceiverUmaAddress == "" && r.CustomerID == "" {
		errs.Add("receiverUmaAddress", "give receiverUmaAddress or customerId")
		errs.Add("customerId", "give customerId or receiverUmaAddress")
	}
	if r.ReceiverUmaAddress != "" && !lookup.ValidUmaAddress(r.ReceiverUmaAddress) {
		return invalidUma("receiverUmaAddress", r.ReceiverUmaAddress)
	}
	if _, ok := money.Lookup(r.Currency); !ok {
		errs.Add("receivingCurrencyCode", fmt.Sprintf("%q is not a supported currency", r.Currency))
	}
	if r.Amount <= 0 || r.Amount > money.MaxAmount {
		errs.Add("receivingCurrencyAmount", fmt.Sprintf("must be between 1 and %d", money.MaxAmount))
	}
	platforms.CheckCounterpartyFields(&errs, "requestedReceiverCustomerInfoFields", r.RequestedReceiverFields)
	for _, name := range slices.Sorted(maps.Keys(r.SenderInfo)) {
		if !slices.Contains(platforms.CounterpartyFieldNames, name) {
			errs.Add("senderCustomerInfo."+name, "is not a customer info field (one of "+strings.Join(platforms.CounterpartyFieldNames, ", ")+")")
			continue
		}
		switch v := r.SenderInfo[name].(type) {
		case string:
			if len(v) > maxSenderInfo {
				errs.Add("senderCustomerInfo."+name, fmt.Sprintf("must be at most %d bytes", maxSenderInfo))
			}
		default:
			errs.Add("senderCustomerInfo."+name, "must be a string")
		}
	}
	return errs.Err()
}

// counterpartyInfo is what the receiving platform learns of the sender:
// its UMA address (IDENTIFIER) and, of what the sender shares, the fields
// the platform's setting for the currency asks for (requiredCounterpartyFields;
// a receiving institution gets what it asks for, nothing more). A sender
// that does not share a mandatory one cannot pay (the pay request is
// refused, as the UMA protocol has it): 400 naming each missing field.
func counterpartyInfo(r Receive, setting ports.CurrencySetting) (map[string]any, error) {
	out := map[string]any{"IDENTIFIER": r.SenderUmaAddress}
	var errs fault.Collector
	for _, f := range setting.RequiredCounterpartyFields {
		if f.Name == "IDENTIFIER" {
			continue // the sender's address, always known
		}
		if v, ok := r.SenderInfo[f.Name]; ok && v != nil && v != "" {
			out[f.Name] = v
		} else if f.Mandatory {
			errs.Add("senderCustomerInfo."+f.Name, "is required by the platform's requiredCounterpartyFields for "+setting.Code+
				"; the sender did not share it, so it cannot pay")
		}
	}
	return out, errs.Err()
}

func invalidUma(field, v string) error {
	e := fault.New(fault.KindInvalid, CodeInvalidUma, field+": "+v+" is not a UMA address ($user@domain)")
	e.Fields = []fault.FieldError{{Field: field, Message: "must be a UMA address ($user@domain)"}}
	return e
}

// customer finds the receiving customer by id, else by UMA address; when
// both are given they must agree.
func (s *Service) customer(ctx context.Context, read umaTx, platformID string, r Receive) (ports.Customer, error) {
	var c ports.Customer
	if r.CustomerID != "" {
		var err error
		c, err = read.Customers().Get(ctx, platformID, r.CustomerID)
		if errors.Is(err, ports.ErrNotFound) {
			return c, fault.NotFound(CodeCustomerNotFound, "customer "+r.CustomerID+" not found")
		}
		if err != nil {
			return c, fmt.Errorf("uma: load customer %s: %w", r.CustomerID, err)
		}
		if r.ReceiverUmaAddress != "" && c.UmaAddress != r.ReceiverUmaAddress {
			return c, fault.Invalid("receiverUmaAddress", "is not the UMA address of customer "+r.CustomerID)
		}
	} else {
		rows, _, err := read.Customers().List(ctx, ports.CustomerFilter{PlatformID: platformID, UmaAddress: r.ReceiverUmaAddress}, ports.Page{Limit: 1})
		if err != nil {
			return c, fmt.Errorf("uma: find receiver %s: %w", r.ReceiverUmaAddress, err)
		}
		if len(rows) == 0 {
			return c, fault.NotFound(CodeUmaNotFound, "no customer has the UMA address "+r.ReceiverUmaAddress)
		}
		c = rows[0]
	}
	if c.IsDeleted {
		return c, fault.New(fault.KindGone, CodeCustomerDeleted, "customer "+c.ID+" has been deleted")
	}
	return c, nil
}

// target is where a received payment lands.
type target struct {
	accountID     string // the transaction's destination
	ledgerAccount string // the ledger account credited
	rail          string
	identifiers   []string
}

// destination is the customer's default UMA deposit external account when
// one is set (its currency must be the payment's), else its internal account
// in the currency (ACTIVE; a platform-managed account before an embedded
// wallet). Neither is a 400 naming receivingCurrencyCode.
func (s *Service) destination(ctx context.Context, read umaTx, platformID string, c ports.Customer, currency string) (target, error) {
	def, found, err := defaultDeposit(ctx, read, platformID, c.ID)
	if err != nil {
		return target{}, err
	}
	if found {
		if def.Currency != currency {
			return target{}, fault.Invalid("receivingCurrencyCode",
				fmt.Sprintf("customer %s takes UMA deposits in %s (its default UMA deposit account)", c.ID, def.Currency))
		}
		rail, err := s.rails.ForPayout("", def.Currency, def.Info)
		if err != nil {
			return target{}, fault.Invalid("receivingCurrencyCode",
				fmt.Sprintf("no payment rail reaches customer %s's default UMA deposit account", c.ID))
		}
		name := rail.Spec().Name
		// The money passes through: in over UMA, out over the account's rail.
		return target{accountID: def.ID, ledgerAccount: ledger.RailSettlementID(name, currency), rail: name,
			identifiers: transactions.AccountIdentifiers(def)}, nil
	}
	rows, _, err := read.InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: platformID, CustomerID: c.ID, Currency: currency}, ports.Page{Limit: 100})
	if err != nil {
		return target{}, fmt.Errorf("uma: internal accounts of %s: %w", c.ID, err)
	}
	var best *ports.InternalAccount
	for i := range rows {
		a := &rows[i]
		if a.Status != accounts.StatusActive {
			continue
		}
		if best == nil || (best.Type == accounts.TypeEmbeddedWallet && a.Type != accounts.TypeEmbeddedWallet) {
			best = a
		}
	}
	if best == nil {
		return target{}, fault.Invalid("receivingCurrencyCode",
			fmt.Sprintf("customer %s has no active internal account in %s", c.ID, currency))
	}
	return target{accountID: best.ID, ledgerAccount: best.ID, rail: Rail, identifiers: []string{best.ID}}, nil
}

// defaultDeposit finds the customer's default UMA deposit external account.
func defaultDeposit(ctx context.Context, read umaTx, platformID, customerID string) (ports.ExternalAccount, bool, error) {
	var found ports.ExternalAccount
	err := ports.Scan(100, func(page ports.Page) ([]ports.ExternalAccount, error) {
		rows, _, err := read.ExternalAccounts().List(ctx, ports.ExternalAccountFilter{PlatformID: platformID, CustomerID: customerID}, page)
		return rows, err
	}, ports.ExternalAccount.Position, func(a ports.ExternalAccount) bool {
		if a.DefaultUmaDepositAccount {
			found = a
		}
		return found.ID == ""
	})
	if err != nil {
		return ports.ExternalAccount{}, false, fmt.Errorf("uma: external accounts of %s: %w", customerID, err)
	}
	return found, found.ID != "", nil
}

// post posts e with recs, creating a missing system account on first use
// (core/posting).
func (s *Service) post(ctx context.Context, e ledger.Entry, recs ports.Records) (ledger.JournalEntry, error) {
	return posting.Post(ctx, s.ledger, e, recs)
}

// umaTx is what this package's helpers use of a unit of work (ports.Tx
// and Store.Read both provide it).
type umaTx interface {
	Customers() ports.CustomerRepo
	InternalAccounts() ports.InternalAccountRepo
	ExternalAccounts() ports.ExternalAccountRepo
}
