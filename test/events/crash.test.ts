import type { ServerResponse } from 'node:http'
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { addEndpoint } from '../../src/events/endpoints.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { spawnServer } from '../support/processes.js'
import { receiver } from '../support/receiver.js'
import { issueKey } from '../support/server.js'

// A 201 for a lead means its event will be delivered, across a kill -9: the service runs as its own process, takes a
// lead, starts posting its event (the receiver holds that first attempt unanswered, so it is not delivered) and is
// killed with SIGKILL. Restarted, it takes up the dead process's claim once its lease ends (the attempt's timeout +
// 10 s) and the event arrives, signed, with the same webhook-id, exactly the lead. Over the database the run uses
// (DATABASE_URL, or the embedded one, which the killed process owned and the restarted one recovers).

const TIMEOUT_MS = 3000
const lead = {
  name: 'Grace <Hopper> & co',
  email: 'grace@example.com',
  service: 'Compilers',
  message: 'Ship it',
  company: 'Navy',
  utm: { source: 'ads', campaign: 'kill-9' },
}

t.test('killed with SIGKILL after the 201, before the delivery: delivered after a restart', async (t) => {
  const dbEnv = await testDatabase(t)
  const env = { ...dbEnv, STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true', STUDIO_WEBHOOKS_TIMEOUT_MS: String(TIMEOUT_MS) }
  const first = await spawnServer(t, env)
  // The test's own connection: through the killed process's socket for the embedded database, so it is opened after
  // that process and used again only once the restarted one serves the database.
  const { sql } = await openTestDatabase(t, dbEnv)
  const key = await issueKey(sql, { email: 'kill@example.com' })
  const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
    select account_id from users where email = 'kill@example.com'`
  const held: ServerResponse[] = []
  const r = await receiver(t, (_, res, n) => (n === 1 ? held.push(res) : res.end('ok')))
  const { secret } = await addEndpoint(sql, { accountId, url: r.url, events: ['lead.created'] }, true)

  const res = await fetch(`${first.url}/api/v1/leads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(lead),
  })
  t.equal(res.status, 201)
  const created = (await res.json()) as { id: string; createdAt: string }
  await eventually(() => held.length === 1, { what: 'the first attempt, held unanswered' })
  t.equal(await first.stop('SIGKILL'), null, 'killed, not exited')

  const second = await spawnServer(t, env)
  await eventually(() => r.got.length === 2, { what: 'the delivery after the restart', timeout: 30_000 })
  const [attempt, delivery] = r.got
  const event = new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>) as {
    type: string
    data: unknown
  }
  t.equal(event.type, 'lead.created')
  t.same(event.data, { ...lead, id: created.id, createdAt: created.createdAt, keyPrefix: key.split('_')[1] })
  t.equal(delivery.headers['webhook-id'], attempt.headers['webhook-id'], 'the same webhook-id as the cut attempt')
  t.equal(delivery.body, attempt.body, 'the same body')
  await eventually(
    async () => (await sql<{ state: string }[]>`select state from webhook_deliveries`)[0]?.state === 'delivered',
    { what: 'marked delivered' }
  )
  const rows = await sql<{ id: string; status: number }[]>`select event_id as id, status from webhook_attempt_log`
  t.same(rows, [{ id: delivery.headers['webhook-id'], status: 200 }], 'one attempt logged: the killed one logged none')
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from events where type = 'lead.created'`
  t.equal(n, 1, 'one lead.created event: none lost, none made up')
  t.notOk(
    [first, second].some((p) => p.output().includes(secret)),
    'the signing secret in neither log'
  )
})

// Leads by group commit: a 201 is sent once the commit that holds its lead has returned. Twenty clients post leads
// without pause; the service is killed with SIGKILL among them, batches in flight. Restarted (the embedded database
// recovers in it), every lead answered 201 is stored, with its event.
t.test('killed with SIGKILL among concurrent leads: every lead answered 201 is stored', async (t) => {
  const dbEnv = await testDatabase(t)
  const first = await spawnServer(t, { ...dbEnv, STUDIO_RATE_LIMIT: '1000000' })
  const { sql } = await openTestDatabase(t, dbEnv)
  const key = await issueKey(sql, { email: 'kill-leads@example.com' })
  const acknowledged: string[] = []
  let answered = 0
  async function client() {
    for (;;) {
      try {
        const res = await fetch(`${first.url}/api/v1/leads`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ...lead, message: `lead ${answered}` }),
        })
        const body = (await res.json()) as { id: string }
        answered++
        if (res.status === 201) acknowledged.push(body.id)
      } catch {
        return // the process is gone
      }
    }
  }
  const clients = Array.from({ length: 20 }, client)
  await eventually(() => acknowledged.length >= 200, { what: '200 leads answered', timeout: 60_000 })
  t.equal(await first.stop('SIGKILL'), null, 'killed, not exited')
  await Promise.all(clients)
  t.equal(answered, acknowledged.length, 'every answer a 201')

  await spawnServer(t, dbEnv)
  const [{ leads, events }] = await sql<{ leads: number; events: number }[]>`
    select count(*)::int as leads,
           (select count(*)::int from events where body::json->'data'->>'id' = any(${acknowledged})) as events
    from leads where id = any(${acknowledged}::uuid[])`
  t.equal(leads, acknowledged.length, `all ${acknowledged.length} leads answered 201 stored`)
  t.equal(events, acknowledged.length, 'each with its event')
})
