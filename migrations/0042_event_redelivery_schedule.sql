-- A redelivered event's retries follow the schedule from its start: the
-- sender counts the attempts made since the event was last queued again
-- (attempts - attempts_before). Counting every attempt, a FAILED event
-- that was redelivered failed for good at its first failure, and a
-- delivered one waited 5 minutes, not 5 seconds, for its first retry.
ALTER TABLE event_deliveries ADD COLUMN attempts_before integer NOT NULL DEFAULT 0;

CREATE OR REPLACE VIEW event_states AS
SELECT e.id, e.platform_id, e.type, e.resource_id, e.data, e.data_format, e.created_at, e.seq,
    d.status, d.attempts, d.last_attempt_at, d.delivered_at, d.attempts_before
FROM events AS e LEFT JOIN event_deliveries AS d ON d.event_id = e.id;
