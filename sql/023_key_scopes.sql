-- What a key may do (accounts/scopes.ts): every key made before scopes existed keeps all of them, as does a key made
-- without naming any. A key has at least one scope, and only known ones.
alter table api_keys add column scopes text[] not null default array['me:read', 'leads:write', 'completions:write'];
alter table api_keys add constraint api_keys_scopes_known
  check (cardinality(scopes) > 0 and scopes <@ array['me:read', 'leads:write', 'completions:write']);
