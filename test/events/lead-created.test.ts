import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { addEndpoint } from '../../src/events/endpoints.js'
import { eventually } from '../support/eventually.js'
import { conforms, resolve } from '../support/json-schema.js'
import { receiver } from '../support/receiver.js'
import { startTestServer } from '../support/server.js'

// POST /api/v1/leads → lead.created, written with the lead and delivered signed to the account's endpoint.
const s = await startTestServer(t, { STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' }, { webhooks: { pollMs: 20 } })
const { sql } = s.db
const key = await s.key({ email: 'leads-hooks@example.com' })
const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
  select account_id from users where email = 'leads-hooks@example.com'`
const doc = (await (await s.fetch('/api/v1/openapi.json', { key })).json()) as any

const lead = {
  name: 'Ada <b>Lovelace</b>',
  email: 'ada@example.com',
  service: 'Engines',
  message: 'Call me',
  phone: '+44 20',
  company: 'Analytical',
  budget: '1000',
  locale: 'en-GB',
  source: 'form',
  utm: { source: 'news', medium: 'email', campaign: 'spring' },
  fields: { 'team size': '12', Referral: 'a friend' },
}

t.test("a lead's event arrives signed, complete and as the document describes it", async (t) => {
  const r = await receiver(t)
  const { secret } = await addEndpoint(sql, { accountId, url: r.url, events: ['lead.created'] }, true)
  const res = await s.fetch('/api/v1/leads', { method: 'POST', key, json: lead })
  t.equal(res.status, 201)
  const created = (await res.json()) as { id: string; createdAt: string }
  await eventually(() => r.got.length === 1, { what: 'the delivery' })
  const [got] = r.got
  const event = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as Record<string, any>
  t.equal(event.type, 'lead.created')
  t.same(event.data, { ...lead, id: created.id, createdAt: created.createdAt, keyPrefix: key.split('_')[1] })
  const schema = resolve(doc, doc.webhooks['lead.created'].post.requestBody.content['application/json'].schema.$ref)
  t.same(conforms(event, schema, doc), [], 'the payload conforms to the webhooks map')
  t.equal(got.headers['webhook-id'], (await sql`select id from events where type = 'lead.created'`)[0].id)
})

t.test('an Idempotency-Key replay makes no second event', async (t) => {
  const headers = { 'idempotency-key': 'once' }
  t.equal((await s.fetch('/api/v1/leads', { method: 'POST', key, json: lead, headers })).status, 201)
  const replay = await s.fetch('/api/v1/leads', { method: 'POST', key, json: lead, headers })
  t.equal(replay.headers.get('idempotent-replayed'), 'true')
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from events where type = 'lead.created'`
  t.equal(n, 2, 'the first test’s lead and this one')
})
