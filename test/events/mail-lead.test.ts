import t, { type Test } from 'tap'
import { setLeadMailChoice } from '../../src/accounts/lead-mail.js'
import { inviteMember } from '../../src/accounts/team.js'
import { escapeHtml } from '../../src/dashboard/html.js'
import { Browser, PASSWORD, signinLink } from '../support/dashboard-client.js'
import { eventually } from '../support/eventually.js'
import { logLines, startTestServer } from '../support/server.js'
import { smtpPasswords, smtpServer } from '../support/smtp.js'

// Lead mails through a real SMTP server in this process, sent by a real server over a real database. The server's
// clock is moved by the test (never slept on); random() = 0.5 takes the jitter out of the retry schedule.
let offset = 0
const clock = () => Date.now() + offset
let refuse: (to: string, n: number) => { code: number; message: string } | null = () => null
const smtp = await smtpServer(t, (to, n) => refuse(to, n))
const PUBLIC = 'https://studio.example.com'
const s = await startTestServer(
  t,
  { STUDIO_SMTP_URL: smtp.url, STUDIO_MAIL_FROM: 'Studio <studio@example.com>', STUDIO_PUBLIC_URL: PUBLIC },
  { clock, webhooks: { pollMs: 20, random: () => 0.5 } }
)
const { sql } = s.db

const LEAD = {
  name: 'Grace <script>alert(1)</script> & Co',
  email: 'grace@example.com',
  service: 'consulting & "design"',
  message: 'Hello <b>there</b>,\nsecond line & more <img src=x onerror=alert(1)>',
  phone: '+1 555 <0100>',
  company: 'A&B <Ltd>',
  budget: '<10k & up',
  locale: 'en-GB',
  source: 'landing <page>',
  utm: { source: 'news&letter', medium: '<email>', campaign: "q4 'launch'" },
  fields: { '<b>size</b>': '12 & <more>' },
}
const VALUES = [
  LEAD.name,
  LEAD.email,
  LEAD.service,
  LEAD.phone,
  LEAD.company,
  LEAD.budget,
  LEAD.locale,
  LEAD.source,
].concat(Object.values(LEAD.utm), Object.keys(LEAD.fields), Object.values(LEAD.fields))

let n = 0
async function account() {
  const owner = `owner${++n}-${Math.random().toString(36).slice(2)}@example.com`
  const key = await s.key({ email: owner })
  const [{ accountId }] = await sql<{ accountId: string }[]>`
    select account_id as "accountId" from api_keys where prefix = ${key.split('_')[1]}`
  const user = async (role: string, leadMail?: boolean) => {
    const email = `${role}${++n}-${Math.random().toString(36).slice(2)}@example.com`
    const id = await inviteMember(sql, accountId, email, role)
    if (leadMail !== undefined) await setLeadMailChoice(sql, id, leadMail)
    return email
  }
  return { key, owner, user }
}

async function postLead(t: Test, key: string, server = s) {
  const res = await server.fetch('/api/v1/leads', { method: 'POST', key, json: LEAD })
  t.equal(res.status, 201)
  return ((await res.json()) as { id: string }).id
}

const deliveries = (recipient: string) => sql<{ state: string; attempts: number; next_at: Date; message: unknown }[]>`
  select state, attempts, next_at, message from mail_deliveries where recipient = ${recipient} order by id`
const attempts = (recipient: string) => sql<{ outcome: string; code: number | null; answer: string; at: Date }[]>`
  select a.outcome, a.code, a.answer, a.at from mail_attempts a join mail_deliveries m on m.id = a.delivery_id
  where m.recipient = ${recipient} order by a.id`

