-- POST /leads with an Idempotency-Key: the key and the SHA-256 of the validated body stay with the lead they created,
-- so a retry finds that lead through the unique index instead of creating a second one. Keys are per account; a key
-- older than 24 hours is released (set to null) by the next request that uses it.
alter table leads add column idempotency_key text, add column request_sha256 bytea;
create unique index leads_account_id_idempotency_key on leads (account_id, idempotency_key) where idempotency_key is not null;
