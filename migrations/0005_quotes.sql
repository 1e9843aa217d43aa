-- Quotes (adapters/postgres/quotes.go) and the transaction details document
-- (adapters/postgres/transactions.go). Ids use the "C" collation as in 0004.

-- A quote locks a price until expires_at. Free-form data (sender and
-- counterparty information, payment instructions) and the rate breakdown
-- are jsonb; amounts are bigint minor units, rates decimal strings. No
-- foreign keys, as for transactions: every quote is written on the payment
-- path with its transaction.
CREATE TABLE quotes (
    id                       text COLLATE "C" PRIMARY KEY,
    platform_id              text NOT NULL,
    customer_id              text COLLATE "C" NOT NULL DEFAULT '',
    status                   text NOT NULL,
    transaction_id           text COLLATE "C" NOT NULL DEFAULT '',
    source_type              text NOT NULL DEFAULT '',
    source_account_id        text NOT NULL DEFAULT '',
    crypto_network           text NOT NULL DEFAULT '',
    destination_type         text NOT NULL DEFAULT '',
    destination_account_id   text NOT NULL DEFAULT '',
    destination_uma_address  text NOT NULL DEFAULT '',
    payment_rail             text NOT NULL DEFAULT '',
    rail_selection_mode      text NOT NULL DEFAULT '',
    sending_currency         text NOT NULL,
    receiving_currency       text NOT NULL,
    locked_side              text NOT NULL,
    locked_amount            bigint NOT NULL,
    total_sending_amount     bigint NOT NULL,
    total_receiving_amount   bigint NOT NULL,
    fees_included            bigint NOT NULL DEFAULT 0,
    exchange_rate            text NOT NULL DEFAULT '',
    rate_details             jsonb NOT NULL DEFAULT '{}',
    lookup_id                text NOT NULL DEFAULT '',
    description              text NOT NULL DEFAULT '',
    purpose_of_payment       text NOT NULL DEFAULT '',
    remittance_information   text NOT NULL DEFAULT '',
    sender_customer_info     jsonb NOT NULL DEFAULT '{}',
    counterparty_information jsonb NOT NULL DEFAULT '{}',
    payment_instructions     jsonb NOT NULL DEFAULT '[]',
    executed_at              timestamptz,
    expires_at               timestamptz NOT NULL,
    created_at               timestamptz NOT NULL,
    updated_at               timestamptz NOT NULL
);

-- A transaction's quote (a quote is created with its OUTGOING transaction).
CREATE INDEX quotes_by_transaction ON quotes (platform_id, transaction_id) WHERE transaction_id <> '';

-- The fields of a transaction no list filters on (ports.TransactionDetails).
ALTER TABLE transactions ADD COLUMN details jsonb NOT NULL DEFAULT '{}';
