-- The audit log: one row per change made through the dashboard or the CLI, written in the change's transaction.
-- Append-only: a row is never updated; rows are deleted only when older than STUDIO_AUDIT_RETENTION_DAYS (pruned).
-- No foreign keys: an entry outlives the user, key or endpoint it names. account_id is null for a failed sign-in
-- with an email that belongs to no account.
create table audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default clock_timestamp(),
  account_id uuid,
  actor_kind text not null check (actor_kind in ('user', 'cli')),
  actor text not null,
  action text not null,
  target text,
  address text,
  before jsonb,
  after jsonb
);
create index audit_log_account_at on audit_log (account_id, at desc, id desc);
create index audit_log_at on audit_log (at);

create function audit_log_append_only() returns trigger
language plpgsql as $$
begin
  raise exception 'audit_log is append-only';
end
$$;
create trigger audit_log_no_update before update on audit_log
  for each row execute function audit_log_append_only();
