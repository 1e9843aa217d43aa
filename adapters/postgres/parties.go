package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/uptrace/bun/schema"

	"github.com/corridorpay/corridor/ports"
)

// The transfer path reads an internal account, an external account and the
// customer owning them before it moves money. Outside a unit of work those
// reads are grouped (groupedRead); inside one the single-call statement
// runs on its connection, so it sees the unit's own writes. Both statements
// match primary keys only (see groupedRead); the platform and deletion are
// checked in Go. (A platform_id or is_deleted condition let the planner of
// an empty, unanalysed table pick an index that walks the platform's rows.)

// storePartiesRow is one row of the parties statements: the call's
// ordinal, then each table's columns under its own prefix, NULL (zero)
// where the row is absent.
type storePartiesRow struct {
	Ord      int64            `bun:"ord"`
	Internal storeAccountRow  `bun:"embed:a__"`
	External storeExternalRow `bun:"embed:e__"`
	Customer storeCustomerRow `bun:"embed:c__"`
	// Sessions is an embedded wallet's active sessions as a JSON array
	// (empty otherwise).
	Sessions string `bun:"sessions"`
	// Currency is the platform's setting of the internal account's
	// currency (a storeCurrencySetting as JSON; empty for none).
	Currency string `bun:"currency_setting"`
}

// storePartySession is one element of storePartiesRow.Sessions.
type storePartySession struct {
	ID           string    `json:"id"`
	PlatformID   string    `json:"platform_id"`
	AccountID    string    `json:"account_id"`
	CredentialID string    `json:"credential_id"`
	PublicKey    string    `json:"public_key"`
	CreatedAt    time.Time `json:"created_at"`
	ExpiresAt    time.Time `json:"expires_at"`
}

// storePartiesFrom is the statements' FROM clause over u(iid, eid, at,
// ord). An embedded wallet's sessions active at u.at come along
// (storePartySessions), so a stamped payment costs no extra round trip.
const storePartiesFrom = `
	LEFT JOIN LATERAL (SELECT * FROM internal_accounts WHERE id = u.iid LIMIT 1) AS a ON true
	LEFT JOIN LATERAL (SELECT * FROM external_accounts WHERE id = u.eid LIMIT 1) AS e ON true
	LEFT JOIN LATERAL (SELECT * FROM customers WHERE id = a.customer_id AND a.customer_id <> '' LIMIT 1) AS c ON true
	LEFT JOIN LATERAL (SELECT currency_settings FROM platforms WHERE id = a.platform_id LIMIT 1) AS p ON true`

// storePartyCurrency is the currency_setting column: the element of the
// platform's currency_settings for the internal account's currency.
const storePartyCurrency = `coalesce(CASE WHEN jsonb_typeof(p.currency_settings) = 'array' THEN
	(SELECT s::text FROM jsonb_array_elements(p.currency_settings) AS s WHERE s->>'code' = a.currency LIMIT 1) END, '')`

// storePartySessions is the sessions column: a scalar subquery, so its
// plan reads wallet_sessions_active by the account id (a parameter of the
// subplan) whatever the statistics when the generic plan is made. Under
// the CASE it runs only for an embedded wallet whose call asked for
// sessions (u.at not empty): building them doubled the read's cost.
const storePartySessions = `CASE WHEN u.at <> '' AND a.type = 'EMBEDDED_WALLET' THEN (SELECT json_agg(json_build_object('id', s.id, 'platform_id', s.platform_id,
		'account_id', s.account_id, 'credential_id', s.credential_id, 'public_key', s.public_key, 'created_at', s.created_at,
		'expires_at', s.expires_at) ORDER BY s.created_at, s.id)
	FROM wallet_sessions AS s
	WHERE s.account_id = a.id AND s.revoked_at IS NULL AND s.expires_at > u.at::timestamptz)::text END`

// storeQuotePartiesFrom puts a quote's row before storePartiesFrom, over
// v(qid, at, ord): the parties are those of the quote's source and
// destination accounts (u.iid, u.eid), so an execution reads its quote and
// its parties in one statement.
const storeQuotePartiesFrom = `
	LEFT JOIN LATERAL (SELECT * FROM quotes WHERE id = v.qid LIMIT 1) AS q ON true
	CROSS JOIN LATERAL (SELECT coalesce(q.source_account_id, '') AS iid, coalesce(q.destination_account_id, '') AS eid,
		v.at, v.ord) AS u` + storePartiesFrom

// storePartiesSQL holds the statements, built once from the row models so
// a column added to a model is read here too: the parties of two account
// ids, and those of a quote with the quote, each alone (inside a unit of
// work) and grouped.
var storePartiesSQL struct {
	once                sync.Once
	one, many           string
	quoteOne, quoteMany string
}

func storePartiesQueries(d schema.Dialect) (one, many string) {
	storePartiesStatements(d)
	return storePartiesSQL.one, storePartiesSQL.many
}

func storeQuotePartiesQueries(d schema.Dialect) (one, many string) {
	storePartiesStatements(d)
	return storePartiesSQL.quoteOne, storePartiesSQL.quoteMany
}

