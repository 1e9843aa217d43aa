package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// ---- quotes (migrations/0005_quotes.sql) ----

// storeQuoteRow is a quote row. The free-form jsonb columns scan with
// json_use_number, so numbers come back as json.Number (an int64 exact).
type storeQuoteRow struct {
	bun.BaseModel `bun:"table:quotes"`

	ID                      string             `bun:"id,pk"`
	PlatformID              string             `bun:"platform_id"`
	CustomerID              string             `bun:"customer_id"`
	Status                  string             `bun:"status"`
	TransactionID           string             `bun:"transaction_id"`
	SourceType              string             `bun:"source_type"`
	SourceAccountID         string             `bun:"source_account_id"`
	CryptoNetwork           string             `bun:"crypto_network"`
	DestinationType         string             `bun:"destination_type"`
	DestinationAccountID    string             `bun:"destination_account_id"`
	DestinationUmaAddress   string             `bun:"destination_uma_address"`
	PaymentRail             string             `bun:"payment_rail"`
	RailSelectionMode       string             `bun:"rail_selection_mode"`
	SendingCurrency         string             `bun:"sending_currency"`
	ReceivingCurrency       string             `bun:"receiving_currency"`
	LockedSide              string             `bun:"locked_side"`
	LockedAmount            int64              `bun:"locked_amount"`
	TotalSendingAmount      int64              `bun:"total_sending_amount"`
	TotalReceivingAmount    int64              `bun:"total_receiving_amount"`
	FeesIncluded            int64              `bun:"fees_included"`
	ExchangeRate            string             `bun:"exchange_rate"`
	RateDetails             storeRateDetails   `bun:"rate_details,type:jsonb"`
	LookupID                string             `bun:"lookup_id"`
	Description             string             `bun:"description"`
	PurposeOfPayment        string             `bun:"purpose_of_payment"`
	RemittanceInformation   string             `bun:"remittance_information"`
	SenderCustomerInfo      map[string]any     `bun:"sender_customer_info,type:jsonb,json_use_number"`
	CounterpartyInformation map[string]any     `bun:"counterparty_information,type:jsonb,json_use_number"`
	PaymentInstructions     []storeInstruction `bun:"payment_instructions,type:jsonb,json_use_number"`
	ExecutedAt              *time.Time         `bun:"executed_at"`
	ExpiresAt               time.Time          `bun:"expires_at"`
	CreatedAt               time.Time          `bun:"created_at"`
	UpdatedAt               time.Time          `bun:"updated_at"`
}

// storeJSONMap writes a nil map as {} (the column is NOT NULL) and reads an
// empty one back as nil, as the memory store does.
func storeJSONMap(m map[string]any, write bool) map[string]any {
	if len(m) == 0 {
		if write {
			return map[string]any{}
		}
		return nil
	}
	return m
}

func storeQuoteToRow(q ports.Quote) storeQuoteRow {
	return storeQuoteRow{
		ID: q.ID, PlatformID: q.PlatformID, CustomerID: q.CustomerID, Status: q.Status, TransactionID: q.TransactionID,
		SourceType: q.SourceType, SourceAccountID: q.SourceAccountID, CryptoNetwork: q.CryptoNetwork,
		DestinationType: q.DestinationType, DestinationAccountID: q.DestinationAccountID,
		DestinationUmaAddress: q.DestinationUmaAddress, PaymentRail: q.PaymentRail, RailSelectionMode: q.RailSelectionMode,
		SendingCurrency: q.SendingCurrency, ReceivingCurrency: q.ReceivingCurrency,
		LockedSide: q.LockedSide, LockedAmount: q.LockedAmount,
		TotalSendingAmount: q.TotalSendingAmount, TotalReceivingAmount: q.TotalReceivingAmount,
		FeesIncluded: q.FeesIncluded, ExchangeRate: q.ExchangeRate, RateDetails: rateDetailsToStore(q.RateDetails),
		LookupID: q.LookupID, Description: q.Description, PurposeOfPayment: q.PurposeOfPayment,
		RemittanceInformation:   q.RemittanceInformation,
		SenderCustomerInfo:      storeJSONMap(q.SenderCustomerInfo, true),
		CounterpartyInformation: storeJSONMap(q.CounterpartyInformation, true),
		PaymentInstructions:     instructionsToStore(q.PaymentInstructions),
		ExecutedAt:              ports.StoredPtr(q.ExecutedAt),
		ExpiresAt:               ports.Stored(q.ExpiresAt),
		CreatedAt:               ports.Stored(q.CreatedAt),
		UpdatedAt:               ports.Stored(q.UpdatedAt),
	}
}

