import t, { type Test } from 'tap'
import { setLeadMailChoice } from '../../src/accounts/lead-mail.js'
import { inviteMember } from '../../src/accounts/team.js'
import { addEndpoint } from '../../src/events/endpoints.js'
import { cliOn } from '../support/cli.js'
import { signInWithLink, signinLink } from '../support/dashboard-client.js'
import { eventually } from '../support/eventually.js'
import { leadPoster } from '../support/lead-places.js'
import { receiver } from '../support/receiver.js'
import { startTestServer } from '../support/server.js'
import { smtpServer } from '../support/smtp.js'

// Export (issue 47): what an account holds about one email address, as one JSON document, the same from
// `studio leads export` and from the lead page's download. The person's two leads (one with a note, an extra field
// and a status change) were announced to an echoing webhook receiver and mailed; another person's lead and another
// account's lead from the same address stay out of it.
const smtp = await smtpServer(t)
const s = await startTestServer(
  t,
  {
    STUDIO_SMTP_URL: smtp.url,
    STUDIO_MAIL_FROM: 'Studio <studio@example.com>',
    STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true',
  },
  { webhooks: { pollMs: 20, random: () => 0.5 } }
)
const { sql } = s.db
const cli = cliOn(s.dbEnv)
const OWNER = 'exporter@example.com'
const key = await s.key({ email: OWNER })
const stranger = await s.key({ email: 'stranger@example.com' })
const [{ accountId }] = await sql<{ accountId: string }[]>`
  select account_id as "accountId" from api_keys where prefix = ${key.split('_')[1]}`
await setLeadMailChoice(sql, await inviteMember(sql, accountId, 'reader@example.com', 'member'), true)
const echo = await receiver(t, (r, res) => res.end(r.body))
await addEndpoint(sql, { accountId, url: echo.url }, true)

const PERSON = { name: 'Araminta Vell', email: 'araminta@example.org', message: 'A quote for the boathouse' }
const post = leadPoster(s, key)
const postElsewhere = leadPoster(s, stranger)
const first = await post({ ...PERSON, fields: { boat: 'skiff' } }, { 'idempotency-key': 'export-1' })
const second = await post({ ...PERSON, email: 'ARAMINTA@example.org', message: 'And the jetty' })
const other = await post({ name: 'Someone Else', email: 'else@example.org', message: 'not theirs' })
const foreign = await postElsewhere({ ...PERSON, message: 'told another account' })
if (
  (await s.fetch(`/api/v1/leads/${first}/notes`, { method: 'POST', key, json: { text: 'rang back' } })).status !== 201
)
  throw new Error('a note')
if ((await s.fetch(`/api/v1/leads/${first}`, { method: 'PATCH', key, json: { status: 'won' } })).status !== 200)
  throw new Error('PATCH')
for (const id of [first, second])
  await eventually(() => echo.got.some((g) => g.body.includes(id)), { what: `${id} at the receiver` })
await eventually(() => echo.got.some((g) => g.body.includes('lead.updated')), { what: 'lead.updated delivered' })
await eventually(() => smtp.got.filter((m) => m.text.includes('boathouse')).length >= 1, { what: 'the mail' })
await eventually(
  async () =>
    (
      await sql`select 1 from mail_attempts a join mail_deliveries m on m.id = a.delivery_id
      where m.event_id in (select id from events where body::jsonb -> 'data' ->> 'id' = ${first})`
    ).length > 0,
  { what: 'the mail logged' }
)

