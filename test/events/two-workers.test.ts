import t from 'tap'
import { addEndpoint } from '../../src/events/endpoints.js'
import { recordEvent } from '../../src/events/outbox.js'
import { testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'
import { eventually } from '../support/eventually.js'
import { receiver } from '../support/receiver.js'

// Two servers (each with its delivery worker) over one database: each event reaches the endpoint exactly once.
const dbEnv = await testDatabase(t)
const env = { STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' }
const one = await startTestServer(t, env, { dbEnv, webhooks: { pollMs: 5, concurrency: 4 } })
const two = await startTestServer(t, env, { dbEnv, webhooks: { pollMs: 5, concurrency: 4 } })
const { sql } = one.db
const EVENTS = 300

t.test('many events over two workers: each delivered once', async (t) => {
  const r = await receiver(t)
  await one.key({ email: 'both@example.com' })
  const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
    select account_id from users where email = 'both@example.com'`
  await addEndpoint(sql, { accountId, url: r.url }, true)
  const data = { prefix: 'p', name: null, who: null }
  for (let i = 0; i < EVENTS; i += 50) {
    await sql.begin(async (tx) => {
      for (let j = i; j < i + 50; j++)
        await recordEvent(
          tx as never,
          accountId,
          { type: 'key.created', data: { ...data, prefix: `p${j}` } },
          new Date()
        )
    })
  }
  await eventually(
    async () => {
      const [{ n }] = await sql<
        { n: number }[]
      >`select count(*)::int as n from webhook_deliveries where state = 'pending'`
      return n === 0
    },
    { what: 'every delivery made', timeout: 60_000 }
  )
  const ids = r.got.map((g) => g.headers['webhook-id'])
  t.equal(new Set(ids).size, EVENTS, 'every event arrived')
  t.equal(ids.length, EVENTS, 'none twice')
  const byProcess = await sql<{ n: number }[]>`select count(*)::int as n from webhook_attempts`
  t.equal(byProcess[0].n, EVENTS, 'one attempt each')
  t.ok(two)
})
