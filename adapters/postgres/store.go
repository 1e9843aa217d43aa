package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Store is ports.Store on PostgreSQL: platforms, credentials, customers,
// internal accounts and auth methods (migrations/0003_business.sql), external
// accounts, transactions and the job queue (migrations/0004_*.sql), and the
// ledger accounts a unit of work creates with them.
//
// A write that can be refused for an expected unique conflict the caller
// handles (customers, credentials, auth methods, external accounts…) runs
// under a savepoint, so the refusal (a *ports.ConflictError) leaves the
// transaction usable, as in the memory store. The hot writes whose keys are
// unique by construction or which never conflict (transactions, jobs,
// ledger accounts) run without one: a savepoint costs two round trips, and
// a failure there aborts the unit of work (its error, a conflict included,
// is still returned mapped).
type Store struct {
	db    *bun.DB
	stmts *preparedStmts
	reads *storeReads
}

// storeReads are the reads a store groups across concurrent callers
// outside units of work (see groupedRead).
type storeReads struct {
	parties      *groupedRead[storePartiesRow]
	quoteParties *groupedRead[storeQuotePartiesRow]
	txns         *groupedRead[storeTxnGroupRow]
}

var (
	_ ports.Store  = (*Store)(nil)
	_ ports.Pinger = (*Store)(nil)
)

// storeMaxAttempts bounds how often InTx runs fn when PostgreSQL aborts the
// transaction for a serialization failure or a deadlock.
const storeMaxAttempts = 5

// errStoreReadOnly is returned by writes made through Read().
var errStoreReadOnly = errors.New("postgres store: write outside InTx (Read() is read-only)")

// NewStore returns a store on db (migrated).
func NewStore(db *bun.DB) *Store {
	stmts := newPreparedStmts(db)
	return &Store{db: db, stmts: stmts, reads: &storeReads{parties: newPartiesRead(stmts), quoteParties: newQuotePartiesRead(stmts), txns: newTxnRead(stmts)}}
}

// Ping checks the database is reachable.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// InTx runs fn in one READ COMMITTED transaction, again (up to
// storeMaxAttempts times) when PostgreSQL aborts it with a serialization
// failure or a deadlock.
func (s *Store) InTx(ctx context.Context, fn func(tx ports.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := s.db.RunInTx(ctx, nil, func(ctx context.Context, btx bun.Tx) error {
			return fn(&storeTx{db: btx, write: true, stmts: s.stmts})
		})
		if err == nil || attempt == storeMaxAttempts || !storeRetryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(attempt*attempt) * 5 * time.Millisecond):
		}
	}
}

// Read returns repositories reading committed rows outside any transaction;
// their writes fail.
func (s *Store) Read() ports.Tx { return &storeTx{db: s.db, stmts: s.stmts, reads: s.reads} }

func storeRetryable(err error) bool {
	var pg pgdriver.Error
	if !errors.As(err, &pg) {
		return false
	}
	switch pg.Field('C') {
	case "40001", "40P01": // serialization_failure, deadlock_detected
		return true
	}
	return false
}

// storeConflict maps a unique violation to *ports.ConflictError named after
// the violated index or constraint; other errors pass through.
func storeConflict(err error) error {
	var pg pgdriver.Error
	if errors.As(err, &pg) && pg.Field('C') == "23505" {
		return &ports.ConflictError{Constraint: pg.Field('n')}
	}
	return err
}

// storeTx implements ports.Tx and every repository on a transaction (write)
// or on the pool (Read).
type storeTx struct {
	db    bun.IDB
	write bool
	stmts *preparedStmts
	reads *storeReads // grouped reads; nil inside a unit of work
}

