-- A key's own limits (accounts/key-limits.ts): its rate limit (requests in any 60 s) and its monthly completions cap.
-- null: none of its own, the service's rate limit and the plan's quota only; keys made before have neither. What
-- applies is the lower of the key's and the account's: both are checked, each on its own.
alter table api_keys add column rate_limit integer check (rate_limit > 0);
alter table api_keys add column monthly_completions integer check (monthly_completions >= 0);

-- A capped key's units this month, in two phases as an account's (sql/010): used counts units spent, holds the units
-- each live process reserved and has not yet spent or given back, under the same leases (quota_processes).
create table quota_key_usage (
  prefix text not null references api_keys(prefix) on delete cascade,
  month date not null,
  used integer not null default 0,
  primary key (prefix, month)
);

create table quota_key_holds (
  prefix text not null references api_keys(prefix) on delete cascade,
  month date not null,
  process_id uuid not null,
  units integer not null check (units > 0),
  primary key (prefix, month, process_id)
);

-- One batch of a process for one capped key and month, as studio_quota_apply does for an account (the same order:
-- unspend, give back, spend, reserve), under the key's quota_key_usage row lock and within its monthly_completions
-- (null: uncapped; a key that does not exist has nothing). The account's own quota is a batch of its own.
create function studio_quota_key_apply(
  p_prefix text, p_month date, p_process uuid, p_reserve int, p_spend int, p_give int, p_unspend int
)
returns table (granted int, spent int, used int, held int, quota_limit int, alive boolean)
language plpgsql as $$
declare
  mine int;
  was int;
  others int;
  from_hold int;
begin
  select k.monthly_completions into quota_limit from api_keys k where k.prefix = p_prefix;
  if not found then
    granted := 0; spent := 0; used := 0; held := 0; quota_limit := 0; alive := true;
    return next;
    return;
  end if;
  select q.used into used from quota_key_usage q where q.prefix = p_prefix and q.month = p_month for update;
  if not found then
    insert into quota_key_usage as q (prefix, month, used) values (p_prefix, p_month, 0) on conflict do nothing;
    select q.used into used from quota_key_usage q where q.prefix = p_prefix and q.month = p_month for update;
  end if;
  select exists (select 1 from quota_processes p where p.id = p_process and p.expires_at > now()) into alive;
  select coalesce(sum(h.units), 0), coalesce(sum(h.units) filter (where h.process_id = p_process), 0)
    into held, mine
    from quota_key_holds h join quota_processes p on p.id = h.process_id and p.expires_at > now()
    where h.prefix = p_prefix and h.month = p_month;
  was := mine;
  others := held - mine;
  used := used - p_unspend;
  mine := greatest(0, mine + p_unspend - p_give);
  from_hold := least(p_spend, mine);
  spent := from_hold + case
    when quota_limit is null then p_spend - from_hold
    else least(p_spend - from_hold, greatest(0, quota_limit - used - others - mine)) end;
  mine := mine - from_hold;
  used := used + spent;
  granted := case
    when not alive then 0
    when quota_limit is null then p_reserve
    else least(p_reserve, greatest(0, quota_limit - used - others - mine)) end;
  mine := mine + granted;
  if mine > 0 and (mine <> was or not alive) then
    insert into quota_key_holds as h (prefix, month, process_id, units) values (p_prefix, p_month, p_process, mine)
      on conflict (prefix, month, process_id) do update set units = excluded.units;
  elsif mine = 0 and (was > 0 or not alive) then
    delete from quota_key_holds h where h.prefix = p_prefix and h.month = p_month and h.process_id = p_process;
  end if;
  if spent > 0 or p_unspend > 0 then
    update quota_key_usage q set used = studio_quota_key_apply.used where q.prefix = p_prefix and q.month = p_month;
  end if;
  held := others + mine;
  return next;
end
$$;

-- The lease functions of sql/010, now also dropping a lapsed or ended process's key holds (what they did before is
-- unchanged: a process of the previous release holds no key units).
create or replace function studio_quota_renew(p_process uuid, p_lease_ms int)
returns boolean
language plpgsql as $$
declare
  lapsed boolean;
begin
  select expires_at <= now() into lapsed from quota_processes where id = p_process for update;
  if coalesce(lapsed, true) then
    delete from quota_holds where process_id = p_process;
    delete from quota_key_holds where process_id = p_process;
  end if;
  insert into quota_processes (id, expires_at) values (p_process, now() + make_interval(secs => p_lease_ms / 1000.0))
    on conflict (id) do update set expires_at = excluded.expires_at;
  delete from quota_holds h
    where not exists (select 1 from quota_processes p where p.id = h.process_id and p.expires_at > now());
  delete from quota_key_holds h
    where not exists (select 1 from quota_processes p where p.id = h.process_id and p.expires_at > now());
  delete from quota_processes where expires_at < now() - interval '1 day';
  return coalesce(lapsed, true);
end
$$;

create or replace function studio_quota_end(p_process uuid)
returns void
language sql as $$
  delete from quota_holds where process_id = p_process;
  delete from quota_key_holds where process_id = p_process;
  delete from quota_processes where id = p_process;
$$;
