import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { setKeyAutoreply } from '../../src/accounts/key-autoreply.js'
import { setKeyCaptcha } from '../../src/accounts/key-captcha.js'
import { setKeyForm } from '../../src/accounts/key-form.js'
import { createKey, rotateKey } from '../../src/accounts/key-lifecycle.js'
import { escapeHtml } from '../../src/dashboard/html.js'
import { mailLogCard } from '../../src/dashboard/mail-log.js'
import { mailLog } from '../../src/events/mail-deliveries.js'
import { eraseLeads } from '../../src/leads/erase.js'
import { eventually } from '../support/eventually.js'
import { issuedKeys, startTestServer } from '../support/server.js'
import { smtpServer } from '../support/smtp.js'

// The autoresponder of a lead key, through a real SMTP server in this process: the mail to the person who wrote
// arrives with their values escaped in its HTML; an address gets one per 24 hours; spam, a failed CAPTCHA and an
// unchecked one get none; a key sends at most STUDIO_AUTOREPLY_DAILY_LIMIT (2 here) a day; the mail log shows the
// skipped ones with why; erasing the lead blanks its autoreply.
const SITE = 'https://shop.example'
const SECRET = 'captcha-secret-autoreply-0x4AAAAAAAB'

// A siteverify stand-in: the token says what it answers.
const verify = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  let text = ''
  for await (const chunk of req) text += chunk
  const token = new URLSearchParams(text).get('response')
  if (token === 'down') return void res.writeHead(503).end()
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(token === 'ok' ? { success: true, hostname: 'shop.example' } : { success: false }))
})
await new Promise<void>((resolve) => verify.listen(0, '127.0.0.1', resolve))
t.teardown(() => {
  verify.closeAllConnections()
  verify.close()
})

const smtp = await smtpServer(t)
const s = await startTestServer(
  t,
  {
    STUDIO_SMTP_URL: smtp.url,
    STUDIO_MAIL_FROM: 'Studio <studio@example.com>',
    STUDIO_LEAD_KEY_ADDRESS_LIMIT: '1000',
    STUDIO_AUTOREPLY_DAILY_LIMIT: '2',
    STUDIO_CAPTCHA_VERIFY_URL: `http://127.0.0.1:${(verify.address() as AddressInfo).port}/siteverify`,
  },
  { webhooks: { pollMs: 20, random: () => 0.5 } }
)
const { sql } = s.db
const cli = { kind: 'cli', osUser: 'test' } as const

const AUTOREPLY = {
  subject: 'Thanks, {{name}}',
  body: 'Hello {{ name }},\n\nWe got your note about {{service}} ({{size}}, {{utm_source}}){{nothing}}.\n<b>The team</b>',
  replyTo: 'hello@shop.example',
}

let n = 0
async function leadKey(captcha = false) {
  const made = await createKey(sql, {
    email: `ar${++n}-${Math.random().toString(36).slice(2)}@example.com`,
    scopes: ['leads:write'],
    origins: [SITE],
  })
  issuedKeys.push(made.key)
  if (!(await setKeyForm(sql, { prefix: made.prefix, change: { open: true } })).ok) throw new Error('not opened')
  if (captcha)
    await setKeyCaptcha(sql, {
      prefix: made.prefix,
      captcha: { provider: 'turnstile', secret: SECRET, minScore: null },
    })
  const set = await setKeyAutoreply(sql, { prefix: made.prefix, autoreply: AUTOREPLY, actor: cli })
  if (!set.ok) throw new Error('no autoreply')
  return { ...made, accountId: set.accountId }
}

const address = () => `person${++n}-${Math.random().toString(36).slice(2)}@example.net`
const FORM = { name: 'Ada <script>alert(1)</script> & Co', service: 'Hosting & "care"', message: 'Call me' }

async function post(prefix: string, form: Record<string, string>) {
  const res = await fetch(`${s.url}/forms/${prefix}`, {
    method: 'POST',
    body: new URLSearchParams(form),
    redirect: 'manual',
    headers: { origin: SITE, referer: `${SITE}/contact`, accept: 'application/json' },
  })
  const body = (await res.json()) as { id?: string }
  return { status: res.status, ...body }
}

const autoreplies = (prefix: string) =>
  sql<{ recipient: string; state: string; skipped: string | null; message: unknown }[]>`
    select recipient, state, skipped, message from mail_deliveries
    where kind = 'autoreply' and key_prefix = ${prefix} order by id`