// exec runs a write under a savepoint: on failure the savepoint is rolled
// back so the transaction stays usable, and a unique violation becomes a
// *ports.ConflictError.
func (tx *storeTx) exec(ctx context.Context, what string, write func(ctx context.Context) (sql.Result, error)) (sql.Result, error) {
	if !tx.write {
		return nil, errStoreReadOnly
	}
	if _, err := tx.db.ExecContext(ctx, "SAVEPOINT corridor_write"); err != nil {
		return nil, fmt.Errorf("%s: savepoint: %w", what, err)
	}
	res, err := write(ctx)
	if err != nil {
		if _, rerr := tx.db.ExecContext(ctx, "ROLLBACK TO SAVEPOINT corridor_write"); rerr != nil {
			return nil, fmt.Errorf("%s: %w (and rollback to savepoint: %w)", what, storeConflict(err), rerr)
		}
		return nil, fmt.Errorf("%s: %w", what, storeConflict(err))
	}
	if _, err := tx.db.ExecContext(ctx, "RELEASE SAVEPOINT corridor_write"); err != nil {
		return nil, fmt.Errorf("%s: release savepoint: %w", what, err)
	}
	return res, nil
}

// execPlain runs a write without a savepoint: for writes that expect no
// refusal (keys unique by construction, ON CONFLICT DO NOTHING, updates by
// primary key). A failure aborts the unit of work; a unique violation is
// still returned as a *ports.ConflictError, for a caller that handles it
// after InTx returns.
func (tx *storeTx) execPlain(ctx context.Context, what string, write func(ctx context.Context) (sql.Result, error)) (sql.Result, error) {
	if !tx.write {
		return nil, errStoreReadOnly
	}
	res, err := write(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, storeConflict(err))
	}
	return res, nil
}

// insert writes row (a pointer to a row model) under a savepoint: a
// duplicate is a *ports.ConflictError with the unit of work still usable.
func (tx *storeTx) insert(ctx context.Context, what string, row any) error {
	_, err := tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return tx.db.NewInsert().Model(row).Exec(ctx)
	})
	return err
}

// updateColumns writes cols of row (a pointer to a row model) to the
// platform's row with its key: ports.ErrNotFound when there is none.
func (tx *storeTx) updateColumns(ctx context.Context, what string, row any, platformID string, cols ...string) error {
	res, err := tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return tx.db.NewUpdate().Model(row).Column(cols...).WherePK().Where("platform_id = ?", platformID).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

// storeGet reads one row into dst, mapping no rows to ports.ErrNotFound.
func storeGet(ctx context.Context, q *bun.SelectQuery, what string) error {
	if err := q.Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", what, ports.ErrNotFound)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// storeConditional is the answer of a conditional update (one that
// applies only from the stored status) that ran with res and err: nil when
// it changed the row; when it did not, exists's error (ErrNotFound) or a
// *ports.ConflictError naming constraint (the row moved on).
func storeConditional(res sql.Result, err error, what, constraint string, exists func() error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 1 {
		return nil
	}
	if err := exists(); err != nil {
		return err
	}
	return &ports.ConflictError{Constraint: constraint}
}

// storeUpdated reports ErrNotFound when an update touched no row.
func storeUpdated(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, ports.ErrNotFound)
	}
	return nil
}

// storePage adds the keyset position and the limit (Limit+1 rows, to tell
// hasMore; every row when Limit <= 0) to a list ordered by (created_at, id),
// descending when desc.
func storePage(q *bun.SelectQuery, page ports.Page, desc bool) *bun.SelectQuery {
	cmp, order := ">", "created_at, id"
	if desc {
		cmp, order = "<", "created_at DESC, id DESC"
	}
	if page.After != nil {
		q = q.Where("(created_at, id) "+cmp+" (?, ?)", ports.Stored(page.After.CreatedAt), page.After.ID)
	}
	q = q.OrderExpr(order)
	if page.Limit > 0 {
		q = q.Limit(int64(page.Limit) + 1)
	}
	return q
}

// storeList runs a filtered, keyset-paginated list: the count of every row
// the filter matches, then one page (see storePage) converted to ports
// values. R is the bun row type, P the ports type it converts to.
func storeList[R interface{ toPort() P }, P any](ctx context.Context, db bun.IDB, filter func(*bun.SelectQuery) *bun.SelectQuery, page ports.Page, what string) ([]P, int, error) {
	total, err := filter(db.NewSelect().Model((*R)(nil))).Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", what, err)
	}
	var rows []R
	if err := storePage(filter(db.NewSelect().Model(&rows)), page, false).Scan(ctx); err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", what, err)
	}
	return storePorts[R, P](rows), int(total), nil
}

