-- The dashboard's leads (issue 47): when someone first opened a lead's page (null: nobody yet, shown as unread), and
-- the list's filters by status and by assignee kept on an index each, newest first as the list reads them.
alter table leads add column opened_at timestamptz;
create index leads_account_status_created on leads (account_id, status, created_at desc, id desc);
create index leads_account_assignee_created on leads (account_id, assignee_id, created_at desc, id desc);
