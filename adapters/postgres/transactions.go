package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ports"
)

// ---- transactions (migrations/0004_external_accounts_transactions_jobs.sql) ----

type storeTxnRow struct {
	bun.BaseModel `bun:"table:transactions"`

	ID                    string     `bun:"id,pk"`
	PlatformID            string     `bun:"platform_id"`
	CustomerID            string     `bun:"customer_id"`
	PlatformCustomerID    string     `bun:"platform_customer_id"`
	Type                  string     `bun:"type"`
	Status                string     `bun:"status"`
	SourceAccountID       string     `bun:"source_account_id"`
	SourceCurrency        string     `bun:"source_currency"`
	DestinationAccountID  string     `bun:"destination_account_id"`
	DestinationCurrency   string     `bun:"destination_currency"`
	PaymentRail           string     `bun:"payment_rail"`
	RailSelectionMode     string     `bun:"rail_selection_mode"`
	SenderIdentifiers     []string   `bun:"sender_identifiers,array"`
	ReceiverIdentifiers   []string   `bun:"receiver_identifiers,array"`
	SentAmount            int64      `bun:"sent_amount"`
	ReceivedAmount        int64      `bun:"received_amount"`
	Fees                  int64      `bun:"fees"`
	ExchangeRate          string     `bun:"exchange_rate"`
	Reference             string     `bun:"reference"`
	Description           string     `bun:"description"`
	RemittanceInformation string     `bun:"remittance_information"`
	PurposeOfPayment      string     `bun:"purpose_of_payment"`
	FailureReason         string     `bun:"failure_reason"`
	QuoteID               string     `bun:"quote_id"`
	AgentID               string     `bun:"agent_id"`
	SettledAt             *time.Time `bun:"settled_at"`
	CreatedAt             time.Time  `bun:"created_at"`
	UpdatedAt             time.Time  `bun:"updated_at"`

	// Details is one jsonb document (migrations/0005_quotes.sql); numbers
	// in its free-form maps scan as json.Number.
	Details storeDetails `bun:"details,type:jsonb,json_use_number"`
}

// storeIdentifiers writes an empty list as '{}' (the column is NOT NULL)
// and reads one back as nil.
func storeIdentifiers(ids []string, write bool) []string {
	if len(ids) == 0 {
		if write {
			return []string{}
		}
		return nil
	}
	return ids
}

func storeTxnToRow(t ports.Transaction) storeTxnRow {
	return storeTxnRow{
		ID: t.ID, PlatformID: t.PlatformID, CustomerID: t.CustomerID, PlatformCustomerID: t.PlatformCustomerID,
		Type: t.Type, Status: t.Status,
		SourceAccountID: t.SourceAccountID, SourceCurrency: t.SourceCurrency,
		DestinationAccountID: t.DestinationAccountID, DestinationCurrency: t.DestinationCurrency,
		PaymentRail: t.PaymentRail, RailSelectionMode: t.RailSelectionMode,
		SenderIdentifiers:   storeIdentifiers(t.SenderIdentifiers, true),
		ReceiverIdentifiers: storeIdentifiers(t.ReceiverIdentifiers, true),
		SentAmount:          t.SentAmount, ReceivedAmount: t.ReceivedAmount, Fees: t.Fees, ExchangeRate: t.ExchangeRate,
		Reference: t.Reference, Description: t.Description, RemittanceInformation: t.RemittanceInformation,
		PurposeOfPayment: t.PurposeOfPayment, FailureReason: t.FailureReason, QuoteID: t.QuoteID, AgentID: t.AgentID,
		Details: detailsToStore(t.Details), SettledAt: ports.StoredPtr(t.SettledAt),
		CreatedAt: ports.Stored(t.CreatedAt), UpdatedAt: ports.Stored(t.UpdatedAt),
	}
}

