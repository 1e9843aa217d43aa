-- A stored response (idempotency_keys.body) and a quote row carrying
-- payment instructions pass PostgreSQL's default TOAST threshold (about
-- 2 kB) for an embedded wallet's quote (a 1.9 kB response body): every
-- write then tried to compress the value, which made the response UPDATE
-- cost 0.74 ms instead of 0.44 ms. Rows up to about 8 kB stay inline and
-- uncompressed; larger ones are still TOASTed as before.
ALTER TABLE idempotency_keys SET (toast_tuple_target = 8160);
ALTER TABLE quotes SET (toast_tuple_target = 8160);
