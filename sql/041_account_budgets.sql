-- A monthly budget per account in micro-dollars (null: none), and the micro-dollars each running process has reserved
-- for its calls under way (a call's upper bound, docs/spend.md). A hold counts only while its process's quota lease
-- (quota_processes) is alive, so what a dead process reserved comes back within one lease. A hold is released by the
-- statement that adds the call's cost to account_spend (src/completions/record-writer.ts), so that spent + held
-- never misses a call in between.
alter table accounts add column budget_micros bigint check (budget_micros >= 0);

create table budget_holds (
  account_id uuid not null references accounts(id) on delete cascade,
  month date not null,
  process_id uuid not null,
  micros bigint not null check (micros >= 0),
  primary key (account_id, month, process_id)
);

-- Reserves p_micros for a call of p_process under the account's account_spend row lock, when spent + live holds +
-- p_micros fit the budget. No budget: nothing is held. Not alive (the process's lease lapsed): nothing is granted.
create function studio_budget_reserve(p_account uuid, p_month date, p_process uuid, p_micros bigint)
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
  end if;
  return next;
end
$$;

-- Gives back what a call held when it ends without a record (refused by the quota before its upstream call).
create function studio_budget_give(p_account uuid, p_month date, p_process uuid, p_micros bigint)
returns void
language sql as $$
  update budget_holds h set micros = greatest(0, h.micros - p_micros)
    where h.account_id = p_account and h.month = p_month and h.process_id = p_process;
$$;
