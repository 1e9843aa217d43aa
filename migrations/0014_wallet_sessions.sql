-- Embedded-wallet sessions: the public key of a session a credential
-- issued (the client holds the private key), its lifetime, and when it was
-- revoked. Stamps are checked against the account's active sessions.
CREATE TABLE wallet_sessions (
    id            text PRIMARY KEY,
    platform_id   text NOT NULL,
    account_id    text NOT NULL,
    credential_id text NOT NULL,
    public_key    text NOT NULL,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    revoked_at    timestamptz
);

CREATE INDEX wallet_sessions_active ON wallet_sessions (account_id, created_at, id) WHERE revoked_at IS NULL;
CREATE INDEX wallet_sessions_by_credential ON wallet_sessions (credential_id) WHERE revoked_at IS NULL;
