-- One outbox for every event a platform hears of by webhook (the KYC
-- events table grows into it): data is the changed resource as it was at
-- the change, and each event carries its delivery state. Its delivery is a
-- job (kind webhook.deliver) queued in the same transaction.
ALTER TABLE events
    ADD COLUMN status          text NOT NULL DEFAULT 'PENDING',
    ADD COLUMN attempts        integer NOT NULL DEFAULT 0,
    ADD COLUMN last_attempt_at timestamptz,
    ADD COLUMN delivered_at    timestamptz;

-- Deliveries about one resource go in order: the sender asks whether an
-- earlier event of the resource is still pending.
CREATE INDEX events_pending_by_resource ON events (platform_id, resource_id, created_at, id) WHERE status = 'PENDING';
CREATE INDEX events_by_status ON events (platform_id, status, created_at, id);

CREATE TABLE event_attempts (
    event_id    text COLLATE "C" NOT NULL REFERENCES events (id),
    attempt     integer NOT NULL,
    at          timestamptz NOT NULL,
    status_code integer NOT NULL DEFAULT 0,
    latency_us  bigint NOT NULL DEFAULT 0,
    error       text NOT NULL DEFAULT '',
    PRIMARY KEY (event_id, attempt)
);

-- A transaction's events are recorded by the database itself, in the
-- statement that creates it or changes its status, whichever path does it
-- (the ledger's group commit, a unit of work): none can be forgotten and
-- none outlives a rollback. Only a platform with a webhook endpoint gets a
-- delivery job (without one the event waits; setting an endpoint queues
-- the backlog). data is then the row as stored (data_format
-- 'transactions'), which the store reads back as the transaction.
ALTER TABLE events ADD COLUMN data_format text NOT NULL DEFAULT 'port';

-- ports.TransactionEventType, in SQL.
CREATE FUNCTION transaction_event_type(tx_type text, status text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN status IN ('PENDING', 'COMPLETED', 'FAILED') THEN p || status
        WHEN status = 'REJECTED' THEN p || 'FAILED'
        WHEN status = 'REFUNDED' THEN p || 'REFUND_COMPLETED'
        WHEN status IN ('PENDING_AUTHORIZATION', 'PROCESSING', 'EXPIRED') AND tx_type = 'OUTGOING' THEN p || status
    END
    FROM (SELECT CASE WHEN tx_type = 'INCOMING' THEN 'INCOMING_PAYMENT.' ELSE 'OUTGOING_PAYMENT.' END AS p) AS x
$$;

CREATE FUNCTION transactions_record_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    typ text := transaction_event_type(NEW.type, NEW.status);
    eid text;
BEGIN
    IF typ IS NULL OR (TG_OP = 'UPDATE' AND OLD.status = NEW.status) THEN
        RETURN NULL;
    END IF;
    eid := 'Webhook:' || gen_random_uuid();
    INSERT INTO events (id, platform_id, type, resource_id, data, data_format, created_at, status)
    VALUES (eid, NEW.platform_id, typ, NEW.id, to_jsonb(NEW), 'transactions', NEW.updated_at, 'PENDING');
    IF EXISTS (SELECT 1 FROM platforms WHERE id = NEW.platform_id AND webhook_endpoint <> '') THEN
        INSERT INTO jobs (id, kind, key, payload, run_at, attempts, last_error)
        VALUES ('Job:' || eid, 'webhook.deliver', eid, convert_to(NEW.platform_id || chr(10) || eid, 'UTF8'), NEW.updated_at, 0, '')
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER transactions_events AFTER INSERT OR UPDATE OF status ON transactions
    FOR EACH ROW EXECUTE FUNCTION transactions_record_event();
