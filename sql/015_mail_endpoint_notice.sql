-- A mail to an account's owners and admins when the delivery worker disables one of its webhook endpoints (a 410, or
-- five days of failures). Like a link mail, it carries its message.
alter table mail_deliveries drop constraint mail_deliveries_kind_check;
alter table mail_deliveries add constraint mail_deliveries_kind_check
  check (kind in ('lead', 'signin', 'invite', 'endpoint'));
