-- The list counters (0004) follow a status change per statement instead of
-- per row, as inserts do since 0011. The job loop and the ledger writer
-- change many transactions' statuses in one UPDATE; the row trigger then
-- made a PL/pgSQL call and an upsert per row, and the platform's counters
-- ('*') were rewritten once per row. Now the statement's changes are netted
-- per counter key and applied with one upsert, in the same key order as
-- before (the platform's counters first). The UPDATE transition tables are
-- captured anyway for the events (0039). Deletes keep the row trigger.
CREATE FUNCTION transaction_counts_update_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO transaction_counts AS c (platform_id, customer_id, type, status, shard, n)
    SELECT d.platform_id, d.customer_id, d.type, d.status, pg_backend_pid() % 64, sum(d.n)
    FROM (
        SELECT x.platform_id, k.customer_id, x.type, x.status, x.n
        FROM (
            SELECT o.platform_id, o.customer_id, o.type, o.status, -1 AS n
            FROM old_rows AS o JOIN new_rows AS w ON w.id = o.id
            WHERE (o.platform_id, o.customer_id, o.type, o.status) IS DISTINCT FROM (w.platform_id, w.customer_id, w.type, w.status)
            UNION ALL
            SELECT w.platform_id, w.customer_id, w.type, w.status, 1
            FROM old_rows AS o JOIN new_rows AS w ON w.id = o.id
            WHERE (o.platform_id, o.customer_id, o.type, o.status) IS DISTINCT FROM (w.platform_id, w.customer_id, w.type, w.status)
        ) AS x
        CROSS JOIN LATERAL (VALUES ('*' COLLATE "C"), (x.customer_id)) AS k (customer_id)
    ) AS d
    GROUP BY d.platform_id, d.customer_id, d.type, d.status
    HAVING sum(d.n) <> 0
    ORDER BY d.platform_id, (d.customer_id = '*') DESC, d.customer_id, d.type, d.status
    ON CONFLICT (platform_id, customer_id, type, status, shard) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END;
$$;

DROP TRIGGER transaction_counts_update ON transactions;
CREATE TRIGGER transaction_counts_update AFTER UPDATE ON transactions
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION transaction_counts_update_rows();
