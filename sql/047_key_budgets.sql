-- A monthly budget per key in micro-dollars (null: none), set on every key of a line of rotations as its other
-- limits are (accounts/key-budget.ts), and each key's spend per month, added by the statement that writes the
-- completions (src/completions/record-writer.ts) as account_spend is. A key's budget counts the spend and holds of its
-- whole line (the newest key and the keys counting as it), so a rotation starts no fresh budget.
alter table api_keys add column budget_micros bigint check (budget_micros >= 0);

create table key_spend (
  prefix text not null references api_keys(prefix) on delete cascade,
  month date not null,
  spent_micros bigint not null default 0,
  primary key (prefix, month)
);

insert into key_spend (prefix, month, spent_micros)
select c.key_prefix, date_trunc('month', c.created_at at time zone 'UTC')::date, sum(c.cost_micros)
from completions c join api_keys k on k.prefix = c.key_prefix
where c.cost_micros is not null group by 1, 2;

-- What each running process reserved of a key line's budget (held under the line's newest key), counted only while
-- its quota lease lives, as budget_holds (sql/041).
create table key_budget_holds (
  prefix text not null references api_keys(prefix) on delete cascade,
  month date not null,
  process_id uuid not null,
  micros bigint not null check (micros >= 0),
  primary key (prefix, month, process_id)
);

-- The reservation of sql/042 for calls of one key, many at once (a busy key's calls that arrived while its last
-- reservation ran, completions/budget.ts), against both budgets a call may have, its account's and its key's, in one
-- transaction under the account's account_spend row lock (every key of an account takes it first, so the two budgets
-- are never read apart from their holds). In order, each call is granted when it fits every budget that is set, and
-- then holds its p_micros in each; a call refused gets `which` ('account' or 'key'), the budget that refused it, with
-- that budget's figures; a live process's refusal is that budget exhausted (studio_budget_alert,
-- studio_key_budget_alert). No budget at all: nothing is held, budget null. One row per call, `ord` its place.
create function studio_budget_reserve_keys(
  p_account uuid, p_key text, p_month date, p_process uuid, p_micros bigint[], p_mail boolean default false
)
returns table (
  ord int, granted boolean, held bigint, key_held bigint, line text, which text, budget bigint, spent bigint,
  reserved bigint, alive boolean
)
language plpgsql as $$
declare
  account_budget bigint;
  key_budget bigint;
  a_spent bigint := 0;
  a_reserved bigint := 0;
  k_spent bigint := 0;
  k_reserved bigint := 0;
  a_total bigint := 0;
  k_total bigint := 0;
  refused_account boolean := false;
  refused_key boolean := false;
  m bigint;