t.test('the mail arrives, every value of the lead escaped in its HTML, with the Reply-To chosen', async (t) => {
  const k = await leadKey()
  const to = address()
  const res = await post(k.prefix, { ...FORM, email: to, size: '<12> & more', utm_source: 'news<letter>' })
  t.equal(res.status, 201)
  await eventually(() => smtp.to(to).length === 1, { what: 'the autoreply' })
  const [mail] = smtp.to(to)
  t.same(mail.to, [to])
  t.equal(mail.headers.get('reply-to'), AUTOREPLY.replyTo)
  t.equal(mail.subject, `Thanks, ${FORM.name}`)
  t.equal(
    mail.text.trim(),
    `Hello ${FORM.name},\n\nWe got your note about ${FORM.service} (<12> & more, news<letter>).\n<b>The team</b>`
  )
  for (const v of [FORM.name, FORM.service, '<12> & more', 'news<letter>', '<b>The team</b>'])
    t.match(mail.html, escapeHtml(v), `html: ${v} escaped`)
  t.notMatch(mail.html, /<script|<b>|<12>|<letter>/, 'no markup from the lead or the template')
  await eventually(async () => (await autoreplies(k.prefix))[0]?.state === 'delivered', { what: 'delivered' })
  t.match(await autoreplies(k.prefix), [{ recipient: to, state: 'delivered', skipped: null, message: null }])
})

t.test('a second lead from the same address within 24 hours gets none, whatever the key', async (t) => {
  const k = await leadKey()
  const to = address()
  t.equal((await post(k.prefix, { ...FORM, email: to })).status, 201)
  t.equal((await post(k.prefix, { ...FORM, email: to.toUpperCase() })).status, 201)
  await eventually(() => smtp.to(to).length === 1, { what: 'the first autoreply' })
  const rows = await autoreplies(k.prefix)
  t.match(rows, [{ state: /pending|delivered/ }, { state: 'skipped', skipped: 'recent', message: null }])
  // Two at once from a new address: one is sent.
  const other = address()
  const both = await Promise.all([post(k.prefix, { ...FORM, email: other }), post(k.prefix, { ...FORM, email: other })])
  t.same(
    both.map((r) => r.status),
    [201, 201]
  )
  const of = (await autoreplies(k.prefix)).filter((r) => r.recipient === other)
  t.same(of.map((r) => r.skipped).sort(), ['recent', null].sort())
})

t.test('spam and a failed CAPTCHA get none; an unchecked CAPTCHA gets none, logged as skipped', async (t) => {
  const k = await leadKey(true)
  const [spam, failed, unchecked, verified] = [address(), address(), address(), address()]
  t.equal((await post(k.prefix, { ...FORM, email: spam, website: 'x', 'cf-turnstile-response': 'ok' })).status, 201)
  t.equal((await post(k.prefix, { ...FORM, email: failed, 'cf-turnstile-response': 'bad' })).status, 422)
  t.equal((await post(k.prefix, { ...FORM, email: unchecked, 'cf-turnstile-response': 'down' })).status, 201)
  t.equal((await post(k.prefix, { ...FORM, email: verified, 'cf-turnstile-response': 'ok' })).status, 201)
  await eventually(() => smtp.to(verified).length === 1, { what: 'the verified lead’s autoreply' })
  const rows = await autoreplies(k.prefix)
  t.same(
    rows.map((r) => [r.recipient, r.skipped]),
    [
      [unchecked, 'captcha_unverified'],
      [verified, null],
    ],
    'no row for spam or a failed CAPTCHA'
  )
  t.same([smtp.to(spam), smtp.to(failed), smtp.to(unchecked)], [[], [], []])
  const log = (await mailLog(sql, k.accountId)).filter((l) => l.kind === 'autoreply')
  t.match(log, [
    { recipient: verified, outcome: 'delivered' },
    { recipient: unchecked, outcome: 'skipped' },
  ])
  t.match(String(mailLogCard(log, true)), 'Not sent: the CAPTCHA could not be checked with its provider')
})