// storePorts converts rows to their port values.
func storePorts[R interface{ toPort() P }, P any](rows []R) []P {
	out := make([]P, len(rows))
	for i, row := range rows {
		out[i] = row.toPort()
	}
	return out
}

// storeOwnerFilter selects one customer's rows, the platform's own rows
// (no customer), or, with neither, every customer's rows.
func storeOwnerFilter(q *bun.SelectQuery, customerID string, platformOnly bool) *bun.SelectQuery {
	switch {
	case customerID != "":
		return q.Where("customer_id = ?", customerID)
	case platformOnly:
		return q.Where("customer_id = ''")
	default:
		return q.Where("customer_id <> ''")
	}
}

func (tx *storeTx) Platforms() ports.PlatformRepo               { return storePlatforms{tx} }
func (tx *storeTx) Customers() ports.CustomerRepo               { return storeCustomers{tx} }
func (tx *storeTx) InternalAccounts() ports.InternalAccountRepo { return storeAccounts{tx} }
func (tx *storeTx) AuthMethods() ports.AuthMethodRepo           { return storeAuthMethods{tx} }
func (tx *storeTx) LedgerAccounts() ports.LedgerAccountCreator  { return storeLedgerAccounts{tx} }
func (tx *storeTx) ExternalAccounts() ports.ExternalAccountRepo { return storeExternals{tx} }
func (tx *storeTx) Parties() ports.PartyReader                  { return storeParties{tx} }
func (tx *storeTx) Transactions() ports.TransactionRepo         { return storeTxns{tx} }
func (tx *storeTx) Jobs() ports.JobQueue                        { return storeJobs{tx} }

// ---- platforms ----

type storePlatforms struct{ tx *storeTx }

func (r storePlatforms) Create(ctx context.Context, p ports.Platform) error {
	row := storePlatformToRow(p)
	return r.tx.insert(ctx, "create platform "+p.ID, &row)
}

func (r storePlatforms) Get(ctx context.Context, id string) (ports.Platform, error) {
	var row storePlatformRow
	if err := storeGet(ctx, r.tx.db.NewSelect().Model(&row).Where("id = ?", id), "platform "+id); err != nil {
		return ports.Platform{}, err
	}
	return row.toPort(), nil
}

func (r storePlatforms) GetForUpdate(ctx context.Context, id string) (ports.Platform, error) {
	var row storePlatformRow
	if err := storeGet(ctx, r.tx.db.NewSelect().Model(&row).Where("id = ?", id).For("UPDATE"), "platform "+id); err != nil {
		return ports.Platform{}, err
	}
	return row.toPort(), nil
}

func (r storePlatforms) Update(ctx context.Context, p ports.Platform) error {
	row := storePlatformToRow(p)
	what := "update platform " + p.ID
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model(&row).ExcludeColumn("id", "name", "created_at").WherePK().Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

func (r storePlatforms) List(ctx context.Context) ([]ports.Platform, error) {
	var rows []storePlatformRow
	if err := r.tx.db.NewSelect().Model(&rows).OrderExpr("created_at, id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list platforms: %w", err)
	}
	out := make([]ports.Platform, len(rows))
	for i, row := range rows {
		out[i] = row.toPort()
	}
	return out, nil
}

func (r storePlatforms) CreateCredential(ctx context.Context, c ports.APICredential) error {
	row := storeCredentialToRow(c)
	return r.tx.insert(ctx, "create credential", &row)
}

func (r storePlatforms) CredentialByClientID(ctx context.Context, clientID string) (ports.APICredential, error) {
	var row storeCredentialRow
	q := r.tx.db.NewSelect().Model(&row).Where("token_id = ?", clientID)
	if err := storeGet(ctx, q, "credential "+clientID); err != nil {
		return ports.APICredential{}, err
	}
	return row.toPort(), nil
}

// storeLiveCredentials selects the platform's live tokens.
func storeLiveCredentials(q *bun.SelectQuery, platformID string) *bun.SelectQuery {
	return q.Where("platform_id = ?", platformID).Where("deleted_at IS NULL")
}

func (r storePlatforms) Credential(ctx context.Context, platformID, id string) (ports.APICredential, error) {
	var row storeCredentialRow
	q := storeLiveCredentials(r.tx.db.NewSelect().Model(&row), platformID).Where("id = ?", id)
	if err := storeGet(ctx, q, "token "+id); err != nil {
		return ports.APICredential{}, err
	}
	return row.toPort(), nil
}

