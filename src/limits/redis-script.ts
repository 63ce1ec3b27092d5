// Both scripts start from the limit and the window (ARGV 1 and 2) and the Redis server's time now, in µs. TIME is not
// deterministic: before Redis 5 a script that writes after it must ask for its effects to be replicated.
const PRELUDE = `
if redis.replicate_commands then redis.replicate_commands() end
local limit, windowMs = tonumber(ARGV[1]), ARGV[2]
local window = tonumber(windowMs) * 1000
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
`

// The exact rolling window of `SlidingWindow`, kept in Redis for every process: per key, a list of the times of the
// requests it counted (µs, the Redis server's clock: TIME, so processes on machines whose clocks differ agree), newest
// first and never longer than the limit. One atomic script decides a batch of keys: for each it drops from the tail
// what left the window (now - window, now], then counts (LPUSH answers the new length; over the limit it is undone)
// or, for a check, only reads. It answers {ok, count, ms until the oldest request leaves the window} per key, in one
// flat array. ARGV: the limit, the window in ms, then '1' (a hit: count it) or '0' (a check) per key, then per key
// the limit that applies to it (a key's own lower one), the first limit where none is given.
export const WINDOW_SCRIPT = `${PRELUDE}local stamp = string.format('%.0f', now)
local edge = now - window
local out = {}
local default = limit
for i = 1, #KEYS do
  local key = KEYS[i]
  limit = tonumber(ARGV[#KEYS + 2 + i]) or default
  local oldest = tonumber(redis.call('LINDEX', key, -1))
  while oldest and oldest <= edge do
    redis.call('RPOP', key)
    oldest = tonumber(redis.call('LINDEX', key, -1))
  end
  local ok, count = 1, 0
  if ARGV[i + 2] == '1' then
    count = redis.call('LPUSH', key, stamp)
    if count > limit then
      redis.call('LPOP', key)
      ok, count = 0, count - 1
    else
      redis.call('PEXPIRE', key, windowMs)
      oldest = oldest or now
    end
  elseif oldest then
    count = redis.call('LLEN', key)
    if count >= limit then ok = 0 end
  end
  local n = i * 3
  out[n - 2], out[n - 1], out[n] = ok, count, oldest and math.ceil((oldest + window - now) / 1000) or 0
end
return out
`

// Adds to the lists the requests a process granted on its own while Redis was away, at the times it granted them
// (each given as its age in µs, so the Redis server's clock places it): per key, its list and those times are merged,
// what left the window dropped, and the newest `limit` kept, newest first (the reset is when the oldest of them leaves,
// as for a hit). ARGV: the limit, the window in ms, then per key how many ages follow, and the ages.
export const MERGE_SCRIPT = `${PRELUDE}local edge = now - window
local a = 3
for i = 1, #KEYS do
  local key, times = KEYS[i], {}
  local n = tonumber(ARGV[a])
  for j = a + 1, a + n do
    local at = now - tonumber(ARGV[j])
    if at > edge then times[#times + 1] = at end
  end
  a = a + n + 1
  for _, stamp in ipairs(redis.call('LRANGE', key, 0, -1)) do
    local at = tonumber(stamp)
    if at > edge then times[#times + 1] = at end
  end
  table.sort(times, function(x, y) return x > y end)
  redis.call('DEL', key)
  local kept = math.min(#times, limit)
  for j = 1, kept, 1000 do
    local chunk = {}
    for k = j, math.min(j + 999, kept) do chunk[#chunk + 1] = string.format('%.0f', times[k]) end
    redis.call('RPUSH', key, unpack(chunk))
  end
  if kept > 0 then redis.call('PEXPIRE', key, math.max(1, math.ceil((times[1] + window - now) / 1000))) end
end
return #KEYS
`

// The version of the keys' format, in their names: processes of an older version (a sorted set per key) and of this
// one never read each other's keys during a rolling upgrade.
export const FORMAT = 'v2:'

// At most this many keys in one script call: a batch holds Redis for its whole run.
export const MAX_BATCH = 256

// The weighted window of `TokenWindow` (tokens.ts), kept in Redis for every process: per key, a sorted set of the
// reservations in the window, each member `id:tokens` scored by its time (µs, Redis's clock). One reservation per
// call: it drops what left the window (now - window, now], sums the rest, and adds `tokens` under `id` if the sum
// stays within the limit. It answers {1, sum, 0} or {0, sum, ms until enough have left for `tokens` to fit}. ARGV: the
// limit, the window in ms, the tokens, the reservation's id (unique across processes).
export const TOKENS_SCRIPT = `${PRELUDE}local key, tokens, id = KEYS[1], tonumber(ARGV[3]), ARGV[4]
local edge = now - window
redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', edge))
local held = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
local sum = 0
for i = 1, #held, 2 do sum = sum + tonumber(string.match(held[i], ':(%d+)$')) end
if sum + tokens > limit then
  local over, reset = sum + tokens - limit, window
  for i = 1, #held, 2 do
    over = over - tonumber(string.match(held[i], ':(%d+)$'))
    if over <= 0 then
      reset = tonumber(held[i + 1]) + window - now
      break
    end
  end
  return {0, sum, math.ceil(reset / 1000)}
end
redis.call('ZADD', key, string.format('%.0f', now), id .. ':' .. tokens)
redis.call('PEXPIRE', key, windowMs)
return {1, sum + tokens, 0}
`

// A reservation settled to what its call used: its member `id:reserved` becomes `id:used` at the same time, if it is
// still in the window. ARGV: the member, the tokens used.
export const SETTLE_SCRIPT = `local key, member = KEYS[1], ARGV[1]
local at = redis.call('ZSCORE', key, member)
if not at then return 0 end
redis.call('ZREM', key, member)
redis.call('ZADD', key, at, string.match(member, '^(.*):%d+$') .. ':' .. ARGV[2])
return 1
`
