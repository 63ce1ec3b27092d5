-- A rotated key counts its completions as the key that replaced it (accounts/accounts.ts rotateKey): during the grace
-- period the old and the new key spend one monthly cap, never one each. null: the key counts as itself. Only the newest
-- key of a line can be rotated, and a rotation moves every key counting as it along to the new one.
alter table api_keys add column counts_as text references api_keys(prefix) on delete set null;
create index api_keys_counts_as on api_keys (counts_as) where counts_as is not null;

-- sql/025's batch for a capped key, now for the newest key of its line: a process that still knows only the old key
-- (its cache is up to a poll behind, or its call began before the rotation) spends and holds in the one count. The
-- rotation locks the old key's count row while it moves the count and the holds (quota/key-counts.ts), so a batch
-- either lands before the move and is moved with it, or waits and follows counts_as.
create or replace function studio_quota_key_apply(
  p_prefix text, p_month date, p_process uuid, p_reserve int, p_spend int, p_give int, p_unspend int
)
returns table (granted int, spent int, used int, held int, quota_limit int, alive boolean)
language plpgsql as $$
declare
  target text := p_prefix;
  next_key text;
  mine int;
  was int;
  others int;
  from_hold int;
begin
  -- Along the line of rotations to its newest key: each count row is locked before the key's counts_as is read (a
  -- statement of its own, so a rotation that committed while this waited for the lock is seen and followed).
  loop
    perform 1 from api_keys k where k.prefix = target;
    if not found then
      granted := 0; spent := 0; used := 0; held := 0; quota_limit := 0; alive := true;
      return next;
      return;
    end if;
    select q.used into used from quota_key_usage q where q.prefix = target and q.month = p_month for update;
    if not found then
      insert into quota_key_usage as q (prefix, month, used) values (target, p_month, 0) on conflict do nothing;
      select q.used into used from quota_key_usage q where q.prefix = target and q.month = p_month for update;
    end if;
    select k.counts_as, k.monthly_completions into next_key, quota_limit from api_keys k where k.prefix = target;
    exit when next_key is null;
    target := next_key;
  end loop;
  select exists (select 1 from quota_processes p where p.id = p_process and p.expires_at > now()) into alive;
  select coalesce(sum(h.units), 0), coalesce(sum(h.units) filter (where h.process_id = p_process), 0)
    into held, mine
    from quota_key_holds h join quota_processes p on p.id = h.process_id and p.expires_at > now()
    where h.prefix = target and h.month = p_month;
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
    insert into quota_key_holds as h (prefix, month, process_id, units) values (target, p_month, p_process, mine)
      on conflict (prefix, month, process_id) do update set units = excluded.units;
  elsif mine = 0 and (was > 0 or not alive) then
    delete from quota_key_holds h where h.prefix = target and h.month = p_month and h.process_id = p_process;
  end if;
  if spent > 0 or p_unspend > 0 then
    update quota_key_usage q set used = studio_quota_key_apply.used where q.prefix = target and q.month = p_month;
  end if;
  held := others + mine;
  return next;
end
$$;
