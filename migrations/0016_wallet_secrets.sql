-- Embedded wallets' secrets (their mnemonics), sealed under the
-- deployment's master key (AES-256-GCM, nonce first, the account id as
-- additional data): the database never holds them in the clear.
CREATE TABLE wallet_secrets (
    account_id  text PRIMARY KEY,
    platform_id text NOT NULL,
    sealed      bytea NOT NULL,
    created_at  timestamptz NOT NULL
);
