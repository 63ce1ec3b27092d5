import t from 'tap'
import { addEndpoint, listEndpoints } from '../../src/events/endpoints.js'
import { sendTest } from '../../src/events/manual.js'
import { recordEvent } from '../../src/outbox/event.js'
import { eventually } from '../support/eventually.js'
import { receiver } from '../support/receiver.js'
import { startTestServer } from '../support/server.js'

// A Slack-compatible endpoint (kind 'slack', an incoming-webhook URL): a lead arrives as `{"text": …}`, what the lead
// typed escaped by Slack's rules; it gets lead.created only, with the same retries and address rules as any endpoint.
const s = await startTestServer(t, { STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' }, { webhooks: { pollMs: 20 } })
const { sql } = s.db
const key = await s.key({ email: 'sales@example.com' })
const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
  select account_id from users where email = 'sales@example.com'`
const postLead = (lead: Record<string, unknown>) => s.fetch('/api/v1/leads', { method: 'POST', key, json: lead })
const deliveries = (endpointId: string) =>
  sql<{ state: string; attempts: number }[]>`
    select state, attempts from webhook_deliveries where endpoint_id = ${endpointId}`

t.test('a lead reaches a Slack endpoint as a short message, escaped', async (t) => {
  const r = await receiver(t)
  const e = await addEndpoint(sql, { accountId, url: r.url, kind: 'slack' }, true)
  const lead = {
    name: 'Ada <!channel> & co',
    email: 'ada@example.com',
    service: 'Engines',
    message: 'Call me <https://evil.example|here>\nTomorrow > today',
    company: 'Analytical <Engines>',
  }
  t.equal((await postLead(lead)).status, 201)
  await eventually(() => r.got.length === 1, { what: 'the Slack message' })
  const [got] = r.got
  t.equal(got.headers['content-type'], 'application/json')
  t.same(JSON.parse(got.body), {
    text:
      '*New lead:* Ada &lt;!channel&gt; &amp; co (ada@example.com), Analytical &lt;Engines&gt;\n' +
      '> Call me &lt;https://evil.example|here&gt;\n> Tomorrow &gt; today',
  })
  t.same((await listEndpoints(sql, accountId)).find((x) => x.id === e.id)?.events, ['lead.created'])
  const other = { name: 'Bo', email: 'bo@example.com', service: 'S', message: 'x'.repeat(2000) }
  t.equal((await postLead(other)).status, 201)
  await eventually(() => r.got.length === 2, { what: 'the second message' })
  t.same(JSON.parse(r.got[1].body), { text: `*New lead:* Bo (bo@example.com)\n> ${'x'.repeat(500)}…` }, 'cut short')
  t.ok(await sendTest(sql, accountId, e.id, 'sales@example.com', new Date()))
  await eventually(() => r.got.length === 3, { what: 'the test message' })
  t.same(JSON.parse(r.got[2].body), { text: 'A test message from Studio: new leads will show here.' })
})

t.test('a Slack endpoint gets no other event; a failed message is retried like any delivery', async (t) => {
  let n = 0
  const r = await receiver(t, (_, res) => res.writeHead(++n === 1 ? 500 : 200).end())
  const e = await addEndpoint(sql, { accountId, url: r.url, kind: 'slack', events: ['lead.created'] }, true)
  await sql.begin((tx) =>
    recordEvent(
      tx as never,
      accountId,
      { type: 'key.created', data: { prefix: 'p', name: null, who: null } },
      new Date()
    )
  )
  t.same(await deliveries(e.id), [], 'key.created is not for a Slack endpoint')
  t.equal((await postLead({ name: 'Cy', email: 'cy@example.com', service: 'S', message: 'hi' })).status, 201)
  await eventually(async () => (await deliveries(e.id))[0]?.attempts === 1, { what: 'the first attempt' })
  t.same(await deliveries(e.id), [{ state: 'pending', attempts: 1 }], 'failed once: to be retried')
})

t.test('a Slack endpoint takes lead.created only; a kind is standard or slack', async (t) => {
  const url = 'http://127.0.0.1:9/slack'
  await t.rejects(addEndpoint(sql, { accountId, url, kind: 'slack', events: ['key.created'] }, true), {
    code: 'invalid_request',
    message: 'a slack endpoint receives lead.created only',
  })
  await t.rejects(addEndpoint(sql, { accountId, url, kind: 'slack', events: ['lead.created', 'key.revoked'] }, true), {
    message: /lead.created only/,
  })
  await t.rejects(addEndpoint(sql, { accountId, url, kind: 'teams' }, true), {
    message: 'the kind is standard or slack',
  })
  await t.rejects(addEndpoint(sql, { accountId, url: 'https://127.0.0.1/slack', kind: 'slack' }, false), {
    message: /loopback, private/,
  })
  const standard = await addEndpoint(sql, { accountId, url }, true)
  t.equal((await listEndpoints(sql, accountId)).find((x) => x.id === standard.id)?.kind, 'standard', 'the default')
  await t.rejects(sql`update webhook_endpoints set kind = 'slack' where id = ${standard.id}`, /slack_leads/)
})