func (r storePlatforms) ListCredentials(ctx context.Context, f ports.CredentialFilter, page ports.Page) ([]ports.APICredential, int, error) {
	return storeList[storeCredentialRow, ports.APICredential](ctx, r.tx.db, func(q *bun.SelectQuery) *bun.SelectQuery {
		q = storeLiveCredentials(q, f.PlatformID)
		if f.Name != "" {
			q = q.Where("name = ?", f.Name)
		}
		return storeTimeBounds(q, f.CreatedAfter, f.CreatedBefore, f.UpdatedAfter, f.UpdatedBefore)
	}, page, "tokens")
}

func (r storePlatforms) LiveCredentialsForUpdate(ctx context.Context, platformID string) ([]ports.APICredential, error) {
	var rows []storeCredentialRow
	q := storeLiveCredentials(r.tx.db.NewSelect().Model(&rows), platformID).OrderExpr("created_at, id").For("UPDATE")
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("lock tokens of %s: %w", platformID, err)
	}
	return storePorts[storeCredentialRow, ports.APICredential](rows), nil
}

func (r storePlatforms) DeleteCredential(ctx context.Context, platformID, id string, at time.Time) error {
	what := "delete token " + id
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		// The deleted token's client id is announced to the other
		// instances when this commits (WatchCredentialRevocations).
		return r.tx.db.NewRaw(`WITH d AS (
	UPDATE api_credentials SET deleted_at = ?, updated_at = ? WHERE id = ? AND platform_id = ? AND deleted_at IS NULL RETURNING token_id)
SELECT pg_notify(?, d.token_id) FROM d`, ports.Stored(at), ports.Stored(at), id, platformID, credentialChannel).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

// ---- customers ----

type storeCustomers struct{ tx *storeTx }

func (r storeCustomers) Create(ctx context.Context, c ports.Customer) error {
	row := storeCustomerToRow(c)
	return r.tx.insert(ctx, "create customer "+c.ID, &row)
}

func (r storeCustomers) get(ctx context.Context, platformID, id, lock string) (ports.Customer, error) {
	var row storeCustomerRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ?", id).Where("platform_id = ?", platformID)
	if lock != "" {
		q = q.For(lock)
	}
	if err := storeGet(ctx, q, "customer "+id); err != nil {
		return ports.Customer{}, err
	}
	return row.toPort(), nil
}

func (r storeCustomers) Get(ctx context.Context, platformID, id string) (ports.Customer, error) {
	return r.get(ctx, platformID, id, "")
}

func (r storeCustomers) GetForUpdate(ctx context.Context, platformID, id string) (ports.Customer, error) {
	return r.get(ctx, platformID, id, "UPDATE")
}

func (r storeCustomers) Update(ctx context.Context, c ports.Customer) error {
	row := storeCustomerToRow(c)
	what := "update customer " + c.ID
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model(&row).ExcludeColumn("id", "platform_id").
			WherePK().Where("platform_id = ?", c.PlatformID).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

func storeCustomerFilter(q *bun.SelectQuery, f ports.CustomerFilter) *bun.SelectQuery {
	q = q.Where("platform_id = ?", f.PlatformID)
	if !f.IncludeDeleted {
		q = q.Where("NOT is_deleted")
	}
	if f.PlatformCustomerID != "" {
		q = q.Where("platform_customer_id = ?", f.PlatformCustomerID)
	}
	if f.CustomerType != "" {
		q = q.Where("customer_type = ?", f.CustomerType)
	}
	if f.Region != "" {
		q = q.Where("region = ?", f.Region)
	}
	if f.UmaAddress != "" {
		q = q.Where("uma_address = ?", f.UmaAddress)
	}
	if f.Currency != "" {
		q = q.Where("currencies @> ARRAY[?]::text[]", f.Currency)
	}
	return storeTimeBounds(q, f.CreatedAfter, f.CreatedBefore, f.UpdatedAfter, f.UpdatedBefore)
}

// storeTimeBounds adds a list's inclusive created_at and updated_at bounds
// (nil: unbounded).
func storeTimeBounds(q *bun.SelectQuery, createdAfter, createdBefore, updatedAfter, updatedBefore *time.Time) *bun.SelectQuery {
	for _, b := range []struct {
		cond string
		t    *time.Time
	}{
		{"created_at >= ?", createdAfter}, {"created_at <= ?", createdBefore},
		{"updated_at >= ?", updatedAfter}, {"updated_at <= ?", updatedBefore},
	} {
		if b.t != nil {
			q = q.Where(b.cond, ports.Stored(*b.t))
		}
	}
	return q
}

func (r storeCustomers) List(ctx context.Context, f ports.CustomerFilter, page ports.Page) ([]ports.Customer, int, error) {
	return storeList[storeCustomerRow, ports.Customer](ctx, r.tx.db, func(q *bun.SelectQuery) *bun.SelectQuery { return storeCustomerFilter(q, f) }, page, "customers")
}

// ---- internal accounts ----

type storeAccounts struct{ tx *storeTx }

func (r storeAccounts) Create(ctx context.Context, a ports.InternalAccount) error {
	row := storeAccountToRow(a)
	return r.tx.insert(ctx, "create internal account "+a.ID, &row)
}

func (r storeAccounts) Update(ctx context.Context, a ports.InternalAccount) error {
	row := storeAccountToRow(a)
	what := "update internal account " + a.ID
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model(&row).Column("status", "private_enabled", "updated_at").
			WherePK().Where("platform_id = ?", a.PlatformID).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

func (r storeAccounts) Get(ctx context.Context, platformID, id string) (ports.InternalAccount, error) {
	var row storeAccountRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ?", id).Where("platform_id = ?", platformID)
	if err := storeGet(ctx, q, "internal account "+id); err != nil {
		return ports.InternalAccount{}, err
	}
	return row.toPort(), nil
}

func storeAccountFilter(q *bun.SelectQuery, f ports.InternalAccountFilter) *bun.SelectQuery {
	q = q.Where("platform_id = ?", f.PlatformID)
	q = storeOwnerFilter(q, f.CustomerID, f.PlatformOnly)
	if f.Currency != "" {
		q = q.Where("currency = ?", f.Currency)
	}
	if f.Type != "" {
		q = q.Where("type = ?", f.Type)
	}
	return q
}

func (r storeAccounts) List(ctx context.Context, f ports.InternalAccountFilter, page ports.Page) ([]ports.InternalAccount, int, error) {
	return storeList[storeAccountRow, ports.InternalAccount](ctx, r.tx.db, func(q *bun.SelectQuery) *bun.SelectQuery { return storeAccountFilter(q, f) }, page, "internal accounts")
}

// ---- auth methods ----

type storeAuthMethods struct{ tx *storeTx }

func (r storeAuthMethods) Create(ctx context.Context, m ports.AuthMethod) error {
	row := storeAuthMethodToRow(m)
	return r.tx.insert(ctx, "create auth method "+m.ID, &row)
}

func (r storeAuthMethods) Get(ctx context.Context, platformID, id string) (ports.AuthMethod, error) {
	var row storeAuthMethodRow
	q := r.tx.db.NewSelect().Model(&row).Where("id = ?", id).Where("platform_id = ?", platformID).Where("revoked_at IS NULL")
	if err := storeGet(ctx, q, "auth method "+id); err != nil {
		return ports.AuthMethod{}, err
	}
	return row.toPort(), nil
}

func (r storeAuthMethods) ListByAccount(ctx context.Context, platformID, accountID string) ([]ports.AuthMethod, error) {
	var rows []storeAuthMethodRow
	err := r.tx.db.NewSelect().Model(&rows).
		Where("account_id = ?", accountID).Where("platform_id = ?", platformID).Where("revoked_at IS NULL").
		OrderExpr("created_at, id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list auth methods of %s: %w", accountID, err)
	}
	out := make([]ports.AuthMethod, len(rows))
	for i, row := range rows {
		out[i] = row.toPort()
	}
	return out, nil
}

func (r storeAuthMethods) Update(ctx context.Context, m ports.AuthMethod) error {
	row := storeAuthMethodToRow(m)
	what := "update auth method " + m.ID
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model(&row).ExcludeColumn("id", "platform_id", "revoked_at", "sign_count").
			WherePK().Where("platform_id = ?", m.PlatformID).Where("revoked_at IS NULL").Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

func (r storeAuthMethods) Revoke(ctx context.Context, platformID, id string, at time.Time) error {
	what := "revoke auth method " + id
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model((*storeAuthMethodRow)(nil)).Set("revoked_at = ?", ports.Stored(at)).
			Where("id = ?", id).Where("platform_id = ?", platformID).Where("revoked_at IS NULL").Exec(ctx)
	})
	if err != nil {
		return err
	}
	return storeUpdated(res, what)
}

func (r storeAuthMethods) AdvanceSignCount(ctx context.Context, platformID, id string, count uint32, at time.Time) error {
	what := "advance sign count of " + id
	res, err := r.tx.exec(ctx, what, func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewUpdate().Model((*storeAuthMethodRow)(nil)).
			Set("sign_count = ?", int64(count)).Set("updated_at = ?", ports.Stored(at)).
			Where("id = ?", id).Where("platform_id = ?", platformID).Where("revoked_at IS NULL").
			Where("(sign_count < ? OR (? = 0 AND sign_count = 0))", int64(count), int64(count)).Exec(ctx)
	})
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := r.Get(ctx, platformID, id); err != nil {
			return err
		}
		return &ports.ConflictError{Constraint: ports.ConflictSignCount}
	}
	return nil
}

