import t from 'tap'
import { Browser, signinLink, signInWithLink } from '../support/dashboard-client.js'
import { eventually } from '../support/eventually.js'
import { logLines, startTestServer } from '../support/server.js'
import { smtpPasswords, smtpServer } from '../support/smtp.js'

// Sign-in links and invitations by mail: from the CLI, from Team, and asked for on the sign-in page. The page still
// shows the link where it did; the link waits in the outbox only until its mail is sent (or its link expires).
let offset = 0
const clock = () => Date.now() + offset
let refuse: (to: string) => { code: number; message: string } | null = () => null
const smtp = await smtpServer(t, (to) => refuse(to))
const MAIL = { STUDIO_SMTP_URL: smtp.url, STUDIO_MAIL_FROM: 'studio@example.com' }
const s = await startTestServer(t, MAIL, { clock, webhooks: { pollMs: 20, random: () => 0.5 } })
const { sql } = s.db
const links: string[] = []

const unique = (what: string) => `${what}-${Math.random().toString(36).slice(2)}@example.com`
const LINK = /https?:\/\/[^\s"<]+\/dashboard\/link\/[\w-]+/
const shownLink = (page: string) => /id="new-link">([^<]+)</.exec(page)?.[1] ?? ''
const deliveries = (to: string) => sql<{ kind: string; state: string; message: unknown }[]>`
  select kind, state, message from mail_deliveries where recipient = ${to} order by id`

async function owner() {
  const email = unique('owner')
  const link = await signinLink(s.dbEnv, MAIL, ['--email', email])
  links.push(link)
  await eventually(() => smtp.to(email).length, { what: 'the CLI link mail' })
  return { email, browser: await signInWithLink(s.url, link) }
}

t.test('studio signin-link: the running server mails the printed link', async (t) => {
  const email = unique('cli')
  const link = await signinLink(s.dbEnv, MAIL, ['--email', email])
  links.push(link)
  await eventually(() => smtp.to(email).length, { what: 'the mail' })
  const [mail] = smtp.to(email)
  t.equal(mail.subject, 'Your Studio sign-in link')
  t.equal(LINK.exec(mail.text)?.[0], link, 'the same link, in the text')
  t.match(mail.html, `<a href="${link}">`)
  await eventually(async () => (await deliveries(email))[0].state === 'delivered', { what: 'delivered' })
  t.same(await deliveries(email), [{ kind: 'signin', state: 'delivered', message: null }], 'the link is wiped')
})

t.test('Team: an invitation is mailed and still shown; a new link for a member is mailed', async (t) => {
  const o = await owner()
  const invitee = unique('invitee')
  const page = await o.browser.submit('/dashboard/team', '/dashboard/team', { email: invitee, role: 'admin' })
  t.equal(page.status, 200)
  t.match(page.text, 'it is on its way to them by email')
  const shown = shownLink(page.text)
  links.push(shown)
  await eventually(() => smtp.to(invitee).length, { what: 'the invitation' })
  const [invitation] = smtp.to(invitee)
  t.equal(invitation.subject, 'You are invited to Studio')
  t.match(invitation.text, `${o.email} invited you to their account on the Studio dashboard, as admin.`)
  t.equal(LINK.exec(invitation.text)?.[0], shown, 'the link the page shows')
  const [{ id }] = await sql<{ id: string }[]>`select id from users where email = ${invitee}`
  const again = await o.browser.submit('/dashboard/team', `/dashboard/team/${id}/link`)
  links.push(shownLink(again.text))
  await eventually(() => smtp.to(invitee).length === 2, { what: 'the second link' })
  t.equal(smtp.to(invitee)[1].subject, 'Your Studio sign-in link')
  t.equal(LINK.exec(smtp.to(invitee)[1].text)?.[0], shownLink(again.text))
  const helper = await signInWithLink(s.url, shownLink(again.text))
  t.equal((await helper.get('/dashboard/keys')).status, 200, 'the mailed link signs in')
})

t.test('the sign-in page: a link asked for by email is mailed, never shown', async (t) => {
  const o = await owner()
  const b = new Browser(s.url)
  t.match((await b.get('/dashboard/signin')).text, 'action="/dashboard/signin/link"')
  const before = smtp.got.length
  const nobody = unique('nobody')
  for (const email of [o.email, nobody]) {
    const asked = await b.post('/dashboard/signin/link', { email })
    t.equal(asked.status, 303)
    t.equal(asked.headers.get('location'), '/dashboard/signin?done=link-sent', 'the same answer for both')
  }
  t.match((await b.get('/dashboard/signin?done=link-sent')).text, 'If that address has an account here')
  await eventually(() => smtp.to(o.email).length === 2, { what: 'the asked-for link' })
  const link = LINK.exec(smtp.to(o.email)[1].text)?.[0] ?? ''
  links.push(link)
  t.equal(smtp.got.length, before + 1)
  t.same(await deliveries(nobody), [], 'no mail for an address without an account')
  const form = await new Browser(s.url).get(new URL(link).pathname)
  t.equal(form.status, 200)
  t.match(form.text, 'Choose a password')
})

t.test('a link mail that cannot be sent before its link expires is dropped and wiped', async (t) => {
  const o = await owner()
  const invitee = unique('greylisted')
  t.teardown(() => {
    refuse = () => null
  })
  refuse = (to) => (to === invitee ? { code: 451, message: 'Try later' } : null)
  await o.browser.submit('/dashboard/team', '/dashboard/team', { email: invitee, role: 'member' })
  await eventually(
    async () =>
      (await deliveries(invitee))[0]?.state === 'pending' &&
      (
        await sql`
    select 1 from mail_attempts a join mail_deliveries m on m.id = a.delivery_id where m.recipient = ${invitee}`
      ).length,
    { what: 'a first, refused attempt' }
  )
  t.not((await deliveries(invitee))[0].message, null, 'the message waits for its retry')
  offset += 25 * 3_600_000
  await eventually(async () => (await deliveries(invitee))[0].state === 'expired', { what: 'expired' })
  t.equal((await deliveries(invitee))[0].message, null, 'the link is wiped')
  t.equal(smtp.to(invitee).length, 0)
})

t.test('a link mail whose next try would come after its link expires is given up at once', async (t) => {
  const before = offset
  t.teardown(() => {
    offset = before
    refuse = () => null
  })
  offset = 0
  const o = await owner()
  const invitee = unique('late')
  refuse = (to) => (to === invitee ? { code: 451, message: 'Try later' } : null)
  await o.browser.submit('/dashboard/team', '/dashboard/team', { email: invitee, role: 'member' })
  const tried = async () =>
    (
      await sql<{ outcome: string; code: number }[]>`
      select a.outcome, a.code from mail_attempts a join mail_deliveries m on m.id = a.delivery_id
      where m.recipient = ${invitee} order by a.id`
    ).map((a) => [a.outcome, a.code])
  await eventually(async () => (await tried()).length === 1, { what: 'a first, refused attempt' })
  const [{ expiresAt }] = await sql<{ expiresAt: Date }[]>`
    select expires_at as "expiresAt" from mail_deliveries where recipient = ${invitee}`
  // A minute before the link expires: the retry (5 s after the first) is due, and the next would be 5 min later.
  offset = expiresAt.getTime() - 60_000 - Date.now()
  await eventually(async () => (await tried()).length === 2, { what: 'the second attempt' })
  t.same(await tried(), [
    ['retry', 451],
    ['failed', 451],
  ])
  t.same(await deliveries(invitee), [{ kind: 'invite', state: 'failed', message: null }], 'given up, the link wiped')
  t.equal(smtp.to(invitee).length, 0)
})

t.test('mail off: Team shows the link only, the sign-in page offers no mail', async (t) => {
  const off = await startTestServer(t)
  const link = await signinLink(off.dbEnv, {}, ['--email', unique('off')])
  links.push(link)
  const b = await signInWithLink(off.url, link)
  const page = await b.submit('/dashboard/team', '/dashboard/team', { email: unique('offinvite'), role: 'member' })
  t.notMatch(page.text, 'by email')
  t.ok(shownLink(page.text))
  t.notMatch((await new Browser(off.url).get('/dashboard/signin')).text, '/dashboard/signin/link')
  t.notMatch((await b.get('/dashboard/webhooks')).text, 'Email deliveries', 'no mail log without mail')
  t.equal((await new Browser(off.url).post('/dashboard/signin/link', { email: 'a@example.com' })).status, 404)
})

t.test('no sign-in token and no SMTP password reaches a log', async (t) => {
  const all = logLines.join('\n')
  t.ok(links.length >= 6)
  for (const link of links) t.notMatch(all, link.split('/').at(-1) ?? '', 'no token')
  for (const password of smtpPasswords) t.notMatch(all, password, 'no SMTP password')
})