func (r storeQuoteRow) toPort() ports.Quote {
	return ports.Quote{
		ID: r.ID, PlatformID: r.PlatformID, CustomerID: r.CustomerID, Status: r.Status, TransactionID: r.TransactionID,
		SourceType: r.SourceType, SourceAccountID: r.SourceAccountID, CryptoNetwork: r.CryptoNetwork,
		DestinationType: r.DestinationType, DestinationAccountID: r.DestinationAccountID,
		DestinationUmaAddress: r.DestinationUmaAddress, PaymentRail: r.PaymentRail, RailSelectionMode: r.RailSelectionMode,
		SendingCurrency: r.SendingCurrency, ReceivingCurrency: r.ReceivingCurrency,
		LockedSide: r.LockedSide, LockedAmount: r.LockedAmount,
		TotalSendingAmount: r.TotalSendingAmount, TotalReceivingAmount: r.TotalReceivingAmount,
		FeesIncluded: r.FeesIncluded, ExchangeRate: r.ExchangeRate, RateDetails: r.RateDetails.toPort(),
		LookupID: r.LookupID, Description: r.Description, PurposeOfPayment: r.PurposeOfPayment,
		RemittanceInformation:   r.RemittanceInformation,
		SenderCustomerInfo:      storeJSONMap(r.SenderCustomerInfo, false),
		CounterpartyInformation: storeJSONMap(r.CounterpartyInformation, false),
		PaymentInstructions:     instructionsFromStore(r.PaymentInstructions),
		ExecutedAt:              ports.StoredPtr(r.ExecutedAt),
		ExpiresAt:               ports.Stored(r.ExpiresAt),
		CreatedAt:               ports.Stored(r.CreatedAt),
		UpdatedAt:               ports.Stored(r.UpdatedAt),
	}
}

// Quotes is ports.Tx.Quotes.
func (tx *storeTx) Quotes() ports.QuoteRepo { return storeQuotes{tx} }

type storeQuotes struct{ tx *storeTx }

// Create runs under a savepoint: a duplicate id is a refusal the caller
// may handle (*ports.ConflictError) with the unit of work still usable.
func (r storeQuotes) Create(ctx context.Context, q ports.Quote) error {
	row := storeQuoteToRow(q)
	return r.tx.insert(ctx, "create quote "+q.ID, &row)
}

func (r storeQuotes) get(ctx context.Context, platformID, id, lock string) (ports.Quote, error) {
	var row storeQuoteRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ?", id).Where("platform_id = ?", platformID)
	if lock != "" {
		q = q.For(lock)
	}
	if err := storeGet(ctx, q, "quote "+id); err != nil {
		return ports.Quote{}, err
	}
	return row.toPort(), nil
}

func (r storeQuotes) Get(ctx context.Context, platformID, id string) (ports.Quote, error) {
	return r.get(ctx, platformID, id, "")
}

// GetForUpdate locks the row (SELECT … FOR UPDATE) until the unit of work
// ends: concurrent executions of one quote queue here.
func (r storeQuotes) GetForUpdate(ctx context.Context, platformID, id string) (ports.Quote, error) {
	return r.get(ctx, platformID, id, "UPDATE")
}

// Update stores q's mutable fields; the id, platform, customer and creation
// time are fixed at Create.
func (r storeQuotes) Update(ctx context.Context, q ports.Quote) error {
	row := storeQuoteToRow(q)
	what := "update quote " + q.ID
	res, err := r.tx.execPlain(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model(&row).
			ExcludeColumn("id", "platform_id", "customer_id", "created_at").
			WherePK().Where("platform_id = ?", q.PlatformID).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}
