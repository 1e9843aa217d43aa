-- The double-entry ledger (see ledger/ for the rules, adapters/postgres/ledger.go
-- for how batches are written) and the event outbox written with it.
--
-- Every write to these tables goes through the group-commit writer, which
-- decides with ledger.Book and then writes: journal rows are append-only,
-- account counters change only by summed deltas in the same transaction as the
-- journal rows that explain them. The CHECK constraints are the last line of
-- defence, not the place rules are decided.
--
-- Foreign keys are left out of the hot tables on purpose: each one costs a
-- trigger and a key-share lock per row on every posting, and the writer
-- already guarantees the references inside one transaction (accounts are
-- never deleted).

-- Ledger accounts: one per (owner, currency), with TigerBeetle's four
-- counters. flags: 1 = debits must not exceed credits (a credit-normal
-- customer or platform account cannot go below zero), 2 = credits must not
-- exceed debits. Accounts without flags (system accounts) are never locked
-- for reading, so a hot settlement or funding account does not serialise
-- transfers.
CREATE TABLE ledger_accounts (
    id              text PRIMARY KEY,
    currency        text NOT NULL,
    kind            text NOT NULL,
    platform_id     text NOT NULL DEFAULT '',
    flags           integer NOT NULL DEFAULT 0,
    debits_pending  bigint NOT NULL DEFAULT 0,
    debits_posted   bigint NOT NULL DEFAULT 0,
    credits_pending bigint NOT NULL DEFAULT 0,
    credits_posted  bigint NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ledger_accounts_counters_nonnegative
        CHECK (debits_pending >= 0 AND debits_posted >= 0 AND credits_pending >= 0 AND credits_posted >= 0),
    CONSTRAINT ledger_accounts_debits_within_credits
        CHECK (flags & 1 = 0 OR debits_pending + debits_posted <= credits_posted),
    CONSTRAINT ledger_accounts_credits_within_debits
        CHECK (flags & 2 = 0 OR credits_pending + credits_posted <= debits_posted)
) WITH (fillfactor = 70); -- room on each page for HOT updates of the counters

CREATE INDEX ledger_accounts_platform ON ledger_accounts (platform_id, currency) WHERE platform_id <> '';

-- Journal entries: immutable, append-only. seq orders the journal; the writer
-- takes a transaction-scoped advisory lock before inserting entries, so seq
-- order is commit order even with several service instances (Journal(afterSeq)
-- is a gapless cursor). A reversal links to the entry it reverses; an entry
-- is reversed at most once.
CREATE TABLE ledger_entries (
    id        text PRIMARY KEY,
    seq       bigint GENERATED ALWAYS AS IDENTITY,
    ref       text NOT NULL DEFAULT '',
    reverses  text,
    posted_at timestamptz NOT NULL,
    CONSTRAINT ledger_entries_seq_key UNIQUE (seq),
    CONSTRAINT ledger_entries_not_self_reversing CHECK (reverses IS NULL OR reverses <> id)
);

-- Partial, so ordinary entries (reverses NULL) cost no index entry.
CREATE UNIQUE INDEX ledger_entries_reverses_key ON ledger_entries (reverses) WHERE reverses IS NOT NULL;

CREATE INDEX ledger_entries_ref ON ledger_entries (ref) WHERE ref <> '';

-- The legs of an entry as recorded (post/void legs carry the accounts,
-- currency and amount they resolved). amount is always > 0 once recorded: a
-- full post or a void records the hold's amount.
CREATE TABLE ledger_transfers (
    entry_id          text NOT NULL,
    idx               integer NOT NULL,
    id                text NOT NULL,
    kind              text NOT NULL,
    debit_account_id  text NOT NULL,
    credit_account_id text NOT NULL,
    amount            bigint NOT NULL,
    currency          text NOT NULL,
    pending_id        text NOT NULL DEFAULT '',
    timeout_ns        bigint NOT NULL DEFAULT 0,
    code              text NOT NULL DEFAULT '',
    PRIMARY KEY (entry_id, idx),
    CONSTRAINT ledger_transfers_id_key UNIQUE (id),
    CONSTRAINT ledger_transfers_kind_valid CHECK (kind IN ('single', 'pending', 'post_pending', 'void_pending')),
    CONSTRAINT ledger_transfers_amount_positive CHECK (amount > 0),
    CONSTRAINT ledger_transfers_distinct_accounts CHECK (debit_account_id <> credit_account_id),
    CONSTRAINT ledger_transfers_resolves_hold CHECK (kind NOT IN ('post_pending', 'void_pending') OR pending_id <> '')
);

CREATE INDEX ledger_transfers_pending ON ledger_transfers (pending_id) WHERE pending_id <> '';

-- Postings: each transfer's effect on each of its two accounts, with the
-- account's four counters right after it. Ordered per account by id (ids are
-- drawn after the account row is locked, so they follow the account's commit
-- order). Statements (balance after each posting) and point-in-time balances
-- (the last posting at or before a time) read this table alone.
CREATE TABLE ledger_postings (
    account_id      text NOT NULL,
    id              bigint GENERATED ALWAYS AS IDENTITY,
    entry_id        text NOT NULL,
    transfer_id     text NOT NULL,
    posted_at       timestamptz NOT NULL,
    debits_pending  bigint NOT NULL,
    debits_posted   bigint NOT NULL,
    credits_pending bigint NOT NULL,
    credits_posted  bigint NOT NULL,
    -- One index only: postings are read per account, in order.
    PRIMARY KEY (account_id, id)
);

-- Two-phase transfers (holds): opened by a pending leg, then posted (in full
-- or in part), voided or expired by a later entry (resolved_by).
CREATE TABLE ledger_pending (
    id                text PRIMARY KEY,
    entry_id          text NOT NULL,
    debit_account_id  text NOT NULL,
    credit_account_id text NOT NULL,
    amount            bigint NOT NULL,
    currency          text NOT NULL,
    timeout_ns        bigint NOT NULL DEFAULT 0,
    code              text NOT NULL DEFAULT '',
    status            text NOT NULL DEFAULT 'open',
    expires_at        timestamptz,
    posted_amount     bigint NOT NULL DEFAULT 0,
    resolved_by       text,
    created_at        timestamptz NOT NULL,
    CONSTRAINT ledger_pending_status_valid CHECK (status IN ('open', 'posted', 'voided', 'expired')),
    CONSTRAINT ledger_pending_amount_positive CHECK (amount > 0),
    CONSTRAINT ledger_pending_posted_amount_valid
        CHECK (posted_amount >= 0 AND posted_amount <= amount AND (status = 'posted' OR posted_amount = 0)),
    CONSTRAINT ledger_pending_resolution CHECK ((status = 'open') = (resolved_by IS NULL))
);

-- What ExpireDue scans: open holds by expiry.
CREATE INDEX ledger_pending_due ON ledger_pending (expires_at, id) WHERE status = 'open' AND expires_at IS NOT NULL;
CREATE INDEX ledger_pending_debit_open ON ledger_pending (debit_account_id) WHERE status = 'open';

-- Events recorded atomically with the state change that caused them and
-- delivered after commit. entry_id is set when the ledger wrote the message
-- with a journal entry.
CREATE TABLE outbox (
    id           bigserial PRIMARY KEY,
    topic        text NOT NULL,
    key          text NOT NULL DEFAULT '',
    payload      bytea NOT NULL DEFAULT '\x',
    entry_id     text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz
);

CREATE INDEX outbox_undelivered ON outbox (id) WHERE delivered_at IS NULL;
CREATE INDEX outbox_entry ON outbox (entry_id) WHERE entry_id IS NOT NULL;
