import t from 'tap'
import { inviteMember } from '../../src/accounts/team.js'
import { addEndpoint, listEndpoints } from '../../src/events/endpoints.js'
import { eventually } from '../support/eventually.js'
import { receiver } from '../support/receiver.js'
import { startTestServer } from '../support/server.js'
import { smtpServer } from '../support/smtp.js'

// An endpoint the delivery worker disables (here: it answers 410) is mailed to its account's owners and admins.
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
  { webhooks: { pollMs: 20 } }
)
const { sql } = s.db
const SUBJECT = 'A webhook endpoint was disabled'

t.test("a disabled endpoint is mailed to the account's owners and admins, with why and a link", async (t) => {
  const key = await s.key({ email: 'gone-owner@example.com' })
  const [{ accountId }] = await sql<{ accountId: string }[]>`
    select account_id as "accountId" from users where email = 'gone-owner@example.com'`
  await inviteMember(sql, accountId, 'gone-admin@example.com', 'admin')
  await inviteMember(sql, accountId, 'gone-member@example.com', 'member')
  const gone = await receiver(t, (_, res) => res.writeHead(410).end())
  const { id, secret } = await addEndpoint(sql, { accountId, url: `${gone.url}?a=1&b=<2>` }, true)
  const res = await s.fetch('/api/v1/leads', {
    method: 'POST',
    key,
    json: { name: 'Ada', email: 'ada@example.com', service: 'consulting', message: 'Hi' },
  })
  t.equal(res.status, 201)
  const notices = (to: string) => smtp.to(to).filter((m) => m.subject === SUBJECT)
  await eventually(() => notices('gone-owner@example.com').length && notices('gone-admin@example.com').length, {
    what: 'both notices',
  })
  const [endpoint] = await listEndpoints(sql, accountId)
  t.match(endpoint.disabledReason, /410/)
  t.match(endpoint.url, '?a=1&b=')
  const link = `${PUBLIC}/dashboard/webhooks/${id}`
  for (const to of ['gone-owner@example.com', 'gone-admin@example.com']) {
    const [mail] = notices(to)
    t.same(mail.to, [to], 'one recipient per mail')
    t.match(mail.text, `Endpoint: ${endpoint.url}`)
    t.match(mail.text, /Why: .*410/)
    t.match(mail.text, link)
    t.match(mail.html, endpoint.url.replaceAll('&', '&amp;'), 'the URL escaped in the HTML')
    t.match(mail.html, `<a href="${link}">`)
    t.notMatch(mail.raw, secret, 'not the signing secret')
  }
  const [member] = await sql<{ n: number }[]>`
    select count(*)::int as n from mail_deliveries where recipient = 'gone-member@example.com'`
  t.equal(member.n, 0, 'a member is not told')
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from mail_deliveries where kind = 'endpoint' and account_id = ${accountId}`
  t.equal(row.n, 2, 'one mail each, once')
})
