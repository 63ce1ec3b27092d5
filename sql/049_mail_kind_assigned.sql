-- A mail to a lead's new assignee (issue 47; 045 is each user's choice), written with the lead.updated event it tells
-- of and made from it when sent. The kind check widened by sql/046's function, so it must stay after 046.
select studio_widen_mail_check('mail_deliveries_kind_check', 'assigned');
