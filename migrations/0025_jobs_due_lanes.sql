-- Webhook deliveries and the rest of the work are claimed by their own
-- runners (ports.JobKinds). With one due-index, the rail runner's claim
-- walked every due delivery before it found its own jobs (and the reverse):
-- measured on the transfer-out benchmark with the job loop, 411/s at c=64
-- against 1,680/s without it. One partial index per lane: a claim reads its
-- own lane only. A job row is in exactly one, so writes cost what they did.
CREATE INDEX jobs_due_deliveries ON jobs (run_at, id) WHERE kind = 'webhook.deliver';
CREATE INDEX jobs_due_work ON jobs (run_at, id) WHERE kind <> 'webhook.deliver';
DROP INDEX jobs_due;
