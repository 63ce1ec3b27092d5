import t, { type Test } from 'tap'
import { run } from '../../src/cli/cli.js'
import { anthropicMessage, anthropicStream, fakeUpstream, json, sse } from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { spawnServer } from '../support/processes.js'
import { startTestServer } from '../support/server.js'

const dbEnv = await testDatabase(t)
const hello = { messages: [{ role: 'user', content: 'hi' }] }
const post = (url: string, key: string, body: object = hello) =>
  fetch(`${url}/api/v1/ai/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

function statusCounts(rs: { status: number }[]) {
  const n: Record<number, number> = {}
  for (const r of rs) n[r.status] = (n[r.status] ?? 0) + 1
  return n
}

// One FREE account's key over two server processes (this one and a spawned one) before the same upstream.
async function twoProcesses(t: Test, behaviour: Parameters<typeof fakeUpstream>[1]) {
  const upstream = await fakeUpstream(t, behaviour)
  // A generous database deadline: 250 calls at once on a busy machine must not meet the 503 of a slow database here.
  const env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: upstream.url, STUDIO_DB_TIMEOUT_MS: '60000' }
  const a = await startTestServer(t, env, { dbEnv })
  const b = await spawnServer(t, { ...dbEnv, ...env })
  return { upstream, a, b, key: await a.key({ email: `free-${Math.random().toString(36).slice(2)}@example.com` }) }
}

t.test('250 concurrent completions, one FREE account, two server processes: exactly 100 answered', async (t) => {
  const answer = json(200, anthropicMessage())
  const { upstream, a, b, key } = await twoProcesses(t, (req, res, seen) =>
    setTimeout(() => answer(req, res, seen), 20)
  )
  const results = await Promise.all(
    Array.from({ length: 250 }, (_, i) =>
      post(i % 2 ? a.url : b.url, key).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
    )
  )
  const refused = results.filter((r) => r.status === 429)
  t.same(statusCounts(results), { 200: 100, 429: 150 })
  t.ok(refused.every((r) => r.body.error.code === 'quota_exceeded'))
  t.equal(upstream.seen.length, 100, 'the upstream saw exactly 100 calls')
  const [{ used }] = await a.db.sql`select used from quota_usage`
  t.equal(used, 100)
  const e = refused[0].body.error
  t.equal(e.details.limit, 100)
  t.equal(e.details.used, 100)
  t.equal(new Date(e.details.resets_at).getUTCDate(), 1)
  const me = (await (await a.fetch('/api/v1/me', { key })).json()) as any
  t.match(me.quota, { limit: 100, used: 100, remaining: 0 })
  await b.stop()
  // Each call the upstream saw is one the two processes recorded as an attempt, one per answer: an extra call would
  // show here as a retry (more attempts than answers) or as a call that was never answered (another outcome).
  const records = await eventually(
    async () => {
      const rows = await a.db.sql`select outcome, count(*)::int as calls, sum(attempts)::int as attempts
        from completions group by outcome`
      return rows.reduce((n, r) => n + r.calls, 0) >= 100 && rows
    },
    { what: "both processes' records" }
  )
  t.same([...records], [{ outcome: 'ok', calls: 100, attempts: 100 }], 'one attempt per answer, nothing else')
})

t.test('250 concurrent streams, one FREE account, two server processes: exactly 100 streamed', async (t) => {
  const { a, b, key } = await twoProcesses(t, sse(anthropicStream()))
  const results = await Promise.all(
    Array.from({ length: 250 }, (_, i) =>
      post(i % 2 ? a.url : b.url, key, { ...hello, stream: true }).then(async (r) => ({
        status: r.status,
        type: r.headers.get('content-type'),
        text: await r.text(),
      }))
    )
  )
  const ok = results.filter((r) => r.status === 200)
  const refused = results.filter((r) => r.status === 429)
  t.same(statusCounts(results), { 200: 100, 429: 150 })
  t.ok(
    ok.every((r) => r.type === 'text/event-stream' && r.text.includes('event: done\n')),
    'each stream whole'
  )
  t.ok(
    refused.every((r) => JSON.parse(r.text).error.code === 'quota_exceeded'),
    'refusals are JSON errors'
  )
  const me = (await (await a.fetch('/api/v1/me', { key })).json()) as any
  const used = me.quota.used
  t.equal(used, 100)
  await b.stop()
})

t.test('failed upstream calls consume nothing; a new month starts from zero; plan changes apply at once', async (t) => {
  let now = Date.UTC(2026, 0, 31, 23, 59, 0)
  const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
  const s = await startTestServer(
    t,
    { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: upstream.url, STUDIO_QUOTA_FREE: '2' },
    { dbEnv, clock: () => now, backoff: () => 1 }
  )
  const key = await s.key({ email: 'month@example.com' })
  const quota = async () => ((await (await s.fetch('/api/v1/me', { key })).json()) as any).quota

  t.same(await quota(), { limit: 2, used: 0, remaining: 2, resets_at: '2026-02-01T00:00:00.000Z' })
  upstream.next(json(500, {}), json(500, {}), json(500, {}))
  t.equal((await post(s.url, key)).status, 503)
  upstream.next(json(400, { error: { message: 'no' } }))
  t.equal((await post(s.url, key)).status, 422)
  upstream.next(json(401, {}))
  t.equal((await post(s.url, key)).status, 502)
  t.equal((await quota()).used, 0, 'failed calls gave their units back')

  t.equal((await post(s.url, key)).status, 200)
  t.equal((await post(s.url, key)).status, 200)
  const over = await post(s.url, key)
  t.equal(over.status, 429)
  t.equal(over.headers.get('retry-after'), '60', 'Retry-After runs to the reset')
  t.same(((await over.json()) as any).error.details, { limit: 2, used: 2, resets_at: '2026-02-01T00:00:00.000Z' })

  const out: string[] = []
  const code = await run(
    ['plan', 'set', '--email', 'month@example.com', 'STARTER'],
    { ...dbEnv },
    { out: (l) => out.push(l), err: (l) => out.push(l) }
  )
  t.equal(code, 0, out.join('\n'))
  t.equal((await post(s.url, key)).status, 200, 'the new plan applies to the next request')
  t.match(await quota(), { limit: 5000, used: 3 })
  await run(['plan', 'set', '--email', 'month@example.com', 'FREE'], { ...dbEnv }, { out: () => {}, err: () => {} })
  t.equal((await post(s.url, key)).status, 429)

  now = Date.UTC(2026, 1, 1, 0, 0, 0)
  t.same(
    await quota(),
    { limit: 2, used: 0, remaining: 2, resets_at: '2026-03-01T00:00:00.000Z' },
    'February starts from zero'
  )
  t.equal((await post(s.url, key)).status, 200)
  t.equal((await quota()).used, 1)
  const rows = await s.db
    .sql`select month::text, used from quota_usage q join users u on u.account_id = q.account_id where u.email = 'month@example.com' order by month`
  t.same(
    rows.map((r) => [r.month, r.used]),
    [
      ['2026-01-01', 3],
      ['2026-02-01', 1],
    ]
  )
})

t.test('ENTERPRISE is unlimited by default, and still counted', async (t) => {
  const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
  const s = await startTestServer(
    t,
    { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: upstream.url, STUDIO_QUOTA_FREE: '0' },
    { dbEnv }
  )
  const ent = await s.key({ plan: 'ENTERPRISE' })
  for (let i = 0; i < 3; i++) t.equal((await post(s.url, ent)).status, 200)
  const me = (await (await s.fetch('/api/v1/me', { key: ent })).json()) as any
  t.match(me.quota, { limit: null, used: 3, remaining: null })
  const free = await s.key({ plan: 'FREE' })
  t.equal((await post(s.url, free)).status, 429, 'a zero quota refuses everything')
  t.equal(upstream.seen.length, 3)
})
