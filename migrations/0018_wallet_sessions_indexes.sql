-- Whole-table indexes, each led by the id a read names: a partial index
-- on live sessions alone let a plan made on an empty table (the parties
-- read's generic plan) scan every live session of every account rather
-- than look up one account's.
DROP INDEX wallet_sessions_active;
CREATE INDEX wallet_sessions_active ON wallet_sessions (account_id, revoked_at, expires_at);
DROP INDEX wallet_sessions_by_credential;
CREATE INDEX wallet_sessions_by_credential ON wallet_sessions (credential_id, revoked_at);
