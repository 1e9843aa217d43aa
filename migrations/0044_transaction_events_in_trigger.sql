-- A transaction's events are recorded by the trigger function's own
-- statements, over the transition tables, instead of by a call of
-- transactions_record_events_of with arrays of rows (0039, 0041, 0042).
-- That call cost each firing, besides its events statement: gathering the
-- changed rows into arrays (array_agg of whole rows), a function call with
-- a SET clause (plan_cache_mode, saved and restored per call) and the
-- arrays' unnest. A statement that reads only the transition tables takes
-- no parameters, so plpgsql keeps one generic plan of it without the SET
-- clause. What it saves is measured in docs/performance.md ("What changed
-- for speed": the server's CPU per transaction inserted then changed
-- twice, before and after).
--
-- Same events as before, in the same order: the statement's rows keep the
-- order of the transition table (row_number over its scan), and each row's
-- events that of transaction_event_types.
CREATE OR REPLACE FUNCTION transactions_record_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH c AS (
            -- A transition table's rows are anonymous records: ROW(n.*)
            -- makes them transactions again.
            SELECT ROW(n.*)::transactions AS n, NULL::text AS was_status, NULL::text AS was_refund, row_number() OVER () AS i
            FROM new_rows AS n
        ), ev AS (
            INSERT INTO events (id, platform_id, type, resource_id, data, data_format, created_at)
            SELECT 'Webhook:' || gen_random_uuid(), (c.n).platform_id, t.typ, (c.n).id, to_jsonb(c.n), 'transactions',
                (c.n).updated_at + (t.k - 1) * interval '1 microsecond'
            FROM c CROSS JOIN LATERAL transaction_event_types((c.n).type, (c.n).status, (c.n).details -> 'refund' ->> 'status',
                c.was_status, c.was_refund, true) AS t
            ORDER BY c.i, t.k
            RETURNING id, platform_id, created_at, seq
        )
        INSERT INTO jobs (id, kind, key, payload, run_at, attempts, last_error)
        SELECT j.* FROM (SELECT array_agg(ev.id ORDER BY ev.seq) AS ids, array_agg(ev.platform_id ORDER BY ev.seq) AS platform_ids,
                array_agg(ev.created_at ORDER BY ev.seq) AS created FROM ev) AS a
            CROSS JOIN LATERAL event_delivery_jobs(a.ids, a.platform_ids, a.created) AS j;
    ELSE
        WITH nn AS (
            SELECT ROW(n.*)::transactions AS n, row_number() OVER () AS i FROM new_rows AS n
        ), c AS (
            SELECT nn.n, o.status AS was_status, o.details -> 'refund' ->> 'status' AS was_refund, nn.i
            FROM nn JOIN old_rows AS o ON o.id = (nn.n).id
            WHERE o.status IS DISTINCT FROM (nn.n).status
                OR (o.details -> 'refund' ->> 'status') IS DISTINCT FROM ((nn.n).details -> 'refund' ->> 'status')
        ), ev AS (
            INSERT INTO events (id, platform_id, type, resource_id, data, data_format, created_at)
            SELECT 'Webhook:' || gen_random_uuid(), (c.n).platform_id, t.typ, (c.n).id, to_jsonb(c.n), 'transactions',
                (c.n).updated_at + (t.k - 1) * interval '1 microsecond'
            FROM c CROSS JOIN LATERAL transaction_event_types((c.n).type, (c.n).status, (c.n).details -> 'refund' ->> 'status',
                c.was_status, c.was_refund, false) AS t
            ORDER BY c.i, t.k
            RETURNING id, platform_id, created_at, seq
        )
        INSERT INTO jobs (id, kind, key, payload, run_at, attempts, last_error)
        SELECT j.* FROM (SELECT array_agg(ev.id ORDER BY ev.seq) AS ids, array_agg(ev.platform_id ORDER BY ev.seq) AS platform_ids,
                array_agg(ev.created_at ORDER BY ev.seq) AS created FROM ev) AS a
            CROSS JOIN LATERAL event_delivery_jobs(a.ids, a.platform_ids, a.created) AS j;
    END IF;
    RETURN NULL;
END
$$;

DROP FUNCTION transactions_record_events_of(transactions[], text[], text[]);