func storePartiesStatements(d schema.Dialect) {
	storePartiesSQL.once.Do(func() {
		cols := storeColumns(d, "a", reflect.TypeFor[storeAccountRow]()) + `, ` +
			storeColumns(d, "e", reflect.TypeFor[storeExternalRow]()) + `, ` +
			storeColumns(d, "c", reflect.TypeFor[storeCustomerRow]()) + `, coalesce(` + storePartySessions + `, '') AS sessions, ` +
			storePartyCurrency + ` AS currency_setting`
		sel := `SELECT u.ord, ` + cols
		storePartiesSQL.one = sel + `
	FROM (SELECT $1::text AS iid, $2::text AS eid, $3::text AS at, 1::bigint AS ord) AS u` + storePartiesFrom
		storePartiesSQL.many = sel + `
	FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS u(iid, eid, at, ord)` + storePartiesFrom + `
	ORDER BY u.ord`
		sel = `SELECT u.ord, ` + storeColumns(d, "q", reflect.TypeFor[storeQuoteRow]()) + `, ` + cols
		storePartiesSQL.quoteOne = sel + `
	FROM (SELECT $1::text AS qid, $2::text AS at, 1::bigint AS ord) AS v` + storeQuotePartiesFrom
		storePartiesSQL.quoteMany = sel + `
	FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS v(qid, at, ord)` + storeQuotePartiesFrom + `
	ORDER BY u.ord`
	})
}

func newPartiesRead(stmts *preparedStmts) *groupedRead[storePartiesRow] {
	_, many := storePartiesQueries(stmts.db.Dialect())
	return newGroupedRead(stmts, many, func(r *storePartiesRow) int64 { return r.Ord })
}

func newQuotePartiesRead(stmts *preparedStmts) *groupedRead[storeQuotePartiesRow] {
	_, many := storeQuotePartiesQueries(stmts.db.Dialect())
	return newGroupedRead(stmts, many, func(r *storeQuotePartiesRow) int64 { return r.Ord })
}

// storeQuotePartiesRow is one row of the quote-and-parties statements: a
// storePartiesRow with the quote's columns (NULL, zero, when it is absent).
type storeQuotePartiesRow struct {
	storePartiesRow
	Quote storeQuoteRow `bun:"embed:q__"`
}

type storeParties struct{ tx *storeTx }

// Get reads the three rows: grouped with concurrent calls outside a unit
// of work, alone inside one.
func (r storeParties) Get(ctx context.Context, platformID, internalID, externalID string, sessionsAt time.Time) (ports.Parties, error) {
	var row storePartiesRow
	var err error
	when := partiesSessionsAt(sessionsAt)
	if r.tx.reads == nil { // inside a unit of work
		one, _ := storePartiesQueries(r.tx.db.Dialect())
		err = r.tx.stmts.query(ctx, r.tx.db, &row, one, internalID, externalID, when)
	} else {
		row, err = r.tx.reads.parties.get(ctx, internalID, externalID, when)
	}
	if err != nil {
		return ports.Parties{}, fmt.Errorf("read parties %s, %s: %w", internalID, externalID, err)
	}
	return row.parties(platformID)
}

// OfQuote reads the quote and its parties: grouped with concurrent calls
// outside a unit of work, alone inside one.
func (r storeParties) OfQuote(ctx context.Context, platformID, quoteID string, sessionsAt time.Time) (ports.Quote, ports.Parties, error) {
	var row storeQuotePartiesRow
	var err error
	when := partiesSessionsAt(sessionsAt)
	if r.tx.reads == nil { // inside a unit of work
		one, _ := storeQuotePartiesQueries(r.tx.db.Dialect())
		err = r.tx.stmts.query(ctx, r.tx.db, &row, one, quoteID, when)
	} else {
		row, err = r.tx.reads.quoteParties.get(ctx, quoteID, when)
	}
	if err != nil {
		return ports.Quote{}, ports.Parties{}, fmt.Errorf("read quote %s and its parties: %w", quoteID, err)
	}
	if row.Quote.ID == "" || row.Quote.PlatformID != platformID {
		return ports.Quote{}, ports.Parties{}, fmt.Errorf("quote %s: %w", quoteID, ports.ErrNotFound)
	}
	p, err := row.parties(platformID)
	if err != nil {
		return ports.Quote{}, ports.Parties{}, err
	}
	return row.Quote.toPort(), p, nil
}

// partiesSessionsAt is the statements' session time parameter: empty when
// the caller checks no stamp (no sessions are read).
func partiesSessionsAt(at time.Time) string {
	if at.IsZero() {
		return ""
	}
	return at.UTC().Format(time.RFC3339Nano)
}

// parties is row as platformID sees it: another platform's rows and a
// deleted external account are absent.
func (row storePartiesRow) parties(platformID string) (ports.Parties, error) {
	var p ports.Parties
	if row.Internal.ID != "" && row.Internal.PlatformID == platformID {
		p.Internal = row.Internal.toPort()
		if row.Customer.ID != "" && row.Customer.PlatformID == platformID {
			p.Customer = row.Customer.toPort()
		}
		if row.Currency != "" {
			var c storeCurrencySetting
			if err := json.Unmarshal([]byte(row.Currency), &c); err != nil {
				return p, fmt.Errorf("read currency setting of %s: %w", row.Internal.ID, err)
			}
			p.Currency = c.toPort()
		}
		if row.Sessions != "" {
			var ss []storePartySession
			if err := json.Unmarshal([]byte(row.Sessions), &ss); err != nil {
				return p, fmt.Errorf("read sessions of %s: %w", row.Internal.ID, err)
			}
			for _, s := range ss {
				if s.PlatformID == platformID {
					p.Sessions = append(p.Sessions, ports.WalletSession{ID: s.ID, PlatformID: s.PlatformID, AccountID: s.AccountID,
						CredentialID: s.CredentialID, PublicKey: s.PublicKey, CreatedAt: ports.Stored(s.CreatedAt), ExpiresAt: ports.Stored(s.ExpiresAt)})
				}
			}
		}
	}
	if row.External.ID != "" && row.External.PlatformID == platformID && !row.External.IsDeleted {
		p.External = row.External.toPort()
	}
	return p, nil
}
