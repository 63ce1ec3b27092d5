import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/metrics.js'
import type { RateLimiter, SlidingWindow, Verdict } from './limits.js'

// The exact rolling window of `SlidingWindow`, kept in Redis for every process: a sorted set per key, one member per
// counted request, scored with the Redis server's clock (TIME), so processes on machines whose clocks differ agree.
// One atomic script per request drops what left the window, counts, and (a member given: a hit) adds the request
// when there is room. It answers {ok, count, ms until the oldest member leaves the window}.
const WINDOW_SCRIPT = `
local key, limit, window, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local ok = 0
if count < limit then ok = 1 end
if ok == 1 and member ~= '' then
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, window)
  count = count + 1
end
local reset = 0
if count > 0 then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  reset = math.ceil(tonumber(oldest[2]) + window - now)
end
return {ok, count, reset}
`

type Reply = [ok: number, count: number, resetMs: number]
interface WindowScript {
  studioWindow(key: string, limit: number, windowMs: number, member: string): Promise<Reply>
}

// While in fallback, how often Redis is asked whether it answers again.
const PROBE_MS = 250

export interface RedisLimitsOptions {
  url: string
  timeoutMs: number
  prefix: string
  // The in-memory windows: their limits are used, and they decide while Redis fails or is slow.
  requests: SlidingWindow
  authFailures: SlidingWindow
  log: Logger
  metrics: Metrics
}

export interface RedisLimits {
  limiter: RateLimiter
  authFailures: RateLimiter
  // True while Redis fails or is slow and this process limits on its own.
  fallingBack(): boolean
  close(): Promise<void>
}

const verdict = (limit: number, [ok, count, resetMs]: Reply): Verdict => ({
  ok: ok === 1,
  limit,
  remaining: limit - count,
  resetS: count > 0 ? Math.max(1, Math.ceil(resetMs / 1000)) : 0,
})

// Resolves once the client is ready, or after `ms` either way.
const readyWithin = (client: Redis, ms: number) =>
  new Promise<void>((ok) => {
    if (client.status === 'ready') return ok()
    const timer = setTimeout(ok, ms)
    client.once('ready', () => (clearTimeout(timer), ok()))
  })

// The limiters over Redis. A call that fails, or is not answered within `timeoutMs`, is decided by the in-memory
// window instead, and the process stays in that fallback (logged once on entering, once on leaving) until a probe
// gets an answer: no request waits on a Redis that is known to be down. The promises never reject.
export async function openRedisLimits(o: RedisLimitsOptions): Promise<RedisLimits> {
  const { log } = o
  const client = new Redis(o.url, {
    enableAutoPipelining: true,
    commandTimeout: o.timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: Math.max(1000, o.timeoutMs),
    retryStrategy: (times) => Math.min(times * 100, 1000),
    scripts: { studioWindow: { lua: WINDOW_SCRIPT, numberOfKeys: 1 } },
  })
  const script = client as unknown as WindowScript
  let fallback = false
  let closed = false
  let probe: NodeJS.Timeout | undefined
  const fellBack = o.metrics.counter(
    'studio_ratelimit_fallback_total',
    'Rate-limit decisions this process made in memory because Redis failed or was slow.'
  )
  o.metrics.gauge(
    'studio_ratelimit_redis_fallback',
    '1 while this process limits in memory because Redis fails or is slow, else 0.',
    () => (fallback ? 1 : 0)
  )

  function leave() {
    if (!fallback || closed) return
    fallback = false
    clearInterval(probe)
    log.info('rate limiter: Redis answers again; the limits are shared again')
  }
  function enter(e: unknown) {
    if (fallback || closed) return
    fallback = true
    log.warn('rate limiter: Redis failed or is slow; limiting in this process until it answers', {
      err: e instanceof Error ? e.message : String(e),
    })
    // The probe runs the script itself (a check: it counts nothing), so a Redis that answers PING but not the script
    // keeps this process in fallback; one probe at a time.
    let probing = false
    probe = setInterval(() => {
      if (probing) return
      probing = true
      script
        .studioWindow(`${o.prefix}probe`, 1, 1, '')
        .then(leave, () => {})
        .finally(() => (probing = false))
    }, PROBE_MS).unref()
  }
  client.on('error', enter)
  client.on('close', () => enter(new Error('connection closed')))

  function shared(memory: SlidingWindow, space: string): RateLimiter {
    const { limit, windowMs } = memory
    const hit = (key: string) => memory.hit(key)
    const check = (key: string) => memory.check(key)
    const boot = randomBytes(6).toString('base64url')
    let seq = 0
    const ask = (key: string, member: string, local: (key: string) => Verdict): Verdict | Promise<Verdict> => {
      if (fallback) return fellBack(), local(key)
      return script.studioWindow(space + key, limit, windowMs, member).then(
        (r) => verdict(limit, r),
        (e) => (enter(e), fellBack(), local(key))
      )
    }
    return {
      limit,
      windowMs,
      hit: (key) => ask(key, boot + (++seq).toString(36), hit),
      check: (key) => ask(key, '', check),
    }
  }

  await readyWithin(client, Math.max(1000, o.timeoutMs))
  if (client.status !== 'ready') enter(new Error(`not connected (${client.status})`))
  return {
    limiter: shared(o.requests, `${o.prefix}key:`),
    authFailures: shared(o.authFailures, `${o.prefix}auth:`),
    fallingBack: () => fallback,
    async close() {
      closed = true
      clearInterval(probe)
      await client.quit().catch(() => client.disconnect())
    },
  }
}
