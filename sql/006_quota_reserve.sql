-- Reserves up to p_n units of the monthly AI quota at once, under the limit of the account's current plan.
-- One call serves a whole batch of concurrent requests of one account; the row lock makes it exact across processes.
create function studio_quota_reserve(p_account uuid, p_month date, p_n int, p_free int, p_starter int, p_pro int, p_enterprise int)
returns table (granted int, now_used int, quota_limit int)
language plpgsql as $$
declare
  cur int;
begin
  select case a.plan when 'FREE' then p_free when 'STARTER' then p_starter when 'PRO' then p_pro else p_enterprise end
    into quota_limit from accounts a where a.id = p_account;
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
