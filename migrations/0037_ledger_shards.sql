-- A hash chain per shard (ledger.JournalEntry.Shard): each writer appends
-- to its shard's chain under its shard's journal lock, so writers on
-- different shards (separate service instances, LedgerOptions.Shard) do
-- not serialise on one lock. Every entry so far is on shard 0, whose chain
-- is the one chain there was: its hashes do not change (the shard is not
-- hashed; the links place an entry).
ALTER TABLE ledger_entries ADD COLUMN shard smallint NOT NULL DEFAULT 0;

-- A shard's head: its last entry by seq.
CREATE UNIQUE INDEX ledger_entries_shard_seq ON ledger_entries (shard, seq);

-- The writer's chain head, per shard: takes the shard's journal lock
-- (lock_key + shard, transaction-scoped), then reads the hash of the
-- shard's last committed entry. VOLATILE, so the read takes its snapshot
-- after the lock is granted: it sees the batch that held the lock before.
DROP FUNCTION ledger_chain_head(bigint);
CREATE FUNCTION ledger_chain_head(lock_key bigint, chain smallint) RETURNS bytea
    LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(lock_key + chain);
    RETURN (SELECT hash FROM ledger_entries WHERE shard = chain ORDER BY seq DESC LIMIT 1);
END;
$$;
