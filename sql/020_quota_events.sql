-- The outbox's SQL side, for events that SQL functions cause (src/events/outbox.ts is its TypeScript side and writes
-- the same rows): the event, its Standard Webhooks envelope as every attempt will send it, and one pending delivery
-- per enabled endpoint of the account that wants its type; the delivery workers are woken when it commits.
create function studio_events_record(p_account uuid, p_type text, p_data jsonb)
returns void
language plpgsql as $$
declare
  new_id text := 'evt_' || rtrim(translate(encode(uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '=');
  made_at timestamptz := clock_timestamp();
  envelope text;
begin
  envelope := json_build_object(
    'type', p_type,
    'timestamp', to_char(made_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'data', p_data
  )::text;
  insert into events (id, account_id, type, body, created_at) values (new_id, p_account, p_type, envelope, made_at);
  insert into webhook_deliveries (event_id, endpoint_id, next_at)
    select new_id, w.id, made_at from webhook_endpoints w
    where w.account_id = p_account and w.disabled_reason is null
      and (w.event_types is null or p_type = any(w.event_types));
  if found then
    perform pg_notify('studio_webhooks', '');
  end if;
end
$$;

-- The quota's events: quota.warning when a month's spent units reach 80% of the limit, quota.exhausted at 100%,
-- each at most once per account and month (quota_alerts remembers), written by studio_quota_apply in the transaction
-- of the spend that crossed the line.
create table quota_alerts (
  account_id uuid not null references accounts(id) on delete cascade,
  month date not null,
  type text not null,
  primary key (account_id, month, type)
);

create function studio_quota_crossed(
  p_account uuid, p_month date, p_plan text, p_limit int, p_before int, p_after int
)
returns void
language plpgsql as $$
declare
  alert record;
begin
  for alert in
    select * from (values ('quota.warning', ceil(p_limit * 0.8)::int), ('quota.exhausted', p_limit)) as a(type, at)
    where p_limit > 0 and p_before < a.at and p_after >= a.at
  loop
    insert into quota_alerts (account_id, month, type) values (p_account, p_month, alert.type) on conflict do nothing;
    if found then
      perform studio_events_record(p_account, alert.type, jsonb_build_object(
        'month', to_char(p_month, 'YYYY-MM'), 'plan', p_plan, 'limit', p_limit, 'used', p_after));
    end if;
  end loop;
end
$$;
