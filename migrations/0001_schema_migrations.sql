-- The migration runner's own bookkeeping lives in schema_migrations, created
-- by the runner itself; this first migration only sets up shared helpers.
CREATE EXTENSION IF NOT EXISTS pgcrypto;
