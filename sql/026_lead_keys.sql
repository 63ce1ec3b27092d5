-- Browser-safe lead keys (issue 24). A lead whose honeypot field was filled is kept as spam: left out of the leads
-- list, the CSV export and events, and deleted after 30 days (leads/spam.ts). A key whose only scope is leads:write
-- may list the web origins allowed to use it from a page's script (accounts/origins.ts); null: none, as for every
-- key made before this.
alter table leads add column spam boolean not null default false;
create index leads_spam_created_at on leads (created_at) where spam;
alter table api_keys add column origins text[];
