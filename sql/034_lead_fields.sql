-- A lead's extra fields: what a form sent beyond the named ones (POST /leads' `fields`, a form's other inputs), a flat
-- JSON object of strings. Null for a lead that has none, and for every lead of earlier releases.
alter table leads add column fields jsonb;
