-- A completion whose upstream sent no usage count (a stream cut short, or a server that does not count): its tokens
-- are recorded as 0, and this says they are unknown rather than none.
alter table completions add column usage_missing boolean not null default false;
