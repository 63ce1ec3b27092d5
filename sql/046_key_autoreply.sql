-- A lead key's autoresponder (issue 46): a mail to the person who wrote, its subject and plain-text body (with
-- {{field}} placeholders) and the Reply-To the account chooses; a null subject: none. The mails are autoreply rows of
-- the mail outbox, carrying their message, with the key that sent them (its daily limit counts them); one not sent is
-- a 'skipped' row saying why (the mail log shows it).
alter table api_keys
  add column autoreply_subject text,
  add column autoreply_body text,
  add column autoreply_reply_to text;
alter table mail_deliveries add column key_prefix text, add column skipped text;
create index mail_deliveries_autoreply_to on mail_deliveries (account_id, lower(recipient), created_at)
  where kind = 'autoreply';
create index mail_deliveries_autoreply_key on mail_deliveries (key_prefix, created_at) where kind = 'autoreply';

-- The kind and state checks are widened by adding to the values they hold, so that another migration's values (a kind
-- added beside this one) stay; later migrations that add a kind call the same function.
create or replace function studio_widen_mail_check(p_constraint text, p_value text) returns void
language plpgsql as $$
declare
  def text;
begin
  select pg_get_constraintdef(oid) into def from pg_constraint
    where conrelid = 'mail_deliveries'::regclass and conname = p_constraint;
  if def is null or position(quote_literal(p_value) in def) > 0 then
    return;
  end if;
  -- contract: nothing stops being used; the check is added again just below, widened
  execute format('alter table mail_deliveries drop constraint %I', p_constraint);
  execute format('alter table mail_deliveries add constraint %I %s', p_constraint,
                 replace(def, 'ARRAY[', format('ARRAY[%L::text, ', p_value)));
end $$;
select studio_widen_mail_check('mail_deliveries_kind_check', 'autoreply');
select studio_widen_mail_check('mail_deliveries_state_check', 'skipped');
