import t from 'tap'
import { SlidingWindow } from '../../src/limits/limits.js'
import { openRedisLimits } from '../../src/limits/redis.js'
import { TokenWindow } from '../../src/limits/tokens.js'
import { createMetrics } from '../../src/ops/service-metrics.js'
import { eventually } from '../support/eventually.js'
import { privateRedis, redisSkip, uniquePrefix } from '../support/redis.js'
import { captureLogger } from '../support/server.js'

// The tokens-per-minute window: reservations up to the limit in any 60 s, settled down (never up) to what was used,
// leaving the window at the time they were reserved; in memory, and through Redis with memory as its fallback.

t.test('in memory: reserve, settle, refuse with the wait, and leave after the window', async (t) => {
  let now = 1_000_000
  const w = new TokenWindow(60_000, () => now)
  t.teardown(() => w.close())
  const a = w.reserve('k', 100, 60)
  t.match(a, { ok: true, remaining: 40 })
  t.match(w.reserve('k', 100, 50), { ok: false, remaining: 40, resetS: 60, hold: null }, 'does not fit')
  now += 10_000
  a.hold!.settle(30)
  a.hold!.settle(0)
  const b = w.reserve('k', 100, 50)
  t.match(b, { ok: true, remaining: 20 }, 'settled once, to 30: room for 50')
  b.hold!.settle(500)
  t.match(w.reserve('k', 100, 21), { ok: false, resetS: 50 }, 'never settled above the reservation; 50 s to wait')
  t.match(w.reserve('other', 100, 100), { ok: true }, 'each key its own window')
  now += 50_000
  t.match(w.reserve('k', 100, 50), { ok: true, remaining: 0 }, 'the first left the window')
  a.hold!.settle(0)
})

t.test('through Redis, and in memory while Redis is away', { skip: redisSkip(t) }, async (t) => {
  const redis = await privateRedis(t)
  const requests = new SlidingWindow(100, 60_000)
  const authFailures = new SlidingWindow(5, 60_000)
  const prefix = uniquePrefix()
  const open = () =>
    openRedisLimits({
      url: redis.url,
      timeoutMs: 1000,
      prefix,
      requests,
      authFailures,
      log: captureLogger(),
      metrics: createMetrics(),
    })
  const [one, two] = await Promise.all([open(), open()])
  t.teardown(async () => {
    await one.close()
    await two.close()
    requests.close()
    authFailures.close()
  })
  // Two processes' limiters over one Redis: the second sees what the first reserved.
  const a = await one.tokens.reserve('k', 100, 60)
  t.match(a, { ok: true })
  t.match(await two.tokens.reserve('k', 100, 50), { ok: false }, 'shared')
  a.hold!.settle(20)
  await eventually(
    async () => {
      const v = await two.tokens.reserve('k', 100, 50)
      return v.ok || undefined
    },
    { what: 'the settlement seen by the other process' }
  )
  await redis.stop()
  const alone = await one.tokens.reserve('k2', 100, 100)
  t.match(alone, { ok: true }, 'Redis down: decided in memory, never failed')
  t.ok(one.fallingBack())
  t.match(await one.tokens.reserve('k2', 100, 1), { ok: false }, 'the memory window holds the limit')
})
