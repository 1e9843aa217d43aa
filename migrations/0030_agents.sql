-- Agents (core/agents): programs acting for one customer of a platform,
-- their single-use device codes and the actions they initiate. Tokens and
-- codes are kept as SHA-256 hashes only. A deleted agent stays (deleted_at
-- set, token gone) so its actions keep naming it.
CREATE TABLE agents (
    id           text PRIMARY KEY,
    platform_id  text NOT NULL REFERENCES platforms (id),
    customer_id  text NOT NULL,
    name         text NOT NULL,
    is_paused    boolean NOT NULL DEFAULT false,
    is_connected boolean NOT NULL DEFAULT false,
    policy       jsonb NOT NULL,
    token_hash   bytea,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    deleted_at   timestamptz,
    CONSTRAINT agents_deleted_no_token CHECK (deleted_at IS NULL OR token_hash IS NULL)
);
CREATE UNIQUE INDEX agents_token_hash ON agents (token_hash) WHERE token_hash IS NOT NULL;
CREATE INDEX agents_platform_list ON agents (platform_id, created_at, id) WHERE deleted_at IS NULL;

-- A device code is redeemed by a conditional update (redeemed_at IS NULL
-- and not expired): of racing redeems exactly one changes the row.
CREATE TABLE agent_device_codes (
    code_hash   bytea PRIMARY KEY,
    agent_id    text NOT NULL REFERENCES agents (id),
    platform_id text NOT NULL,
    expires_at  timestamptz NOT NULL,
    redeemed_at timestamptz,
    created_at  timestamptz NOT NULL
);
CREATE INDEX agent_device_codes_agent ON agent_device_codes (agent_id) WHERE redeemed_at IS NULL;

-- Status changes are conditional updates on status (core/agents' table).
CREATE TABLE agent_actions (
    id                     text PRIMARY KEY,
    platform_id            text NOT NULL REFERENCES platforms (id),
    agent_id               text NOT NULL REFERENCES agents (id),
    customer_id            text NOT NULL,
    platform_customer_id   text NOT NULL DEFAULT '',
    type                   text NOT NULL CHECK (type IN ('EXECUTE_QUOTE', 'TRANSFER_OUT', 'TRANSFER_IN')),
    status                 text NOT NULL CHECK (status IN ('PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'FAILED')),
    quote_id               text NOT NULL DEFAULT '',
    transaction_id         text NOT NULL DEFAULT '',
    amount                 bigint NOT NULL DEFAULT 0 CHECK (amount >= 0),
    currency               text NOT NULL DEFAULT '',
    source_account_id      text NOT NULL DEFAULT '',
    destination_account_id text NOT NULL DEFAULT '',
    charged                bigint NOT NULL DEFAULT 0 CHECK (charged >= 0),
    rejection_reason       text NOT NULL DEFAULT '',
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);
CREATE INDEX agent_actions_agent ON agent_actions (agent_id, created_at, id);
CREATE INDEX agent_actions_pending ON agent_actions (platform_id, created_at, id) WHERE status = 'PENDING_APPROVAL';
