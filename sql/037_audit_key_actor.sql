-- A change made through the API with a key (a lead's status or assignee, issue 47) is recorded with the key's prefix
-- as its actor: actor_kind 'key' beside 'user' and 'cli'.
-- contract: the check is replaced by a wider one in the same transaction; every row any release writes ('user',
-- 'cli') passes both, so no release stops working.
alter table audit_log drop constraint audit_log_actor_kind_check;
alter table audit_log add constraint audit_log_actor_kind_check check (actor_kind in ('user', 'cli', 'key'));
