-- KYC/KYB: beneficial owners of business customers, verifications, the
-- documents they need, and the outbox of non-money events (status changes
-- for the webhook sender). adapters/postgres/kyc.go reads and writes them.
-- Ids use the "C" collation so keyset pagination on (created_at, id) orders
-- exactly as the memory store does (byte order).

CREATE TABLE beneficial_owners (
    id                   text COLLATE "C" PRIMARY KEY,
    platform_id          text NOT NULL REFERENCES platforms (id),
    customer_id          text COLLATE "C" NOT NULL,
    roles                text[] NOT NULL DEFAULT '{}',
    ownership_percentage integer NOT NULL CHECK (ownership_percentage BETWEEN 0 AND 100),
    personal_info        jsonb NOT NULL,
    kyc_status           text NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
CREATE INDEX beneficial_owners_by_customer ON beneficial_owners (platform_id, customer_id, created_at, id);
CREATE INDEX beneficial_owners_list ON beneficial_owners (platform_id, created_at, id);

-- errors is the VerificationError list as jsonb (read whole, never queried).
CREATE TABLE verifications (
    id           text COLLATE "C" PRIMARY KEY,
    platform_id  text NOT NULL REFERENCES platforms (id),
    customer_id  text COLLATE "C" NOT NULL,
    status       text NOT NULL,
    errors       jsonb NOT NULL DEFAULT '[]',
    submitted_at timestamptz,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
CREATE INDEX verifications_by_customer ON verifications (platform_id, customer_id, created_at, id);
CREATE INDEX verifications_by_status ON verifications (platform_id, status, created_at, id);
CREATE INDEX verifications_list ON verifications (platform_id, created_at, id);

-- Documents hold their bytes (bytea, at most 10 MiB each) with a SHA-256;
-- lists read the metadata columns only. A deleted document's row is gone.
CREATE TABLE documents (
    id                text COLLATE "C" PRIMARY KEY,
    platform_id       text NOT NULL REFERENCES platforms (id),
    holder_id         text COLLATE "C" NOT NULL,
    customer_id       text COLLATE "C" NOT NULL,
    document_type     text NOT NULL,
    side              text NOT NULL DEFAULT '',
    country           text NOT NULL DEFAULT '',
    document_number   text NOT NULL DEFAULT '',
    issuing_authority text NOT NULL DEFAULT '',
    file_name         text NOT NULL DEFAULT '',
    content_type      text NOT NULL,
    size              bigint NOT NULL CHECK (size = octet_length(content)),
    sha256            text NOT NULL,
    content           bytea NOT NULL,
    submitted         boolean NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);
CREATE INDEX documents_by_holder ON documents (platform_id, holder_id, created_at, id);
CREATE INDEX documents_by_customer ON documents (platform_id, customer_id, created_at, id);
CREATE INDEX documents_list ON documents (platform_id, created_at, id);

-- Outbox: written in the unit of work that changed the state; delivered
-- later (webhooks).
CREATE TABLE events (
    id          text COLLATE "C" PRIMARY KEY,
    platform_id text NOT NULL,
    type        text NOT NULL,
    resource_id text COLLATE "C" NOT NULL DEFAULT '',
    data        jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL
);
CREATE INDEX events_list ON events (platform_id, created_at, id);
CREATE INDEX events_by_resource ON events (platform_id, resource_id, created_at, id);
