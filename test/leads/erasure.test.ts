import t from 'tap'
import { cliOn } from '../support/cli.js'
import { eventually } from '../support/eventually.js'
import { leadPlaces, leadPoster } from '../support/lead-places.js'
import { whereFound as scan } from '../support/scan.js'
import { startTestServer } from '../support/server.js'
import { smtpServer } from '../support/smtp.js'

// Erasure (issue 47) where it matters: a person's leads, announced to webhook receivers that echo what they get (one
// answering 200, one 500 so its deliveries stay pending) and mailed through a real SMTP server (one recipient
// refused, so that mail stays pending, as does the mail of one lead's assignment to them), erased with the CLI; then
// every text and JSON column of every table is searched for the person's email, name and message, and the other
// person's lead and events are as they were.
const smtp = await smtpServer(t, (to) => (to.startsWith('slow') ? { code: 451, message: 'try later' } : null))
const s = await startTestServer(
  t,
  { STUDIO_SMTP_URL: smtp.url, STUDIO_MAIL_FROM: 'Studio <studio@example.com>', STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' },
  { webhooks: { pollMs: 20, random: () => 0.5 } }
)
const { sql } = s.db
const cli = cliOn(s.dbEnv)
const OWNER = 'owner@example.com'
const key = await s.key({ email: OWNER })
const [{ accountId }] = await sql<{ accountId: string }[]>`
  select account_id as "accountId" from api_keys where prefix = ${key.split('_')[1]}`
const { echo } = await leadPlaces(t, sql, accountId)

const PERSON = {
  name: 'Wilhelmina Quarrendale',
  email: 'wilhelmina.q@example.org',
  message: 'Please call about the walled garden at 7 Larkspur Row',
}
const OTHER = { name: 'Bo Other', email: 'bo@example.org', message: 'A message that stays' }
const post = leadPoster(s, key)
const first = await post(
  { ...PERSON, company: 'Quarrendale Ltd', fields: { garden: 'walled' } },
  { 'idempotency-key': 'erase-me' }
)
const second = await post({ ...PERSON, email: PERSON.email.toUpperCase() })
const other = await post(OTHER)
const note = await s.fetch(`/api/v1/leads/${first}/notes`, {
  method: 'POST',
  key,
  json: { text: `${PERSON.name} wants a call` },
})
if (note.status !== 201) throw new Error(`a note: ${note.status}`)
// Given to the refusing recipient: the assignee's mail stays pending too.
const patched = await s.fetch(`/api/v1/leads/${second}`, {
  method: 'PATCH',
  key,
  json: { status: 'contacted', assignee: 'slow@example.com' },
})
if (patched.status !== 200) throw new Error(`PATCH: ${patched.status}`)

const attempts = (id: string) => sql<{ n: number }[]>`
  select count(*)::int as n from webhook_attempts a join events e on e.id = a.event_id
  where e.body::jsonb -> 'data' ->> 'id' = ${id}`
const mailAttempts = (id: string) => sql<{ n: number }[]>`
  select count(*)::int as n from mail_attempts a join mail_deliveries m on m.id = a.delivery_id
  join events e on e.id = m.event_id where e.body::jsonb -> 'data' ->> 'id' = ${id}`
for (const id of [first, second, other]) {
  await eventually(() => echo.got.some((g) => g.body.includes(id)), { what: `${id} at the echoing receiver` })
  await eventually(async () => (await attempts(id))[0].n >= 2, { what: `${id}'s failed attempt logged` })
  await eventually(async () => (await mailAttempts(id))[0].n >= 2, { what: `${id}'s two mails tried` })
}
await eventually(() => smtp.got.some((m) => m.text.includes(PERSON.message)), { what: 'the lead mailed' })
const assignedMail = () => sql<{ state: string; attempts: number }[]>`
  select state, attempts from mail_deliveries where kind = 'assigned'`
await eventually(async () => (await assignedMail())[0]?.attempts >= 1, { what: "the assignee's mail tried" })

const otherBefore = await (await s.fetch(`/api/v1/leads/${other}`, { key })).json()
const otherEvents = () => sql`
  select id, body from events where body::jsonb -> 'data' ->> 'id' = ${other} order by id`
const otherEventsBefore = await otherEvents()

const whereFound = (needle: string) => scan(sql, needle)

t.test('the scan finds the person before the erasure (it can see them)', async (t) => {
  t.ok((await whereFound(PERSON.email)).includes('leads.email'))
  t.ok((await whereFound(PERSON.message)).includes('events.body'))
  t.ok((await whereFound(PERSON.message)).includes('webhook_attempts.answer'), 'the echo in the delivery log')
  t.ok((await whereFound(PERSON.name)).includes('lead_notes.text'))
})

t.test('studio leads erase --email: the person is nowhere, the other lead untouched', async (t) => {
  const r = await cli(['leads', 'erase', '--account-email', OWNER, '--email', 'Wilhelmina.Q@EXAMPLE.org'])
  t.equal(r.code, 0, r.err.join('\n'))
  t.same(r.out, ['2 leads from Wilhelmina.Q@EXAMPLE.org erased'])
  for (const needle of [PERSON.email, PERSON.name, PERSON.message, 'Quarrendale'])
    t.same(await whereFound(needle), [], `"${needle}" is in no column`)

  for (const id of [first, second])
    t.equal((await s.fetch(`/api/v1/leads/${id}`, { key })).status, 404, 'the lead is gone')
  const tombstones = await sql<{ type: string; body: string }[]>`
    select type, body from events where body::jsonb -> 'data' ->> 'id' in (${first}, ${second}) order by created_at`
  const bodies = (rows: string[][]) => rows.map((r) => JSON.stringify(r)).sort()
  t.same(
    bodies(tombstones.filter((e) => e.type !== 'lead.erased').map((e) => [e.type, JSON.parse(e.body).data])),
    bodies([
      ['lead.created', { id: first, erased: true }],
      ['lead.created', { id: second, erased: true }],
      ['lead.updated', { id: second, erased: true }],
    ] as never),
    'its events are tombstones'
  )
  t.same(
    tombstones
      .filter((e) => e.type === 'lead.erased')
      .map((e) => JSON.parse(e.body).data.id)
      .sort(),
    [first, second].sort(),
    'a lead.erased event each, the id alone'
  )
  const pending = await sql`
    select d.state from webhook_deliveries d join events e on e.id = d.event_id
    where e.type <> 'lead.erased' and e.body::jsonb -> 'data' ->> 'id' in (${first}, ${second}) and d.state = 'pending'
    union all
    select m.state from mail_deliveries m join events e on e.id = m.event_id
    where e.body::jsonb -> 'data' ->> 'id' in (${first}, ${second}) and m.state = 'pending'`
  t.same(pending, [], 'nothing of theirs is left to send')
  const cancelled = await sql<{ n: number }[]>`
    select count(*)::int as n from mail_deliveries m join events e on e.id = m.event_id
    where e.body::jsonb -> 'data' ->> 'id' in (${first}, ${second}) and m.state = 'cancelled'`
  t.equal(cancelled[0].n, 3, "the refused recipient's mails are cancelled: two leads', one assignee's")
  t.match(await assignedMail(), [{ state: 'cancelled' }], "the assignee's mail with them")
  const audit = await sql`select action, actor_kind, after from audit_log where action = 'lead.erased'`
  t.match(audit, [{ action: 'lead.erased', actor_kind: 'cli', after: { count: 2 } }])
  t.same([...(audit[0].after as { ids: string[] }).ids].sort(), [first, second].sort(), 'the audit names the ids')
  await eventually(() => echo.got.filter((g) => g.body.includes('"lead.erased"')).length === 2, {
    what: 'lead.erased at the receiver',
  })

  t.same(await (await s.fetch(`/api/v1/leads/${other}`, { key })).json(), otherBefore, 'the other lead is as it was')
  t.same(await otherEvents(), otherEventsBefore, 'and its events')
  t.ok((await whereFound(OTHER.message)).includes('webhook_attempts.answer'), 'and its delivery log')

  const again = await s.fetch('/api/v1/leads', {
    method: 'POST',
    key,
    headers: { 'idempotency-key': 'erase-me' },
    json: { service: 'web', ...PERSON, company: 'Quarrendale Ltd', fields: { garden: 'walled' } },
  })
  t.equal(again.status, 201)
  t.not(again.headers.get('idempotent-replayed'), 'true', 'the replay went with the lead')
  t.not(((await again.json()) as { id: string }).id, first)
})

t.test('studio leads erase ID, and its bad arguments', async (t) => {
  const id = await post({ ...OTHER, email: 'cli@example.org' })
  t.same((await cli(['leads', 'erase', id])).out, [`lead ${id} erased`])
  const unknown = await cli(['leads', 'erase', id])
  t.equal(unknown.code, 1)
  t.match(unknown.err.join('\n'), `no lead ${id}`)
  for (const args of [[], ['not-an-id'], [id, '--email', 'a@example.org'], ['--email', 'a@example.org']])
    t.equal((await cli(['leads', 'erase', ...args])).code, 2, JSON.stringify(args))
  t.equal((await cli(['leads', 'erase', '--account-email', 'nobody@example.org', '--email', 'a@b.org'])).code, 1)
})

t.test('DELETE /api/v1/leads/{id}: 204, then gone', async (t) => {
  const id = await post({ ...OTHER, email: 'api@example.org' })
  const r = await s.fetch(`/api/v1/leads/${id}`, { method: 'DELETE', key })
  t.equal(r.status, 204)
  t.equal(await r.text(), '')
  t.equal((await s.fetch(`/api/v1/leads/${id}`, { key })).status, 404)
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from audit_log
    where action = 'lead.erased' and target = ${id} and actor_kind = 'key'`
  t.equal(n, 1, 'an audit entry naming the key')
  await eventually(() => echo.got.some((g) => g.body.includes('"lead.erased"') && g.body.includes(id)), {
    what: 'lead.erased at the receiver',
  })
})

t.test('DELETE errors: unknown, twice, another account’s, not an id', async (t) => {
  const id = await post({ ...OTHER, email: 'twice@example.org' })
  const del = (path: string, k = key) => s.fetch(`/api/v1/leads/${path}`, { method: 'DELETE', key: k })
  const stranger = await s.key({ email: 'stranger@example.com' })
  const foreign = await del(id, stranger)
  t.equal(foreign.status, 404, "another account's lead is not found")
  t.equal(((await foreign.json()) as any).error.code, 'not_found')
  t.equal((await del(id)).status, 204)
  t.equal((await del(id)).status, 404, 'erased once')
  t.equal((await del('00000000-0000-4000-8000-000000000000')).status, 404)
  t.equal((await del('nope')).status, 404)
})

t.test('DELETE needs leads:manage', async (t) => {
  const id = await post({ ...OTHER, email: 'scoped@example.org' })
  const reader = await s.key({ email: OWNER, scopes: ['leads:read', 'leads:write'] })
  const r = await s.fetch(`/api/v1/leads/${id}`, { method: 'DELETE', key: reader })
  t.equal(r.status, 403)
  t.same(((await r.json()) as any).error.details, { required_scope: 'leads:manage' })
  t.equal((await s.fetch(`/api/v1/leads/${id}`, { method: 'DELETE' })).status, 401, 'no key')
  t.equal((await s.fetch(`/api/v1/leads/${id}`, { key })).status, 200, 'still there')
})