begin
  select a.budget_micros into account_budget from accounts a where a.id = p_account;
  select coalesce(k.counts_as, k.prefix) into line from api_keys k where k.prefix = p_key and k.account_id = p_account;
  select k.budget_micros into key_budget from api_keys k where k.prefix = line;
  alive := true;
  if account_budget is null and key_budget is null then
    for i in 1 .. coalesce(array_length(p_micros, 1), 0) loop
      ord := i; granted := true; held := 0; key_held := 0; which := null; budget := null; spent := 0; reserved := 0;
      return next;
    end loop;
    return;
  end if;
  insert into account_spend (account_id, month) values (p_account, p_month) on conflict do nothing;
  select s.spent_micros into a_spent from account_spend s
    where s.account_id = p_account and s.month = p_month for update;
  select exists (select 1 from quota_processes p where p.id = p_process and p.expires_at > now()) into alive;
  if account_budget is not null then
    select coalesce(sum(h.micros), 0) into a_reserved
      from budget_holds h join quota_processes p on p.id = h.process_id and p.expires_at > now()
      where h.account_id = p_account and h.month = p_month;
  end if;
  if key_budget is not null then
    select coalesce(sum(s.spent_micros), 0) into k_spent
      from key_spend s join api_keys k on k.prefix = s.prefix
      where (k.prefix = line or k.counts_as = line) and s.month = p_month;
    select coalesce(sum(h.micros), 0) into k_reserved
      from key_budget_holds h join quota_processes p on p.id = h.process_id and p.expires_at > now()
      join api_keys k on k.prefix = h.prefix
      where (k.prefix = line or k.counts_as = line) and h.month = p_month;
  end if;
  for i in 1 .. coalesce(array_length(p_micros, 1), 0) loop
    ord := i; m := p_micros[i];
    granted := alive; held := 0; key_held := 0; which := null;
    budget := coalesce(account_budget, key_budget); spent := a_spent; reserved := a_reserved;
    if account_budget is not null and a_spent + a_reserved + m > account_budget then
      granted := false; which := 'account'; budget := account_budget;
      refused_account := refused_account or alive;
    elsif key_budget is not null and k_spent + k_reserved + m > key_budget then
      granted := false; which := 'key'; budget := key_budget; spent := k_spent; reserved := k_reserved;
      refused_key := refused_key or alive;
    end if;
    if granted then
      if account_budget is not null then
        held := m; a_reserved := a_reserved + m; a_total := a_total + m; reserved := a_reserved;
      end if;
      if key_budget is not null then
        key_held := m; k_reserved := k_reserved + m; k_total := k_total + m;
      end if;
    end if;
    return next;
  end loop;
  if a_total > 0 then
    insert into budget_holds as h (account_id, month, process_id, micros) values (p_account, p_month, p_process, a_total)
      on conflict (account_id, month, process_id) do update set micros = h.micros + excluded.micros;
  end if;
  if k_total > 0 then
    insert into key_budget_holds as h (prefix, month, process_id, micros) values (line, p_month, p_process, k_total)
      on conflict (prefix, month, process_id) do update set micros = h.micros + excluded.micros;
  end if;
  if p_mail and (refused_account or refused_key) then
    perform set_config('studio.mail', 'on', true);
  end if;
  if refused_account then
    perform studio_budget_alert(p_account, p_month, 'budget.exhausted', account_budget, a_spent);
  end if;
  if refused_key then
    perform studio_key_budget_alert(line, p_month, 'budget.exhausted', key_budget, k_spent);
  end if;
end
$$;

-- Gives back what a call held of its key line's budget when it ends without a record (studio_budget_give for the
-- account's).
create function studio_budget_give_key(p_line text, p_month date, p_process uuid, p_micros bigint)
returns void
language sql as $$
  update key_budget_holds h set micros = greatest(0, h.micros - p_micros)
    where h.prefix = p_line and h.month = p_month and h.process_id = p_process;
$$;

