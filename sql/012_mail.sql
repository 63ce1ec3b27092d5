-- Mail: each user's choice of a mail per new lead (null: the default, on for owners), and the mail outbox beside the
-- webhooks' one. src/accounts/ reads and writes users.lead_mail; only src/events/ reads or writes the mail tables.
alter table users add column lead_mail boolean;

create table mail_deliveries (
  id bigint generated always as identity primary key,
  account_id uuid not null references accounts(id) on delete cascade,
  user_id uuid references users(id) on delete cascade,
  kind text not null check (kind in ('lead', 'signin', 'invite')),
  recipient text not null,
  -- A lead mail is made from its event when it is sent; a sign-in link or invitation carries its message (the link
  -- is a secret: wiped once the mail is sent, refused or expired).
  event_id text references events(id) on delete cascade,
  message jsonb,
  expires_at timestamptz,
  state text not null default 'pending' check (state in ('pending', 'delivered', 'failed', 'expired')),
  attempts integer not null default 0,
  next_at timestamptz not null,
  claimed_until timestamptz,
  created_at timestamptz not null
);
create index mail_deliveries_due on mail_deliveries (next_at) where state = 'pending';
create index mail_deliveries_account on mail_deliveries (account_id, created_at);

create table mail_attempts (
  id bigint generated always as identity primary key,
  delivery_id bigint not null references mail_deliveries(id) on delete cascade,
  at timestamptz not null,
  outcome text not null check (outcome in ('delivered', 'retry', 'failed')),
  code integer,
  answer text not null
);
create index mail_attempts_delivery on mail_attempts (delivery_id, at);
create index mail_attempts_at on mail_attempts (at);
