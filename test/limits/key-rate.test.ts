import t from 'tap'
import { SlidingWindow } from '../../src/limits/limits.js'
import { openRedisLimits } from '../../src/limits/redis.js'
import { createMetrics } from '../../src/ops/service-metrics.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { spawnServer } from '../support/processes.js'
import { captureLogger, issueKey, startTestServer } from '../support/server.js'
import { redisSkip, testRedis, uniquePrefix } from '../support/redis.js'

// A key's own rate limit: the lower of it and STUDIO_RATE_LIMIT applies, in memory and across processes over Redis,
// and the RateLimit headers report that one.

const skip = redisSkip(t)
const email = () => `rate-${Math.random().toString(36).slice(2)}@example.com`

t.test('in one process: the lower limit applies, and the headers say which', async (t) => {
  const s = await startTestServer(t, { STUDIO_RATE_LIMIT: '5' })
  const statuses = async (key: string, n: number) => {
    const out: string[] = []
    for (let i = 0; i < n; i++) {
      const r = await s.fetch('/api/v1/me', { key })
      await r.arrayBuffer()
      out.push(`${r.status} ${r.headers.get('ratelimit-policy')}`)
    }
    return out
  }
  const lower = await s.key({ email: email(), limits: { rateLimit: 3 } })
  t.same(await statuses(lower, 4), [...Array(3).fill('200 "default";q=3;w=60'), '429 "default";q=3;w=60'])
  const higher = await s.key({ email: email(), limits: { rateLimit: 50 } })
  t.same(
    await statuses(higher, 6),
    [...Array(5).fill('200 "default";q=5;w=60'), '429 "default";q=5;w=60'],
    "a key's limit above the service's: the service's applies"
  )
  const none = await s.key({ email: email() })
  t.same((await statuses(none, 1))[0], '200 "default";q=5;w=60', 'a key without one: the service limit')
  const r = await s.fetch('/api/v1/me', { key: lower })
  const error = ((await r.json()) as any).error
  t.match(error, { code: 'rate_limited', message: 'More than 3 requests in 60 seconds with this key' })
  t.equal(error.details.limit, 3)
  t.ok(error.details.retry_after >= 1 && error.details.retry_after <= 60, 'until the oldest request leaves')
})

t.test('the in-memory window: a lower limit per call, the same window', async (t) => {
  const w = new SlidingWindow(10, 60_000, () => 1000)
  t.teardown(() => w.close())
  t.same(w.check('k', 2), { ok: true, limit: 2, remaining: 2, resetS: 0 })
  t.same([w.hit('k', 2).ok, w.hit('k', 2).ok, w.hit('k', 2).ok], [true, true, false])
  t.same(w.check('k'), { ok: true, limit: 10, remaining: 8, resetS: 60 }, 'the service limit sees the same hits')
  t.same(w.hit('k', 20).limit, 10, 'never above the service limit')
})

t.test('over Redis: exact per key with its own limit', { skip }, async (t) => {
  const requests = new SlidingWindow(20, 60_000)
  const authFailures = new SlidingWindow(5, 60_000)
  t.teardown(() => {
    requests.close()
    authFailures.close()
  })
  const opts = { url: await testRedis(t), timeoutMs: 1000, prefix: uniquePrefix(), requests, authFailures }
  const limits = await openRedisLimits({ ...opts, log: captureLogger(), metrics: createMetrics() })
  t.teardown(() => limits.close())
  const verdicts = await Promise.all([
    ...Array.from({ length: 30 }, () => limits.limiter.hit('own', 7)),
    ...Array.from({ length: 30 }, () => limits.limiter.hit('plain')),
  ])
  t.equal(verdicts.slice(0, 30).filter((v) => v.ok).length, 7, "the key's own limit")
  t.ok(
    verdicts.slice(0, 30).every((v) => v.limit === 7),
    'verdicts name it'
  )
  t.equal(verdicts.slice(30).filter((v) => v.ok).length, 20, 'beside it, the service limit in the same batches')
})

t.test('two server processes over one Redis: 200 concurrent completions at a rate limit of 30', { skip }, async (t) => {
  const dbEnv = await testDatabase(t)
  const db = await openTestDatabase(t, dbEnv)
  const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
  const env = {
    ...dbEnv,
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_QUOTA_FREE: '1000',
    STUDIO_REDIS_URL: await testRedis(t),
    STUDIO_REDIS_PREFIX: uniquePrefix(),
    STUDIO_REDIS_TIMEOUT_MS: '1000',
    STUDIO_DB_TIMEOUT_MS: '60000',
  }
  const servers = [await spawnServer(t, env), await spawnServer(t, env)]
  const key = await issueKey(db.sql, { email: email(), limits: { rateLimit: 30 } })
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      fetch(`${servers[i % 2].url}/api/v1/ai/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
      }).then(async (r) => ({ status: r.status, policy: r.headers.get('ratelimit-policy'), text: await r.text() }))
    )
  )
  t.equal(results.filter((r) => r.status === 200).length, 30, 'exactly 30 answered')
  const refused = results.filter((r) => r.status === 429)
  t.equal(refused.length, 170)
  t.ok(
    refused.every((r) => JSON.parse(r.text).error.code === 'rate_limited'),
    'refused as rate_limited'
  )
  t.ok(
    results.every((r) => r.policy === '"default";q=30;w=60'),
    'every answer reports the limit that applies'
  )
  t.equal(upstream.seen.length, 30, 'the upstream saw exactly 30 calls')
})
