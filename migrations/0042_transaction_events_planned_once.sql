-- A transaction's events (0039) cost more to plan than to run when a
-- statement changes one row, as a lone request's does. Measured with
-- pg_stat_statements (track = all) on single-row INSERTs into
-- transactions: the events statement of transactions_record_events_of got
-- a custom plan on every call (0.32 ms of planning for 0.36 ms of
-- execution: its arrays are parameters, and the plan cache keeps choosing
-- custom plans), and event_delivery_jobs, a VOLATILE SQL function, could
-- not be inlined, so the SQL function executor planned its body on every
-- call (0.11 ms). The insert took 0.88-0.97 ms with the triggers, 0.23 ms
-- without them.
--
-- The events statement finds everything by key or by unnest of its
-- arrays, so its one generic plan serves any size of statement; and
-- event_delivery_jobs is STABLE, so it is inlined into its callers (this
-- statement, the ledger writer's prepared write and RequeuePending) and
-- planned with them. Its gen_random_uuid() stays volatile inside the
-- inlined query and is still called once per job row. With both, the
-- same insert takes 0.39-0.40 ms.
ALTER FUNCTION transactions_record_events_of(transactions[], text[], text[])
    SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION event_delivery_jobs(text[], text[], timestamptz[]) STABLE;
