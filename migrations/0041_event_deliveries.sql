-- An event's delivery state leaves the event's row for a narrow one of its
-- own. An event row (about a kilobyte: data is the resource) was rewritten
-- with every attempt, and since status was indexed (listing by status, the
-- pending events of a resource in order) no such update was HOT: each
-- delivered event wrote its row again with four index entries. Now the
-- event row is written once, at the change, and an attempt updates a row
-- of a few dozen bytes with its primary key (and, for a still pending
-- event, its entry in the pending index).
CREATE TABLE event_deliveries (
    event_id        text COLLATE "C" PRIMARY KEY,
    platform_id     text NOT NULL,
    resource_id     text COLLATE "C" NOT NULL,
    seq             bigint NOT NULL,
    status          text NOT NULL DEFAULT 'PENDING',
    attempts        integer NOT NULL DEFAULT 0,
    last_attempt_at timestamptz,
    delivered_at    timestamptz,
    -- A redelivered event's retries follow the schedule from its start:
    -- the sender counts the attempts made since the event was last queued
    -- again (attempts - attempts_before).
    attempts_before integer NOT NULL DEFAULT 0
);

INSERT INTO event_deliveries (event_id, platform_id, resource_id, seq, status, attempts, last_attempt_at, delivered_at)
SELECT id, platform_id, resource_id, seq, status, attempts, last_attempt_at, delivered_at FROM events;

-- The events not delivered (pending or failed): few, beside the delivered
-- ones. Deliveries about one resource go in order: the sender asks
-- whether an earlier event of the resource is still pending (in seq
-- order, as 0029); and a list of a platform's pending or failed events
-- starts here.
CREATE INDEX event_deliveries_undelivered ON event_deliveries (platform_id, resource_id, seq)
    WHERE status <> 'DELIVERED';

-- Drops events_by_status and events_pending_by_resource with them.
ALTER TABLE events
    DROP COLUMN status,
    DROP COLUMN attempts,
    DROP COLUMN last_attempt_at,
    DROP COLUMN delivered_at;

-- Every event starts PENDING, whichever statement records it (a unit of
-- work, the ledger's batch, a transaction's trigger): one statement
-- trigger gives each of a statement's events its delivery row.
CREATE FUNCTION events_start_deliveries() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_deliveries (event_id, platform_id, resource_id, seq)
    SELECT n.id, n.platform_id, n.resource_id, n.seq FROM new_events AS n;
    RETURN NULL;
END
$$;

CREATE TRIGGER events_deliveries AFTER INSERT ON events
    REFERENCING NEW TABLE AS new_events
    FOR EACH STATEMENT EXECUTE FUNCTION events_start_deliveries();

-- An event with its delivery state, as the API shows it (the join is
-- left so that a count without a status filter skips it).
CREATE VIEW event_states AS
SELECT e.id, e.platform_id, e.type, e.resource_id, e.data, e.data_format, e.created_at, e.seq,
    d.status, d.attempts, d.last_attempt_at, d.delivered_at, d.attempts_before
FROM events AS e LEFT JOIN event_deliveries AS d ON d.event_id = e.id;

-- 0039's function without the status column.
CREATE OR REPLACE FUNCTION transactions_record_events_of(changed transactions[], old_status text[], old_refund text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    WITH ev AS (
        INSERT INTO events (id, platform_id, type, resource_id, data, data_format, created_at)
        SELECT 'Webhook:' || gen_random_uuid(), (c.n).platform_id, t.typ, (c.n).id, to_jsonb(c.n), 'transactions',
            (c.n).updated_at + (t.k - 1) * interval '1 microsecond'
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
