import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { SlidingWindow } from '../../src/limits/limits.js'
import { openRedisLimits } from '../../src/limits/redis.js'
import { createMetrics } from '../../src/ops/service-metrics.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { spawnServer } from '../support/processes.js'
import { captureLogger, issueKey, startTestServer } from '../support/server.js'
import { redisSkip, testRedis, uniquePrefix } from '../support/redis.js'
import { eventually } from '../support/eventually.js'

// The rate limits shared through Redis: exact across processes, with the same RateLimit headers as in memory.

const skip = redisSkip(t)

t.test('the Redis window is exact under concurrent hits', { skip }, async (t) => {
  const requests = new SlidingWindow(20, 60_000)
  const authFailures = new SlidingWindow(5, 60_000)
  t.teardown(() => {
    requests.close()
    authFailures.close()
  })
  const metrics = createMetrics()
  const log = captureLogger()
  const limits = await openRedisLimits({
    url: await testRedis(t),
    timeoutMs: 1000,
    prefix: uniquePrefix(),
    requests,
    authFailures,
    log,
    metrics,
  })
  t.teardown(() => limits.close())
  t.equal(limits.fallingBack(), false)
  const fresh = await limits.limiter.check('k1')
  t.same(fresh, { ok: true, limit: 20, remaining: 20, resetS: 0 }, 'an unseen key: full, no reset')
  const verdicts = await Promise.all(Array.from({ length: 50 }, () => limits.limiter.hit('k1')))
  const accepted = verdicts.filter((v) => v.ok)
  t.equal(accepted.length, 20, 'exactly the limit accepted')
  t.same(
    accepted.map((v) => v.remaining).sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i),
    'each accepted hit saw its own remaining count'
  )
  for (const v of verdicts.filter((v) => !v.ok)) t.same([v.remaining, v.limit, v.resetS], [0, 20, 60])
  const after = await limits.limiter.check('k1')
  t.same([after.ok, after.remaining], [false, 0], 'check counts nothing and sees the limit')
  t.same((await limits.limiter.hit('k2')).remaining, 19, 'keys are separate')
  t.same((await limits.authFailures.hit('k1')).remaining, 4, 'the failed-auth window is separate')
  t.match(metrics.render(), /studio_ratelimit_fallback_total 0\n/)
  t.match(metrics.render(), /studio_ratelimit_redis_fallback 0\n/)
})

// Limiters of 3 per `windowMs` on the test Redis under a fresh prefix, and a plain client to look at their keys.
async function limitsOnRedis(t: Test, windowMs: number) {
  const requests = new SlidingWindow(3, windowMs)
  const authFailures = new SlidingWindow(3, windowMs)
  t.teardown(() => {
    requests.close()
    authFailures.close()
  })
  const url = await testRedis(t)
  const prefix = uniquePrefix()
  const opts = { url, timeoutMs: 1000, prefix, requests, authFailures, log: captureLogger(), metrics: createMetrics() }
  const limits = await openRedisLimits(opts)
  t.teardown(() => limits.close())
  const raw = new Redis(url)
  t.teardown(() => raw.disconnect())
  return { limits, raw, prefix }
}

t.test('the Redis window rolls, keeps at most the limit per key, and ignores the old format', { skip }, async (t) => {
  const { limits, raw, prefix } = await limitsOnRedis(t, 400)
  const list = `${prefix}v2:key:k`
  // A sorted set where the previous version kept the key's window: a process of this version does not read it.
  await raw.zadd(`${prefix}key:k`, 1, 'old')
  const first = await Promise.all(Array.from({ length: 5 }, () => limits.limiter.hit('k')))
  t.same(
    first.map((v) => v.ok),
    [true, true, true, false, false],
    'the limit, in order'
  )
  t.equal(await raw.type(list), 'list')
  t.equal(await raw.llen(list), 3, 'refused requests are not kept')
  const ttl = await raw.pttl(list)
  t.ok(ttl > 0 && ttl <= 400, `expires one window after its last request (${ttl} ms)`)
  // The window is Redis's clock, not one the test can move: wait for the list to expire on it (and for this process's
  // own window, which counted each request when Redis's answer came, a moment later).
  await eventually(async () => (await raw.exists(list)) === 0, { what: 'the window expired' })
  await eventually(async () => (await limits.limiter.check('k')).ok, { what: 'the own window expired' })
  t.same(await limits.limiter.check('k'), { ok: true, limit: 3, remaining: 3, resetS: 0 }, 'all left the window')
  t.same((await limits.limiter.hit('k')).remaining, 2, 'counted afresh')
  t.equal(await raw.llen(list), 1, 'what left the window was dropped')
})

t.test('the Redis window drops only what left it, and resets when the oldest request left', { skip }, async (t) => {
  const { limits, raw, prefix } = await limitsOnRedis(t, 60_000)
  // Requests 10 s, 30 s, 70 s and 90 s ago on Redis's clock (µs, newest first): the last two left the window.
  const [s, us] = (await raw.time()).map(Number)
  const now = s * 1_000_000 + us
  const list = `${prefix}v2:key:k`
  await raw.rpush(list, ...[10, 30, 70, 90].map((ago) => String(now - ago * 1_000_000)))
  // The reset is 30 s (29 if this machine stalled a second since TIME was read): the oldest left is 30 s old.
  const [hit, refused] = [await limits.limiter.hit('k'), await limits.limiter.hit('k')]
  t.same([hit.ok, hit.remaining], [true, 0], 'two in the window, one more')
  t.same([refused.ok, refused.remaining], [false, 0], 'then full')
  for (const v of [hit, refused]) t.ok(v.resetS === 30 || v.resetS === 29, `reset ${v.resetS} s`)
  t.equal(await raw.llen(list), 3)
})