func (r storeTxnRow) toPort() ports.Transaction {
	return ports.Transaction{
		ID: r.ID, PlatformID: r.PlatformID, CustomerID: r.CustomerID, PlatformCustomerID: r.PlatformCustomerID,
		Type: r.Type, Status: r.Status,
		SourceAccountID: r.SourceAccountID, SourceCurrency: r.SourceCurrency,
		DestinationAccountID: r.DestinationAccountID, DestinationCurrency: r.DestinationCurrency,
		PaymentRail: r.PaymentRail, RailSelectionMode: r.RailSelectionMode,
		SenderIdentifiers:   storeIdentifiers(r.SenderIdentifiers, false),
		ReceiverIdentifiers: storeIdentifiers(r.ReceiverIdentifiers, false),
		SentAmount:          r.SentAmount, ReceivedAmount: r.ReceivedAmount, Fees: r.Fees, ExchangeRate: r.ExchangeRate,
		Reference: r.Reference, Description: r.Description, RemittanceInformation: r.RemittanceInformation,
		PurposeOfPayment: r.PurposeOfPayment, FailureReason: r.FailureReason, QuoteID: r.QuoteID, AgentID: r.AgentID,
		Details: r.Details.toPort(), SettledAt: ports.StoredPtr(r.SettledAt),
		CreatedAt: ports.Stored(r.CreatedAt), UpdatedAt: ports.Stored(r.UpdatedAt),
	}
}

type storeTxns struct{ tx *storeTx }

func (r storeTxns) Create(ctx context.Context, t ports.Transaction) error {
	row := storeTxnToRow(t)
	_, err := r.tx.execPlain(ctx, "create transaction "+t.ID, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewInsert().Model(&row).Exec(ctx)
	})
	return err
}

func (r storeTxns) get(ctx context.Context, platformID, id, lock string) (ports.Transaction, error) {
	var row storeTxnRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ?", id).Where("platform_id = ?", platformID)
	if lock != "" {
		q = q.For(lock)
	}
	if err := storeGet(ctx, q, "transaction "+id); err != nil {
		return ports.Transaction{}, err
	}
	return row.toPort(), nil
}

// Get reads a transaction; outside a unit of work the read is grouped with
// concurrent ones (the job loop reads each transaction it moves on).
func (r storeTxns) Get(ctx context.Context, platformID, id string) (ports.Transaction, error) {
	if r.tx.reads == nil { // inside a unit of work
		return r.get(ctx, platformID, id, "")
	}
	row, err := r.tx.reads.txns.get(ctx, id)
	if err != nil {
		return ports.Transaction{}, fmt.Errorf("transaction %s: %w", id, err)
	}
	if row.Txn.ID == "" || row.Txn.PlatformID != platformID {
		return ports.Transaction{}, fmt.Errorf("transaction %s: %w", id, ports.ErrNotFound)
	}
	return row.Txn.toPort(), nil
}

// storeTxnGroupRow is one row of the grouped transaction read.
type storeTxnGroupRow struct {
	Ord int64       `bun:"ord"`
	Txn storeTxnRow `bun:"embed:t__"`
}

func newTxnRead(stmts *preparedStmts) *groupedRead[storeTxnGroupRow] {
	q := `SELECT u.ord, ` + storeColumns(stmts.db.Dialect(), "t", reflect.TypeFor[storeTxnRow]()) + `
	FROM unnest($1::text[]) WITH ORDINALITY AS u(id, ord)
	LEFT JOIN LATERAL (SELECT * FROM transactions WHERE id = u.id LIMIT 1) AS t ON true
	ORDER BY u.ord`
	return newGroupedRead(stmts, q, func(r *storeTxnGroupRow) int64 { return r.Ord })
}

func (r storeTxns) GetForUpdate(ctx context.Context, platformID, id string) (ports.Transaction, error) {
	return r.get(ctx, platformID, id, "UPDATE")
}