t.test('the daily limit holds: the third address of the day gets none, and the log says why', async (t) => {
  const k = await leadKey()
  const to = [address(), address(), address()]
  for (const email of to) t.equal((await post(k.prefix, { ...FORM, email })).status, 201)
  await eventually(() => smtp.to(to[0]).length + smtp.to(to[1]).length === 2, { what: 'two autoreplies' })
  t.same(
    (await autoreplies(k.prefix)).map((r) => [r.recipient, r.skipped]),
    [
      [to[0], null],
      [to[1], null],
      [to[2], 'daily_limit'],
    ]
  )
  t.same(smtp.to(to[2]), [])
  const card = String(mailLogCard(await mailLog(sql, k.accountId), true))
  t.match(card, 'Not sent: the key&#39;s autoreplies for today (STUDIO_AUTOREPLY_DAILY_LIMIT) were all sent')
  // Another key of its own has its own day.
  const other = await leadKey()
  const email = address()
  t.equal((await post(other.prefix, { ...FORM, email })).status, 201)
  await eventually(() => smtp.to(email).length === 1, { what: 'the other key’s autoreply' })
})

t.test('a rotated key and its successor share one day: rotating starts no fresh limit', async (t) => {
  const k = await leadKey()
  const rotated = await rotateKey(sql, { prefix: k.prefix, graceSeconds: 3600, actor: cli })
  if (!rotated) throw new Error('not rotated')
  issuedKeys.push(rotated.key)
  const to = [address(), address(), address()]
  t.equal((await post(k.prefix, { ...FORM, email: to[0] })).status, 201, 'through the old key, in its grace')
  t.equal((await post(rotated.prefix, { ...FORM, email: to[1] })).status, 201, 'through the new one')
  t.equal((await post(k.prefix, { ...FORM, email: to[2] })).status, 201)
  await eventually(() => smtp.to(to[0]).length + smtp.to(to[1]).length === 2, { what: 'two autoreplies' })
  const rows = [...(await autoreplies(k.prefix)), ...(await autoreplies(rotated.prefix))]
  t.same(rows.find((r) => r.recipient === to[2])?.skipped, 'daily_limit', 'the third of the line is skipped')
  t.same(smtp.to(to[2]), [])
})

t.test('turned off, a key sends none; erasing a lead blanks its autoreply', async (t) => {
  const k = await leadKey()
  const to = address()
  const res = await post(k.prefix, { ...FORM, email: to })
  await eventually(async () => (await autoreplies(k.prefix))[0]?.state === 'delivered', { what: 'delivered' })
  const erased = await eraseLeads(sql, { accountId: k.accountId, ids: [res.id as string], actor: cli })
  t.same(erased, [res.id])
  t.match(await autoreplies(k.prefix), [{ recipient: '', state: 'delivered', message: null }])
  const [{ n: left }] = await sql<{ n: number }[]>`
    select count(*)::int as n from mail_deliveries where recipient = ${to} or recipient = ${to.toUpperCase()}`
  t.equal(left, 0, 'the address is nowhere in the outbox')

  t.match(await setKeyAutoreply(sql, { prefix: k.prefix, autoreply: null, actor: cli }), { ok: true })
  // Each server drops its cached key within a poll: a lead then gets none.
  await eventually(
    async () => {
      const email = address()
      t.equal((await post(k.prefix, { ...FORM, email })).status, 201)
      return !(await autoreplies(k.prefix)).some((r) => r.recipient === email)
    },
    { what: 'a lead with no autoreply' }
  )
})

t.test('POST /api/v1/leads with the key answers its leads as well', async (t) => {
  const k = await leadKey()
  const to = address()
  const res = await s.fetch('/api/v1/leads', { method: 'POST', key: k.key, json: { ...FORM, email: to } })
  t.equal(res.status, 201)
  await eventually(() => smtp.to(to).length === 1, { what: 'the autoreply' })
  t.equal(smtp.to(to)[0].subject, `Thanks, ${FORM.name}`)
})

t.test('erasing a lead whose autoreply is not yet sent cancels it', async (t) => {
  const release = smtp.hold(t)
  const k = await leadKey()
  const res = await post(k.prefix, { ...FORM, email: address() })
  t.equal(res.status, 201)
  t.match(await autoreplies(k.prefix), [{ state: 'pending' }])
  await eraseLeads(sql, { accountId: k.accountId, ids: [res.id as string], actor: cli })
  t.match(await autoreplies(k.prefix), [{ recipient: '', state: 'cancelled', message: null }])
  release()
})
