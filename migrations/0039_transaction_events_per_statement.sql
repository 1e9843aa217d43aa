-- A transaction's events (0020, 0028) are recorded once per statement
-- instead of once per row. The ledger writer inserts a group commit's
-- transactions with one multi-row INSERT and changes their statuses with
-- one UPDATE; the row trigger ran a PL/pgSQL call per row (its type
-- functions, a platform lookup, then one INSERT into events and one into
-- jobs, each its own statement with its own executor start-up). Now each
-- statement makes one set-based INSERT of its events, and of the delivery
-- jobs of the platforms with a webhook endpoint, from the statement's
-- transition tables. Same rows as before: the status's event type when the
-- status changed (or on insert), then the refund's when details.refund.status
-- changed (unless it is the same type), the second a microsecond after the
-- first; events about one transaction keep their order (seq), and the
-- statement's rows keep theirs.
-- The events of changed transactions: changed holds the transactions after
-- the change, in the statement's order; old_status and old_refund their
-- status and refund status before it (NULL for a new transaction).
CREATE FUNCTION transactions_record_events_of(changed transactions[], old_status text[], old_refund text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    WITH ev AS (
        INSERT INTO events (id, platform_id, type, resource_id, data, data_format, created_at, status)
        SELECT 'Webhook:' || gen_random_uuid(), (changed[i]).platform_id, t.typ, (changed[i]).id, to_jsonb(changed[i]), 'transactions',
            (changed[i]).updated_at + (t.k - 1) * interval '1 microsecond', 'PENDING'
        FROM generate_subscripts(changed, 1) AS i
        CROSS JOIN LATERAL transaction_event_types((changed[i]).type, (changed[i]).status, (changed[i]).details -> 'refund' ->> 'status',
            old_status[i], old_refund[i], old_status[i] IS NULL) AS t
        ORDER BY i, t.k
        RETURNING id, platform_id, created_at
    )
    INSERT INTO jobs (id, kind, key, payload, run_at, attempts, last_error)
    SELECT 'Job:' || ev.id, 'webhook.deliver', ev.id, convert_to(ev.platform_id || chr(10) || ev.id, 'UTF8'), ev.created_at, 0, ''
    FROM ev JOIN platforms AS p ON p.id = ev.platform_id AND p.webhook_endpoint <> ''
    ON CONFLICT DO NOTHING;
END
$$;

-- The trigger function of both statements. A transition table's rows are
-- anonymous records: ROW(n.*) makes them transactions again.
CREATE FUNCTION transactions_record_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM transactions_record_events_of(array_agg(ROW(n.*)::transactions), NULL, NULL)
        FROM new_rows AS n HAVING count(*) > 0;
    ELSE
        PERFORM transactions_record_events_of(array_agg(ROW(n.*)::transactions), array_agg(o.status),
            array_agg(o.details -> 'refund' ->> 'status'))
        FROM new_rows AS n JOIN old_rows AS o ON o.id = n.id
        WHERE o.status IS DISTINCT FROM n.status
            OR (o.details -> 'refund' ->> 'status') IS DISTINCT FROM (n.details -> 'refund' ->> 'status')
        HAVING count(*) > 0;
    END IF;
    RETURN NULL;
END
$$;

-- The event types one change of a transaction records, in order (k): its
-- status's type when the status changed (or the row is new), then its
-- refund's type when the refund's status changed, unless that is the same
-- type.
CREATE FUNCTION transaction_event_types(tx_type text, status text, refund text, old_status text, old_refund text, fresh boolean)
RETURNS TABLE (typ text, k bigint)
LANGUAGE sql IMMUTABLE AS $$
    SELECT x.typ, row_number() OVER (ORDER BY x.pos)
    FROM (SELECT CASE WHEN fresh OR old_status IS DISTINCT FROM status THEN transaction_event_type(tx_type, status) END) AS s(typ)
    CROSS JOIN LATERAL (VALUES
        (s.typ, 1),
        (CASE WHEN fresh OR old_refund IS DISTINCT FROM refund THEN transaction_refund_event_type(tx_type, refund) END, 2)
    ) AS x(typ, pos)
    WHERE x.typ IS NOT NULL AND NOT (x.pos = 2 AND x.typ IS NOT DISTINCT FROM s.typ)
$$;

DROP TRIGGER transactions_events ON transactions;
DROP FUNCTION transactions_record_event();
CREATE TRIGGER transactions_events_insert AFTER INSERT ON transactions
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION transactions_record_events();
CREATE TRIGGER transactions_events_update AFTER UPDATE ON transactions
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION transactions_record_events();