// ---- ledger accounts ----

type storeLedgerAccounts struct{ tx *storeTx }

// storeLedgerAccountRow is the part of a ledger_accounts row (owned by
// migrations/0002_ledger.sql) a unit of work writes: the counters start at 0.
type storeLedgerAccountRow struct {
	bun.BaseModel `bun:"table:ledger_accounts"`

	ID         string    `bun:"id,pk"`
	Currency   string    `bun:"currency"`
	Kind       string    `bun:"kind"`
	PlatformID string    `bun:"platform_id"`
	Flags      int       `bun:"flags"`
	CreatedAt  time.Time `bun:"created_at,nullzero"` // zero: the database's now()
}

// Create inserts the accounts in the unit's transaction; an existing account
// with the same currency, kind and flags is left as it is, one that differs
// is ledger.ErrExistsDifferent.
func (r storeLedgerAccounts) Create(ctx context.Context, accts ...ledger.Account) error {
	if len(accts) == 0 {
		if !r.tx.write {
			return errStoreReadOnly
		}
		return nil
	}
	rows := make([]storeLedgerAccountRow, len(accts))
	ids := make([]string, len(accts))
	for i, a := range accts {
		rows[i] = storeLedgerAccountRow{
			ID: a.ID, Currency: a.Currency, Kind: a.Kind, PlatformID: a.PlatformID,
			Flags: int(a.Flags), CreatedAt: ports.Stored(a.CreatedAt),
		}
		ids[i] = a.ID
	}
	_, err := r.tx.execPlain(ctx, "create ledger accounts", func(ctx context.Context) (sql.Result, error) {
		return r.tx.db.NewInsert().Model(&rows).On("CONFLICT (id) DO NOTHING").Returning("NULL").Exec(ctx)
	})
	if err != nil {
		return err
	}
	var stored []storeLedgerAccountRow
	if err := r.tx.db.NewSelect().Model(&stored).Where("id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return fmt.Errorf("create ledger accounts: read back: %w", err)
	}
	byID := make(map[string]storeLedgerAccountRow, len(stored))
	for _, s := range stored {
		byID[s.ID] = s
	}
	for _, want := range rows {
		got, ok := byID[want.ID]
		if !ok {
			return fmt.Errorf("create ledger account %s: not found after insert", want.ID)
		}
		if got.Currency != want.Currency || got.Kind != want.Kind || got.Flags != want.Flags {
			return fmt.Errorf("create ledger account %s: exists with currency %s, kind %s, flags %d: %w",
				want.ID, got.Currency, got.Kind, got.Flags, &ledger.Error{Code: ledger.CodeExistsWithDifferentFields, AccountID: want.ID})
		}
	}
	return nil
}

// ---- parties (ports.PartyReader) ----
