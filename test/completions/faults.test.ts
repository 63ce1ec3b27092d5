import t from 'tap'
import { anthropicMessage, fakeUpstream, garbage, hang, json, reset } from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { spawnServer } from '../support/processes.js'
import { startTestServer } from '../support/server.js'
import { eventually } from '../support/eventually.js'

const dbEnv = await testDatabase(t)
const hello = { messages: [{ role: 'user', content: 'hi' }] }

t.test('an upstream that hangs, resets or answers garbage consumes no quota', async (t) => {
  const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
  const s = await startTestServer(
    t,
    {
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: upstream.url,
      STUDIO_UPSTREAM_TIMEOUT_MS: '300',
      STUDIO_QUOTA_FREE: '3',
    },
    { dbEnv, backoff: () => 1 }
  )
  const key = await s.key({ email: 'faults@example.com' })
  const used = async () => ((await (await s.fetch('/api/v1/me', { key })).json()) as any).quota.used
  const cases: [string, (typeof upstream)['next'] extends (...b: infer B) => void ? B : never, number, string][] = [
    ['hang', [hang], 504, 'upstream_timeout'],
    ['reset once it had the request', [reset], 502, 'upstream_error'],
    ['garbage', [garbage], 502, 'upstream_error'],
    ['not the expected JSON', [json(200, { content: 'nope' })], 502, 'upstream_error'],
    ['5xx ×3', [json(500, {}), json(502, {}), json(503, {})], 503, 'upstream_unavailable'],
  ]
  for (const [name, behaviours, status, code] of cases) {
    upstream.next(...behaviours)
    const r = await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })
    t.equal(r.status, status, name)
    t.equal(((await r.json()) as any).error.code, code, name)
    t.equal(await used(), 0, `${name}: nothing consumed`)
  }
  for (let i = 0; i < 3; i++)
    t.equal((await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })).status, 200)
  t.equal(
    (await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })).status,
    429,
    'the whole quota was still there'
  )
})

t.test('SIGTERM with upstream calls in flight: they finish, records are flushed, exit 0', async (t) => {
  const answer = json(200, anthropicMessage())
  const upstream = await fakeUpstream(t, (req, res, seen) => setTimeout(() => answer(req, res, seen), 400))
  const s = await startTestServer(t, {}, { dbEnv })
  const server = await spawnServer(t, { ...dbEnv, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: upstream.url })
  const key = await s.key({ plan: 'PRO' })
  const prefix = key.split('_')[1]
  const inflight = Array.from({ length: 20 }, () =>
    fetch(`${server.url}/api/v1/ai/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(hello),
    })
      .then((r) => r.status)
      .catch(() => 0)
  )
  await eventually(() => upstream.seen.length >= 20, { what: '20 calls at the upstream' })
  t.equal(upstream.seen.length, 20, 'all 20 are at the upstream')
  const exited = server.stop('SIGTERM')
  const statuses = await Promise.all(inflight)
  t.same(statuses, Array(20).fill(200), 'every in-flight completion was answered')
  t.equal(await exited, 0)
  const sql = s.db.sql
  const [{ n }] = await sql`select count(*)::int as n from completions where key_prefix = ${prefix} and outcome = 'ok'`
  t.equal(n, 20, 'every completion record was flushed before exit')
  const [{ used }] =
    await sql`select used from quota_usage q join api_keys k on k.account_id = q.account_id where k.prefix = ${prefix}`
  t.equal(used, 20)
})
