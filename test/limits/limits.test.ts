import t from 'tap'
import { SlidingWindow } from '../../src/limits/limits.js'
import { startTestServer } from '../support/server.js'

t.test('sliding window: exact at the window edges (injected clock)', async (t) => {
  let now = 1_000_000
  const w = new SlidingWindow(3, 60_000, () => now)
  t.teardown(() => w.close())
  t.match(w.hit('k'), { ok: true, remaining: 2, resetS: 60 })
  now += 10_000
  t.match(w.hit('k'), { ok: true, remaining: 1, resetS: 50 })
  now += 10_000
  t.match(w.hit('k'), { ok: true, remaining: 0, resetS: 40 })
  t.match(w.hit('k'), { ok: false, remaining: 0, resetS: 40 }, 'the 4th in the window is refused')
  now = 1_000_000 + 59_999
  t.match(w.hit('k'), { ok: false, resetS: 1 }, '1 ms before the first leaves the window: still refused')
  now = 1_000_000 + 60_000
  t.match(w.hit('k'), { ok: true, remaining: 0 }, 'exactly one window later a slot is free')
  t.match(w.hit('k'), { ok: false, resetS: 10 })
  t.match(w.hit('other'), { ok: true, remaining: 2 }, 'keys are independent')
  t.match(w.check('k'), { ok: false })
  t.match(w.check('fresh'), { ok: true, remaining: 3, resetS: 0 })
})

t.test('sliding window: drain gives each event time still in the window, then forgets them', async (t) => {
  let now = 0
  const w = new SlidingWindow(5, 60_000, () => now)
  t.teardown(() => w.close())
  w.hit('old')
  now = 10_000
  w.hit('k')
  w.hit('k')
  now = 20_000
  w.hit('k')
  w.hit('j')
  now = 60_000
  t.same(w.drain(), [
    ['k', [10_000, 10_000, 20_000]],
    ['j', [20_000]],
  ])
  t.same(w.drain(), [], 'empty after')
  t.match(w.check('k'), { ok: true, remaining: 5 })
})

t.test('sliding window: refusals are not counted, and the ring grows to the limit', async (t) => {
  let now = 0
  const w = new SlidingWindow(300, 60_000, () => now)
  t.teardown(() => w.close())
  for (let i = 0; i < 300; i++, now += 100) t.equal(w.hit('k').ok, true)
  for (let i = 0; i < 50; i++) t.equal(w.hit('k').ok, false)
  now = 60_000
  t.equal(w.hit('k').ok, true, 'the first request (t=0) left; refusals did not take its place')
  t.equal(w.hit('k').ok, false)
  now = 60_100
  t.equal(w.hit('k').ok, true)
})

t.test('sliding window: events at one clock reading fold into a run, and stay exact', async (t) => {
  let now = 0
  const w = new SlidingWindow(1_000_000, 60_000, () => now)
  t.teardown(() => w.close())
  for (let ms = 0; ms < 100; ms++, now++) for (let i = 0; i < 5000; i++) w.hit('busy')
  t.match(w.check('busy'), { ok: true, remaining: 500_000 }, '500,000 events in 300 runs (at most 2,047 a run)')
  const runs = (w as unknown as { logs: Map<string, { runs: Float64Array }> }).logs.get('busy')!.runs.length
  t.ok(runs <= 512, `a ring of ${runs} runs, not one slot per event`)
  now = 60_000
  t.match(w.check('busy'), { remaining: 505_000 }, 'the first millisecond left the window: its 5,000 with it')
  now = 60_098
  t.match(w.check('busy'), { remaining: 995_000, resetS: 1 })

  // Against a plain list of times, with repeated and distinct readings mixed and the limit reached.
  const small = new SlidingWindow(7, 1000, () => now)
  t.teardown(() => small.close())
  const model: number[] = []
  now = 0
  for (let i = 0; i < 3000; i++) {
    now += [0, 0, 1, 7, 150][i % 5]
    while (model.length && model[0] <= now - 1000) model.shift()
    const ok = model.length < 7
    if (ok) model.push(now)
    const v = small.hit('k')
    if (v.ok !== ok || v.remaining !== 7 - model.length) return t.fail(`differs from the model at event ${i}`)
  }
  t.pass('3,000 events as the model decides them')
})

