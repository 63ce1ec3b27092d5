-- Whether a user is mailed when a lead is assigned to them (issue 47): on until they turn it off on the dashboard's
-- Account page. The mail's kind is 049's.
alter table users add column assigned_mail boolean not null default true;