// What every export of the person must show.
function checkDocument(t: Test, doc: any) {
  t.equal(doc.email.toLowerCase(), PERSON.email)
  t.ok(!Number.isNaN(Date.parse(doc.exportedAt)), 'exportedAt')
  t.same(
    doc.leads.map((l: { id: string }) => l.id),
    [first, second],
    'the two leads of the address (any case), oldest first; not the other person’s nor another account’s'
  )
  const [one, two] = doc.leads
  t.match(one, {
    name: PERSON.name,
    email: PERSON.email,
    message: PERSON.message,
    status: 'won',
    fields: { boat: 'skiff' },
    idempotencyKey: 'export-1',
    notes: [{ text: 'rang back' }],
  })
  t.equal(two.message, 'And the jetty')
  t.same(
    one.events.map((e: { type: string }) => e.type),
    ['lead.created', 'lead.updated'],
    'its events'
  )
  t.equal(one.events[0].payload.data.message, PERSON.message, 'with their payloads')
  t.ok(
    one.webhookAttempts.some(
      (a: { status: number; answer: string }) => a.status === 200 && a.answer.includes('boathouse')
    ),
    'what the receiver answered'
  )
  t.ok(
    one.mails.some(
      (m: { recipient: string; attempts: unknown[] }) => m.recipient === 'reader@example.com' && m.attempts.length
    ),
    'its mails and their log'
  )
  const text = JSON.stringify(doc)
  for (const absent of [other, foreign, 'not theirs', 'told another account']) t.notOk(text.includes(absent), absent)
}

t.test('studio leads export prints the document', async (t) => {
  const r = await cli(['leads', 'export', '--account-email', OWNER, '--email', 'Araminta@Example.org'])
  t.equal(r.code, 0, r.err.join('\n'))
  checkDocument(t, JSON.parse(r.out.join('\n')))
  const none = await cli(['leads', 'export', '--account-email', OWNER, '--email', 'nobody@example.org'])
  t.equal(none.code, 0)
  t.same(JSON.parse(none.out.join('\n')).leads, [], 'no lead: an empty list')
})

t.test('studio leads export: bad arguments', async (t) => {
  for (const args of [
    [],
    ['--email', PERSON.email],
    ['--account-email', OWNER],
    ['--account-email', OWNER, '--email', 'x'],
  ])
    t.equal((await cli(['leads', 'export', ...args])).code, 2, JSON.stringify(args))
  const unknown = await cli(['leads', 'export', '--account-email', 'nobody@example.org', '--email', PERSON.email])
  t.equal(unknown.code, 1)
  t.same(unknown.out, [], 'nothing on stdout')
})

t.test("the lead page's export downloads the same document", async (t) => {
  const owner = await signInWithLink(s.url, await signinLink(s.dbEnv, { STUDIO_PUBLIC_URL: s.url }, ['--email', OWNER]))
  const page = await owner.get(`/dashboard/leads/${second}`)
  t.equal(page.status, 200)
  t.match(page.text, `href="/dashboard/leads/${second}/export"`)
  t.match(page.text, /Export this person(&#39;|&#x27;|')s data/)
  const r = await owner.get(`/dashboard/leads/${second}/export`)
  t.equal(r.status, 200)
  t.match(r.headers.get('content-type'), 'application/json')
  t.equal(r.headers.get('content-disposition'), 'attachment; filename="person-araminta-example.org.json"')
  checkDocument(t, JSON.parse(r.text))

  t.equal((await owner.get(`/dashboard/leads/${foreign}/export`)).status, 404, "another account's lead")
  t.equal((await owner.get('/dashboard/leads/nope/export')).status, 404)
  const outsider = await signInWithLink(
    s.url,
    await signinLink(s.dbEnv, { STUDIO_PUBLIC_URL: s.url }, ['--email', 'stranger@example.com'])
  )
  t.equal((await outsider.get(`/dashboard/leads/${first}/export`)).status, 404, 'a user of another account')
  // The export holds the leads' delivery and mail logs, which a member of the account may not read.
  const member = await signInWithLink(
    s.url,
    await signinLink(s.dbEnv, { STUDIO_PUBLIC_URL: s.url }, ['--email', 'reader@example.com'])
  )
  t.notMatch((await member.get(`/dashboard/leads/${first}`)).text, '/export"', 'a member sees no export link')
  t.equal((await member.get(`/dashboard/leads/${first}/export`)).status, 403, 'a member may not export')
  const anonymous = await fetch(`${s.url}/dashboard/leads/${first}/export`, { redirect: 'manual' })
  t.not(anonymous.status, 200, 'no session, no data')
  t.notOk((await anonymous.text()).includes('boathouse'))
})
