-- A platform's configuration (GET/PATCH /config): the webhook endpoint, the
-- per-currency settings, and the embedded-wallet OTP settings. Zero OTP
-- values mean "not set": the service's defaults (6 digits, 300 s) apply.
ALTER TABLE platforms
    ADD COLUMN webhook_endpoint text NOT NULL DEFAULT '',
    ADD COLUMN currency_settings jsonb,
    ADD COLUMN otp_length integer NOT NULL DEFAULT 0
        CONSTRAINT platforms_otp_length CHECK (otp_length = 0 OR otp_length BETWEEN 4 AND 12),
    ADD COLUMN otp_expiration_seconds integer NOT NULL DEFAULT 0
        CONSTRAINT platforms_otp_expiration CHECK (otp_expiration_seconds BETWEEN 0 AND 86400);
