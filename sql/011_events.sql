-- Events (a transactional outbox: written in the transaction of what caused them) and their delivery to webhook
-- endpoints. Only src/events/ reads or writes these tables.
create table events (
  id text primary key,
  account_id uuid not null references accounts(id),
  type text not null,
  body text not null,
  created_at timestamptz not null
);
create index events_account_created on events (account_id, created_at);
create index events_created on events (created_at);

create table webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts(id),
  url text not null,
  event_types text[],
  description text,
  secret text not null,
  previous_secret text,
  previous_secret_until timestamptz,
  disabled_reason text,
  failing_since timestamptz,
  created_at timestamptz not null default now()
);
create index webhook_endpoints_account on webhook_endpoints (account_id);

create table webhook_deliveries (
  event_id text not null references events(id) on delete cascade,
  endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
  state text not null default 'pending' check (state in ('pending', 'delivered', 'failed', 'cancelled')),
  attempts integer not null default 0,
  next_at timestamptz not null,
  claimed_until timestamptz,
  last_status integer,
  primary key (event_id, endpoint_id)
);
create index webhook_deliveries_due on webhook_deliveries (next_at) where state = 'pending';
create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id) where state = 'pending';

create table webhook_attempts (
  id bigint generated always as identity primary key,
  event_id text not null,
  endpoint_id uuid not null,
  at timestamptz not null,
  status integer,
  duration_ms integer not null,
  answer text not null,
  foreign key (event_id, endpoint_id) references webhook_deliveries on delete cascade
);
create index webhook_attempts_endpoint_at on webhook_attempts (endpoint_id, at);
create index webhook_attempts_at on webhook_attempts (at);
