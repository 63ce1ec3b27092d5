create table quota_usage (
  account_id uuid not null references accounts(id),
  month date not null,
  used integer not null check (used >= 0),
  primary key (account_id, month)
);
