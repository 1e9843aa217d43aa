-- A transaction's events (0020, 0028) are recorded once per statement
-- instead of once per row. The ledger writer inserts a group commit's
-- transactions with one multi-row INSERT and changes their statuses with
-- one UPDATE; the row trigger ran a PL/pgSQL call per row (its type
-- functions, a platform lookup, then one INSERT into events and one into
-- jobs, each its own statement with its own executor start-up). Now each
-- statement makes one set-based INSERT of its events from the statement's
-- transition tables, and one of their delivery jobs. Same events as
-- before: the status's event type when the status changed (or on insert),
-- then the refund's when details.refund.status changed (unless it is the
-- same type), the second a microsecond after the first; the events of one
-- transaction keep their order (seq), and the statement's rows keep
-- theirs.
--
-- A statement's events are delivered by one job per platform with a
-- webhook endpoint (up to 8 events each, ports.EventsPerDeliveryJob)
-- instead of one job per event: the job's payload is the platform id and
-- the event ids, a line each, in the order the events were recorded. An
-- event that its job's first attempt does not deliver goes on as a job of
-- its own ('Job:' || event id, keyed by the event id). Before, every event
-- queued a job with two index entries (its key, the due index), which a
-- claim then updated and an end deleted. The ledger writer's balance
-- events and its other events queue theirs the same way.

-- event_delivery_jobs lists the jobs of events ids (of platform_ids,
-- recorded at created, in the order given) for the platforms with a
-- webhook endpoint.
CREATE FUNCTION event_delivery_jobs(ids text[], platform_ids text[], created timestamptz[])
RETURNS TABLE (id text, kind text, key text, payload bytea, run_at timestamptz, attempts integer, last_error text)
LANGUAGE sql VOLATILE AS $$
    SELECT 'Job:' || gen_random_uuid(), 'webhook.deliver', '',
        convert_to(g.platform_id || chr(10) || string_agg(g.id, chr(10) ORDER BY g.ord), 'UTF8'), min(g.created), 0, ''
    FROM (
        SELECT x.id, x.platform_id, x.created, x.ord,
            (row_number() OVER (PARTITION BY x.platform_id ORDER BY x.ord) - 1) / 8 AS chunk
        FROM unnest(ids, platform_ids, created) WITH ORDINALITY AS x(id, platform_id, created, ord)
        JOIN platforms AS p ON p.id = x.platform_id AND p.webhook_endpoint <> ''
    ) AS g
    GROUP BY g.platform_id, g.chunk
$$;

-- The events of changed transactions: changed holds the transactions after
-- the change, in the statement's order; old_status and old_refund their
-- status and refund status before it (NULL for a new transaction).
CREATE FUNCTION transactions_record_events_of(changed transactions[], old_status text[], old_refund text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    WITH ev AS (
        INSERT INTO events (id, platform_id, type, resource_id, data, data_format, created_at, status)
        SELECT 'Webhook:' || gen_random_uuid(), (c.n).platform_id, t.typ, (c.n).id, to_jsonb(c.n), 'transactions',
            (c.n).updated_at + (t.k - 1) * interval '1 microsecond', 'PENDING'
        -- The arrays are walked once, in step (subscripting an array of
        -- rows walks it from its start on every access).
        FROM (SELECT unnest(changed) AS n, unnest(old_status) AS was_status, unnest(old_refund) AS was_refund,
                generate_series(1, cardinality(changed)) AS i) AS c
        CROSS JOIN LATERAL transaction_event_types((c.n).type, (c.n).status, (c.n).details -> 'refund' ->> 'status',
            c.was_status, c.was_refund, c.was_status IS NULL) AS t
        ORDER BY c.i, t.k
        RETURNING id, platform_id, created_at, seq
    )
    INSERT INTO jobs (id, kind, key, payload, run_at, attempts, last_error)
    SELECT j.* FROM (SELECT array_agg(ev.id ORDER BY ev.seq) AS ids, array_agg(ev.platform_id ORDER BY ev.seq) AS platform_ids,
            array_agg(ev.created_at ORDER BY ev.seq) AS created FROM ev) AS a
        CROSS JOIN LATERAL event_delivery_jobs(a.ids, a.platform_ids, a.created) AS j;
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
