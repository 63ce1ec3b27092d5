import type { ServerResponse } from 'node:http'
import t from 'tap'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { anthropicMessage, fakeUpstream } from '../support/fake-upstream.js'
import { spawnServer } from '../support/processes.js'
import { startTestServer } from '../support/server.js'

// A process killed while it has calls upstream must not charge for the answers it never gave: the units it held come
// back once its lease runs out, and near the limit an answer is released only once its unit is counted, so the
// answers delivered never exceed the limit and, once the calls are over, the units used equal the answers delivered.

const LEASE_MS = 3000

t.test('FREE at 40, 120 calls over two processes, one killed mid-way: used equals delivered', async (t) => {
  const dbEnv = await testDatabase(t)
  const held: ServerResponse[] = []
  const upstream = await fakeUpstream(t, (_req, res) => held.push(res))
  const answer = (res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(anthropicMessage()))
  const env = {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_QUOTA_FREE: '40',
    STUDIO_QUOTA_LEASE_MS: String(LEASE_MS),
  }
  const a = await startTestServer(t, env, { dbEnv })
  const b = await spawnServer(t, { ...dbEnv, ...env })
  const key = await a.key({ email: 'crash@example.com' })
  const post = (url: string) =>
    fetch(`${url}/api/v1/ai/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    }).then(
      async (r) => ({ status: r.status, body: await r.text() }),
      () => ({ status: 0, body: 'connection lost' })
    )
  // Fifteen calls reach the upstream through the process that survives, fifteen through the one to be killed, then
  // 90 more go to both.
  const calls = Array.from({ length: 15 }, () => post(a.url))
  await eventually(() => held.length >= 15, { what: 'fifteen calls upstream' })
  calls.push(...Array.from({ length: 15 }, () => post(b.url)))
  await eventually(() => held.length >= 30, { what: 'thirty calls upstream' })
  calls.push(...Array.from({ length: 90 }, (_, i) => post(i % 2 ? a.url : b.url)))

  await eventually(() => held.length >= 40 && held.length, { what: 'forty calls upstream', timeout: 30_000 })
  for (const res of held.splice(0, 4)) answer(res)
  await b.stop('SIGKILL')
  for (const res of held.splice(0)) answer(res)
  const results = await Promise.all(calls)
  const delivered = results.filter((r) => r.status === 200).length
  t.ok(delivered <= 40, `${delivered} answers delivered, at most the limit`)
  t.ok(delivered >= 15, 'the surviving process delivered its answers')
  t.ok(delivered <= 25, 'the answers of the killed process died with it')
  t.ok(
    results.every((r) => [200, 429, 0].includes(r.status)),
    'every call was answered, refused or cut off by the kill'
  )

  await spawnServer(t, { ...dbEnv, ...env })
  const used = async () =>
    (await a.db.sql<{ used: number }[]>`select used from quota_usage`)[0].used +
    (
      await a.db.sql<{ n: number }[]>`
      select coalesce(sum(h.units), 0)::int as n from quota_holds h join quota_processes p on p.id = h.process_id
      where p.expires_at > now()`
    )[0].n
  await eventually(async () => (await used()) === delivered, { what: 'used = delivered', timeout: 60_000 })
  t.equal(await used(), delivered, 'within a lease, the units used equal the answers delivered')
  const me = (await (await a.fetch('/api/v1/me', { key })).json()) as { quota: { used: number } }
  t.equal(me.quota.used, delivered, 'GET /me shows the same')

  upstream.next((_req, res) => answer(res))
  const again = await post(a.url)
  t.equal(again.status, 200, 'the units the dead process held can be spent again')
})
