import t from 'tap'
import { addEndpoint } from '../../src/events/endpoints.js'
import { recordEvent } from '../../src/outbox/event.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { spawnServer } from '../support/processes.js'
import { receiver } from '../support/receiver.js'
import { issueKey } from '../support/server.js'

// Two service processes over one database, each with its delivery worker: 1,000 leads POSTed over both make 1,000
// lead.created events, and 500 more events written straight to the outbox (no process is woken for them: both
// workers' polls compete for them); each reaches the endpoint exactly once (counted by webhook-id at the receiver,
// once both processes have stopped).
const LEADS = 1000
const WRITTEN = 500
const TOTAL = LEADS + WRITTEN
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
  const { secret } = await addEndpoint(sql, { accountId, url: r.url }, true)

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

  await sql.begin(async (tx) => {
    for (let i = 0; i < WRITTEN; i++)
      await recordEvent(
        tx as never,
        accountId,
        { type: 'key.created', data: { prefix: `w${i}`, name: null, who: null } },
        new Date()
      )
  })

  await eventually(() => r.got.length >= TOTAL, { what: `${TOTAL} deliveries`, timeout: 60_000 })
  await eventually(
    async () =>
      (await sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where state = 'pending'`)[0].n ===
      0,
    { what: 'every delivery marked' }
  )
  t.ok(
    servers.every((s) => s.running()),
    'both processes ran throughout'
  )
  // Read before the stop: with the embedded database, the database lives in one of the processes.
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from webhook_attempt_log`
  t.equal(n, TOTAL, 'one attempt each')
  t.same(await Promise.all(servers.map((s) => s.stop())), [0, 0], 'both stopped cleanly')
  const ids = r.got.map((g) => g.headers['webhook-id'])
  t.equal(new Set(ids).size, TOTAL, 'every event arrived')
  t.equal(ids.length, TOTAL, 'none twice')
  const leads = r.got.map((g) => JSON.parse(g.body)).filter((e) => e.type === 'lead.created')
  t.equal(new Set(leads.map((e) => e.data.message)).size, LEADS, 'each lead’s own event')
  const delivered = servers.map(
    (s) => s.output().match(/"msg":"webhook attempt"[^\n]*"outcome":"delivered"/g)?.length ?? 0
  )
  t.comment(`delivered by each process: ${delivered.join(' + ')}`)
  t.equal(delivered[0] + delivered[1], TOTAL, 'each attempt logged by the process that made it')
  t.ok(delivered[0] > 0 && delivered[1] > 0, 'both processes delivered')
  t.notOk(
    servers.some((s) => s.output().includes(secret)),
    'the signing secret in neither log'
  )
})
