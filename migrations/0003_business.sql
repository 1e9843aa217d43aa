-- Business records (platforms and their credentials, customers, internal
-- accounts, wallet auth methods) and the idempotency keys that guard
-- requests. adapters/postgres/store.go and idempotency.go read and write them.
--
-- Unique indexes are named after the ports.Unique* rules: the store maps a
-- unique violation to *ports.ConflictError by the index's name. Ids use the
-- "C" collation so keyset pagination on (created_at, id) orders exactly as the
-- memory store does (byte order). Times are stored to the microsecond.

CREATE TABLE platforms (
    id          text COLLATE "C" PRIMARY KEY,
    name        text NOT NULL DEFAULT '',
    uma_domain  text NOT NULL DEFAULT '',
    currencies  text[],
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);

CREATE INDEX platforms_list ON platforms (created_at, id);

-- A platform's Basic credentials: only the SHA-256 of the secret is kept.
CREATE TABLE api_credentials (
    token_id    text NOT NULL,
    platform_id text NOT NULL REFERENCES platforms (id),
    name        text NOT NULL DEFAULT '',
    secret_hash bytea,
    created_at  timestamptz NOT NULL,
    CONSTRAINT api_credentials_token_id PRIMARY KEY (token_id)
);

CREATE INDEX api_credentials_platform ON api_credentials (platform_id);

-- Customers: the columns the list filters on are plain columns; the profile
-- parts are jsonb. A customer is never deleted, only flagged.
CREATE TABLE customers (
    id                     text COLLATE "C" PRIMARY KEY,
    platform_id            text NOT NULL REFERENCES platforms (id),
    platform_customer_id   text NOT NULL DEFAULT '',
    customer_type          text NOT NULL,
    uma_address            text NOT NULL DEFAULT '',
    region                 text NOT NULL DEFAULT '',
    currencies             text[],
    email                  text NOT NULL DEFAULT '',
    phone_number           text NOT NULL DEFAULT '',
    kyc_status             text NOT NULL DEFAULT '',
    address                jsonb,
    end_user_terms_consent jsonb,
    individual             jsonb,
    business               jsonb,
    is_deleted             boolean NOT NULL DEFAULT false,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);

-- ports.UniqueUmaAddress: per platform, deleted customers keep theirs.
CREATE UNIQUE INDEX customers_uma_address ON customers (platform_id, uma_address)
    WHERE uma_address <> '';
-- ports.UniquePlatformCustomerID: per platform, among live customers.
CREATE UNIQUE INDEX customers_platform_customer_id ON customers (platform_id, platform_customer_id)
    WHERE NOT is_deleted AND platform_customer_id <> '';

-- Listing: the default (live customers) and the includeDeleted walk.
CREATE INDEX customers_list_live ON customers (platform_id, created_at, id) WHERE NOT is_deleted;
CREATE INDEX customers_list_all ON customers (platform_id, created_at, id);
-- One per filter.
CREATE INDEX customers_by_platform_customer_id ON customers (platform_id, platform_customer_id);
CREATE INDEX customers_by_type ON customers (platform_id, customer_type, created_at, id);
CREATE INDEX customers_by_region ON customers (platform_id, region, created_at, id);
CREATE INDEX customers_by_currencies ON customers USING gin (currencies);
CREATE INDEX customers_by_email ON customers (platform_id, email) WHERE email <> '';
CREATE INDEX customers_by_kyc_status ON customers (platform_id, kyc_status);
CREATE INDEX customers_by_updated_at ON customers (platform_id, updated_at);

-- Internal accounts: a customer's (customer_id set) or the platform's own
-- (customer_id = ''). The id is also the ledger account's id.
CREATE TABLE internal_accounts (
    id              text COLLATE "C" PRIMARY KEY,
    platform_id     text NOT NULL REFERENCES platforms (id),
    customer_id     text NOT NULL DEFAULT '',
    type            text NOT NULL,
    status          text NOT NULL,
    currency        text NOT NULL,
    private_enabled boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

CREATE INDEX internal_accounts_by_customer ON internal_accounts (platform_id, customer_id, created_at, id);
CREATE INDEX internal_accounts_customers ON internal_accounts (platform_id, created_at, id) WHERE customer_id <> '';

-- Wallet credentials of an internal account (EMBEDDED_WALLET).
CREATE TABLE auth_methods (
    id            text COLLATE "C" PRIMARY KEY,
    platform_id   text NOT NULL REFERENCES platforms (id),
    account_id    text NOT NULL,
    type          text NOT NULL,
    nickname      text NOT NULL DEFAULT '',
    credential_id text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

-- ports.UniqueEmailOTPPerAccount.
CREATE UNIQUE INDEX auth_methods_email_otp_account ON auth_methods (account_id) WHERE type = 'EMAIL_OTP';
CREATE INDEX auth_methods_by_account ON auth_methods (account_id, created_at, id);
CREATE INDEX auth_methods_by_credential_id ON auth_methods (credential_id) WHERE credential_id <> '';

-- Idempotency keys: the authoritative record of each Idempotency-Key, per
-- API credential (scope). A claim is in progress until completed; its lease
-- (locked_until) lets a retry take over a claim whose holder died.
CREATE TABLE idempotency_keys (
    scope        text NOT NULL,
    key          text NOT NULL,
    request_hash text NOT NULL DEFAULT '',
    completed    boolean NOT NULL DEFAULT false,
    status_code  integer NOT NULL DEFAULT 0,
    header       jsonb,
    body         bytea,
    locked_until timestamptz NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);

CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
