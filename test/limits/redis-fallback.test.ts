import t, { type Test } from 'tap'
import { testDatabase } from '../support/database.js'
import { startTestServer, type TestServer } from '../support/server.js'
import { redisSkip, privateRedis, uniquePrefix } from '../support/redis.js'
import { eventually } from '../support/eventually.js'

// Redis down or slow is not an outage: each process falls back to its in-memory limiter (logged once, counted,
// shown in /readyz), no request fails, and the shared limit resumes when Redis answers again.

const skip = redisSkip(t)
const ENTER = 'rate limiter: Redis failed or is slow; limiting in this process until it answers'
const LEAVE = 'rate limiter: Redis answers again; the limits are shared again'

const logged = (s: TestServer, msg: string) => s.log.lines.filter((l) => JSON.parse(l).msg === msg).length
const store = async (s: TestServer) => ((await (await s.fetch('/readyz')).json()) as any).details?.rate_limiter

// Requests from `loops` concurrent loops over the servers and keys until `stop()` says so; every status is pushed to
// `statuses` as it comes.
async function load(servers: TestServer[], keys: string[], stop: () => boolean, statuses: number[], loops = 6) {
  await Promise.all(
    Array.from({ length: loops }, async (_, l) => {
      for (let i = l; !stop() && i < 100_000; i++) {
        const r = await servers[i % servers.length].fetch('/api/v1/me', { key: keys[i % keys.length] })
        await r.arrayBuffer()
        statuses.push(r.status)
      }
    })
  )
}

t.test('Redis stopped under load, then back', { skip }, async (t) => {
  const redis = await privateRedis(t)
  const dbEnv = await testDatabase(t)
  // A stopped Redis closes the connection: the fallback does not wait for the timeout, which is generous here so
  // that a busy test machine cannot cause a second, spurious fallback. So is the database's: the 5xx looked for are
  // the limiter's, not a slow embedded database's 503.
  const env = {
    STUDIO_REDIS_URL: redis.url,
    STUDIO_REDIS_PREFIX: uniquePrefix(),
    STUDIO_REDIS_TIMEOUT_MS: '1000',
    STUDIO_DB_TIMEOUT_MS: '60000',
    STUDIO_RATE_LIMIT: '20',
  }
  const a = await startTestServer(t, env, { dbEnv })
  const b = await startTestServer(t, env, { dbEnv })
  const servers = [a, b]
  for (const s of servers) t.equal(await store(s), 'redis', 'shared at start')
  const keys = await Promise.all(Array.from({ length: 8 }, () => a.key()))

  let phase = 'redis'
  const statuses: number[] = []
  const running = load(servers, keys, () => phase === 'done', statuses)
  // `n` more requests answered than now.
  const more = (n: number, what: string) => {
    const target = statuses.length + n
    return eventually(() => statuses.length >= target, { what })
  }
  await more(20, 'requests answered on Redis')
  await redis.stop()
  phase = 'stopped'
  const all = (mode: string) => async () => (await Promise.all(servers.map(store))).every((s) => s === mode)
  t.ok(await eventually(all('fallback'), { what: 'both in fallback' }), 'fallback')
  const counted = () => servers.every((s) => s.metric('studio_ratelimit_fallback_total') >= 20)
  await eventually(counted, { what: '20 decisions in fallback in each process' })
  for (const s of servers) {
    t.equal((await s.fetch('/readyz')).status, 200, '/readyz stays 200 in fallback')
    t.equal(logged(s, ENTER), 1, 'fallback logged once per process')
    t.ok(s.metric('studio_ratelimit_fallback_total') > 0, 'fallback decisions counted')
    t.equal(s.metric('studio_ratelimit_redis_fallback'), 1, 'fallback gauge')
  }
  await redis.start()
  t.ok(await eventually(all('redis'), { what: 'both on Redis' }), 'back on Redis')
  await more(20, 'requests answered on Redis again')
  phase = 'done'
  await running
  t.ok(statuses.length > 50, `load ran (${statuses.length} requests)`)
  t.same(
    statuses.filter((s) => s >= 500),
    [],
    'no 5xx'
  )
  for (const s of servers) {
    t.equal(logged(s, ENTER), 1, 'still logged once')
    t.equal(logged(s, LEAVE), 1, 'leaving logged once')
    t.equal(s.metric('studio_ratelimit_redis_fallback'), 0)
  }

  // The shared limit resumes: a fresh key, alternating over both processes, gets exactly 20.
  const key = await a.key()
  const got: number[] = []
  for (let i = 0; i < 22; i++) got.push((await servers[i % 2].fetch('/api/v1/me', { key })).status)
  t.same(got, [...Array(20).fill(200), 429, 429], 'shared limit again')
})

// A server on `redis`, with a database deadline long enough that a slow embedded database on a busy machine is never
// taken for a limiter failure.
const onRedis = (t: Test, redis: { url: string }, env: Record<string, string> = {}) =>
  startTestServer(t, {
    STUDIO_REDIS_URL: redis.url,
    STUDIO_REDIS_PREFIX: uniquePrefix(),
    STUDIO_REDIS_TIMEOUT_MS: '200',
    STUDIO_DB_TIMEOUT_MS: '60000',
    ...env,
  })

t.test('Redis slow (frozen): requests are not held, then shared again', { skip }, async (t) => {
  const redis = await privateRedis(t)
  const s = await onRedis(t, redis)
  const key = await s.key()
  t.equal((await s.fetch('/api/v1/me', { key })).status, 200)
  redis.freeze()
  t.teardown(() => redis.thaw())
  const statuses: number[] = []
  for (let i = 0; i < 20; i++) statuses.push((await s.fetch('/api/v1/me', { key })).status)
  t.same(new Set(statuses), new Set([200]), 'every request answered 200 while Redis is frozen')
  t.equal(await store(s), 'fallback')
  t.equal(logged(s, ENTER), 1, 'logged once')
  redis.thaw()
  t.ok(await eventually(async () => (await store(s)) === 'redis', { what: 'on Redis' }), 'back on Redis after the thaw')
  t.equal(logged(s, LEAVE), 1)
  const r = await s.fetch('/api/v1/me', { key })
  // In Redis: 1 before the freeze, this one, the request that found Redis frozen (its script was sent, and ran on the
  // thaw), and the 20 granted in fallback, written into Redis on leaving it (that first one a second time).
  t.equal(r.headers.get('ratelimit'), '"default";r=277;t=60', 'counted in Redis again, the fallback included')
})

t.test('a fallback starts from what this process had counted, not a fresh window', { skip }, async (t) => {
  const redis = await privateRedis(t)
  const s = await onRedis(t, redis, { STUDIO_RATE_LIMIT: '5' })
  const [key, other] = [await s.key(), await s.key()]
  for (let i = 0; i < 5; i++) t.equal((await s.fetch('/api/v1/me', { key })).status, 200, `hit ${i + 1} on Redis`)
  redis.freeze()
  t.teardown(() => redis.thaw())
  // Another key's request finds Redis frozen (this key's would not ask it: this process's own window is full).
  t.equal((await s.fetch('/api/v1/me', { key: other })).status, 200)
  t.equal(await store(s), 'fallback')
  const statuses: number[] = []
  for (let i = 0; i < 5; i++) statuses.push((await s.fetch('/api/v1/me', { key })).status)
  t.same(new Set(statuses), new Set([429]), 'the limit still holds in fallback')
})
