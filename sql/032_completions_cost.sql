-- What a completion cost, in micro-dollars (10⁻⁶ USD), from the upstream's usage and the price table
-- (src/completions/prices.ts, STUDIO_PRICES); null when its model has no price, when the upstream sent no usage, and
-- for the rows written before this column.
alter table completions add column cost_micros bigint;