// Update stores t's mutable fields; the id, platform, customer, type and
// creation time are fixed at Create. (A status change moves the row between
// list counters: the update trigger of transaction_counts does it.)
func (r storeTxns) Update(ctx context.Context, t ports.Transaction) error {
	row := storeTxnToRow(t)
	what := "update transaction " + t.ID
	res, err := r.tx.execPlain(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model(&row).
			ExcludeColumn("id", "platform_id", "customer_id", "type", "created_at").
			WherePK().Where("platform_id = ?", t.PlatformID).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

func storeTxnFilter(q *bun.SelectQuery, f ports.TransactionFilter) *bun.SelectQuery {
	q = q.Where("platform_id = ?", f.PlatformID)
	switch {
	case f.CustomerID != "":
		q = q.Where("customer_id = ?", f.CustomerID)
	case f.PlatformLevel:
		q = q.Where("customer_id = ''")
	}
	if f.PlatformCustomerID != "" {
		q = q.Where("platform_customer_id = ?", f.PlatformCustomerID)
	}
	if f.AccountIdentifier != "" {
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("sender_identifiers @> ARRAY[?]::text[]", f.AccountIdentifier).
				WhereOr("receiver_identifiers @> ARRAY[?]::text[]", f.AccountIdentifier)
		})
	}
	if f.SenderAccountIdentifier != "" {
		q = q.Where("sender_identifiers @> ARRAY[?]::text[]", f.SenderAccountIdentifier)
	}
	if f.ReceiverAccountIdentifier != "" {
		q = q.Where("receiver_identifiers @> ARRAY[?]::text[]", f.ReceiverAccountIdentifier)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.Type != "" {
		q = q.Where("type = ?", f.Type)
	}
	if f.Reference != "" {
		q = q.Where("reference = ?", f.Reference)
	}
	if f.StartDate != nil {
		q = q.Where("created_at >= ?", ports.Stored(*f.StartDate))
	}
	if f.EndDate != nil {
		q = q.Where("created_at <= ?", ports.Stored(*f.EndDate))
	}
	return q
}

// storeTxnCounted reports whether f's total can come from
// transaction_counts: only the platform, customer (or platform level), type
// and status are filtered.
func storeTxnCounted(f ports.TransactionFilter) bool {
	return f.PlatformCustomerID == "" && f.AccountIdentifier == "" && f.SenderAccountIdentifier == "" &&
		f.ReceiverAccountIdentifier == "" && f.Reference == "" && f.StartDate == nil && f.EndDate == nil
}

// count is the number of transactions matching f: from the counters when
// the filter allows it, else an exact COUNT(*).
func (r storeTxns) count(ctx context.Context, f ports.TransactionFilter) (int, error) {
	if !storeTxnCounted(f) {
		n, err := storeTxnFilter(r.tx.db.NewSelect().Model((*storeTxnRow)(nil)), f).Count(ctx)
		if err != nil {
			return 0, fmt.Errorf("count transactions: %w", err)
		}
		return int(n), nil
	}
	customer := "*"
	switch {
	case f.CustomerID != "":
		customer = f.CustomerID
	case f.PlatformLevel:
		customer = ""
	}
	q := r.tx.db.NewSelect().Table("transaction_counts").ColumnExpr("coalesce(sum(n), 0)").
		Where("platform_id = ?", f.PlatformID).Where("customer_id = ?", customer)
	if f.Type != "" {
		q = q.Where("type = ?", f.Type)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	var n int64
	if err := q.Scan(ctx, &n); err != nil {
		return 0, fmt.Errorf("count transactions: %w", err)
	}
	return int(n), nil
}

// List pages by (created_at, id) in f's direction after page.After.
func (r storeTxns) List(ctx context.Context, f ports.TransactionFilter, page ports.Page) ([]ports.Transaction, int, error) {
	total, err := r.count(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	var rows []storeTxnRow
	if err := storePage(storeTxnFilter(r.tx.db.NewSelect().Model(&rows), f), page, f.Desc).Scan(ctx); err != nil {
		return nil, 0, fmt.Errorf("list transactions: %w", err)
	}
	out := make([]ports.Transaction, len(rows))
	for i, row := range rows {
		out[i] = row.toPort()
	}
	return out, total, nil
}
