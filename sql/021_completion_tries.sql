-- Which upstream a completion ended on, and each of its attempts (upstream, model, outcome, latency_ms), in order,
-- when STUDIO_UPSTREAM names a fallback list.
alter table completions add column upstream text, add column tries jsonb;
