create table completions (
  id bigint generated always as identity primary key,
  account_id uuid not null references accounts(id),
  key_prefix text not null,
  model_alias text not null,
  upstream_model text not null,
  input_tokens integer not null default 0,
  output_tokens integer not null default 0,
  cache_read_input_tokens integer not null default 0,
  cache_creation_input_tokens integer not null default 0,
  latency_ms integer not null,
  attempts integer not null,
  outcome text not null,
  upstream_request_id text,
  created_at timestamptz not null default now()
);
create index completions_account_id_created_at on completions (account_id, created_at);
