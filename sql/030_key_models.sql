-- The model aliases a key may call on the OpenAI- and Anthropic-compatible routes and the native one
-- (accounts/key-limits.ts): null, every alias the service is configured with (keys made before have no limit). The
-- names are checked against the configured aliases where the key is limited (the CLI, the dashboard), not here: an
-- alias the operator later removes is refused as unknown (404), whatever the key allows.
alter table api_keys add column models text[] check (models is null or cardinality(models) > 0);
