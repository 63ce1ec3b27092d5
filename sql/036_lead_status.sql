-- A lead after it arrives (issue 47): its triage status (leads/read.ts lists the values; every lead starts as new),
-- the user of its account it is given to, and when it last changed (null: never since it was created).
alter table leads add column status text not null default 'new';
alter table leads add column assignee_id uuid references users(id);
alter table leads add column updated_at timestamptz;
