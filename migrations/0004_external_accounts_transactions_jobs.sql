-- External accounts, transactions (with their list counters), receiver
-- lookups and the job queue. adapters/postgres/{external,transactions,
-- lookup,jobs}.go read and write them. Ids use the "C" collation so keyset pagination on (created_at, id)
-- orders exactly as the memory store does (byte order).

-- External accounts: a customer's (customer_id set) or the platform's own
-- (customer_id = ''). accountInfo (with its beneficiary) is jsonb; the
-- columns filtered on are plain. An account is never deleted, only flagged.
CREATE TABLE external_accounts (
    id                              text COLLATE "C" PRIMARY KEY,
    platform_id                     text NOT NULL REFERENCES platforms (id),
    customer_id                     text COLLATE "C" NOT NULL DEFAULT '',
    currency                        text NOT NULL,
    status                          text NOT NULL DEFAULT '',
    platform_account_id             text NOT NULL DEFAULT '',
    ownership_type                  text NOT NULL DEFAULT '',
    account_type                    text NOT NULL DEFAULT '',
    info                            jsonb NOT NULL,
    default_uma_deposit_account     boolean NOT NULL DEFAULT false,
    beneficiary_verification_status text NOT NULL DEFAULT '',
    beneficiary_verified_name       text NOT NULL DEFAULT '',
    is_deleted                      boolean NOT NULL DEFAULT false,
    created_at                      timestamptz NOT NULL,
    updated_at                      timestamptz NOT NULL
);

-- At most one live default UMA deposit account per customer (and one among
-- the platform's own accounts). The store clears the previous default first,
-- under a per-customer advisory lock, so this never fires in normal use.
CREATE UNIQUE INDEX external_accounts_default_uma ON external_accounts (platform_id, customer_id)
    WHERE default_uma_deposit_account AND NOT is_deleted;
-- Listing live accounts: one customer's (or the platform's own), and all
-- customer accounts of a platform.
CREATE INDEX external_accounts_by_customer ON external_accounts (platform_id, customer_id, created_at, id)
    WHERE NOT is_deleted;
CREATE INDEX external_accounts_customers ON external_accounts (platform_id, created_at, id)
    WHERE NOT is_deleted AND customer_id <> '';

-- Transactions (incoming and outgoing payments). No foreign keys: this is a
-- hot table, and each key would cost a key-share lock per insert on the
-- platform row. sender/receiver_identifiers are the account identifiers the
-- list filters match (GIN-indexed).
CREATE TABLE transactions (
    id                     text COLLATE "C" PRIMARY KEY,
    platform_id            text NOT NULL,
    customer_id            text COLLATE "C" NOT NULL DEFAULT '',
    platform_customer_id   text NOT NULL DEFAULT '',
    type                   text NOT NULL,
    status                 text NOT NULL,
    source_account_id      text NOT NULL DEFAULT '',
    source_currency        text NOT NULL DEFAULT '',
    destination_account_id text NOT NULL DEFAULT '',
    destination_currency   text NOT NULL DEFAULT '',
    payment_rail           text NOT NULL DEFAULT '',
    rail_selection_mode    text NOT NULL DEFAULT '',
    sender_identifiers     text[] NOT NULL DEFAULT '{}',
    receiver_identifiers   text[] NOT NULL DEFAULT '{}',
    sent_amount            bigint NOT NULL DEFAULT 0,
    received_amount        bigint NOT NULL DEFAULT 0,
    fees                   bigint NOT NULL DEFAULT 0,
    exchange_rate          text NOT NULL DEFAULT '',
    reference              text NOT NULL DEFAULT '',
    description            text NOT NULL DEFAULT '',
    remittance_information text NOT NULL DEFAULT '',
    purpose_of_payment     text NOT NULL DEFAULT '',
    failure_reason         text NOT NULL DEFAULT '',
    quote_id               text NOT NULL DEFAULT '',
    agent_id               text NOT NULL DEFAULT '',
    settled_at             timestamptz,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);

