-- The jobs table is a queue: every row is inserted, updated when claimed
-- (locked_until, attempts) and deleted when done, within seconds. With full
-- pages a claim could not be a HOT update: it wrote a new entry into each
-- of the three indexes and left a dead one behind, and the claim's scan of
-- jobs_due walked those dead entries (measured at c=64 with the job loop:
-- about 650 buffers and 6-14 ms to claim 32 jobs). Half-full pages leave
-- room for the claim's new row version beside the old one, so claims are
-- HOT updates and add nothing to the indexes. Autovacuum visits the table
-- after 1,000 dead rows rather than after 20 % of it.
ALTER TABLE jobs SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000);
