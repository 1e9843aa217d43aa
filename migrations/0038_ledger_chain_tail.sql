-- The writer's chain tail: like ledger_chain_head (0037), it takes the
-- shard's journal lock and then reads the shard's last committed entry,
-- and it returns that entry's posted_at with its hash. The writer times
-- its batch after the lock is granted and never before the last entry of
-- its shard, so within a shard (posted_at, seq) follows commit order even
-- when several instances (whose clocks may differ a little) write to it:
-- a reader paging the journal by (posted_at, seq) meets every entry
-- committed after its last page on a later page.
DROP FUNCTION ledger_chain_head(bigint, smallint);
CREATE FUNCTION ledger_chain_tail(lock_key bigint, chain smallint, OUT hash bytea, OUT posted_at timestamptz)
    LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(lock_key + chain);
    SELECT e.hash, e.posted_at INTO hash, posted_at
    FROM ledger_entries e WHERE e.shard = chain ORDER BY e.seq DESC LIMIT 1;
END;
$$;
