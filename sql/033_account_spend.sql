-- Each account's spend per calendar month (UTC), in micro-dollars: the sum of its completions' cost_micros, added by
-- the statement that writes the completions (src/completions/record-writer.ts), so GET /me reads one row.
create table account_spend (
  account_id uuid not null references accounts(id),
  month date not null,
  spent_micros bigint not null default 0,
  primary key (account_id, month)
);

insert into account_spend (account_id, month, spent_micros)
select account_id, date_trunc('month', created_at at time zone 'UTC')::date, sum(cost_micros)
from completions where cost_micros is not null group by 1, 2;
