import t from 'tap'
import { pruneSpam } from '../../src/leads/spam.js'
import { signInWithLink, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { resolve } from '../support/json-schema.js'
import { startTestServer } from '../support/server.js'

// The honeypot: a lead whose `website` field is filled is answered 201 as any other, but kept as spam: out of the
// leads list and the CSV export, shown under the Spam filter, raising no event, and deleted after 30 days.
const dbEnv = await testDatabase(t)
const server = await startTestServer(t, {}, { dbEnv })
const { sql } = server.db
const env = { STUDIO_PUBLIC_URL: server.url }
const owner = await signInWithLink(server.url, await signinLink(dbEnv, env, ['--email', 'spam@example.com']))
const key = await server.key({ email: 'spam@example.com' })
const lead = (name: string, extra: Record<string, unknown> = {}) =>
  server.fetch('/api/v1/leads', {
    method: 'POST',
    key,
    json: { name, email: 'a@example.com', service: 'web', message: 'hello', ...extra },
  })
const events = async () => (await sql<{ n: number }[]>`select count(*)::int as n from events`)[0].n

t.test('a filled honeypot: 201 as usual, stored as spam, no event', async (t) => {
  const before = await events()
  const res = await lead('Bot Spammer', { website: 'http://spam.example' })
  t.equal(res.status, 201)
  const { id } = (await res.json()) as { id: string }
  const [row] = await sql<{ spam: boolean }[]>`select spam from leads where id = ${id}`
  t.equal(row.spam, true)
  t.equal(await events(), before, 'no lead.created event, so no webhook and no mail')
})

t.test('an empty honeypot is a lead like any other, and its event has no website field', async (t) => {
  const res = await lead('Real Person', { website: '' })
  t.equal(res.status, 201)
  const { id } = (await res.json()) as { id: string }
  const [row] = await sql<{ spam: boolean }[]>`select spam from leads where id = ${id}`
  t.equal(row.spam, false)
  const [event] = await sql<{ body: string }[]>`
    select body from events where type = 'lead.created' and body::jsonb->'data'->>'id' = ${id}`
  t.ok(event, 'its event')
  t.notOk('website' in JSON.parse(event.body).data)
})

t.test('the honeypot is validated like any field', async (t) => {
  const res = await lead('Too Long', { website: 'x'.repeat(2001) })
  t.equal(res.status, 422)
  t.match(await res.json(), { error: { code: 'invalid_request', details: { issues: [{ path: 'website' }] } } })
  const nul = await lead('Nul', { website: 'a\u0000b' })
  t.equal(nul.status, 422)
})

t.test('the leads list and CSV leave spam out; the Spam filter shows only spam', async (t) => {
  const list = await owner.get('/dashboard/leads')
  t.match(list.text, 'Real Person')
  t.notMatch(list.text, 'Bot Spammer')
  const csv = await owner.get('/dashboard/leads.csv')
  t.match(csv.text, 'Real Person')
  t.notMatch(csv.text, 'Bot Spammer')
  const spam = await owner.get('/dashboard/leads?show=spam')
  t.match(spam.text, 'Bot Spammer')
  t.notMatch(spam.text, 'Real Person')
  t.match(spam.text, /<option value="spam" selected>/)
  const spamCsv = await owner.get('/dashboard/leads.csv?show=spam')
  t.match(spamCsv.text, 'Bot Spammer')
  const id = /href="\/dashboard\/leads\/([\w-]{36})"/.exec(spam.text)?.[1]
  t.match((await owner.get(`/dashboard/leads/${id}`)).text, 'spam</span>')
})

t.test('the OpenAPI document shows the honeypot as an optional LeadInput field', async (t) => {
  const doc = (await (await server.fetch('/api/v1/openapi.json', { key })).json()) as any
  const input = doc.components.schemas.LeadInput
  t.ok(input.properties.website, 'website is documented')
  t.notOk(input.required.includes('website'), 'and optional')
  t.match(input.properties.website.description, /Honeypot/)
  const ref = doc.webhooks['lead.created'].post.requestBody.content['application/json'].schema.$ref
  const envelope = resolve(doc, ref) as any
  const data = envelope.properties.data.$ref ? resolve(doc, envelope.properties.data.$ref) : envelope.properties.data
  t.ok(JSON.stringify(data).includes('keyPrefix'), 'the lead.created data schema')
  t.notOk(JSON.stringify(data).includes('website'), 'the event carries no honeypot')
})

t.test('spam is deleted after 30 days, in batches; other leads and newer spam stay', async (t) => {
  const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
    select account_id from users where email = 'spam@example.com'`
  await sql`insert into leads (account_id, key_prefix, name, email, service, message, spam, created_at)
    select ${accountId}, 'x', 'old spam ' || i, 'a@example.com', 'web', 'm', true, now() - interval '31 days'
    from generate_series(1, 1500) i`
  await sql`insert into leads (account_id, key_prefix, name, email, service, message, spam, created_at)
    values (${accountId}, 'x', 'old lead', 'a@example.com', 'web', 'm', false, now() - interval '90 days'),
           (${accountId}, 'x', 'young spam', 'a@example.com', 'web', 'm', true, now() - interval '29 days')`
  t.equal(await pruneSpam(sql, new Date()), 1500)
  const names = await sql<{ name: string }[]>`select name from leads where name in ('old lead', 'young spam')`
  t.same(names.map((r) => r.name).sort(), ['old lead', 'young spam'])
  t.equal(await pruneSpam(sql, new Date()), 0)
})
