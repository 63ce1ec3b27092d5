import t, { type Test } from 'tap'
import { setAssignedMailChoice } from '../../src/accounts/lead-mail.js'
import { inviteMember } from '../../src/accounts/team.js'
import { addEndpoint } from '../../src/events/endpoints.js'
import { Browser, PASSWORD, signinLink } from '../support/dashboard-client.js'
import { eventually } from '../support/eventually.js'
import { leadPoster } from '../support/lead-places.js'
import { receiver } from '../support/receiver.js'
import { startTestServer } from '../support/server.js'
import { smtpServer } from '../support/smtp.js'

// A lead's new assignee is mailed (issue 47): a status change and an assignment arrive at a webhook receiver as
// lead.updated and the assignee's mail at a real SMTP server in this process; a user who turned it off on the
// Account page gets none, and neither does one who took the lead themselves. Mails are written in the change's
// transaction: no row once the change is answered means none will come.
const smtp = await smtpServer(t)
const PUBLIC = 'https://studio.example.com'
const s = await startTestServer(
  t,
  {
    STUDIO_SMTP_URL: smtp.url,
    STUDIO_MAIL_FROM: 'Studio <studio@example.com>',
    STUDIO_PUBLIC_URL: PUBLIC,
    STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true',
  },
  { webhooks: { pollMs: 20, random: () => 0.5 } }
)
const { sql } = s.db
const OWNER = 'owner@example.com'
const key = await s.key({ email: OWNER })
const prefix = key.split('_')[1]
const [{ accountId }] = await sql<{ accountId: string }[]>`
  select account_id as "accountId" from api_keys where prefix = ${prefix}`
const BO = 'bo@example.com'
const CY = 'cy@example.com'
await inviteMember(sql, accountId, BO, 'member')
await setAssignedMailChoice(sql, await inviteMember(sql, accountId, CY, 'member'), false)
const hook = await receiver(t)
await addEndpoint(sql, { accountId, url: hook.url, events: ['lead.updated'] }, true)

const newLead = () => leadPoster(s, key)({ name: 'Ada Lovelace', email: 'ada@example.org', message: 'A quote, please' })
const patch = async (id: string, json: unknown) => {
  const r = await s.fetch(`/api/v1/leads/${id}`, { method: 'PATCH', key, json })
  if (r.status !== 200) throw new Error(`PATCH: ${r.status}`)
}
const updates = (id: string) =>
  hook.got.map((g) => JSON.parse(g.body) as { type: string; data: any }).filter((w) => w.data.id === id)
const assignedMails = (recipient: string) => sql<{ state: string }[]>`
  select state from mail_deliveries where kind = 'assigned' and lower(recipient) = lower(${recipient}) order by id`

t.test('through the API: lead.updated at the receiver, the assignee’s mail at the SMTP server', async (t) => {
  const id = await newLead()
  await patch(id, { status: 'contacted', assignee: BO })
  await eventually(() => updates(id).length === 1, { what: 'lead.updated at the receiver' })
  t.match(updates(id)[0], {
    type: 'lead.updated',
    data: {
      id,
      changes: { status: { before: 'new', after: 'contacted' }, assignee: { before: null, after: BO } },
      keyPrefix: prefix,
    },
  })
  await eventually(() => smtp.to(BO).length === 1, { what: "bo's mail" })
  const [mail] = smtp.to(BO)
  t.same(mail.to, [BO])
  t.equal(mail.from, 'studio@example.com')
  t.equal(mail.subject, 'A lead was assigned to you')
  const link = `${PUBLIC}/dashboard/leads/${id}`
  t.match(mail.text, `An API key (${prefix}) assigned a lead to you on Studio.`)
  t.match(mail.text, 'Status: contacted')
  t.match(mail.text, link)
  t.match(mail.html, `<a href="${link}">`)
  t.notMatch(mail.text + mail.html, /Ada|ada@example\.org|A quote/, "nothing of the lead's own data")
  await eventually(async () => (await assignedMails(BO))[0]?.state === 'delivered', { what: 'marked delivered' })

  await patch(id, { status: 'won' })
  await eventually(() => updates(id).length === 2, { what: 'the status change at the receiver' })
  t.match(updates(id)[1].data, { changes: { status: { before: 'contacted', after: 'won' } } })
  t.notOk('assignee' in updates(id)[1].data.changes, 'no assignee change')
  t.equal((await assignedMails(BO)).length, 1, 'a status change mails nobody')
})