t.test('each opted-in user gets a mail of their own with every field, escaped, and a link to the lead', async (t) => {
  const a = await account()
  const [admin, member, quietOwner] = [
    await a.user('admin', true),
    await a.user('member'),
    await a.user('owner', false),
  ]
  const id = await postLead(t, a.key)
  await eventually(() => smtp.to(a.owner).length && smtp.to(admin).length, { what: 'both mails' })
  const link = `https://studio.example.com/dashboard/leads/${id}`
  for (const to of [a.owner, admin]) {
    const [mail] = smtp.to(to)
    t.same(mail.to, [to], 'one recipient per mail')
    t.equal(mail.from, 'studio@example.com')
    t.match(mail.headers.get('from'), 'Studio <studio@example.com>')
    t.equal(mail.headers.get('reply-to'), LEAD.email, 'a reply goes to the lead')
    t.equal(mail.subject, `New lead: ${LEAD.name}`)
    for (const v of VALUES) t.match(mail.text, v, `text: ${v}`)
    t.match(mail.text, `Message:\n${LEAD.message}\n`, 'the message intact, its lines too')
    t.match(mail.text, link)
    for (const v of [...VALUES, LEAD.message]) t.match(mail.html, escapeHtml(v), `html: ${v} escaped`)
    t.notMatch(mail.html, /<script|<img|<b>|<Ltd>|<email>|<page>/, 'no markup from the lead')
    t.match(mail.html, `<a href="${link}">`)
  }
  // Mails are written with the lead: no row now means none will come (an empty SMTP server could be slow).
  t.same(await deliveries(member), [], 'a member has no mail by default')
  t.same(await deliveries(quietOwner), [], 'an owner who opted out has none')
  await eventually(async () => (await deliveries(admin))[0]?.state === 'delivered', { what: 'marked delivered' })
  const [attempt] = await attempts(admin)
  t.equal(attempt.outcome, 'delivered')
  t.equal(attempt.code, 250)
})

async function signedIn(t: Test, email: string) {
  const link = await signinLink(s.dbEnv, { STUDIO_PUBLIC_URL: PUBLIC }, ['--email', email])
  const b = new Browser(s.url, PUBLIC)
  t.equal((await b.post(new URL(link).pathname, { password: PASSWORD, confirm: PASSWORD })).status, 303)
  return b
}

const CHECKBOX = /<input id="lead-mail" name="lead_mail" type="checkbox" value="on"( checked)?>/

t.test('each user chooses on the Account page: a member opts in, an owner opts out', async (t) => {
  const a = await account()
  const member = await a.user('member')
  const [owner, them] = [await signedIn(t, a.owner), await signedIn(t, member)]
  t.equal(CHECKBOX.exec((await owner.get('/dashboard/account')).text)?.[1], ' checked', 'on for an owner')
  t.equal(CHECKBOX.exec((await them.get('/dashboard/account')).text)?.[1], undefined, 'off for a member')
  const saved = await them.submit('/dashboard/account', '/dashboard/account/lead-mail', { lead_mail: 'on' })
  t.equal(saved.headers.get('location'), '/dashboard/account?done=lead-mail')
  t.match((await them.get('/dashboard/account?done=lead-mail')).text, 'Your email choice was saved.')
  t.equal(CHECKBOX.exec((await them.get('/dashboard/account')).text)?.[1], ' checked')
  await owner.submit('/dashboard/account', '/dashboard/account/lead-mail', {})
  t.equal(CHECKBOX.exec((await owner.get('/dashboard/account')).text)?.[1], undefined, 'the owner opted out')
  await postLead(t, a.key)
  await eventually(() => smtp.to(member).length, { what: "the member's mail" })
  t.same(await deliveries(a.owner), [], 'none for the owner who opted out')
})

