-- The ledger's own outbox (0002_ledger.sql: ledger.Entry.Outbox, written
-- with journal entries) is folded into the one events outbox: events about
-- money movement are recorded with the entry through ports.Records.Events
-- (events and their delivery jobs, 0020_events_delivery.sql) or by the
-- transactions trigger. Nothing has written the outbox table since, so it
-- goes, with its indexes.
DROP INDEX IF EXISTS outbox_undelivered;
DROP INDEX IF EXISTS outbox_entry;
DROP TABLE IF EXISTS outbox;
