-- A key's own tokens-per-minute limit (issue 45): input plus output tokens (cache reads not counted) in any rolling
-- 60 s, held by limits/tokens.ts; null: none.
alter table api_keys add column tokens_per_minute integer check (tokens_per_minute > 0);
