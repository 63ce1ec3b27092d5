import t from 'tap'
import { cliOn } from '../support/cli.js'
import { eventually } from '../support/eventually.js'
import { leadPlaces, leadPoster } from '../support/lead-places.js'
import { whereFound } from '../support/scan.js'
import { startTestServer } from '../support/server.js'
import { smtpServer } from '../support/smtp.js'

// Retention (issue 47) where it matters: an account keeps its leads 365 days; two leads of a person, 400 days old,
// announced to webhook receivers (one echoing, one failing so its deliveries stay pending) and mailed (one recipient
// refused, so that mail stays pending), and a fresh lead beside them. The delivery worker's hourly prune (its clock
// moved past the hour) erases exactly the old two as an erasure does: every text and JSON column of every table is
// searched for the person's email, name and message; the fresh lead, its events and another account's old lead are
// as they were.
const smtp = await smtpServer(t, (to) => (to.startsWith('slow') ? { code: 451, message: 'try later' } : null))
let ahead = 0
const s = await startTestServer(
  t,
  { STUDIO_SMTP_URL: smtp.url, STUDIO_MAIL_FROM: 'Studio <studio@example.com>', STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' },
  { webhooks: { pollMs: 20, random: () => 0.5 }, clock: () => Date.now() + ahead }
)
const { sql } = s.db
const cli = cliOn(s.dbEnv)
const OWNER = 'owner@example.com'
const key = await s.key({ email: OWNER })
const stranger = await s.key({ email: 'stranger@example.com' })
const accountOf = async (k: string) =>
  (await sql<{ id: string }[]>`select account_id as id from api_keys where prefix = ${k.split('_')[1]}`)[0].id
const accountId = await accountOf(key)
const { echo } = await leadPlaces(t, sql, accountId)

const PERSON = {
  name: 'Ottoline Farthingale',
  email: 'ottoline.f@example.org',
  message: 'About the orangery at 3 Quince Mews, please',
}
const FRESH = { name: 'Fay Fresh', email: 'fay@example.org', message: 'A recent message that stays' }
const post = leadPoster(s, key)
const postElsewhere = leadPoster(s, stranger)
const first = await post({ ...PERSON, fields: { room: 'orangery' } }, { 'idempotency-key': 'retain-me' })
const second = await post(PERSON)
const fresh = await post(FRESH)
const elsewhere = await postElsewhere({ name: 'Old Elsewhere', email: 'kept@example.org', message: 'Old, kept' })
const note = await s.fetch(`/api/v1/leads/${first}/notes`, {
  method: 'POST',
  key,
  json: { text: `${PERSON.name} rang` },
})
if (note.status !== 201) throw new Error(`a note: ${note.status}`)

const attempts = (id: string) => sql<{ n: number }[]>`
  select count(*)::int as n from webhook_attempts a join events e on e.id = a.event_id
  where e.body::jsonb -> 'data' ->> 'id' = ${id}`
for (const id of [first, second, fresh]) {
  await eventually(() => echo.got.some((g) => g.body.includes(id)), { what: `${id} at the echoing receiver` })
  await eventually(async () => (await attempts(id))[0].n >= 1, { what: `${id}'s failed attempt logged` })
}
await eventually(() => smtp.got.some((m) => m.text.includes(PERSON.message)), { what: 'the lead mailed' })
// The person's two leads and the other account's are 400 days old; the fresh one is new.
await sql`update leads set created_at = created_at - interval '400 days' where id in (${first}, ${second}, ${elsewhere})`

const freshBefore = await (await s.fetch(`/api/v1/leads/${fresh}`, { key })).json()
const freshEvents = () => sql`select id, body from events where body::jsonb -> 'data' ->> 'id' = ${fresh} order by id`
const freshEventsBefore = await freshEvents()
const leadIds = async () => (await sql<{ id: string }[]>`select id from leads order by id`).map((r) => r.id)

t.test('studio leads retention: bad arguments are one line and exit 2', async (t) => {
  for (const args of [
    [],
    ['--email', OWNER],
    ['--email', OWNER, '--days', '365', '--keep'],
    ['--email', OWNER, '--days', '0'],
    ['--email', OWNER, '--days', '-3'],
    ['--email', OWNER, '--days', '1.5'],
    ['--email', OWNER, '--days', 'year'],
    ['--email', OWNER, '--days', '36501'],
    ['--email', 'not-an-email', '--keep'],
  ]) {
    const r = await cli(['leads', 'retention', ...args])
    t.equal(r.code, 2, JSON.stringify(args))
    t.match(r.err[0], /\S/, 'a message first')
  }
  const unknown = await cli(['leads', 'retention', '--email', 'nobody@example.org', '--days', '30'])
  t.equal(unknown.code, 1)
  t.match(unknown.err.join('\n'), 'no user with email nobody@example.org')
  t.same((await sql`select lead_retention_days from accounts where lead_retention_days is not null`).length, 0)
})

t.test('the scan finds the person before the retention run', async (t) => {
  t.ok((await whereFound(sql, PERSON.email)).includes('leads.email'))
  t.ok((await whereFound(sql, PERSON.message)).includes('webhook_attempts.answer'), 'the echo in the delivery log')
  t.ok((await whereFound(sql, PERSON.name)).includes('lead_notes.text'))
})

t.test('a retention run erases exactly the leads past the limit', async (t) => {
  const set = await cli(['leads', 'retention', '--email', OWNER, '--days', '365'])
  t.equal(set.code, 0, set.err.join('\n'))
  t.same(set.out, [`account ${accountId} now erases leads older than 365 days`])
  t.equal((await leadIds()).length, 4, 'nothing erased before the prune')
  ahead = 2 * 3_600_000 // the worker's next round is past its hourly prune
  await eventually(async () => !(await leadIds()).includes(first) && !(await leadIds()).includes(second), {
    what: 'the old leads erased',
  })
  t.same(await leadIds(), [fresh, elsewhere].sort(), 'the fresh lead and the other account’s old lead stay')

  for (const needle of [PERSON.email, PERSON.name, PERSON.message, 'orangery'])
    t.same(await whereFound(sql, needle), [], `"${needle}" is in no column`)
  const notes = await sql`select 1 from lead_notes`
  t.same(notes, [], 'the notes went with the lead')

  const tombstones = await sql<{ type: string; body: string }[]>`
    select type, body from events where body::jsonb -> 'data' ->> 'id' in (${first}, ${second}) and type = 'lead.created'`
  t.same(
    tombstones.map((e) => JSON.parse(e.body).data).sort((a, b) => a.id.localeCompare(b.id)),
    [first, second].sort().map((id) => ({ id, erased: true })),
    'their lead.created events are tombstones'
  )
  const pending = await sql`
    select d.state from webhook_deliveries d join events e on e.id = d.event_id
    where e.type <> 'lead.erased' and e.body::jsonb -> 'data' ->> 'id' in (${first}, ${second}) and d.state = 'pending'
    union all
    select m.state from mail_deliveries m join events e on e.id = m.event_id
    where e.body::jsonb -> 'data' ->> 'id' in (${first}, ${second}) and m.state = 'pending'`
  t.same(pending, [], 'nothing of theirs is left to send')
  const audit = await sql<{ actor_kind: string; actor: string; after: { ids: string[]; count: number } }[]>`
    select actor_kind, actor, after from audit_log where action = 'lead.erased'`
  t.match(audit, [{ actor_kind: 'system', actor: 'retention', after: { count: 2, retention_days: 365 } }])
  t.same([...audit[0].after.ids].sort(), [first, second].sort(), 'one audit entry naming the ids')
  await eventually(() => echo.got.filter((g) => g.body.includes('"lead.erased"')).length === 2, {
    what: 'lead.erased at the receiver',
  })

  t.same(await (await s.fetch(`/api/v1/leads/${fresh}`, { key })).json(), freshBefore, 'the fresh lead is as it was')
  t.same(await freshEvents(), freshEventsBefore, 'and its events')
  t.equal((await s.fetch(`/api/v1/leads/${elsewhere}`, { key: stranger })).status, 200, 'another account keeps its')

  const again = await s.fetch('/api/v1/leads', {
    method: 'POST',
    key,
    headers: { 'idempotency-key': 'retain-me' },
    json: { service: 'web', ...PERSON, fields: { room: 'orangery' } },
  })
  t.equal(again.status, 201)
  t.not(again.headers.get('idempotent-replayed'), 'true', 'the replay went with the lead')
})

t.test('studio leads retention --keep turns it off, audited', async (t) => {
  const r = await cli(['leads', 'retention', '--email', OWNER, '--keep'])
  t.same(r.out, [`account ${accountId} now keeps its leads`])
  const [row] = await sql`select lead_retention_days from accounts where id = ${accountId}`
  t.equal(row.lead_retention_days, null)
  const changes = await sql`select actor_kind, before, after from audit_log where action = 'retention.changed'
    order by at, id`
  t.match(changes, [
    { actor_kind: 'cli', before: { lead_retention_days: null }, after: { lead_retention_days: 365 } },
    { actor_kind: 'cli', before: { lead_retention_days: 365 }, after: { lead_retention_days: null } },
  ])
})