t.test('one service over Redis: headers and /readyz', { skip }, async (t) => {
  const s = await startTestServer(t, {
    STUDIO_REDIS_URL: await testRedis(t),
    STUDIO_REDIS_PREFIX: uniquePrefix(),
    STUDIO_REDIS_TIMEOUT_MS: '1000',
    STUDIO_DB_TIMEOUT_MS: '60000',
    STUDIO_RATE_LIMIT: '3',
  })
  const key = await s.key()
  const seen: (string | null)[] = []
  for (let i = 0; i < 4; i++) {
    const r = await s.fetch('/api/v1/me', { key })
    seen.push(`${r.status} ${r.headers.get('ratelimit')}`)
    t.equal(r.headers.get('ratelimit-policy'), '"default";q=3;w=60')
  }
  t.same(seen, ['200 "default";r=2;t=60', '200 "default";r=1;t=60', '200 "default";r=0;t=60', '429 "default";r=0;t=60'])
  const ready = await s.fetch('/readyz')
  t.same(await ready.json(), { status: 'ready', details: { rate_limiter: 'redis', upstreams: { anthropic: 'ok' } } })
})

// Sends one request to each server in turn (a fresh connection each time) and returns the statuses and headers.
async function alternate(urls: string[], n: number, path: string, key: string) {
  const out: { status: number; ratelimit: string | null; retryAfter: string | null }[] = []
  for (let i = 0; i < n; i++) {
    const r = await fetch(urls[i % urls.length] + path, {
      headers: { authorization: `Bearer ${key}`, connection: 'close' },
    })
    await r.arrayBuffer()
    out.push({ status: r.status, ratelimit: r.headers.get('ratelimit'), retryAfter: r.headers.get('retry-after') })
  }
  return out
}

t.test('two server processes over one PostgreSQL and one Redis', { skip }, async (t) => {
  const dbEnv = await testDatabase(t)
  const db = await openTestDatabase(t, dbEnv)
  const env = {
    ...dbEnv,
    STUDIO_REDIS_URL: await testRedis(t),
    STUDIO_REDIS_PREFIX: uniquePrefix(),
    // Generous: a busy test machine must not push a request into the in-memory fallback (not under test here).
    STUDIO_REDIS_TIMEOUT_MS: '1000',
    STUDIO_DB_TIMEOUT_MS: '60000',
    STUDIO_RATE_LIMIT: '10',
    STUDIO_AUTH_FAIL_LIMIT: '6',
    LOG_LEVEL: 'info',
  }
  const servers = [await spawnServer(t, env), await spawnServer(t, env)]
  const urls = servers.map((s) => s.url)
  t.not(urls[0], urls[1], 'two listeners')

  t.test('one key, requests alternating: exactly the limit, then 429 from either', async (t) => {
    const key = await issueKey(db.sql, { email: 'two@example.com' })
    const got = await alternate(urls, 12, '/api/v1/me', key)
    t.same(
      got.map((g) => g.status),
      [...Array(10).fill(200), 429, 429]
    )
    // The reset is whole seconds from the oldest request in the window: it may tick down while a busy machine serves
    // the twelve requests, but never past the window.
    const field = /^"default";r=(\d+);t=(\d+)$/
    const fields = got.map((g) =>
      field
        .exec(g.ratelimit ?? '')
        ?.slice(1)
        .map(Number)
    )
    t.same(
      fields.map((f) => f?.[0]),
      [9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0],
      'remaining counts down across both processes'
    )
    t.ok(
      fields.every((f) => f && f[1] >= 1 && f[1] <= 60),
      'reset within the window'
    )
    for (const g of got.slice(10)) t.ok(Number(g.retryAfter) >= 1 && Number(g.retryAfter) <= 60, 'retry-after')
  })

  t.test('one key, concurrent requests spread over both: exactly the limit accepted', async (t) => {
    const key = await issueKey(db.sql, { email: 'spread@example.com' })
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`${urls[i % 2]}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => {
          await r.arrayBuffer()
          return r.status
        })
      )
    )
    t.equal(statuses.filter((s) => s === 200).length, 10, 'exactly 10 accepted')
    t.equal(statuses.filter((s) => s === 429).length, 20, 'the rest refused')
  })

  t.test('failed authentications from one address are limited across both', async (t) => {
    const wrong = 'studio_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBB'
    const got = await alternate(urls, 8, '/api/v1/me', wrong)
    t.same(
      got.map((g) => g.status),
      [...Array(6).fill(401), 429, 429]
    )
  })

  await t.test('both processes still serve', async (t) => {
    for (const s of servers) t.equal((await fetch(`${s.url}/healthz`)).status, 200)
  })
})