t.test('a user who turned it off gets none; unassigning mails nobody', async (t) => {
  const id = await newLead()
  await patch(id, { assignee: CY })
  await patch(id, { assignee: null })
  await eventually(() => updates(id).length === 2, { what: 'both changes at the receiver' })
  t.same(await assignedMails(CY), [], 'cy opted out')
  const [{ n }] = await sql<{ n: number }[]>`
    select count(*)::int as n from mail_deliveries m join events e on e.id = m.event_id
    where e.type = 'lead.updated' and e.body::jsonb -> 'data' ->> 'id' = ${id}`
  t.equal(n, 0)
})

async function signedIn(email: string) {
  const link = await signinLink(s.dbEnv, { STUDIO_PUBLIC_URL: PUBLIC }, ['--email', email])
  const b = new Browser(s.url, PUBLIC)
  const set = await b.post(new URL(link).pathname, { password: PASSWORD, confirm: PASSWORD })
  if (set.status !== 303) throw new Error(`sign-in: ${set.status}`)
  return b
}

const CHECKBOX = /<input id="assigned-mail" name="assigned_mail" type="checkbox" value="on"( checked)?>/
const assign = (b: Browser, id: string, assignee: string) =>
  b.submit(`/dashboard/leads/${id}`, `/dashboard/leads/${id}`, { status: 'new', assignee })

t.test('the dashboard: the lead page’s form mails the assignee; the Account page turns it off', async (t: Test) => {
  const owner = await signedIn(OWNER)
  const id = await newLead()
  t.equal((await assign(owner, id, BO)).status, 303)
  await eventually(() => smtp.to(BO).length === 2, { what: "bo's second mail" })
  t.match(smtp.to(BO)[1].text, `${OWNER} assigned a lead to you on Studio.`)
  t.notMatch(smtp.to(BO)[1].text, 'Status:', 'the status did not change')
  const log = (await owner.get('/dashboard/webhooks')).text
  t.match(log, `<td>${BO}</td><td>lead assigned</td>`, "in the owner's mail log")

  t.equal((await assign(owner, id, OWNER)).status, 303)
  await eventually(() => updates(id).length === 2, { what: 'the owner taking it, at the receiver' })
  t.same(await assignedMails(OWNER), [], 'none for taking a lead oneself')

  const bo = await signedIn(BO)
  t.equal(CHECKBOX.exec((await bo.get('/dashboard/account')).text)?.[1], ' checked', 'on until turned off')
  const saved = await bo.submit('/dashboard/account', '/dashboard/account/assigned-mail', {})
  t.equal(saved.headers.get('location'), '/dashboard/account?done=assigned-mail')
  const page = (await bo.get('/dashboard/account?done=assigned-mail')).text
  t.match(page, 'Your choice of a mail for assigned leads was saved.')
  t.equal(CHECKBOX.exec(page)?.[1], undefined, 'off now')
  t.equal((await assign(owner, id, BO)).status, 303)
  await eventually(() => updates(id).length === 3, { what: 'the assignment at the receiver' })
  t.equal((await assignedMails(BO)).length, 2, 'no third mail')
  await bo.submit('/dashboard/account', '/dashboard/account/assigned-mail', { assigned_mail: 'on' })
  t.equal(CHECKBOX.exec((await bo.get('/dashboard/account')).text)?.[1], ' checked', 'on again')
})

t.test('mail off: an assignment writes no mail', async (t) => {
  const off = await startTestServer(t)
  const k = await off.key({ email: OWNER })
  const [{ account_id }] = await off.db.sql<{ account_id: string }[]>`
    select account_id from api_keys where prefix = ${k.split('_')[1]}`
  await inviteMember(off.db.sql, account_id, BO, 'member')
  const id = await leadPoster(off, k)({ name: 'Ada', email: 'ada@example.org', message: 'Hi' })
  t.equal((await off.fetch(`/api/v1/leads/${id}`, { method: 'PATCH', key: k, json: { assignee: BO } })).status, 200)
  const [{ count }] = await off.db.sql<{ count: number }[]>`select count(*)::int as count from mail_deliveries`
  t.equal(count, 0)
})
