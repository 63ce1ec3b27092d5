import t from 'tap'
import { parseConfig } from '../../src/ops/config.js'
import { anthropicMessage, fakeUpstream, hang, json, openaiCompletion, reset } from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { refusedPort } from '../support/ports.js'
import { startTestServer, type TestServer } from '../support/server.js'
import type { Teardown } from '../support/teardown.js'

const dbEnv = await testDatabase(t)
const hello = { messages: [{ role: 'user', content: 'hi' }] }
const overloaded = json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })

// Anthropic first, an OpenAI-compatible server second; `offset` moves the service's clock.
async function twoUpstreams(t: Teardown, env: Record<string, string> = {}) {
  const first = await fakeUpstream(t, json(200, anthropicMessage()))
  const second = await fakeUpstream(t, json(200, openaiCompletion()))
  const clock = { offset: 0 }
  const s = await startTestServer(
    t,
    {
      STUDIO_UPSTREAM: 'anthropic,openai',
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: first.url,
      OPENAI_BASE_URL: `${second.url}/v1`,
      STUDIO_QUOTA_LEASE_MS: '600000',
      ...env,
    },
    { dbEnv, backoff: () => 1, clock: () => Date.now() + clock.offset }
  )
  return { first, second, s, clock }
}

const complete = (s: TestServer, key: string) => s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })
const used = async (s: TestServer, key: string) =>
  ((await (await s.fetch('/api/v1/me', { key })).json()) as any).quota.used
const upstreams = async (s: TestServer) => ((await (await s.fetch('/readyz')).json()) as any).details.upstreams
const labelled = (s: TestServer, name: string, upstream: string) =>
  Number(new RegExp(`^${name}\\{upstream="${upstream}"\\} (\\S+)$`, 'm').exec(s.metrics.render())?.[1])

t.test('the first upstream fails: the second answers, one unit spent, both attempts recorded', async (t) => {
  // Long enough that a loaded machine's 529 is not taken for a hang.
  const { first, second, s } = await twoUpstreams(t, { STUDIO_UPSTREAM_TIMEOUT_MS: '1500' })
  const cases = [
    ['529', overloaded, 'upstream_unavailable'],
    ['503', json(503, {}), 'upstream_unavailable'],
    ['hang', hang, 'upstream_timeout'],
  ] as const
  for (const [name, behaviour, outcome] of cases) {
    first.next(behaviour)
    const key = await s.key()
    const r = await complete(s, key)
    t.equal(r.status, 200, name)
    t.equal(((await r.json()) as any).content, 'Hi there', `${name}: the second upstream's answer`)
    t.equal(await used(s, key), 1, `${name}: one unit`)
    const prefix = key.split('_')[1]
    const row = await eventually(
      async () =>
        (await s.db.sql`select outcome, attempts, upstream, tries from completions where key_prefix = ${prefix}`)[0],
      { what: `${name}: the record` }
    )
    t.match(row, { outcome: 'ok', attempts: 2, upstream: 'openai' }, name)
    t.match(
      row.tries,
      [
        { upstream: 'anthropic', model: 'claude-sonnet-4-5', outcome },
        { upstream: 'openai', model: 'gpt-4.1', outcome: 'ok' },
      ],
      name
    )
    t.ok(
      row.tries.every((x: any) => Number.isInteger(x.latency_ms)),
      `${name}: latencies`
    )
  }
  t.equal(first.seen.length, 3, 'one attempt each at the first: no retries before falling over')
  t.equal(second.seen.length, 3)
  t.same(await upstreams(s), { anthropic: 'ok', openai: 'ok' }, 'three failures do not cool it down')
  t.equal(labelled(s, 'studio_upstream_attempts_total', 'anthropic'), 3)
  t.equal(labelled(s, 'studio_upstream_failures_total', 'anthropic'), 3)
  t.equal(labelled(s, 'studio_upstream_attempts_total', 'openai'), 3)
  t.equal(labelled(s, 'studio_upstream_failures_total', 'openai'), 0)
})

t.test('a refused connection at the first upstream falls over to the second', async (t) => {
  const { first, second, s } = await twoUpstreams(t, { ANTHROPIC_BASE_URL: `http://127.0.0.1:${await refusedPort()}` })
  const key = await s.key()
  const r = await complete(s, key)
  t.equal(r.status, 200)
  t.equal(((await r.json()) as any).content, 'Hi there')
  t.equal(first.seen.length, 0)
  t.equal(second.seen.length, 1)
  const row = await eventually(
    async () => (await s.db.sql`select attempts, tries from completions where key_prefix = ${key.split('_')[1]}`)[0],
    { what: 'the record' }
  )
  t.match(row, {
    attempts: 2,
    tries: [
      { upstream: 'anthropic', outcome: 'upstream_unreachable' },
      { upstream: 'openai', outcome: 'ok' },
    ],
  })
})

t.test('a connection that breaks once the first upstream had the request: not sent to the second', async (t) => {
  const { first, second, s } = await twoUpstreams(t)
  first.next(reset)
  const key = await s.key()
  const r = await complete(s, key)
  t.equal(r.status, 502)
  t.equal(((await r.json()) as any).error.code, 'upstream_error')
  t.equal(first.seen.length, 1)
  t.equal(second.seen.length, 0, 'the first may have answered and billed it')
  t.equal(await used(s, key), 0)
  const row = await eventually(
    async () =>
      (await s.db.sql`select outcome, attempts, upstream from completions where key_prefix = ${key.split('_')[1]}`)[0],
    { what: 'the record' }
  )
  t.match(row, { outcome: 'upstream_broke_off', attempts: 1, upstream: 'anthropic' })
  t.equal(labelled(s, 'studio_upstream_failures_total', 'anthropic'), 1, 'it counts against the first')
})

