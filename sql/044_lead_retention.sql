-- Lead retention per account (issue 47): leads older than this many days are erased by the delivery worker's hourly
-- prune, the same way an erasure request erases them (null: kept, the default). The audit entry of such an erasure
-- names the service itself as its actor: actor_kind 'system' beside 'user', 'cli' and 'key'.
alter table accounts add column lead_retention_days integer check (lead_retention_days > 0);
-- contract: the check is replaced by a wider one in the same transaction; every row any release writes ('user',
-- 'cli', 'key') passes both, so no release stops working.
alter table audit_log drop constraint audit_log_actor_kind_check;
alter table audit_log add constraint audit_log_actor_kind_check check (actor_kind in ('user', 'cli', 'key', 'system'));
