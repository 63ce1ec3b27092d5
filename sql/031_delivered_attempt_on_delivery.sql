-- A delivery that succeeds keeps its successful attempt on its own row (its time in next_at, its status in
-- last_status, with duration_ms and answer here) instead of a webhook_attempts row with three index entries and a
-- foreign-key check: the common case writes one row per delivery, not two. Failed attempts stay webhook_attempts rows.
-- A row whose answer is set holds its attempt; rows of earlier releases have none and their attempts stay where they
-- were. webhook_attempt_log reads both as one log.
alter table webhook_deliveries add column duration_ms integer, add column answer text;
create view webhook_attempt_log as
  select id, event_id, endpoint_id, at, status, duration_ms, answer from webhook_attempts
  union all
  select null, event_id, endpoint_id, next_at, last_status, duration_ms, answer
  from webhook_deliveries where answer is not null;
-- An endpoint's last successful attempt (the endpoint list's last attempt is the later of this and its last failed
-- one): written once per batch of successes, not found among its deliveries, which have no index by endpoint.
alter table webhook_endpoints add column last_delivered_at timestamptz, add column last_delivered_status integer;
