import t from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { addEndpoint } from '../../src/events/endpoints.js'
import { WAKE_CHANNEL } from '../../src/outbox/event.js'
import { eventually } from '../support/eventually.js'
import { receiver } from '../support/receiver.js'
import { startTestServer } from '../support/server.js'

// A lead's event wakes the delivery worker of the process that stored it, after the commit, with no NOTIFY in the
// lead's transaction; an event written elsewhere (here, as the CLI writes a key change) still wakes the workers by
// NOTIFY. The worker's poll is an hour: only a wake can deliver within the test.
const s = await startTestServer(t, { STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' }, { webhooks: { pollMs: 3_600_000 } })
const { sql } = s.db
const key = await s.key({ email: 'wake@example.com' })
const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
  select account_id from users where email = 'wake@example.com'`
const lead = { name: 'Ada', email: 'ada@example.com', service: 'Engines', message: 'Call me' }

t.test("a lead's event is delivered at once, woken in the process that stored it", async (t) => {
  const r = await receiver(t)
  await addEndpoint(sql, { accountId, url: r.url, events: ['lead.created', 'key.created'] }, true)
  t.equal((await s.fetch('/api/v1/leads', { method: 'POST', key, json: lead })).status, 201)
  await eventually(() => r.got.length === 1, { what: "the lead's event" })
  t.equal(JSON.parse(r.got[0].body).type, 'lead.created')
  const delivered = async () => (await sql`select 1 from webhook_deliveries where state = 'delivered'`).length === 1
  await eventually(delivered, { what: 'the delivery written' })
  await sql`delete from webhook_endpoints`
})

// The embedded database passes no NOTIFY between connections (its workers find such events at their poll).
const external = Boolean(process.env.DATABASE_URL)
t.test('no NOTIFY for a lead; one for a key change, which wakes the worker', { skip: !external }, async (t) => {
  const notified: string[] = []
  const listening = await s.db.raw.listen(WAKE_CHANNEL, (payload) => notified.push(payload))
  const r = await receiver(t)
  await addEndpoint(sql, { accountId, url: r.url, events: ['lead.created', 'key.created'] }, true)
  t.equal((await s.fetch('/api/v1/leads', { method: 'POST', key, json: lead })).status, 201)
  await eventually(() => r.got.length === 1, { what: "the lead's event" })
  await createKey(sql, { email: 'wake@example.com' })
  await eventually(() => r.got.length === 2, { what: "the key change's event" })
  t.equal(JSON.parse(r.got[1].body).type, 'key.created')
  // Notifications arrive in commit order: once the key change's has come, the lead's would have come before it.
  await eventually(() => notified.length > 0, { what: "the key change's NOTIFY" })
  t.equal(notified.length, 1, "one NOTIFY, the key change's")
  await listening.unlisten()
})
