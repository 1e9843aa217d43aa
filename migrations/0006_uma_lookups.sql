-- Receiver lookups of UMA addresses (GET /receiver/uma/{receiverUmaAddress})
-- keep the receiver's address; account_id stays '' for them.
ALTER TABLE lookups ADD COLUMN receiver_uma_address text NOT NULL DEFAULT '';
