-- Agents' spending counters (core/agents/policy, ports.AgentUsageStore):
-- one row per agent, changed only by one conditional UPDATE that rolls the
-- day and month over and adds an action only when every counter stays
-- within its limit; and one row per action's reservation, so a
-- reservation is counted once and given back at most once.
CREATE TABLE agent_usage (
    agent_id      text PRIMARY KEY,
    day           date NOT NULL,
    month         date NOT NULL CHECK (extract(day FROM month) = 1),
    daily_count   bigint NOT NULL DEFAULT 0 CHECK (daily_count >= 0),
    daily_spend   bigint NOT NULL DEFAULT 0 CHECK (daily_spend >= 0),
    monthly_spend bigint NOT NULL DEFAULT 0 CHECK (monthly_spend >= 0)
);

CREATE TABLE agent_usage_reservations (
    action_id   text PRIMARY KEY,
    agent_id    text NOT NULL,
    amount      bigint NOT NULL CHECK (amount >= 0),
    reserved_at timestamptz NOT NULL,
    released_at timestamptz
);
