-- external_accounts.account_type was a copy of info->>'accountType' that no
-- query filtered or sorted on: the jsonb document keeps the value.
ALTER TABLE external_accounts DROP COLUMN account_type;
