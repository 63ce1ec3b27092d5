-- The dashboard: key names and creators, password hashes, sign-in links and browser sessions (tokens stored hashed).
alter table api_keys add column name text;
alter table api_keys add column created_by uuid references users(id) on delete set null;
alter table api_keys add column rotated_at timestamptz;
update api_keys set created_by = user_id;
create index api_keys_created_by on api_keys (created_by);

alter table users add column password_hash text;

create table signin_links (
  token_sha256 bytea primary key,
  user_id uuid not null references users(id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index signin_links_user_id on signin_links (user_id);

create table dashboard_sessions (
  token_sha256 bytea primary key,
  user_id uuid not null references users(id) on delete cascade,
  csrf text not null,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now()
);
create index dashboard_sessions_user_id on dashboard_sessions (user_id);

-- Leads pages: newest first, keyset on (created_at, id) within an account.
create index leads_account_created_id on leads (account_id, created_at desc, id desc);
