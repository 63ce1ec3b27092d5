create table accounts (
  id uuid primary key default gen_random_uuid(),
  plan text not null default 'FREE' check (plan in ('FREE', 'STARTER', 'PRO', 'ENTERPRISE')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table users (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts(id),
  email text not null,
  name text,
  role text not null,
  created_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));
create index users_account_id on users (account_id);

create table api_keys (
  prefix text primary key,
  secret_sha256 bytea not null,
  account_id uuid not null references accounts(id),
  user_id uuid references users(id),
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  updated_at timestamptz not null default now()
);
create index api_keys_account_id on api_keys (account_id);
create index api_keys_updated_at on api_keys (updated_at);

create table leads (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts(id),
  key_prefix text not null,
  name text not null,
  email text not null,
  service text not null,
  message text not null,
  phone text,
  company text,
  budget text,
  locale text,
  source text,
  utm_source text,
  utm_medium text,
  utm_campaign text,
  created_at timestamptz not null default now()
);
create index leads_account_id_created_at on leads (account_id, created_at);