-- The budget's events mail the account's owners too, when the server sends mail: whoever writes a spend or a refusal
-- says so for its transaction with the setting studio.mail = 'on' (record-writer.ts, studio_budget_reserve_keys), as
-- a lead's mails are queued only with mail on. The mail is in the outbox in the event's transaction, so it is sent
-- once per budget and month, as the event is made.
-- The kind check widened (sql/046's function): a previous release sends a 'budget' mail as any mail that carries its
-- message.
select studio_widen_mail_check('mail_deliveries_kind_check', 'budget');

-- The event and the owners' mail of a budget's alert, the account's (p_key null) or a key line's (p_key its prefix,
-- in the event's data as keyPrefix; the account's data has none, as before).
create function studio_budget_notify(
  p_account uuid, p_month date, p_type text, p_budget bigint, p_spent bigint, p_key text
)
returns void
language plpgsql as $$
declare
  budget_usd text := ((p_budget / 1000000.0)::numeric(20, 6))::text;
  spent_usd text := ((p_spent / 1000000.0)::numeric(20, 6))::text;
  month_name text := to_char(p_month, 'YYYY-MM');
  data jsonb := jsonb_build_object('month', month_name, 'budget', budget_usd, 'spent', spent_usd);
  subject text;
  body text;
begin
  if p_key is not null then
    data := data || jsonb_build_object('keyPrefix', p_key);
  end if;
  perform studio_events_record(p_account, p_type, data);
  if coalesce(current_setting('studio.mail', true), '') <> 'on' then
    return;
  end if;
  if p_key is not null and p_type = 'budget.warning' then
    subject := 'The key ' || p_key || ' has spent 80% of its monthly budget';
    body := 'The key ' || p_key || ' has spent ' || spent_usd || ' USD of its monthly budget of ' || budget_usd
      || ' USD in ' || month_name || '. Its calls that do not fit what is left will be refused until the month ends.';
  elsif p_key is not null then
    subject := 'The monthly budget of the key ' || p_key || ' is used up';
    body := 'The key ' || p_key || ' has used up its monthly budget of ' || budget_usd || ' USD in ' || month_name
      || ' (spent: ' || spent_usd || ' USD). Its calls that do not fit it are refused until the month ends; the '
      || 'budget can be raised on the key''s Limits page of the dashboard.';
  elsif p_type = 'budget.warning' then
    subject := 'Your account has spent 80% of its monthly budget';
    body := 'Your account has spent ' || spent_usd || ' USD of its monthly budget of ' || budget_usd || ' USD in '
      || month_name || '. Calls that do not fit what is left will be refused until the month ends.';
  else
    subject := 'Your account''s monthly budget is used up';
    body := 'Your account has used up its monthly budget of ' || budget_usd || ' USD in ' || month_name || ' (spent: '
      || spent_usd || ' USD). Calls that do not fit it are refused until the month ends; an owner can raise the '
      || 'budget on the Account page of the dashboard.';
  end if;
  -- The text has only numbers, a key's prefix (base62) and fixed words: nothing to escape in its HTML.
  insert into mail_deliveries (account_id, user_id, kind, recipient, message, next_at, created_at)
    select p_account, u.id, 'budget', u.email,
      jsonb_build_object('subject', subject, 'text', body, 'html', '<p>' || body || '</p>'),
      clock_timestamp(), clock_timestamp()
    from users u where u.account_id = p_account and u.role = 'owner';
  if found then
    perform pg_notify('studio_webhooks', '');
  end if;
end
$$;

create or replace function studio_budget_alert(p_account uuid, p_month date, p_type text, p_budget bigint, p_spent bigint)
returns void
language plpgsql as $$
begin
  insert into budget_alerts (account_id, month, type, budget_micros) values (p_account, p_month, p_type, p_budget)
    on conflict do nothing;
  if found then
    perform studio_budget_notify(p_account, p_month, p_type, p_budget, p_spent, null);
  end if;
end
$$;

-- A key line's budget raises the same events as an account's, each at most once per line (its newest prefix),
-- month and budget.
create table key_budget_alerts (
  prefix text not null references api_keys(prefix) on delete cascade,
  month date not null,
  type text not null,
  budget_micros bigint not null,
  primary key (prefix, month, type, budget_micros)
);

create function studio_key_budget_alert(p_line text, p_month date, p_type text, p_budget bigint, p_spent bigint)
returns void
language plpgsql as $$
declare
  account uuid;
begin
  insert into key_budget_alerts (prefix, month, type, budget_micros) values (p_line, p_month, p_type, p_budget)
    on conflict do nothing;
  if found then
    select k.account_id into account from api_keys k where k.prefix = p_line;
    perform studio_budget_notify(account, p_month, p_type, p_budget, p_spent, p_line);
  end if;
end
$$;

-- A spend of a key that takes its line's month to 80% or 100% of the line's budget. The line's total is read after
-- the statement (a batch may add to two keys of one line, so a row's own "before" could skip the line), and
-- key_budget_alerts keeps each alert once; writers of key_spend hold the account's account_spend row
-- (record-writer.ts), so two batches never read the line's total apart.
create function studio_key_budget_crossed()
returns trigger
language plpgsql as $$
declare
  l text;
  b bigint;
  total bigint;
  alert record;
  was bigint := case when tg_op = 'UPDATE' then old.spent_micros else 0 end;
begin
  if new.spent_micros <= was then
    return null;
  end if;
  select coalesce(k.counts_as, k.prefix) into l from api_keys k where k.prefix = new.prefix;
  select k.budget_micros into b from api_keys k where k.prefix = l;
  if b is null or b = 0 then
    return null;
  end if;
  select coalesce(sum(s.spent_micros), 0) into total
    from key_spend s join api_keys k on k.prefix = s.prefix
    where (k.prefix = l or k.counts_as = l) and s.month = new.month;
  for alert in
    select * from (values ('budget.warning', ceil(b * 0.8)::bigint), ('budget.exhausted', b)) as a(type, at)
    where total >= a.at
  loop
    perform studio_key_budget_alert(l, new.month, alert.type, b, total);
  end loop;
  return null;
end
$$;

create trigger key_spend_budget_crossed after insert or update of spent_micros on key_spend
  for each row execute function studio_key_budget_crossed();
