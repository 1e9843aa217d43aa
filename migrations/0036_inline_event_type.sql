-- transaction_event_type (0020) read its prefix from a subquery, which
-- keeps the planner from inlining it: the events trigger, which calls it
-- on every insert and status change of a transaction, then ran it through
-- the SQL-function executor, which plans its body on every call. As one
-- expression it is inlined into the trigger's cached plan: the trigger
-- went from 0.16-0.24 ms to 0.10 ms per row (EXPLAIN ANALYZE, 150 inserts
-- in one session). Same results: NULL when the status has no event type.
CREATE OR REPLACE FUNCTION transaction_event_type(tx_type text, status text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN tx_type = 'INCOMING' THEN 'INCOMING_PAYMENT.' ELSE 'OUTGOING_PAYMENT.' END || CASE
        WHEN status IN ('PENDING', 'COMPLETED', 'FAILED') THEN status
        WHEN status = 'REJECTED' THEN 'FAILED'
        WHEN status = 'REFUNDED' THEN 'REFUND_COMPLETED'
        WHEN status IN ('PENDING_AUTHORIZATION', 'PROCESSING', 'EXPIRED') AND tx_type = 'OUTGOING' THEN status
    END
$$;