t.test('sliding window: idle keys are swept', async (t) => {
  let now = 0
  const w = new SlidingWindow(5, 60_000, () => now)
  t.teardown(() => w.close())
  for (let i = 0; i < 1000; i++) w.hit(`k${i}`)
  now = 30_000
  w.hit('k0')
  t.equal(w.size, 1000)
  now = 60_000
  w.sweep()
  t.equal(w.size, 1, 'only the key used within the window is kept')
  now = 90_000
  w.sweep()
  t.equal(w.size, 0)
})

t.test('301 requests with one key', async (t) => {
  const s = await startTestServer(t)
  const key = await s.key()
  const other = await s.key()
  for (let i = 1; i <= 300; i++) {
    const r = await s.fetch('/api/v1/me', { key })
    if (r.status !== 200) t.fail(`request ${i}: ${r.status}`)
    const rl = r.headers.get('ratelimit')!
    const m = /^"default";r=(\d+);t=(\d+)$/.exec(rl)
    if (!m || Number(m[1]) !== 300 - i) t.fail(`request ${i}: RateLimit ${rl}`)
    if (r.headers.get('ratelimit-policy') !== '"default";q=300;w=60')
      t.fail(`policy ${r.headers.get('ratelimit-policy')}`)
    await r.arrayBuffer()
  }
  const r = await s.fetch('/api/v1/me', { key })
  t.equal(r.status, 429)
  const e = ((await r.json()) as any).error
  t.equal(e.code, 'rate_limited')
  const retry = Number(r.headers.get('retry-after'))
  t.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`)
  t.match(r.headers.get('ratelimit'), /^"default";r=0;t=\d+$/)
  t.equal(Number(/t=(\d+)/.exec(r.headers.get('ratelimit')!)![1]), retry)
  const leads = await s.fetch('/api/v1/leads', { method: 'POST', key, json: {} })
  t.equal(leads.status, 429, 'every endpoint counts, before validation')
  const o = await s.fetch('/api/v1/me', { key: other })
  t.equal(o.status, 200, 'a second key is unaffected')
  t.equal(o.headers.get('ratelimit'), '"default";r=299;t=60')
})

t.test('validation errors carry the rate-limit headers; 401s do not count', async (t) => {
  const s = await startTestServer(t, { STUDIO_RATE_LIMIT: '5' })
  const key = await s.key()
  const r = await s.fetch('/api/v1/leads', { method: 'POST', key, json: {} })
  t.equal(r.status, 422)
  t.equal(r.headers.get('ratelimit-policy'), '"default";q=5;w=60')
  t.match(r.headers.get('ratelimit'), /^"default";r=4;t=\d+$/)
  const bad = await s.fetch('/api/v1/me', { headers: { authorization: 'Bearer nope' } })
  t.equal(bad.status, 401)
  t.equal(bad.headers.get('ratelimit'), null)
})

t.test('failed authentications are limited per client address', async (t) => {
  const s = await startTestServer(t, { STUDIO_AUTH_FAIL_LIMIT: '30' })
  const key = await s.key()
  const known = await s.key()
  t.equal((await s.fetch('/api/v1/me', { key: known })).status, 200)
  for (let i = 0; i < 30; i++) {
    const r = await s.fetch('/api/v1/me', { headers: { authorization: `Bearer studio_AAAAAAAAAAAA_${i}` } })
    t.equal(r.status, 401)
    await r.arrayBuffer()
  }
  const r = await s.fetch('/api/v1/me', { key })
  t.equal(r.status, 429, 'the address is blocked, even for a key it may have guessed')
  t.equal(((await r.json()) as any).error.code, 'rate_limited')
  t.match(r.headers.get('retry-after'), /^\d+$/)
  t.equal((await s.fetch('/healthz')).status, 200)
  t.equal(
    (await s.fetch('/api/v1/me', { key: known })).status,
    200,
    'a key already verified still works from that address'
  )
  t.equal(
    (await s.fetch('/api/v1/me', { headers: { authorization: `Bearer ${known.slice(0, -3)}abc` } })).status,
    429,
    'a wrong key is still refused'
  )
})