t.test('a caller error from the first upstream is not tried elsewhere', async (t) => {
  const { first, second, s } = await twoUpstreams(t)
  first.next(json(422, { type: 'error', error: { type: 'invalid_request_error', message: 'messages: bad' } }))
  const key = await s.key()
  const r = await complete(s, key)
  t.equal(r.status, 422)
  t.equal(((await r.json()) as any).error.code, 'invalid_request')
  t.equal(second.seen.length, 0, 'nothing sent to the second')
  t.equal(first.seen.length, 1)
  t.equal(await used(s, key), 0)
})

t.test('the last upstream keeps its retries', async (t) => {
  const { first, second, s } = await twoUpstreams(t)
  first.next(overloaded)
  second.next(json(503, {}), json(503, {}))
  const r = await complete(s, await s.key())
  t.equal(r.status, 200)
  t.equal(first.seen.length, 1)
  t.equal(second.seen.length, 3, 'two retries at the last')
})

t.test('five failures cool the first down; after the cool-down it gets a trial call', async (t) => {
  const { first, second, s, clock } = await twoUpstreams(t)
  const key = await s.key({ plan: 'PRO' })
  for (let i = 0; i < 5; i++) {
    first.next(overloaded)
    t.equal((await complete(s, key)).status, 200)
  }
  t.same(await upstreams(s), { anthropic: 'cooling', openai: 'ok' })
  t.equal((await s.fetch('/readyz')).status, 200, 'a cooling upstream does not make the service unready')
  t.equal(labelled(s, 'studio_upstream_cooling', 'anthropic'), 1)
  t.equal((await complete(s, key)).status, 200)
  t.equal(first.seen.length, 5, 'a cooling upstream is skipped')
  t.equal(second.seen.length, 6)

  clock.offset += 29_000
  await complete(s, key)
  t.equal(first.seen.length, 5, 'still cooling after 29 s')
  clock.offset += 1_000
  t.same(await upstreams(s), { anthropic: 'ok', openai: 'ok' })
  first.next(overloaded)
  t.equal((await complete(s, key)).status, 200)
  t.equal(first.seen.length, 6, 'the trial call')
  t.same(await upstreams(s), { anthropic: 'cooling', openai: 'ok' }, 'a failed trial cools it down again')

  clock.offset += 30_000
  const r = await complete(s, key)
  t.equal(((await r.json()) as any).content, 'Hello, world', 'a good trial: the first answers again')
  t.equal(first.seen.length, 7)
  t.same(await upstreams(s), { anthropic: 'ok', openai: 'ok' })
  t.equal(labelled(s, 'studio_upstream_cooling', 'anthropic'), 0)
  t.equal(await used(s, key), 9, 'one unit per completion')
})

t.test('every upstream cooling: 503 at once, nothing spent', async (t) => {
  const { first, second, s } = await twoUpstreams(t)
  const key = await s.key({ plan: 'PRO' })
  first.next(...Array(20).fill(overloaded))
  second.next(...Array(20).fill(json(503, {})))
  for (let i = 0; i < 5 && (await upstreams(s)).anthropic === 'ok'; i++) await complete(s, key)
  t.same(await upstreams(s), { anthropic: 'cooling', openai: 'cooling' })
  const seen = first.seen.length + second.seen.length
  const r = await complete(s, key)
  t.equal(r.status, 503)
  t.equal(((await r.json()) as any).error.code, 'upstream_unavailable')
  t.ok(Number(r.headers.get('retry-after')) >= 1)
  t.equal(first.seen.length + second.seen.length, seen, 'nothing sent')
  t.equal(await used(s, key), 0)
})

t.test('a bad list is a configuration error', async (t) => {
  const keys = { ANTHROPIC_API_KEY: 'sk', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }
  t.same(parseConfig({ ...keys, STUDIO_UPSTREAM: 'openai, anthropic' }).STUDIO_UPSTREAM, ['openai', 'anthropic'])
  t.same(parseConfig({ STUDIO_UPSTREAM: 'openai' }).STUDIO_UPSTREAM, ['openai'], 'one name needs nothing else')
  t.throws(() => parseConfig({ ...keys, STUDIO_UPSTREAM: 'anthropic,gemini' }), /^STUDIO_UPSTREAM: must be anthropic/)
  t.throws(() => parseConfig({ ...keys, STUDIO_UPSTREAM: 'openai,openai' }), /^STUDIO_UPSTREAM: must not name/)
  t.throws(
    () => parseConfig({ OPENAI_BASE_URL: keys.OPENAI_BASE_URL, STUDIO_UPSTREAM: 'anthropic,openai' }),
    /^ANTHROPIC_API_KEY: must be set: anthropic is in STUDIO_UPSTREAM/
  )
  t.throws(
    () => parseConfig({ ANTHROPIC_API_KEY: 'sk', STUDIO_UPSTREAM: 'anthropic,openai' }),
    /^OPENAI_BASE_URL: must be set/
  )
})
