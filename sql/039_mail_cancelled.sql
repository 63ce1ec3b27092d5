-- A lead mail whose lead was erased before it was sent is cancelled (issue 47), as its webhook deliveries are.
-- contract: nothing stops being used; widens the check (drop and add in one transaction), old values stay valid
alter table mail_deliveries drop constraint mail_deliveries_state_check;
alter table mail_deliveries add constraint mail_deliveries_state_check
  check (state in ('pending', 'delivered', 'failed', 'expired', 'cancelled'));
