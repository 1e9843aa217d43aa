-- UMA invitations (core/invitations). The code is the key: codes are
-- global, since the invitee's platform reads and claims an invitation of
-- another platform. Status changes are conditional updates on status.
CREATE TABLE invitations (
    code           text PRIMARY KEY,
    platform_id    text NOT NULL REFERENCES platforms (id),
    inviter_uma    text NOT NULL,
    first_name     text NOT NULL DEFAULT '',
    amount_to_send bigint NOT NULL DEFAULT 0 CHECK (amount_to_send >= 0),
    currency       text NOT NULL DEFAULT '',
    url            text NOT NULL,
    status         text NOT NULL CHECK (status IN ('PENDING', 'CLAIMED', 'CANCELLED', 'EXPIRED')),
    invitee_uma    text NOT NULL DEFAULT '',
    claimed_at     timestamptz,
    expires_at     timestamptz,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    CONSTRAINT invitations_claimed CHECK ((status = 'CLAIMED') = (claimed_at IS NOT NULL AND invitee_uma <> ''))
);
