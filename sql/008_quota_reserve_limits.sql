-- studio_quota_reserve with the plan → limit table passed whole, as JSON ({"FREE": 100, …, "ENTERPRISE": null}; null
-- is unlimited), so that the table is written once, in the server's code (src/limits/quota.ts).
create function studio_quota_reserve(p_account uuid, p_month date, p_n int, p_limits jsonb)
returns table (granted int, now_used int, quota_limit int)
language plpgsql as $$
declare
  cur int;
begin
  select (p_limits ->> a.plan)::int into quota_limit from accounts a where a.id = p_account;
  if not found then
    granted := 0; now_used := 0; quota_limit := 0;
    return next;
    return;
  end if;
  insert into quota_usage as q (account_id, month, used) values (p_account, p_month, 0) on conflict do nothing;
  select q.used into cur from quota_usage q where q.account_id = p_account and q.month = p_month for update;
  granted := case when quota_limit is null then p_n else least(p_n, greatest(0, quota_limit - cur)) end;
  if granted > 0 then
    update quota_usage q set used = cur + granted where q.account_id = p_account and q.month = p_month;
  end if;
  now_used := cur + granted;
  return next;
end
$$;

-- The function of 006, for servers of the previous version sharing this database during an upgrade: now a wrapper.
create or replace function studio_quota_reserve(p_account uuid, p_month date, p_n int, p_free int, p_starter int, p_pro int, p_enterprise int)
returns table (granted int, now_used int, quota_limit int)
language sql as $$
  select * from studio_quota_reserve(p_account, p_month, p_n,
    jsonb_build_object('FREE', p_free, 'STARTER', p_starter, 'PRO', p_pro, 'ENTERPRISE', p_enterprise))
$$;
