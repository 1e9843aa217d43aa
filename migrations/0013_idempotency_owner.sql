-- The attempt holding an unfinished Idempotency-Key claim. Claims now carry
-- a short lease renewed while the request runs; renewing and releasing act
-- only for this owner, so an attempt that stalled past its lease cannot
-- extend or drop the claim of the attempt that took over.
ALTER TABLE idempotency_keys ADD COLUMN owner text NOT NULL DEFAULT '';
