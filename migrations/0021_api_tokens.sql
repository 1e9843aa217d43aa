-- API tokens (the reference's ApiToken): a credential gets its own id
-- ("Token:<uuid>"; token_id stays the Basic user name, the clientId), its
-- permissions, an update time and a deletion time. Credentials made before
-- tokens existed (the CLI's, the configured one) keep every permission, so
-- nothing that worked stops working. Deleted tokens are kept, never
-- authenticate, and keep their client id taken.
ALTER TABLE api_credentials
    ADD COLUMN id          text,
    ADD COLUMN permissions text[] NOT NULL DEFAULT '{VIEW,TRANSACT,MANAGE}',
    ADD COLUMN updated_at  timestamptz,
    ADD COLUMN deleted_at  timestamptz;

-- md5 of random input as a uuid: gen_random_uuid() is core only from
-- PostgreSQL 13, and corridor runs on 12.
UPDATE api_credentials
   SET id = 'Token:' || md5(token_id || random()::text || clock_timestamp()::text)::uuid::text,
       updated_at = created_at;

ALTER TABLE api_credentials
    ALTER COLUMN id SET NOT NULL,
    ALTER COLUMN updated_at SET NOT NULL,
    ALTER COLUMN permissions DROP DEFAULT,
    ADD CONSTRAINT api_credentials_id UNIQUE (id),
    ADD CONSTRAINT api_credentials_permissions CHECK (
        cardinality(permissions) > 0 AND permissions <@ '{VIEW,TRANSACT,MANAGE}'::text[]);

-- A platform's live tokens, in list order.
DROP INDEX api_credentials_platform;
CREATE INDEX api_credentials_platform_live ON api_credentials (platform_id, created_at, id)
    WHERE deleted_at IS NULL;
