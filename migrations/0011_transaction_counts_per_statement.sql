-- Transactions are now inserted in batches (the ledger writer records a
-- group commit's transactions with one multi-row INSERT), so the insert
-- counter moves to a statement trigger: one upsert per statement, each
-- counter key once with the statement's count, instead of a PL/pgSQL call
-- and an upsert per row that rewrote the same '*' counter row once per
-- transaction. Deletes and key-changing updates keep the row trigger of
-- 0004 (a statement trigger with transition tables cannot name the
-- updated columns, and those statements touch few rows).
CREATE FUNCTION transaction_counts_insert_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO transaction_counts AS c (platform_id, customer_id, type, status, shard, n)
    SELECT d.platform_id, d.customer_id, d.type, d.status, pg_backend_pid() % 64, d.n
    FROM (
        SELECT r.platform_id, '*' AS customer_id, r.type, r.status, count(*) AS n
        FROM inserted_rows AS r GROUP BY r.platform_id, r.type, r.status
        UNION ALL
        SELECT r.platform_id, r.customer_id, r.type, r.status, count(*)
        FROM inserted_rows AS r GROUP BY r.platform_id, r.customer_id, r.type, r.status
    ) AS d
    ORDER BY d.platform_id, (d.customer_id = '*') DESC, d.customer_id, d.type, d.status
    ON CONFLICT (platform_id, customer_id, type, status, shard) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END;
$$;

DROP TRIGGER transaction_counts_insert ON transactions;
CREATE TRIGGER transaction_counts_insert AFTER INSERT ON transactions
    REFERENCING NEW TABLE AS inserted_rows
    FOR EACH STATEMENT EXECUTE FUNCTION transaction_counts_insert_rows();
