-- The rest of a platform's embedded-wallet configuration (the reference's
-- EmbeddedWalletConfig): alphanumeric OTP codes, and the OTP e-mail's
-- branding (app name, sender address and name, reply-to address, logo
-- URL) as one document, read and written whole with the platform row. A
-- NULL document is no branding: the deployment's defaults.
ALTER TABLE platforms
    ADD COLUMN otp_alphanumeric boolean NOT NULL DEFAULT false,
    ADD COLUMN otp_email jsonb;
