-- The scopes a key may hold are SCOPES in src/accounts/scopes.ts, the only check of a scope's name, so a new scope
-- needs no migration; the database keeps "at least one scope".
-- contract: sql/023's list of the scopes, in its check and its column default. No release uses either: every release
-- since sql/023 (commit fb03e90) checks the names and writes a key's scopes when it makes one (accounts.ts's
-- insertKey, the one insert), so a key inserted without them is a bug to refuse, not one to give a list that may be
-- outdated. The keys stored keep their scopes and stay valid.
alter table api_keys drop constraint api_keys_scopes_known;
alter table api_keys add constraint api_keys_scopes_some check (cardinality(scopes) > 0);
alter table api_keys alter column scopes drop default;
