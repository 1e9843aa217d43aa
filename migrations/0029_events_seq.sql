-- Events are numbered as they are recorded (seq), and the events about one
-- resource are delivered in that order: created_at can tie (two changes in
-- one microsecond, one group-commit batch) and ids are random, so
-- (created_at, id) could put a later change first. Inserts take seq from
-- the identity, statement order within a transaction, and a resource's
-- next change commits after its last (its row is locked), so seq follows
-- the changes of each resource.
ALTER TABLE events ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
DROP INDEX events_pending_by_resource;
CREATE INDEX events_pending_by_resource ON events (platform_id, resource_id, seq) WHERE status = 'PENDING';