-- Keyset pages (either direction): the whole platform, one customer (or the
-- platform's own, customer_id = ''), and the common filters.
CREATE INDEX transactions_list ON transactions (platform_id, created_at, id);
CREATE INDEX transactions_by_customer ON transactions (platform_id, customer_id, created_at, id);
CREATE INDEX transactions_by_platform_customer_id ON transactions (platform_id, platform_customer_id, created_at, id)
    WHERE platform_customer_id <> '';
CREATE INDEX transactions_by_status ON transactions (platform_id, status, created_at, id);
CREATE INDEX transactions_by_reference ON transactions (platform_id, reference) WHERE reference <> '';
CREATE INDEX transactions_by_sender ON transactions USING gin (sender_identifiers);
CREATE INDEX transactions_by_receiver ON transactions USING gin (receiver_identifiers);

-- Row counts for the list's totalCount without COUNT(*) over the table:
-- per (platform, customer, type, status), customer_id '' being the
-- platform's own transactions and '*' every transaction of the platform, so
-- a list filtered by nothing but customer, type and status sums a handful of
-- rows. Each key is split over 64 shards (the writing backend's pid modulo
-- 64) so concurrent writers (each holding its counter rows locked until it
-- commits) rarely wait on the same counter row. Maintained by the row
-- triggers below, in the writing transaction: an insert adds, a delete
-- subtracts, an update that changes the key moves the count.
CREATE TABLE transaction_counts (
    platform_id text NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    type        text NOT NULL,
    status      text NOT NULL,
    shard       smallint NOT NULL,
    n           bigint NOT NULL,
    PRIMARY KEY (platform_id, customer_id, type, status, shard)
);

-- One upsert per changed row: -1 on the old key, +1 on the new, each for
-- the customer's and the platform's ('*') counters, netted per key and
-- applied in a fixed order (the platform's first). A row trigger costs less
-- than a statement trigger with transition tables on the hot path, where
-- every statement writes one row.
CREATE FUNCTION transaction_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v_shard smallint := pg_backend_pid() % 64;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO transaction_counts AS c (platform_id, customer_id, type, status, shard, n)
        VALUES (NEW.platform_id, '*', NEW.type, NEW.status, v_shard, 1),
               (NEW.platform_id, NEW.customer_id, NEW.type, NEW.status, v_shard, 1)
        ON CONFLICT (platform_id, customer_id, type, status, shard) DO UPDATE SET n = c.n + excluded.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO transaction_counts AS c (platform_id, customer_id, type, status, shard, n)
        VALUES (OLD.platform_id, '*', OLD.type, OLD.status, v_shard, -1),
               (OLD.platform_id, OLD.customer_id, OLD.type, OLD.status, v_shard, -1)
        ON CONFLICT (platform_id, customer_id, type, status, shard) DO UPDATE SET n = c.n + excluded.n;
    ELSE
        INSERT INTO transaction_counts AS c (platform_id, customer_id, type, status, shard, n)
        SELECT d.platform_id, d.customer_id, d.type, d.status, v_shard, sum(d.n)
        FROM (VALUES
            (OLD.platform_id, '*', OLD.type, OLD.status, -1),
            (OLD.platform_id, OLD.customer_id, OLD.type, OLD.status, -1),
            (NEW.platform_id, '*', NEW.type, NEW.status, 1),
            (NEW.platform_id, NEW.customer_id, NEW.type, NEW.status, 1)
        ) AS d (platform_id, customer_id, type, status, n)
        GROUP BY 1, 2, 3, 4
        HAVING sum(d.n) <> 0
        ORDER BY 1, (d.customer_id = '*') DESC, 2, 3, 4
        ON CONFLICT (platform_id, customer_id, type, status, shard) DO UPDATE SET n = c.n + excluded.n;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER transaction_counts_insert AFTER INSERT ON transactions
    FOR EACH ROW EXECUTE FUNCTION transaction_counts_apply();
CREATE TRIGGER transaction_counts_delete AFTER DELETE ON transactions
    FOR EACH ROW EXECUTE FUNCTION transaction_counts_apply();
CREATE TRIGGER transaction_counts_update AFTER UPDATE OF platform_id, customer_id, type, status ON transactions
    FOR EACH ROW
    WHEN ((OLD.platform_id, OLD.customer_id, OLD.type, OLD.status) IS DISTINCT FROM (NEW.platform_id, NEW.customer_id, NEW.type, NEW.status))
    EXECUTE FUNCTION transaction_counts_apply();

-- Receiver lookups, kept for the quotes that follow them (read by id).
-- currencies and required_payer_data are jsonb.
CREATE TABLE lookups (
    id                  text COLLATE "C" PRIMARY KEY,
    platform_id         text NOT NULL REFERENCES platforms (id),
    account_id          text NOT NULL DEFAULT '',
    customer_id         text NOT NULL DEFAULT '',
    sender_uma_address  text NOT NULL DEFAULT '',
    sending_currency    text NOT NULL DEFAULT '',
    currencies          jsonb NOT NULL,
    required_payer_data jsonb NOT NULL,
    created_at          timestamptz NOT NULL
);

-- Background jobs. A job is claimable when run_at has come and its lease
-- (locked_until) has ended or was never taken; finished jobs are deleted.
-- key de-duplicates among queued jobs.
CREATE TABLE jobs (
    id           text COLLATE "C" PRIMARY KEY,
    kind         text NOT NULL,
    key          text NOT NULL DEFAULT '',
    payload      bytea,
    run_at       timestamptz NOT NULL,
    attempts     integer NOT NULL DEFAULT 0,
    last_error   text NOT NULL DEFAULT '',
    locked_until timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX jobs_key ON jobs (key) WHERE key <> '';
CREATE INDEX jobs_due ON jobs (run_at, id);
