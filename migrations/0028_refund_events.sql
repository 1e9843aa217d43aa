-- A refund's progress is its own event (the reference keeps it in
-- refund.status, not in the transaction's status): the trigger of 0020
-- records, as ports.TransactionEventTypes does, the status's type when
-- the status changed, then the refund's type when details.refund.status
-- changed (unless it is the same type), the second a microsecond after
-- the first so the two keep their order.

-- ports.TransactionRefundEventType, in SQL.
CREATE FUNCTION transaction_refund_event_type(tx_type text, refund_status text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN refund_status IN ('PENDING', 'COMPLETED', 'FAILED') THEN
        (CASE WHEN tx_type = 'INCOMING' THEN 'INCOMING_PAYMENT.' ELSE 'OUTGOING_PAYMENT.' END) || 'REFUND_' || refund_status
    END
$$;

CREATE OR REPLACE FUNCTION transactions_record_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    types text[] := '{}';
    typ text;
    eid text;
    n integer := 0;
    hooked boolean;
BEGIN
    IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status THEN
        typ := transaction_event_type(NEW.type, NEW.status);
        IF typ IS NOT NULL THEN
            types := types || typ;
        END IF;
    END IF;
    IF TG_OP = 'INSERT' OR (OLD.details -> 'refund' ->> 'status') IS DISTINCT FROM (NEW.details -> 'refund' ->> 'status') THEN
        typ := transaction_refund_event_type(NEW.type, NEW.details -> 'refund' ->> 'status');
        IF typ IS NOT NULL AND NOT typ = ANY(types) THEN
            types := types || typ;
        END IF;
    END IF;
    IF cardinality(types) = 0 THEN
        RETURN NULL;
    END IF;
    hooked := EXISTS (SELECT 1 FROM platforms WHERE id = NEW.platform_id AND webhook_endpoint <> '');
    FOREACH typ IN ARRAY types LOOP
        eid := 'Webhook:' || gen_random_uuid();
        INSERT INTO events (id, platform_id, type, resource_id, data, data_format, created_at, status)
        VALUES (eid, NEW.platform_id, typ, NEW.id, to_jsonb(NEW), 'transactions', NEW.updated_at + n * interval '1 microsecond', 'PENDING');
        IF hooked THEN
            INSERT INTO jobs (id, kind, key, payload, run_at, attempts, last_error)
            VALUES ('Job:' || eid, 'webhook.deliver', eid, convert_to(NEW.platform_id || chr(10) || eid, 'UTF8'),
                NEW.updated_at + n * interval '1 microsecond', 0, '')
            ON CONFLICT DO NOTHING;
        END IF;
        n := n + 1;
    END LOOP;
    RETURN NULL;
END
$$;

DROP TRIGGER transactions_events ON transactions;
CREATE TRIGGER transactions_events AFTER INSERT OR UPDATE OF status, details ON transactions
    FOR EACH ROW EXECUTE FUNCTION transactions_record_event();
