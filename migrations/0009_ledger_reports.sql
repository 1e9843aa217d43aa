-- Ledger reports (adapters/postgres/ledger_reports.go) and the tamper-evident
-- journal (ledger/hash.go).

-- The hash chain: hash is the SHA-256 of the entry's canonical form chained
-- to prev_hash, the hash of the entry before it in seq order. The writer
-- chains each group-committed batch under the journal lock it already holds
-- (the first entry links to the last hash committed before it), so chaining
-- adds no serialisation. NULL on entries recorded before the chain existed;
-- verification reports those as unhashed instead of failing on them.
-- Nullable columns without a default: a catalog change, no table rewrite.
ALTER TABLE ledger_entries
    ADD COLUMN hash bytea,
    ADD COLUMN prev_hash bytea,
    ADD CONSTRAINT ledger_entries_hash_shape CHECK (
        (hash IS NULL AND prev_hash IS NULL)
        OR (octet_length(hash) = 32 AND octet_length(prev_hash) = 32));

-- Point-in-time balances and statements: an account's last posting at or
-- before an instant, and its postings within a window, by time. Postings of
-- one batch share posted_at; id orders them within it.
CREATE INDEX ledger_postings_time ON ledger_postings (account_id, posted_at, id);

-- The journal by time: GET /ledger/entries windows and pages.
CREATE INDEX ledger_entries_time ON ledger_entries (posted_at, seq);

-- The writer's chain head: takes the journal lock (transaction-scoped, the
-- one the writer's journal insert takes anyway), then reads the hash of the
-- last committed entry. VOLATILE, so the read takes its snapshot after the
-- lock is granted, not when the calling statement started: it sees the
-- batch that held the lock before. One round trip per batch.
CREATE FUNCTION ledger_chain_head(lock_key bigint) RETURNS bytea
    LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(lock_key);
    RETURN (SELECT hash FROM ledger_entries ORDER BY seq DESC LIMIT 1);
END;
$$;