t.test('a temporary refusal (451) is retried on the schedule, then delivered once', async (t) => {
  const a = await account()
  t.teardown(() => {
    refuse = () => null
  })
  refuse = (to, tries) => (to === a.owner && tries === 1 ? { code: 451, message: 'Greylisted, try again' } : null)
  await postLead(t, a.key)
  await eventually(async () => (await deliveries(a.owner))[0]?.attempts === 1, { what: 'the first attempt' })
  const [first] = await attempts(a.owner)
  t.match(first, { outcome: 'retry', code: 451, answer: 'refused for now by the mail server (451)' })
  t.equal((await deliveries(a.owner))[0].next_at.getTime() - first.at.getTime(), 5_000, 'again after 5 s')
  t.match((await deliveries(a.owner))[0], { state: 'pending', attempts: 1 }, 'not sent, waiting for its retry')
  t.equal(smtp.to(a.owner).length, 0)
  offset += 5_000
  await eventually(async () => (await deliveries(a.owner))[0].state === 'delivered', { what: 'delivered' })
  t.equal(smtp.to(a.owner).length, 1, 'delivered once')
  t.same(
    (await attempts(a.owner)).map((x) => x.outcome),
    ['retry', 'delivered']
  )
  t.match(s.metrics.render(), /studio_mail_attempts_total\{outcome="retry"\} [1-9]/)
  t.match(s.metrics.render(), /studio_mail_attempts_total\{outcome="delivered"\} [1-9]/)
})

t.test("a permanent refusal (550) is not retried and is logged as failed, without the server's words", async (t) => {
  const a = await account()
  const internal = /relay-7\.corp\.internal|10\.20\.30\.40/
  t.teardown(() => {
    refuse = () => null
  })
  refuse = (to) =>
    to === a.owner ? { code: 550, message: 'No such user <here> at relay-7.corp.internal [10.20.30.40]' } : null
  await postLead(t, a.key)
  await eventually(async () => (await deliveries(a.owner))[0]?.state === 'failed', { what: 'failed' })
  t.same(
    (await attempts(a.owner)).map((x) => [x.outcome, x.code, x.answer]),
    [['failed', 550, 'refused by the mail server (550)']]
  )
  t.equal(smtp.to(a.owner).length, 0)
  const page = (await (await signedIn(t, a.owner)).get('/dashboard/webhooks')).text
  const log = page.slice(page.indexOf('<h2>Email deliveries</h2>'))
  t.match(log, /<td class="time">[\d-]+ [\d:]+<\/td><td>owner[^<]+<\/td><td>new lead<\/td>/, 'time, to, which mail')
  t.match(log, '<span class="badge failed">refused</span>')
  t.match(log, 'refused by the mail server (550)')
  t.notMatch(page, internal, 'no internal host or address from the server reaches the dashboard')
})

t.test('an Idempotency-Key replay mails nothing again', async (t) => {
  const a = await account()
  const headers = { 'idempotency-key': `k-${n}` }
  for (let i = 0; i < 2; i++) {
    const res = await s.fetch('/api/v1/leads', { method: 'POST', key: a.key, json: LEAD, headers })
    t.equal(res.status, 201)
  }
  await eventually(() => smtp.to(a.owner).length, { what: 'the mail' })
  t.equal((await deliveries(a.owner)).length, 1, 'one mail delivery')
})

t.test('mail unset: nothing is mailed and nothing fails', async (t) => {
  const off = await startTestServer(t)
  const key = await off.key()
  await postLead(t, key, off)
  const [{ count }] = await off.db.sql<{ count: number }[]>`select count(*)::int as count from mail_deliveries`
  t.equal(count, 0, 'no mail delivery written')
  t.notMatch(off.log.lines.join('\n'), /"level":"(warn|error)"|"msg":"mail/, 'no mail, no warning in its log')
})

t.test('no SMTP password and no recipient address in the server log', async (t) => {
  const log = s.log.lines.join('\n')
  t.match(log, /"msg":"mail on","smtp":"smtp:\/\/127\.0\.0\.1:\d+"/)
  for (const password of smtpPasswords) t.notMatch(logLines.join('\n'), password, 'no SMTP password')
  t.notMatch(log, /owner\d+-\w+@example\.com/, 'no recipient address')
  t.notMatch(log, LEAD.email)
})
