import t from 'tap'
import { addEndpoint } from '../../src/events/endpoints.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { spawnServer } from '../support/processes.js'
import { receiver } from '../support/receiver.js'
import { issueKey } from '../support/server.js'

// Two service processes over one database, each with its delivery worker: 1,000 leads POSTed over both make 1,000
// lead.created events, and each reaches the endpoint exactly once (counted by webhook-id at the receiver).
const LEADS = 1000
const PARALLEL = 16

t.test('1,000 leads over two processes: each event reaches the endpoint once', async (t) => {
  const dbEnv = await testDatabase(t)
  const env = { ...dbEnv, STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true', STUDIO_RATE_LIMIT: '1000000', LOG_LEVEL: 'debug' }
  const servers = [await spawnServer(t, env), await spawnServer(t, env)]
  const { sql } = await openTestDatabase(t, dbEnv)
  const key = await issueKey(sql, { email: 'both@example.com' })
  const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
    select account_id from users where email = 'both@example.com'`
  const r = await receiver(t)
  await addEndpoint(sql, { accountId, url: r.url }, true)

  const statuses: number[] = []
  let next = 0
  const post = async () => {
    for (let i = next++; i < LEADS; i = next++) {
      const res = await fetch(`${servers[i % 2].url}/api/v1/leads`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Lead ${i}`, email: `l${i}@example.com`, service: 'S', message: `#${i}` }),
      })
      statuses.push(res.status)
      await res.body?.cancel()
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, post))
  t.same(new Set(statuses), new Set([201]), 'every lead taken')
  t.equal(statuses.length, LEADS)

  await eventually(() => r.got.length >= LEADS, { what: `${LEADS} deliveries`, timeout: 60_000 })
  await eventually(
    async () =>
      (await sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where state = 'pending'`)[0].n ===
      0,
    { what: 'every delivery marked' }
  )
  const ids = r.got.map((g) => g.headers['webhook-id'])
  t.equal(new Set(ids).size, LEADS, 'every event arrived')
  t.equal(ids.length, LEADS, 'none twice')
  const messages = new Set(r.got.map((g) => JSON.parse(g.body).data.message))
  t.equal(messages.size, LEADS, 'each lead’s own event')
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from webhook_attempts`
  t.equal(n, LEADS, 'one attempt each')
  t.ok(
    servers.every((s) => s.running()),
    'both processes ran throughout'
  )
  // Each process logs its attempts (the log is flushed a few ms after the line).
  const logged = () =>
    servers.map((s) => s.output().match(/"msg":"webhook attempt"[^\n]*"outcome":"delivered"/g)?.length ?? 0)
  const delivered = await eventually(() => logged()[0] + logged()[1] === LEADS && logged(), { what: 'logged' })
  t.comment(`delivered by each process: ${delivered.join(' + ')}`)
  t.ok(delivered[0] > 0 && delivered[1] > 0, 'both processes delivered')
})
