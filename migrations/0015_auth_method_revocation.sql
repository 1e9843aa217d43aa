-- A revoked credential is kept (its sessions name it) but no longer counts:
-- one live EMAIL_OTP per account, so a new one can follow a revoked one.
ALTER TABLE auth_methods ADD COLUMN revoked_at timestamptz;

DROP INDEX auth_methods_email_otp_account;
CREATE UNIQUE INDEX auth_methods_email_otp_account ON auth_methods (account_id) WHERE type = 'EMAIL_OTP' AND revoked_at IS NULL;
