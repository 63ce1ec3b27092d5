-- A rotated key counts its completions as the key that replaced it (accounts/accounts.ts rotateKey): during the grace
-- period the old and the new key spend one monthly cap, never one each. null: the key counts as itself. A later
-- rotation of the new key moves every key counting as it along to the newest.
alter table api_keys add column counts_as text references api_keys(prefix) on delete set null;
