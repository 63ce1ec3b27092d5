-- A lead key opened to HTML forms (issue 46): a page's plain <form> may post leads to /forms/{prefix}, from the
-- key's origins. thank_you_url: where a stored lead's browser is sent when the form names no `_next`; null: the
-- service's own thank-you page. Off for every key made before this.
alter table api_keys add column form boolean not null default false, add column thank_you_url text;
