import t from 'tap'
import { SCOPES } from '../../src/accounts/scopes.js'
import { run } from '../../src/cli/cli.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { eventually } from '../support/eventually.js'
import { scopedOperations } from '../support/scoped.js'
import { startTestServer } from '../support/server.js'

// A key without the scope an operation needs is refused with 403 `forbidden` before anything is spent: its rate
// limit does not count the request, the account's quota does not move, and the upstream is not called.
const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
const s = await startTestServer(t, { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: upstream.url })
const email = 'least@example.com'
const watcher = await s.key({ email })
const { operations, success } = scopedOperations(s)

const remaining = (r: Response) => Number(/r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1])
const quotaUsed = async () => ((await (await s.fetch('/api/v1/me', { key: watcher })).json()) as any).quota.used
const leadCount = async () => Number((await s.db.sql`select count(*)::int as n from leads`)[0].n)

t.test('a key with one scope is refused every other operation, spending nothing', async (t) => {
  for (const scope of SCOPES) {
    const key = await s.key({ email, scopes: [scope] })
    const first = await operations[scope](key)
    t.equal(first.status, success[scope], `${scope}: its own operation`)
    await first.arrayBuffer()
    const before = { rate: remaining(first), quota: await quotaUsed(), calls: upstream.seen.length, leads: 0 }
    before.leads = await leadCount()
    for (const other of SCOPES.filter((o) => o !== scope)) {
      const r = await operations[other](key)
      t.equal(r.status, 403, `${scope} key, ${other} operation`)
      t.equal(r.headers.get('ratelimit'), null, 'no rate-limit state: the request was not counted')
      const body = (await r.json()) as { error: { code: string; message: string; details: Record<string, unknown> } }
      t.equal(body.error.code, 'forbidden')
      t.match(body.error.message, other)
      t.same(body.error.details, { required_scope: other })
    }
    t.equal(await quotaUsed(), before.quota, `${scope}: no quota spent`)
    t.equal(upstream.seen.length, before.calls, `${scope}: the upstream was not called`)
    t.equal(await leadCount(), before.leads, `${scope}: no lead stored`)
    const again = await operations[scope](key)
    await again.arrayBuffer()
    t.equal(remaining(again), before.rate - 1, `${scope}: only its own requests were counted`)
  }
})

t.test('a refused request counts nothing against the rate limit, even when the key is at its limit', async (t) => {
  const key = await s.key({ email, scopes: ['me:read'] })
  const statuses: number[] = []
  for (let i = 0; i < 5; i++) {
    const r = await operations['leads:write'](key)
    statuses.push(r.status)
    await r.arrayBuffer()
  }
  t.same(statuses, [403, 403, 403, 403, 403])
  const r = await operations['me:read'](key)
  await r.arrayBuffer()
  t.equal(remaining(r), s.config.STUDIO_RATE_LIMIT - 1, 'the first counted request')
})

t.test('a key narrowed by the CLI is refused by the running server', async (t) => {
  const key = await s.key({ email })
  const prefix = key.split('_')[1]
  const me = await operations['me:read'](key)
  t.equal(me.status, 200, 'cached with every scope')
  await me.arrayBuffer()
  const out: string[] = []
  const code = await run(['keys', 'scopes', prefix, '--scopes', 'leads:write'], s.dbEnv, {
    out: (l) => out.push(l),
    err: (l) => out.push(l),
  })
  t.equal(code, 0, out.join('\n'))
  const status = async () => {
    const r = await operations['me:read'](key)
    await r.arrayBuffer()
    return r.status
  }
  t.equal(await eventually(async () => (await status()) === 403 && 403, { what: 'the narrowing applied' }), 403)
  const l = await operations['leads:write'](key)
  t.equal(l.status, 201, 'its remaining scope still works')
  await l.arrayBuffer()
})

t.test('a key with a bad secret is 401 whatever the scope, never 403', async (t) => {
  const key = await s.key({ email, scopes: ['me:read'] })
  const wrong = `${key.slice(0, -8)}AAAAAAAA`
  const r = await operations['leads:write'](wrong)
  t.equal(r.status, 401)
  await r.arrayBuffer()
})
