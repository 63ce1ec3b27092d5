-- The budget's events: budget.warning when a month's spend reaches 80% of the account's budget, budget.exhausted when
-- it reaches the budget or a call is first refused for want of it (a call's bound exceeds its cost, so the spend alone
-- may stop short of 100%); each at most once per account, month and budget (budget_alerts remembers), written in the
-- transaction of the spend or refusal, through studio_events_record, as the quota's (sql/020).
create table budget_alerts (
  account_id uuid not null references accounts(id) on delete cascade,
  month date not null,
  type text not null,
  budget_micros bigint not null,
  primary key (account_id, month, type, budget_micros)
);

create function studio_budget_alert(p_account uuid, p_month date, p_type text, p_budget bigint, p_spent bigint)
returns void
language plpgsql as $$
begin
  insert into budget_alerts (account_id, month, type, budget_micros) values (p_account, p_month, p_type, p_budget)
    on conflict do nothing;
  if found then
    perform studio_events_record(p_account, p_type, jsonb_build_object(
      'month', to_char(p_month, 'YYYY-MM'),
      'budget', ((p_budget / 1000000.0)::numeric(20, 6))::text,
      'spent', ((p_spent / 1000000.0)::numeric(20, 6))::text));
  end if;
end
$$;

create function studio_budget_crossed()
returns trigger
language plpgsql as $$
declare
  b bigint;
  was bigint := case when tg_op = 'UPDATE' then old.spent_micros else 0 end;
  alert record;
begin
  select a.budget_micros into b from accounts a where a.id = new.account_id;
  if b is null or b = 0 then
    return null;
  end if;
  for alert in
    select * from (values ('budget.warning', ceil(b * 0.8)::bigint), ('budget.exhausted', b)) as a(type, at)
    where was < a.at and new.spent_micros >= a.at
  loop
    perform studio_budget_alert(new.account_id, new.month, alert.type, b, new.spent_micros);
  end loop;
  return null;
end
$$;

create trigger account_spend_budget_crossed after insert or update of spent_micros on account_spend
  for each row execute function studio_budget_crossed();

-- As in sql/041, and a refusal (a live process's call that does not fit) is the budget exhausted.
create or replace function studio_budget_reserve(p_account uuid, p_month date, p_process uuid, p_micros bigint)
returns table (granted boolean, held bigint, budget bigint, spent bigint, reserved bigint, alive boolean)
language plpgsql as $$
begin
  select a.budget_micros into budget from accounts a where a.id = p_account;
  alive := true;
  if budget is null then
    granted := true; held := 0; spent := 0; reserved := 0;
    return next;
    return;
  end if;
  insert into account_spend (account_id, month) values (p_account, p_month) on conflict do nothing;
  select s.spent_micros into spent from account_spend s
    where s.account_id = p_account and s.month = p_month for update;
  select exists (select 1 from quota_processes p where p.id = p_process and p.expires_at > now()) into alive;
  select coalesce(sum(h.micros), 0) into reserved
    from budget_holds h join quota_processes p on p.id = h.process_id and p.expires_at > now()
    where h.account_id = p_account and h.month = p_month;
  granted := alive and spent + reserved + p_micros <= budget;
  held := case when granted then p_micros else 0 end;
  if granted and p_micros > 0 then
    insert into budget_holds as h (account_id, month, process_id, micros) values (p_account, p_month, p_process, p_micros)
      on conflict (account_id, month, process_id) do update set micros = h.micros + excluded.micros;
    reserved := reserved + p_micros;
  elsif alive and not granted then
    perform studio_budget_alert(p_account, p_month, 'budget.exhausted', budget, spent);
  end if;
  return next;
end
$$;
