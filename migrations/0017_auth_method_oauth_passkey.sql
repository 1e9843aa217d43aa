-- OAUTH credentials keep the OIDC identity they are bound to; PASSKEY
-- credentials their WebAuthn record and signature counter.
ALTER TABLE auth_methods
    ADD COLUMN oidc_issuer   text NOT NULL DEFAULT '',
    ADD COLUMN oidc_subject  text NOT NULL DEFAULT '',
    ADD COLUMN oidc_audience text NOT NULL DEFAULT '',
    ADD COLUMN passkey       bytea,
    ADD COLUMN sign_count    bigint NOT NULL DEFAULT 0;

-- ports.UniquePasskeyPerAccount and ports.UniqueOAuthPerAccount.
CREATE UNIQUE INDEX auth_methods_passkey_account ON auth_methods (account_id, credential_id)
    WHERE type = 'PASSKEY' AND revoked_at IS NULL;
CREATE UNIQUE INDEX auth_methods_oauth_account ON auth_methods (account_id, oidc_issuer, oidc_subject)
    WHERE type = 'OAUTH' AND revoked_at IS NULL;
