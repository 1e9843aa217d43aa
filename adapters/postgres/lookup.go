package postgres

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// ---- receiver lookups (migrations/0004_external_accounts_transactions_jobs.sql, 0006_uma_lookups.sql) ----

type storeLookupRow struct {
	bun.BaseModel `bun:"table:lookups"`

	ID                string                 `bun:"id,pk"`
	PlatformID        string                 `bun:"platform_id"`
	AccountID         string                 `bun:"account_id"`
	ReceiverUma       string                 `bun:"receiver_uma_address"`
	CustomerID        string                 `bun:"customer_id"`
	SenderUmaAddress  string                 `bun:"sender_uma_address"`
	SendingCurrency   string                 `bun:"sending_currency"`
	Currencies        []storeLookupCurrency  `bun:"currencies,type:jsonb"`
	RequiredPayerData []storeLookupPayerData `bun:"required_payer_data,type:jsonb"`
	CreatedAt         time.Time              `bun:"created_at"`
}

type storeLookupCurrency struct {
	Currency      string `json:"currency"`
	EstimatedRate string `json:"estimatedRate,omitempty"`
	Min           int64  `json:"min"`
	Max           int64  `json:"max"`
}

type storeLookupPayerData struct {
	Name      string `json:"name"`
	Mandatory bool   `json:"mandatory"`
}

func storeLookupToRow(l ports.Lookup) storeLookupRow {
	r := storeLookupRow{
		ID: l.ID, PlatformID: l.PlatformID, AccountID: l.AccountID, ReceiverUma: l.ReceiverUmaAddress, CustomerID: l.CustomerID,
		SenderUmaAddress: l.SenderUmaAddress, SendingCurrency: l.SendingCurrency,
		Currencies:        make([]storeLookupCurrency, len(l.Currencies)),
		RequiredPayerData: make([]storeLookupPayerData, len(l.RequiredPayerData)),
		CreatedAt:         ports.Stored(l.CreatedAt),
	}
	for i, c := range l.Currencies {
		r.Currencies[i] = storeLookupCurrency(c)
	}
	for i, p := range l.RequiredPayerData {
		r.RequiredPayerData[i] = storeLookupPayerData(p)
	}
	return r
}

func (r storeLookupRow) toPort() ports.Lookup {
	l := ports.Lookup{
		ID: r.ID, PlatformID: r.PlatformID, AccountID: r.AccountID, ReceiverUmaAddress: r.ReceiverUma, CustomerID: r.CustomerID,
		SenderUmaAddress: r.SenderUmaAddress, SendingCurrency: r.SendingCurrency,
		CreatedAt: ports.Stored(r.CreatedAt),
	}
	for _, c := range r.Currencies {
		l.Currencies = append(l.Currencies, ports.LookupCurrency(c))
	}
	for _, p := range r.RequiredPayerData {
		l.RequiredPayerData = append(l.RequiredPayerData, ports.PayerDataField(p))
	}
	return l
}

func (tx *storeTx) Lookups() ports.LookupRepo { return storeLookups{tx} }

type storeLookups struct{ tx *storeTx }

func (r storeLookups) Create(ctx context.Context, l ports.Lookup) error {
	row := storeLookupToRow(l)
	return r.tx.insert(ctx, "create lookup "+l.ID, &row)
}

func (r storeLookups) Get(ctx context.Context, platformID, id string) (ports.Lookup, error) {
	var row storeLookupRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ?", id).Where("platform_id = ?", platformID)
	if err := storeGet(ctx, q, "lookup "+id); err != nil {
		return ports.Lookup{}, err
	}
	return row.toPort(), nil
}
