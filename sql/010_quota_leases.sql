-- Quota units in two phases. quota_usage.used counts units spent (answers released); quota_holds counts units each
-- running process has reserved and not yet spent or given back. A process proves it is alive by its lease in
-- quota_processes; the holds of a process whose lease has expired (it died) no longer count, so units a crash left
-- reserved come back within one lease. Every function takes the account's quota_usage row lock first, so grants stay
-- exact across processes: used + live holds never exceed the limit of the account's plan.
create table quota_processes (
  id uuid primary key,
  expires_at timestamptz not null
);

create table quota_holds (
  account_id uuid not null references accounts(id) on delete cascade,
  month date not null,
  process_id uuid not null,
  units integer not null check (units > 0),
  primary key (account_id, month, process_id)
);

-- Renews (or begins) a process's lease; true when the lease had lapsed or never existed (its holds are then gone).
create function studio_quota_renew(p_process uuid, p_lease_ms int)
returns boolean
language plpgsql as $$
declare
  lapsed boolean;
begin
  select expires_at <= now() into lapsed from quota_processes where id = p_process for update;
  -- Units held under a lapsed lease may have been granted to others meanwhile: they are not counted again.
  if coalesce(lapsed, true) then
    delete from quota_holds where process_id = p_process;
  end if;
  insert into quota_processes (id, expires_at) values (p_process, now() + make_interval(secs => p_lease_ms / 1000.0))
    on conflict (id) do update set expires_at = excluded.expires_at;
  delete from quota_holds h
    where not exists (select 1 from quota_processes p where p.id = h.process_id and p.expires_at > now());
  delete from quota_processes where expires_at < now() - interval '1 day';
  return coalesce(lapsed, true);
end
$$;

-- Ends a lease: the process's holds are dropped with it (it gave back what it meant to first).
create function studio_quota_end(p_process uuid)
returns void
language sql as $$
  delete from quota_holds where process_id = p_process;
  delete from quota_processes where id = p_process;
$$;

-- Units held by live processes for an account's month, after dropping the holds of dead ones (row lock held).
create function studio_quota_live_holds(p_account uuid, p_month date)
returns int
language plpgsql as $$
declare
  total int;
begin
  delete from quota_holds h where h.account_id = p_account and h.month = p_month
    and not exists (select 1 from quota_processes p where p.id = h.process_id and p.expires_at > now());
  select coalesce(sum(units), 0) into total from quota_holds h where h.account_id = p_account and h.month = p_month;
  return total;
end
$$;

-- One batch of a process for one account and month, in this order: p_unspend units moved back from spent into its
-- hold (spends whose answers were withheld after all), p_give units of its hold given back, p_spend units spent (taken
-- from its hold; any it no longer holds, its lease having lapsed, are counted only within the limit), and up to
-- p_reserve units reserved into its hold within the limit (none while its lease has lapsed: `alive` false). The holds
-- of dead processes are left out here (studio_quota_renew deletes them), so that a batch costs few statements.
create function studio_quota_apply(
  p_account uuid, p_month date, p_process uuid, p_reserve int, p_spend int, p_give int, p_unspend int, p_limits jsonb
)
returns table (granted int, spent int, used int, held int, quota_limit int, alive boolean)
language plpgsql as $$
declare
  mine int;
  was int;
  others int;
  from_hold int;
  plan_name text;
begin
  select (p_limits ->> a.plan)::int, a.plan into quota_limit, plan_name from accounts a where a.id = p_account;
  if not found then
    granted := 0; spent := 0; used := 0; held := 0; quota_limit := 0; alive := true;
    return next;
    return;
  end if;
  select q.used into used from quota_usage q where q.account_id = p_account and q.month = p_month for update;
  if not found then
    insert into quota_usage as q (account_id, month, used) values (p_account, p_month, 0) on conflict do nothing;
    select q.used into used from quota_usage q where q.account_id = p_account and q.month = p_month for update;
  end if;
  select exists (select 1 from quota_processes p where p.id = p_process and p.expires_at > now()) into alive;
  select coalesce(sum(h.units), 0), coalesce(sum(h.units) filter (where h.process_id = p_process), 0)
    into held, mine
    from quota_holds h join quota_processes p on p.id = h.process_id and p.expires_at > now()
    where h.account_id = p_account and h.month = p_month;
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
    insert into quota_holds as h (account_id, month, process_id, units) values (p_account, p_month, p_process, mine)
      on conflict (account_id, month, process_id) do update set units = excluded.units;
  elsif mine = 0 and (was > 0 or not alive) then
    delete from quota_holds h where h.account_id = p_account and h.month = p_month and h.process_id = p_process;
  end if;
  if spent > 0 or p_unspend > 0 then
    update quota_usage q set used = studio_quota_apply.used where q.account_id = p_account and q.month = p_month;
  end if;
  if spent > 0 and quota_limit is not null then
    perform studio_quota_crossed(p_account, p_month, plan_name, quota_limit, used - spent, used);
  end if;
  held := others + mine;
  return next;
end
$$;

-- The function servers of the previous version call (one phase: granted units count as used at once), now also
-- counting the live holds of this version's processes, so that both can share a database during an upgrade.
create or replace function studio_quota_reserve(p_account uuid, p_month date, p_n int, p_limits jsonb)
returns table (granted int, now_used int, quota_limit int)
language plpgsql as $$
declare
  cur int;
  holds int;
begin
  select (p_limits ->> a.plan)::int into quota_limit from accounts a where a.id = p_account;
  if not found then
    granted := 0; now_used := 0; quota_limit := 0;
    return next;
    return;
  end if;
  insert into quota_usage as q (account_id, month, used) values (p_account, p_month, 0) on conflict do nothing;
  select q.used into cur from quota_usage q where q.account_id = p_account and q.month = p_month for update;
  holds := studio_quota_live_holds(p_account, p_month);
  granted := case when quota_limit is null then p_n else least(p_n, greatest(0, quota_limit - cur - holds)) end;
  if granted > 0 then
    update quota_usage q set used = cur + granted where q.account_id = p_account and q.month = p_month;
  end if;
  now_used := cur + granted + holds;
  return next;
end
$$;
