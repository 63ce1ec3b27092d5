// The exact rolling window of `SlidingWindow`, kept in Redis for every process: per key, a list of the times of the
// requests it counted (µs, the Redis server's clock: TIME, so processes on machines whose clocks differ agree), newest
// first and never longer than the limit. One atomic script decides a batch of keys: for each it drops from the tail
// what left the window (now - window, now], then counts (LPUSH answers the new length; over the limit it is undone)
// or, for a check, only reads. It answers {ok, count, ms until the oldest request leaves the window} per key, in one
// flat array. ARGV: the limit, the window in ms, then '1' (a hit: count it) or '0' (a check) per key.
export const WINDOW_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local limit, windowMs = tonumber(ARGV[1]), ARGV[2]
local window = tonumber(windowMs) * 1000
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local stamp = string.format('%.0f', now)
local edge = now - window
local out = {}
for i = 1, #KEYS do
  local key = KEYS[i]
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

// The version of the keys' format, in their names: processes of an older version (a sorted set per key) and of this
// one never read each other's keys during a rolling upgrade.
export const FORMAT = 'v2:'
